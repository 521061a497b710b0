package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bomOf is data after a UTF-8 byte-order mark.
func bomOf(data []byte) []byte { return append([]byte("\ufeff"), data...) }

// TestBOM: a leading UTF-8 byte-order mark changes nothing, in every text
// format. Before, a Helios CSV with one lost its first comment line to
// the header ("field job_id: missing column"), and the mark stuck to the
// first cell of a machine-usage row.
func TestBOM(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		data string
	}{
		{"helios with comments", FormatHelios, "# c\njob_id,user,tenant,class,submit_time,num_chips,chip_type,num_nodes,duration_s,walltime_limit_s,final_status\n765563,u,vcvGl,finetune,5835000000,128,,16,24.0,24.0,CANCELED\n"},
		{"pollux", FormatPollux, "name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\nncf-2,1,ncf,1,32768\n"},
		{"philly", FormatPhilly, "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"},
		{"alibaba", FormatAlibaba, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nopenb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"},
		{"jobs", FormatJobs, string(builtinCSV[:bytes.IndexByte(builtinCSV[200:], '\n')+201])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := Decode(tt.f, []byte(tt.data), Options{Source: "x"})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []Format{tt.f, FormatAuto} {
				got, err := Decode(f, bomOf([]byte(tt.data)), Options{Source: "x"})
				if err != nil {
					t.Fatalf("format %q with a BOM: %v", f, err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("format %q with a BOM (-want,+got):\n%s", f, d)
				}
			}
		})
	}
	t.Run("machine usage", func(t *testing.T) {
		data := "m_1932,386640,41,92,,,43.04,33.08,5\nm_1932,386670,43,92,,,43.04,33.08,5\n"
		want, err := DecodeMachineUsage([]byte(data), Options{Source: "x"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeMachineUsage(bomOf([]byte(data)), Options{Source: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateNaNs()); d != "" || got[0].Machine != "m_1932" {
			t.Errorf("with a BOM (-want,+got):\n%s", d)
		}
	})
	t.Run("node list", func(t *testing.T) {
		data := "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n"
		got, err := DecodePAINodes(bomOf([]byte(data)), Options{Source: "x"})
		if err != nil || len(got) != 1 || got[0].Name != "n0" {
			t.Errorf("with a BOM: %+v, %v", got, err)
		}
	})
}

// TestBOMHeliosTrace: the real Helios slice saved with a byte-order mark
// reads as the slice does (before: "field job_id: missing column").
func TestBOMHeliosTrace(t *testing.T) {
	data := readTrace(t, "helios/helios_venus_2vc_sept.csv")
	want, err := Decode(FormatAuto, data, Options{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(FormatAuto, bomOf(data), Options{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Jobs) != 1867 || !cmp.Equal(want, got) {
		t.Errorf("with a BOM: %d jobs, equal %v; want 1867 and equal", len(got.Jobs), cmp.Equal(want, got))
	}
}

// TestDuplicateNode: a node list that names a node twice is refused,
// naming both lines (before: accepted, two nodes of one name).
func TestDuplicateNode(t *testing.T) {
	data := "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,64000,262144,2,P100\nn0,1000,1024,1,T4\n"
	_, err := DecodePAINodes([]byte(data), Options{Source: "nodes.csv"})
	want := `nodes.csv:4: field sn: datasets: duplicate node name: "n0", also on line 2`
	if !errors.Is(err, ErrDuplicateNode) || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	nodes, err := DecodePAINodes([]byte(data), Options{Source: "nodes.csv", SkipBad: true})
	if err != nil || len(nodes) != 2 || nodes[1].Name != "n1" {
		t.Errorf("SkipBad: %+v, %v; want n0 and n1", nodes, err)
	}
}

// TestReadNotRegular: every reader of a named file refuses a device or
// a FIFO at once, naming it. Before, /dev/zero was read until memory ran
// out and a FIFO without a writer blocked forever.
func TestReadNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo} {
		reads := map[string]func() error{
			"ReadFile":         func() error { _, err := ReadFile(p, FormatAuto, Options{}); return err },
			"ReadPAINodes":     func() error { _, err := ReadPAINodes(p); return err },
			"ReadMachineUsage": func() error { _, err := ReadMachineUsage(p); return err },
			"ReadCoV":          func() error { _, err := ReadCoV(p, Options{}); return err },
			"ReadMiniBatch":    func() error { _, err := ReadMiniBatch(p, Options{}); return err },
		}
		for name, read := range reads {
			err := read()
			if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), p+": not a regular file") {
				t.Errorf("%s(%s): %v, want not a regular file", name, p, err)
			}
		}
	}
}

// TestGzipBomb: decompressed data is bounded like a file: past the bound
// the decode fails naming the input (a small gzip of zeros could fill
// memory before).
func TestGzipBomb(t *testing.T) {
	defer func(n int64) { maxDecompressed = n }(maxDecompressed)
	maxDecompressed = 1 << 10
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("sn,cpu_milli,memory_mib,gpu,model\n"))
	zw.Write(make([]byte, 4<<10))
	zw.Close()
	_, err := Decode(FormatAuto, b.Bytes(), Options{Source: "bomb.csv.gz"})
	if !errors.Is(err, inputfile.ErrTooLarge) || !strings.Contains(err.Error(), "bomb.csv.gz decompressed: larger than 1 KiB") {
		t.Errorf("got %v, want a size error naming bomb.csv.gz", err)
	}
}
