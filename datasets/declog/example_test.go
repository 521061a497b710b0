package declog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/datasets/declog"
)

func Example() {
	dir, _ := os.MkdirTemp("", "declog")
	defer os.RemoveAll(dir)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }

	w, err := declog.NewWriter(dir, declog.WithClock(clock), declog.WithMaxRecords(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Append(declog.Decision{
		RequestID: "r1", JobID: "bert-7", Source: "heuristic:strn", Fallback: "unconverged",
		Workers: []string{"node-3", "node-3", "node-5"}, PS: []string{"node-3"}, Sync: "ssp(3)",
		Latency: 180 * time.Microsecond,
	}.Record())
	w.Append(declog.Outcome{JobID: "bert-7", Kind: declog.Started}.Record())
	w.Append(declog.Outcome{JobID: "bert-7", Kind: declog.Finished, JCT: 5400}.Record())
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	log, err := declog.ReadDir(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(log.Files), "files")
	for _, r := range log.Records {
		switch r.Kind {
		case declog.KindDecision:
			d := r.Decision
			fmt.Println(d.Time.Format(time.StampMilli), d.JobID, d.Source, d.Fallback, d.Workers, d.PS, d.Sync, d.Latency)
		case declog.KindOutcome:
			o := r.Outcome
			fmt.Println(o.Time.Format(time.StampMilli), o.JobID, o.Kind, o.JCT)
		}
	}
	// Output:
	// 2 files
	// Dec  2 09:00:00.001 bert-7 heuristic:strn unconverged [node-3 node-3 node-5] [node-3] ssp(3) 180µs
	// Dec  2 09:00:00.002 bert-7 started 0
	// Dec  2 09:00:00.003 bert-7 finished 5400
}

// A process that dies without Close leaves its unsealed file's
// write-ahead log; the next Writer on the directory seals its records and
// says so.
func ExampleWriter_Recovered() {
	dir, _ := os.MkdirTemp("", "declog")
	defer os.RemoveAll(dir)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

	// No queue: each Append is in the write-ahead log when it returns.
	w, _ := declog.NewWriter(dir, declog.WithQueue(0))
	w.Append(declog.Decision{Time: at, RequestID: "r1", JobID: "a"}.Record(),
		declog.Decision{Time: at, RequestID: "r2", JobID: "b"}.Record())
	// ... killed here: no Close.

	w, err := declog.NewWriter(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	for _, r := range w.Recovered() {
		fmt.Println(filepath.Base(r.File), r.Records, "records,", r.LostBytes, "bytes lost")
	}
	log, _ := declog.ReadDir(dir)
	fmt.Println(len(log.Records), "records readable,", len(log.Partial), "unsealed files")
	// Output:
	// decisions-000001.parquet 2 records, 0 bytes lost
	// 2 records readable, 0 unsealed files
}
