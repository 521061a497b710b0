package datasets

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestParquetRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		wl   func(t *testing.T) *Workload
	}{
		{"builtin", func(*testing.T) *Workload { return Builtin() }},
		{"alibaba", func(t *testing.T) *Workload {
			w, err := ReadFile(trace(t, "alibaba_pai_v2023/openb_pod_list_default.csv"), FormatAlibaba, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}},
		{"handmade", func(*testing.T) *Workload {
			return &Workload{Name: "h", Format: FormatJobs, Jobs: []Job{
				{Name: "a", Submit: 0.5, GPUs: 2, Duration: 1e-3, Model: "bert", BatchSize: 64, Cluster: "vc", Status: "ok", CPUMilli: 1, MemoryMiB: 2},
				{Name: "ü,\"", Submit: MaxSeconds, GPUs: 1 << 20, Model: "imagenet"}, // the latest submit a reader accepts
			}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.wl(t)
			var buf bytes.Buffer
			if err := WriteParquet(&buf, in); err != nil {
				t.Fatal(err)
			}
			for _, f := range []Format{FormatParquet, FormatAuto} {
				got, err := Decode(f, buf.Bytes(), Options{Source: "x.parquet"})
				if err != nil {
					t.Fatal(err)
				}
				if got.Name != in.Name || got.Format != FormatParquet || !reflect.DeepEqual(got.Jobs, in.Jobs) {
					t.Errorf("round trip differs: name %q format %q, %d jobs (want %q, %d)", got.Name, got.Format, len(got.Jobs), in.Name, len(in.Jobs))
				}
			}
		})
	}
}

func TestParquetErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParquet(&buf, Builtin()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"magic only", []byte("PAR1")},
		{"truncated", good[:len(good)/2]},
		{"footer flipped", append(append([]byte{}, good[:len(good)-12]...), 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 'P', 'A', 'R', '1')},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadParquet(tt.data, Options{Source: "bad.parquet"})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "bad.parquet" {
				t.Errorf("err = %v, want a ParseError for bad.parquet", err)
			}
		})
	}
	empty := &Workload{Name: "e"}
	buf.Reset()
	if err := WriteParquet(&buf, empty); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadParquet(buf.Bytes(), Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty table: err = %v, want ErrEmpty", err)
	}
}
