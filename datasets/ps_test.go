package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestPSRuleDraw checks the draw against an independent implementation
// (Python): FNV-1a 64 (h = 0xcbf29ce484222325; for each byte h ^= b,
// h = h*0x100000001b3 mod 2^64) over the seed's 8 little-endian bytes and
// the name, then MurmurHash3's fmix64 (h ^= h>>33; h *= 0xff51afd7ed558ccd;
// h ^= h>>33; h *= 0xc4ceb9fe1a85ec53; h ^= h>>33), then (h >> 11) / 2^53.
func TestPSRuleDraw(t *testing.T) {
	tests := []struct {
		seed uint64
		name string
		fnv  uint64  // FNV-1a 64 (the FNV spec's value for "" with seed 0 bytes)
		mix  uint64  // fmix64(fnv)
		want float64 // (mix >> 11) / 2^53
	}{
		{0, "", 0xa8c7f832281a39c5, 0x7bd3144f29c0cc9e, 0.48368956501667804},
		{0, "a", 0xe604613a248ff1ac, 0x6df9901ee878b6be, 0.429589278741761},
		{1, "a", 0x529a4ddc8ff56bbf, 0xdea13a43162696b9, 0.8696476377282585},
		{0, "full", 0x63bb2cbc921ce41c, 0x2da3654ec65894f3, 0.1782744710274946},
		{0, "share", 0xb3d409595f5b1278, 0x84f9daea580ad37c, 0.5194374868515681},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%q", tt.seed, tt.name), func(t *testing.T) {
			if got := fmix64(tt.fnv); got != tt.mix {
				t.Errorf("fmix64(%#x) = %#x, want %#x", tt.fnv, got, tt.mix)
			}
			if got := (PSRule{Seed: tt.seed}).Draw(tt.name); got != tt.want {
				t.Errorf("Draw = %v, want %v", got, tt.want)
			}
			if got := float64(tt.mix>>11) / (1 << 53); got != tt.want {
				t.Errorf("table inconsistent: %#x gives %v", tt.mix, got)
			}
		})
	}
}

func TestPSRuleDecide(t *testing.T) {
	// Draws from TestPSRuleDraw: seed 0 "a" 0.4296, "full" 0.1783; seed 1
	// "a" 0.8696.
	tests := []struct {
		name       string
		rule       PSRule
		job        string
		gpus       int
		wantArch   Arch
		wantShards int
	}{
		{"single GPU never PS", PSRule{Share: 1}, "full", 1, ArchRing, 0},
		{"share 1, any draw", PSRule{Share: 1}, "a", 2, ArchPS, 2},
		{"share 0, any draw", PSRule{Share: 0}, "full", 64, ArchRing, 0},
		{"draw below share", PSRule{Share: 0.18}, "full", 16, ArchPS, 16},
		{"draw above share", PSRule{Share: 0.178}, "full", 16, ArchRing, 0},
		{"4 workers per server: 16 GPUs, 4 servers", PSRule{Share: 0.5, WorkersPerServer: 4}, "full", 16, ArchPS, 4},
		{"a part-filled server counts", PSRule{Share: 0.5, WorkersPerServer: 4}, "full", 6, ArchPS, 2},
		{"seed 0: a below 0.5", PSRule{Share: 0.5}, "a", 8, ArchPS, 8},
		{"seed 1: a above 0.5", PSRule{Share: 0.5, Seed: 1}, "a", 8, ArchRing, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, k := tt.rule.Decide(tt.job, tt.gpus)
			if a != tt.wantArch || k != tt.wantShards {
				t.Errorf("Decide(%q, %d) = %s, %d; want %s, %d", tt.job, tt.gpus, a, k, tt.wantArch, tt.wantShards)
			}
		})
	}
}

func TestPSShards(t *testing.T) {
	// ceil(gpus/perServer), by hand; perServer 0 is one server per worker.
	tests := []struct{ gpus, perServer, want int }{
		{1, 8, 1}, {2, 8, 1}, {8, 8, 1}, {9, 8, 2}, {64, 8, 8}, {128, 8, 16},
		{4, 4, 1}, {5, 4, 2}, {24, 4, 6}, {8, 0, 8}, {17, 0, 17}, {3, 1, 3},
	}
	for _, tt := range tests {
		if got := PSShards(tt.gpus, tt.perServer); got != tt.want {
			t.Errorf("PSShards(%d, %d) = %d, want %d", tt.gpus, tt.perServer, got, tt.want)
		}
	}
}

