package compare_test

import (
	"fmt"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/compare"
)

func Example() {
	w := datasets.Builtin()
	w.Jobs = w.Jobs[:40]
	contenders, err := compare.Heuristics(builtin.Registry(), []string{"first-fit", "strn"}, env.Sync{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := compare.Compare(compare.Config{
		Policies: contenders,
		Seeds:    []uint64{1, 2, 3},
		Options: func(seed uint64) (trace.Options, error) {
			profiles, _, err := trace.Profiles("", "") // fresh per run: profiles cache answers
			return trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles,
				Nodes: 4, GPUsPerNode: 4, Interval: -1, RestartDelay: -1,
				Stragglers: &trace.Stragglers{Background: "builtin", Seed: seed}}, err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Policies {
		fmt.Printf("%s: %d runs, %d of %d jobs finished, CI from %d seeds\n",
			p.Name, len(p.Runs), p.Runs[0].Summary.Finished, p.Runs[0].Summary.Jobs, p.AvgJCT.N)
	}
	// compare.WriteTable(os.Stdout, res) prints the table.
	// Output:
	// first-fit: 3 runs, 40 of 40 jobs finished, CI from 3 seeds
	// strn: 3 runs, 40 of 40 jobs finished, CI from 3 seeds
}
