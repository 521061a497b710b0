package declog

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// epoch is the fixed start of the test clock.
var epoch = time.Date(2026, 12, 2, 10, 0, 0, 123456789, time.UTC)

// tick returns a clock that advances 1.5 ms per call from epoch.
func tick() func() time.Time {
	n := 0
	return func() time.Time {
		n++
		return epoch.Add(time.Duration(n) * 1500 * time.Microsecond)
	}
}

// writeLog writes recs to dir with a new Writer of opts, in one Append,
// and closes it.
func writeLog(t testing.TB, dir string, recs []Record, opts ...Option) *Writer {
	t.Helper()
	w, err := NewWriter(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// makeRecords returns n records alternating decisions and outcomes, with
// every field set to something that depends on i.
func makeRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		at := epoch.Add(time.Duration(i) * time.Millisecond)
		job := fmt.Sprintf("job-%d", i/2)
		if i%2 == 0 {
			d := Decision{
				Time: at, RequestID: fmt.Sprintf("req-%d", i), JobID: job,
				Source: "heuristic:strn", Sync: "bsp", Latency: time.Duration(i*1000+17) * time.Nanosecond,
				Workers: []string{fmt.Sprintf("node-%d", i%7), fmt.Sprintf("node-%d", (i+1)%7)},
			}
			if i%4 == 0 {
				d.Source, d.Fallback, d.Sync = "heuristic:strn", "deadline", "ssp(3)"
				d.PS = []string{"node-0"}
			} else {
				d.Source = "learned@v3"
			}
			d.JobModel, d.JobGPUs, d.JobBatchSize, d.JobExpectedDuration = []string{"cifar10", "imagenet", "ncf"}[i%3], 2, 64*(i+1), 600.5+float64(i)
			d.JobArch = "ring"
			d.JobSubmitted = epoch.Add(-time.Duration(i) * time.Second)
			if d.PS != nil {
				d.JobArch = "ps"
			}
			switch i % 6 {
			case 0:
				d.Shadow, d.ShadowWorkers, d.ShadowSync = "learned@v3", []string{fmt.Sprintf("node-%d", (i+2)%7)}, "asp"
			case 2:
				d.Shadow, d.ShadowFailure = "heuristic:strn", "deadline"
			}
			recs[i] = d.Record()
			continue
		}
		o := Outcome{Time: at, RequestID: fmt.Sprintf("req-%d", i-1), JobID: job}
		switch i % 6 {
		case 1:
			o.Kind = Started
		case 3:
			o.Kind = Iteration
			o.IterationTimes = []float64{0.5 + float64(i), 0.25, 1e-3}
		default:
			o.Kind = Finished
			o.JCT = 3600.5 + float64(i)
		}
		recs[i] = o.Record()
	}
	return recs
}

// parquetWithoutVersion returns a Parquet file with one string column and
// no version key.
func parquetWithoutVersion(t *testing.T) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "kind", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("decision")
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
