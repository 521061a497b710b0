package telemlog

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// epoch is the fixed start of the test times.
var epoch = time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)

// makeSamples returns n samples over 3 nodes, one time step per node
// round, every field depending on i; every fourth has its raw fields
// unknown.
func makeSamples(n int) []Sample {
	out := make([]Sample, n)
	for i := range out {
		t := epoch.Add(time.Duration(i/3) * 30 * time.Second)
		s := Sample{Node: fmt.Sprintf("node-%d", i%3), Time: t, CPU: float64(i%10) / 10, MemBW: float64(i%7) / 7, Net: 1 - float64(i%5)/5,
			CPUUtil: 0.5, MemUsed: 1e9 + float64(i), CPUPressure: 0.01 * float64(i%3), MemPressure: 0, NetRxBps: 1.25e8, NetTxBps: 3e7 + float64(i), GPUUtil: 0.9}
		if i%4 == 3 {
			s = Raw(s.Node, s.Time, s.CPU, s.MemBW, s.Net)
		}
		out[i] = s
	}
	return out
}

// nanEqual compares NaN raw fields as equal.
var nanEqual = cmpopts.EquateNaNs()

func TestRoundTrip(t *testing.T) {
	in := makeSamples(10)
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got, nanEqual); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
}

// TestValidate: each bad field is refused with its column's name.
func TestValidate(t *testing.T) {
	good := makeSamples(1)[0]
	tests := []struct {
		name  string
		edit  func(*Sample)
		field string
	}{
		{"empty node", func(s *Sample) { s.Node = "" }, colNode},
		{"zero time", func(s *Sample) { s.Time = time.Time{} }, colTime},
		{"cpu above 1", func(s *Sample) { s.CPU = 1.5 }, colCPU},
		{"membw NaN", func(s *Sample) { s.MemBW = math.NaN() }, colMemBW},
		{"net negative", func(s *Sample) { s.Net = -0.1 }, colNet},
		{"gpu util above 1", func(s *Sample) { s.GPUUtil = 2 }, colGPUUtil},
		{"rx infinite", func(s *Sample) { s.NetRxBps = math.Inf(1) }, colNetRx},
		{"pressure negative", func(s *Sample) { s.CPUPressure = -1 }, colCPUPressure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.edit(&s)
			_, err := Encode([]Sample{good, s})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field != tt.field || fe.Row != 2 {
				t.Errorf("Encode: %v, want a FormatError on %s row 2", err, tt.field)
			}
		})
	}
}

// TestWriterRotatesAndSorts: files are sealed at MaxSamples, every sample
// reads back, sorted by time then node, from many goroutines' writes.
func TestWriterRotatesAndSorts(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, Options{MaxSamples: 40, RowGroupSamples: 7, SealInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	in := makeSamples(120)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(in); i += 4 {
				if err := w.Write(in[i]); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(w.Files()); got != 3 {
		t.Errorf("%d files sealed, want 3", got)
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// makeSamples is already in (time, node) order.
	if diff := cmp.Diff(in, log.Samples, nanEqual); diff != "" {
		t.Errorf("samples (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"node-0", "node-1", "node-2"}, log.Nodes()); diff != "" {
		t.Errorf("nodes (-want,+got):\n%s", diff)
	}
}

// TestSealInterval: a Write SealInterval after the file's first sample
// seals the file, so the samples before it are readable while the writer
// runs.
func TestSealInterval(t *testing.T) {
	dir := t.TempDir()
	now := epoch
	w, err := NewWriter(dir, Options{SealInterval: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	in := makeSamples(5)
	for i, s := range in {
		now = epoch.Add(time.Duration(i) * 25 * time.Second) // 0, 25, 50, 75, 100 s
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	// The write at 75 s sealed the first three samples; the last two wait.
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in[:3], log.Samples, nanEqual); diff != "" {
		t.Errorf("sealed samples (-want,+got):\n%s", diff)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
}

// TestReadDirFiles: a decision log's files and other names are ignored,
// an unsealed file is reported, a corrupt sealed file is an error naming
// it, and a new writer continues the numbering.
func TestReadDirFiles(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := makeSamples(6)
	for _, s := range in {
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"decisions-000001.parquet":     "not ours",
		"telemetry-000002.parquet.tmp": "PAR1 half",
		"notes.txt":                    "x",
		"telemetry-1.parquet":          "too few digits: not a log file",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, log.Samples, nanEqual); diff != "" {
		t.Errorf("samples (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "telemetry-000002.parquet.tmp")}, log.Partial); diff != "" {
		t.Errorf("partial (-want,+got):\n%s", diff)
	}
	w, err = NewWriter(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "telemetry-000003.parquet")}, w.Files()); diff != "" {
		t.Errorf("restarted writer's files (-want,+got):\n%s", diff)
	}
	bad := filepath.Join(dir, FileName(4))
	if err := os.WriteFile(bad, []byte("PAR1garbagePAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDir(dir)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != bad {
		t.Errorf("ReadDir with a corrupt file: %v, want a FormatError naming %s", err, bad)
	}
}