// v1Table is a version-1 job table of n multi-GPU jobs named job-<i> (2 to
// 9 GPUs) and n single-GPU ones.
func v1Table(n int) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(jobsHeader, ",") + "\n")
	for i := range n {
		fmt.Fprintf(&b, "job-%d,%d,%d,60,ncf,0,,,0,0\n", i, i, 2+i%8)
		fmt.Fprintf(&b, "one-%d,%d,1,60,ncf,0,,,0,0\n", i, i)
	}
	return b.Bytes()
}

// TestPSShareRealised decodes 20,000 multi-GPU and 20,000 single-GPU jobs
// at several shares: the realised share of the multi-GPU jobs lies within
// four binomial standard deviations, sqrt(s(1-s)/n), of the requested one
// (0.0141 at s = 0.5); share 0 gives no PS job, share 1 makes every
// multi-GPU job PS; single-GPU jobs are never PS.
func TestPSShareRealised(t *testing.T) {
	const n = 20000
	data := v1Table(n)
	for _, share := range []float64{0, 0.05, 0.3, 0.5, 0.9, 1} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			w, err := Decode(FormatJobs, data, Options{PS: &PSRule{Share: share}})
			if err != nil {
				t.Fatal(err)
			}
			ps, got := w.PSShare()
			tol := 4 * math.Sqrt(share*(1-share)/n)
			if math.Abs(got-share) > tol {
				t.Errorf("realised share %v (%d PS jobs), want %v ± %.4f", got, ps, share, tol)
			}
			for _, j := range w.Jobs {
				if j.GPUs == 1 && j.Arch != ArchRing {
					t.Fatalf("single-GPU job %s is %s", j.Name, j.Arch)
				}
				if j.Arch == ArchPS && j.PSShards != j.GPUs {
					t.Fatalf("job %s: %d shards, want one per worker, %d", j.Name, j.PSShards, j.GPUs)
				}
			}
			if share == 0 && ps != 0 || share == 1 && ps != n {
				t.Errorf("share %v: %d PS jobs of %d multi-GPU jobs", share, ps, n)
			}
		})
	}
}

// TestPSShareOnTraces checks the realised share on the real traces'
// multi-GPU jobs (Philly: 82,247 - 76,627 single-GPU = 5,620) and the
// formats' defaults (PAI 0.5, the others 0).
func TestPSShareOnTraces(t *testing.T) {
	tests := []struct {
		path      string
		f         Format
		share     float64 // FormatDefaultShare for the format's default
		wantShare float64
		multi     int // multi-GPU jobs, counted with awk; 0: not checked
	}{
		{"philly/pollux_philly.csv.gz", FormatPhilly, 0.5, 0.5, 5620},
		{"philly/pollux_philly.csv.gz", FormatPhilly, FormatDefaultShare, 0, 5620},
		{"helios/helios_venus_2vc_sept.csv", FormatHelios, FormatDefaultShare, 0, 0},
		{"helios/helios_venus_2vc_sept.csv", FormatHelios, 1, 1, 0},
		{"alibaba_pai_v2023/openb_pod_list_default.csv", FormatAlibaba, FormatDefaultShare, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.f, tt.share), func(t *testing.T) {
			w, err := ReadFile(trace(t, tt.path), tt.f, Options{PS: &PSRule{Share: tt.share}})
			if err != nil {
				t.Fatal(err)
			}
			multi := 0
			for _, j := range w.Jobs {
				if j.GPUs >= 2 {
					multi++
				}
			}
			if tt.multi > 0 && multi != tt.multi {
				t.Errorf("%d multi-GPU jobs, want %d", multi, tt.multi)
			}
			_, got := w.PSShare()
			tol := 4 * math.Sqrt(tt.wantShare*(1-tt.wantShare)/float64(multi))
			if math.Abs(got-tt.wantShare) > tol {
				t.Errorf("realised share %v of %d multi-GPU jobs, want %v ± %.4f", got, multi, tt.wantShare, tol)
			}
		})
	}
}

