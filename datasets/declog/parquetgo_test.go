package declog

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
)

// pqRow is the log's schema as an independent Parquet implementation,
// github.com/parquet-go/parquet-go, maps it to a Go struct: the documented
// check that the log reads back outside arrow-go.
type pqRow struct {
	Kind           string    `parquet:"kind"`
	Time           time.Time `parquet:"time,timestamp(nanosecond)"`
	RequestID      string    `parquet:"request_id"`
	JobID          string    `parquet:"job_id"`
	Source         string    `parquet:"source"`
	Fallback       string    `parquet:"fallback"`
	Workers        []string  `parquet:"workers,list"`
	PS             []string  `parquet:"ps,list"`
	Sync           string    `parquet:"sync"`
	LatencyNS      int64     `parquet:"latency_ns"`
	Outcome        string    `parquet:"outcome"`
	IterationTimes []float64 `parquet:"iteration_times_s,list"`
	JCT            float64   `parquet:"jct_s"`
	Shadow         string    `parquet:"shadow"`
	ShadowWorkers  []string  `parquet:"shadow_workers,list"`
	ShadowSync     string    `parquet:"shadow_sync"`
	ShadowFailure  string    `parquet:"shadow_failure"`
	JobModel       string    `parquet:"job_model"`
	JobGPUs        int64     `parquet:"job_gpus"`
	JobArch        string    `parquet:"job_arch"`
	JobBatchSize   int64     `parquet:"job_batch_size"`
	JobExpectedS   float64   `parquet:"job_expected_duration_s"`
	JobSubmitNS    int64     `parquet:"job_submit_unix_nanos"`
}

// TestReadWithParquetGo writes a rotated log with the Writer and reads
// every file back with parquet-go, comparing each value and the version
// key.
func TestReadWithParquetGo(t *testing.T) {
	dir := t.TempDir()
	recs := makeRecords(64)
	w := writeLog(t, dir, recs, WithMaxRecords(25), WithRowGroupRecords(10))
	var got []Record
	for _, path := range w.Files() {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatalf("parquet-go open %s: %v", path, err)
		}
		if v, ok := pf.Lookup(VersionKey); !ok || v != "1" {
			t.Errorf("%s: %s = %q, %v; want \"1\"", path, VersionKey, v, ok)
		}
		rows := make([]pqRow, pf.NumRows())
		r := parquet.NewGenericReader[pqRow](f)
		n, err := r.Read(rows)
		if n != len(rows) {
			t.Fatalf("parquet-go read %s: %d of %d rows: %v", path, n, len(rows), err)
		}
		r.Close()
		f.Close()
		for _, row := range rows {
			got = append(got, fromPQ(row))
		}
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("parquet-go read (-want,+got):\n%s", diff)
	}
}

// fromPQ converts a parquet-go row to a Record the way the format spec
// says: the kind column picks the fields that belong to the record.
func fromPQ(r pqRow) Record {
	if r.Kind == "outcome" {
		o := Outcome{Time: r.Time.UTC(), RequestID: r.RequestID, JobID: r.JobID, Kind: OutcomeKind(r.Outcome), JCT: r.JCT}
		if len(r.IterationTimes) > 0 {
			o.IterationTimes = r.IterationTimes
		}
		return o.Record()
	}
	d := Decision{Time: r.Time.UTC(), RequestID: r.RequestID, JobID: r.JobID, Source: r.Source, Fallback: r.Fallback,
		Sync: r.Sync, Latency: time.Duration(r.LatencyNS), Shadow: r.Shadow, ShadowSync: r.ShadowSync, ShadowFailure: r.ShadowFailure,
		JobModel: r.JobModel, JobGPUs: int(r.JobGPUs), JobArch: r.JobArch, JobBatchSize: int(r.JobBatchSize), JobExpectedDuration: r.JobExpectedS}
	if r.JobSubmitNS != 0 {
		d.JobSubmitted = time.Unix(0, r.JobSubmitNS).UTC()
	}
	if len(r.ShadowWorkers) > 0 {
		d.ShadowWorkers = r.ShadowWorkers
	}
	if len(r.Workers) > 0 {
		d.Workers = r.Workers
	}
	if len(r.PS) > 0 {
		d.PS = r.PS
	}
	return d.Record()
}
