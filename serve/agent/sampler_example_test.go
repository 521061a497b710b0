package agent_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/serve/agent"
)

// Two samples ten seconds apart from a fixture root whose files change in
// between, as a node's /proc does under a running agent.
func ExampleSampler() {
	dir, err := os.MkdirTemp("", "agent-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "root")
	// snapshot makes root hold the files of testdata/node-a/<snap>.
	snapshot := func(snap string) {
		if err := os.RemoveAll(root); err != nil {
			log.Fatal(err)
		}
		if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "node-a", snap))); err != nil {
			log.Fatal(err)
		}
	}

	snapshot("t0")
	s, err := agent.NewSampler(root) // reads root/proc
	if err != nil {
		log.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, snap := range []string{"t0", "t1"} {
		snapshot(snap)
		r, err := s.Sample(start.Add(time.Duration(i) * 10 * time.Second))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d CPUs, memory %.0f%% used, memory pressure avg10 %.1f%%\n",
			snap, r.NumCPU, 100*r.MemUsed, r.MemPressure.Some.Avg10)
		if !r.CPUUtilKnown {
			fmt.Println("    CPU and network: not yet known")
			continue
		}
		fmt.Printf("    over %v: CPU %.0f%% busy, memory stalled %.0f%% (some), rx %.1f MB/s, tx %.1f MB/s\n",
			r.Elapsed, 100*r.CPUUtil, 100*r.MemPressure.SomeStalled, r.NetRxBytesPerSec/1e6, r.NetTxBytesPerSec/1e6)
	}
	// Output:
	// t0: 4 CPUs, memory 25% used, memory pressure avg10 1.5%
	//     CPU and network: not yet known
	// t1: 4 CPUs, memory 75% used, memory pressure avg10 20.0%
	//     over 10s: CPU 75% busy, memory stalled 20% (some), rx 127.5 MB/s, tx 125.5 MB/s
}