// TestPSRowsKeepArch checks that a version-2 row naming its architecture
// keeps it whatever the share, and that an empty arch cell gets the
// rule's draw.
func TestPSRowsKeepArch(t *testing.T) {
	data := "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n" +
		"r,0,8,60,ncf,0,,,0,0,ring,0\n" +
		"p,1,8,60,ncf,0,,,0,0,ps,3\n" +
		"a,2,8,60,ncf,0,,,0,0,,\n" // draw 0.4296
	tests := []struct {
		share float64
		want  []Arch
	}{
		{0, []Arch{ArchRing, ArchPS, ArchRing}},
		{0.4, []Arch{ArchRing, ArchPS, ArchRing}},
		{0.5, []Arch{ArchRing, ArchPS, ArchPS}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.share), func(t *testing.T) {
			w, err := Decode(FormatAuto, []byte(data), Options{PS: &PSRule{Share: tt.share}})
			if err != nil {
				t.Fatal(err)
			}
			var got []Arch
			for _, j := range w.Jobs {
				got = append(got, j.Arch)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("archs %v, want %v", got, tt.want)
			}
			if w.Jobs[1].PSShards != 3 {
				t.Errorf("row p: %d shards, want its 3", w.Jobs[1].PSShards)
			}
		})
	}
}

func TestPSBadRows(t *testing.T) {
	head := "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n"
	tests := []struct {
		name, row, field string
	}{
		{"unknown arch", "x,0,2,1,ncf,0,,,0,0,allreduce,0\n", "arch"},
		{"negative shards", "x,0,2,1,ncf,0,,,0,0,ps,-1\n", "ps_shards"},
		{"shards on a ring job", "x,0,2,1,ncf,0,,,0,0,ring,2\n", "ps_shards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(FormatJobs, []byte(head+tt.row), Options{Source: "t.csv"})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != tt.field || pe.Line != 2 {
				t.Fatalf("err = %v, want a ParseError on line 2, field %s", err, tt.field)
			}
			w, err := Decode(FormatJobs, []byte(head+tt.row+"ok,0,1,1,ncf,0,,,0,0,ring,0\n"), Options{SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{ReasonBadArch: 1}
			if tt.field == "arch" {
				want = map[string]int{ReasonMalformed: 1}
			}
			if !reflect.DeepEqual(w.SkipReasons, want) {
				t.Errorf("skip reasons %v, want %v", w.SkipReasons, want)
			}
		})
	}
	for _, share := range []float64{math.NaN(), 1.5} {
		if _, err := Decode(FormatJobs, []byte(head), Options{PS: &PSRule{Share: share}}); err == nil {
			t.Errorf("share %v accepted", share)
		}
	}
}

// TestPSParquet round-trips architectures through Parquet.
func TestPSParquet(t *testing.T) {
	w := &Workload{Name: "p", Format: FormatJobs, Jobs: []Job{
		{Name: "r", Submit: 0, GPUs: 8, Model: "ncf"},
		{Name: "p", Submit: 1, GPUs: 16, Model: "bert", Arch: ArchPS, PSShards: 3},
	}}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, w); err != nil {
		t.Fatal(err)
	}
	for _, share := range []float64{0, 1} {
		got, err := ReadParquet(buf.Bytes(), Options{PS: &PSRule{Share: share}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Jobs, w.Jobs) {
			t.Errorf("share %v: jobs %+v, want %+v", share, got.Jobs, w.Jobs)
		}
	}
}

// TestSyntheticPS checks that the PS share changes architectures only:
// the same jobs at every share, PS jobs nested as the share grows, and
// GenerateDefault the default share.
func TestSyntheticPS(t *testing.T) {
	p := DefaultParams()
	var prev *Workload
	for _, share := range []float64{0, 0.25, 0.5, 1} {
		p.PSShare = share
		w := Synthetic(p, 2000, rand.NewPCG(3, 3))
		checkInvariants(t, w)
		if prev != nil {
			for i, j := range w.Jobs {
				q := prev.Jobs[i]
				if j.Name != q.Name || j.GPUs != q.GPUs || j.Duration != q.Duration || j.Submit != q.Submit {
					t.Fatalf("share %v: job %d is %+v, was %+v", share, i, j, q)
				}
				if q.Arch == ArchPS && j.Arch != ArchPS {
					t.Fatalf("share %v: job %s PS at a smaller share only", share, j.Name)
				}
			}
		}
		if _, got := w.PSShare(); share == 1 && got != 1 || share == 0 && got != 0 {
			t.Errorf("share %v: realised %v", share, got)
		}
		prev = w
	}
	if !reflect.DeepEqual(GenerateDefaultPS(7, DefaultPSShare), GenerateDefault(7)) {
		t.Error("GenerateDefaultPS with the defaults differs from GenerateDefault")
	}
}

