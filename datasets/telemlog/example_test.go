package telemlog_test

import (
	"fmt"
	"os"
	"time"

	"github.com/drover-sched/drover/datasets/telemlog"
)

// Write two nodes' samples, out of time order, and read them back sorted
// by time, then node.
func Example() {
	dir, err := os.MkdirTemp("", "telemlog")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	w, err := telemlog.NewWriter(dir, telemlog.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, s := range []telemlog.Sample{
		telemlog.Raw("n1", t0.Add(time.Minute), 0.5, 0.1, 0.3),
		telemlog.Raw("n0", t0.Add(time.Minute), 0.25, 0.05, 0.4),
		telemlog.Raw("n1", t0, 0.75, 0.2, 0.3),
	} {
		if err := w.Write(s); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	log, err := telemlog.ReadDir(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range log.Samples {
		fmt.Printf("%s %s cpu %.2f net %.2f\n", s.Time.Format("15:04"), s.Node, s.CPU, s.Net)
	}
	// Output:
	// 12:00 n1 cpu 0.75 net 0.30
	// 12:01 n0 cpu 0.25 net 0.40
	// 12:01 n1 cpu 0.50 net 0.30
}
