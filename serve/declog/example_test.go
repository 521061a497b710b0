package declog_test

import (
	"fmt"
	"os"
	"time"

	"github.com/drover-sched/drover/serve/declog"
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
