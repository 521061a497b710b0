package declog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeDecode(t *testing.T) {
	want := makeRecords(50)
	data, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
}

func TestInvalidRecords(t *testing.T) {
	tests := []struct {
		name  string
		rec   Record
		field string
	}{
		{"no kind", Record{}, "kind"},
		{"negative latency", Decision{Latency: -1}.Record(), "latency_ns"},
		{"unknown outcome", Outcome{Kind: "exploded"}.Record(), "outcome"},
		{"negative jct", Outcome{Kind: Finished, JCT: -3}.Record(), "jct_s"},
		{"nan sample", Outcome{Kind: Iteration, IterationTimes: []float64{1, nan()}}.Record(), "iteration_times_s"},
		{"negative job gpus", Decision{JobGPUs: -2}.Record(), "job_gpus"},
		{"unknown job arch", Decision{JobArch: "mesh"}.Record(), "job_arch"},
		{"negative batch size", Decision{JobBatchSize: -1}.Record(), "job_batch_size"},
		{"negative expected duration", Decision{JobExpectedDuration: -60}.Record(), "job_expected_duration_s"},
		{"nan expected duration", Decision{JobExpectedDuration: nan()}.Record(), "job_expected_duration_s"},
		{"infinite expected duration", Decision{JobExpectedDuration: 1 / zero()}.Record(), "job_expected_duration_s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode([]Record{makeRecords(1)[0], tt.rec})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field != tt.field || fe.Row != 2 {
				t.Errorf("Encode: %v, want a FormatError on row 2, field %s", err, tt.field)
			}
			w, err := NewWriter(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Append(tt.rec); !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("Append: %v, want a FormatError on field %s", err, tt.field)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

func zero() float64 { return 0 }

func TestWriterRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, WithClock(tick()), WithRowGroupRecords(40))
	if err != nil {
		t.Fatal(err)
	}
	want := makeRecords(101)
	// Records without a time get the clock's.
	want[5].Outcome.Time = time.Time{}
	want[6].Decision.Time = time.Time{}
	for i := range want {
		if err := w.Append(want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(want[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	want[5].Outcome.Time = epoch.Add(1500 * time.Microsecond)
	want[6].Decision.Time = epoch.Add(3000 * time.Microsecond)
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, log.Records); diff != "" {
		t.Errorf("records (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "decisions-000001.parquet")}, log.Files); diff != "" {
		t.Errorf("files (-want,+got):\n%s", diff)
	}
	if len(log.Partial) != 0 {
		t.Errorf("partial files %v, want none", log.Partial)
	}
}

func TestRotation(t *testing.T) {
	recs := makeRecords(95)
	tests := []struct {
		name  string
		opts  []Option
		flush []int // Flush after these record counts
		files int
	}{
		{"by records", []Option{WithMaxRecords(20), WithRowGroupRecords(15)}, nil, 5},
		{"by bytes", []Option{WithMaxBytes(1), WithRowGroupRecords(30)}, nil, 4},
		{"on flush and close", []Option{WithMaxRecords(0)}, []int{10, 10, 60}, 3},
		{"one file", nil, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(dir, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				for _, f := range tt.flush {
					if f == i {
						if err := w.Flush(); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := w.Append(recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			log, err := ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(log.Files) != tt.files {
				t.Errorf("%d files, want %d: %v", len(log.Files), tt.files, log.Files)
			}
			if diff := cmp.Diff(w.Files(), log.Files); diff != "" {
				t.Errorf("Writer.Files vs ReadDir (-w,+r):\n%s", diff)
			}
			if diff := cmp.Diff(recs, log.Records); diff != "" {
				t.Errorf("records (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestRestartContinuesNumbering: a second Writer on the same directory
// appends after the first's files, and ReadDir returns both in order.
func TestRestartContinuesNumbering(t *testing.T) {
	dir := t.TempDir()
	recs := makeRecords(30)
	for _, part := range [][]Record{recs[:12], recs[12:]} {
		writeLog(t, dir, part, WithMaxRecords(5))
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Files) != 7 { // 5+5+2, then 5+5+5+3
		t.Errorf("%d files, want 7: %v", len(log.Files), log.Files)
	}
	if diff := cmp.Diff(recs, log.Records); diff != "" {
		t.Errorf("records (-want,+got):\n%s", diff)
	}
}

func TestReadDirErrors(t *testing.T) {
	dir := t.TempDir()
	w, _ := NewWriter(dir)
	w.Append(makeRecords(3)...)
	w.Close()
	bad := filepath.Join(dir, FileName(2))
	if err := os.WriteFile(bad, []byte("PAR1 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadDir(dir)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != bad {
		t.Errorf("ReadDir with a corrupt sealed file: %v, want a FormatError naming %s", err, bad)
	}
	// Other files are ignored.
	os.Remove(bad)
	os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644)
	if log, err := ReadDir(dir); err != nil || len(log.Records) != 3 {
		t.Errorf("ReadDir with a stray file: %v", err)
	}
	// A file without the version key is refused.
	if _, err := Decode(parquetWithoutVersion(t), "old.parquet"); !errors.Is(err, ErrVersion) {
		t.Errorf("Decode without version: %v, want ErrVersion", err)
	}
}

// TestConcurrentAppend: goroutines appending at once lose no record and
// keep each goroutine's order.
func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, WithMaxRecords(150), WithRowGroupRecords(64))
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 4, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				d := Decision{Time: epoch, JobID: fmt.Sprintf("g%d", g), RequestID: strconv.Itoa(i), Source: "heuristic:first-fit"}
				if err := w.Append(d.Record()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for _, r := range log.Records {
		id := r.Decision.JobID
		if r.Decision.RequestID != strconv.Itoa(next[id]) {
			t.Fatalf("%s: request %s after %d", id, r.Decision.RequestID, next[id]-1)
		}
		next[id]++
	}
	if len(log.Records) != goroutines*each || len(log.Files) != 3 {
		t.Errorf("%d records in %d files, want %d in 3", len(log.Records), len(log.Files), goroutines*each)
	}
}

// TestReadBeforeShadow reads a file written before the shadow columns
// existed (testdata/v1-before-shadow.parquet, Encode(makeRecords(12)) at
// the commit before them): it reads as the same records with no shadow
// decision, and the shadow columns are all that tell the two apart.
func TestReadBeforeShadow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-before-shadow.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "v1-before-shadow.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := makeRecords(12)
	for i := range want {
		d := &want[i].Decision
		d.Shadow, d.ShadowWorkers, d.ShadowSync, d.ShadowFailure = "", nil, "", ""
		d.JobModel, d.JobGPUs, d.JobArch, d.JobBatchSize, d.JobExpectedDuration = "", 0, "", 0, 0
		d.JobSubmitted = time.Time{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("old file (-want,+got):\n%s", diff)
	}
}

// TestShadowColumnsChecked: shadow fields without a shadow policy, and a
// failure beside a decision, are refused with the column's name.
func TestShadowColumnsChecked(t *testing.T) {
	tests := []struct {
		name  string
		d     Decision
		field string
	}{
		{"workers without shadow", Decision{ShadowWorkers: []string{"n"}}, "shadow"},
		{"failure without shadow", Decision{ShadowFailure: "deadline"}, "shadow"},
		{"failure and workers", Decision{Shadow: "learned@v1", ShadowWorkers: []string{"n"}, ShadowFailure: "error"}, "shadow_failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode([]Record{tt.d.Record()})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("Encode: %v, want a FormatError on %s", err, tt.field)
			}
		})
	}
}

// TestReadBeforeJob reads a file written before the job columns existed
// (testdata/v1-before-job.parquet, Encode(makeRecords(12)) at the commit
// before them): it reads as the same records with every job field zero
// (unknown), shadow decisions included.
func TestReadBeforeJob(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-before-job.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "v1-before-job.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := makeRecords(12)
	for i := range want {
		d := &want[i].Decision
		d.JobModel, d.JobGPUs, d.JobArch, d.JobBatchSize, d.JobExpectedDuration = "", 0, "", 0, 0
		d.JobSubmitted = time.Time{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("old file (-want,+got):\n%s", diff)
	}
}

// TestJobColumns: the job fields of a decision survive the round trip,
// values at their bounds included, and an outcome's job columns are zero.
func TestJobColumns(t *testing.T) {
	in := []Record{
		Decision{JobID: "a", JobModel: "imagenet", JobGPUs: 16, JobArch: "ps", JobBatchSize: 4096, JobExpectedDuration: 86400.25}.Record(),
		Decision{JobID: "b", JobModel: "", JobGPUs: 0, JobArch: "", JobBatchSize: 0, JobExpectedDuration: 0}.Record(),
		Decision{JobID: "c", JobModel: "ncf", JobGPUs: 1, JobArch: "ring", JobBatchSize: 1, JobExpectedDuration: 5e-324}.Record(),
		Outcome{JobID: "a", Kind: Finished, JCT: 90000}.Record(),
	}
	for i := range in {
		if in[i].Kind == KindDecision {
			in[i].Decision.Time = epoch
		} else {
			in[i].Outcome.Time = epoch
		}
	}
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
}

// TestReadBeforeSubmitted reads a file written before the
// job_submit_unix_nanos column existed (testdata/v1-before-submitted.parquet,
// Encode(makeRecords(12)) at the commit before it): it reads as the same
// records with JobSubmitted zero (unknown), every other job field kept.
func TestReadBeforeSubmitted(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-before-submitted.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "v1-before-submitted.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := makeRecords(12)
	for i := range want {
		want[i].Decision.JobSubmitted = time.Time{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("old file (-want,+got):\n%s", diff)
	}
}

// TestJobSubmitted: the submission time survives the round trip to the
// nanosecond, the zero time stays unknown, and times at or before 1970
// are refused with the column's name.
func TestJobSubmitted(t *testing.T) {
	in := []Record{
		Decision{Time: epoch, JobID: "a", JobSubmitted: epoch.Add(-90*time.Minute + 7)}.Record(),
		Decision{Time: epoch, JobID: "b"}.Record(),
		Decision{Time: epoch, JobID: "c", JobSubmitted: time.Unix(0, 1).UTC()}.Record(),
	}
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, "submitted")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
	for _, bad := range []time.Time{time.Unix(0, 0), time.Unix(-5, 0), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		_, err := Encode([]Record{Decision{JobID: "x", JobSubmitted: bad}.Record()})
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != "job_submit_unix_nanos" {
			t.Errorf("Encode(submitted %v): %v, want a FormatError on job_submit_unix_nanos", bad, err)
		}
	}
}

// TestReadDirIgnoresTelemetry: the telemetry log's files (datasets/telemlog,
// telemetry-NNNNNN.parquet, which share the log directory) are not read
// as decision-log files, sealed or not.
func TestReadDirIgnoresTelemetry(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs := makeRecords(4)
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"telemetry-000001.parquet", "telemetry-000002.parquet.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("PAR1 not a decision log"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, log.Records); diff != "" || len(log.Partial) != 0 {
		t.Errorf("records (-want,+got):\n%s\npartial %v, want none", diff, log.Partial)
	}
}