// TestLoadBuiltinPS: an explicit share draws the built-in workload's
// architectures anew over the same jobs; the format default keeps them.
func TestLoadBuiltinPS(t *testing.T) {
	b := Builtin()
	tests := []struct {
		name      string
		rule      *PSRule
		wantShare float64 // -1: Builtin's own
	}{
		{"nil", nil, -1},
		{"format default", &PSRule{Share: FormatDefaultShare}, -1},
		{"none", &PSRule{Share: 0}, 0},
		{"all", &PSRule{Share: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Load(BuiltinSpec, FormatAuto, Options{PS: tt.rule})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantShare < 0 {
				if !reflect.DeepEqual(w, b) {
					t.Error("differs from Builtin()")
				}
				return
			}
			if _, got := w.PSShare(); got != tt.wantShare {
				t.Errorf("share %v, want %v", got, tt.wantShare)
			}
			for i, j := range w.Jobs {
				if j.Name != b.Jobs[i].Name || j.GPUs != b.Jobs[i].GPUs {
					t.Fatalf("job %d is %s, builtin's %s", i, j.Name, b.Jobs[i].Name)
				}
				if j.Arch == ArchPS && j.PSShards != j.GPUs {
					t.Fatalf("job %s: %d shards, want one per worker", j.Name, j.PSShards)
				}
			}
		})
	}
}

// TestPSParquetV1 reads a version-1 file (ten columns, version "1"): its
// rows do not say their architecture, so the reader's rule decides them,
// share 0 by default.
func TestPSParquetV1(t *testing.T) {
	md := arrow.NewMetadata([]string{ParquetVersionKey}, []string{"1"})
	fields := []arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String}, {Name: "submit", Type: arrow.PrimitiveTypes.Float64},
		{Name: "gpus", Type: arrow.PrimitiveTypes.Int64}, {Name: "duration", Type: arrow.PrimitiveTypes.Float64},
		{Name: "model", Type: arrow.BinaryTypes.String}, {Name: "batch_size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "cluster", Type: arrow.BinaryTypes.String}, {Name: "status", Type: arrow.BinaryTypes.String},
		{Name: "cpu_milli", Type: arrow.PrimitiveTypes.Int64}, {Name: "memory_mib", Type: arrow.PrimitiveTypes.Int64},
	}
	sc := arrow.NewSchema(fields, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	// "a" draws 0.4296 (TestPSRuleDraw), "full" 0.1783.
	for i, name := range []string{"a", "full"} {
		b.Field(0).(*array.StringBuilder).Append(name)
		b.Field(1).(*array.Float64Builder).Append(float64(i))
		b.Field(2).(*array.Int64Builder).Append(8)
		b.Field(3).(*array.Float64Builder).Append(60)
		b.Field(4).(*array.StringBuilder).Append("ncf")
		for _, k := range []int{5, 8, 9} {
			b.Field(k).(*array.Int64Builder).Append(0)
		}
		b.Field(6).(*array.StringBuilder).Append("")
		b.Field(7).(*array.StringBuilder).Append("")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ps   *PSRule
		want []Arch
	}{
		{"default share 0", nil, []Arch{ArchRing, ArchRing}},
		{"share 0.3", &PSRule{Share: 0.3}, []Arch{ArchRing, ArchPS}},
		{"share 0.5", &PSRule{Share: 0.5}, []Arch{ArchPS, ArchPS}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ReadParquet(buf.Bytes(), Options{PS: tt.ps})
			if err != nil {
				t.Fatal(err)
			}
			var got []Arch
			for _, j := range w.Jobs {
				got = append(got, j.Arch)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("archs %v, want %v", got, tt.want)
			}
		})
	}
}
