package mmgym_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/infer/mm/autoscale"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
)

// An hour of day 1 at the trace's rate under ModServe's rule (the Rule
// action every period): 12 five-minute periods, the first played in
// Reset, then one step each until the last request is served.
func Example() {
	sc := mmscale.DefaultConfig()
	sc.SLO = mmscale.Objective{Factor: 5, Text: 0.026, Image: 0.075}
	prof := mmscale.Profile{ImageTokensPerSec: 7014, TextTokensPerSec: 8569, MonoRequestsPerSec: 0.927, EncodeSeconds: 0.122}
	e, err := mmgym.New(mmgym.Config{Model: mm.Llama32_11BVision, Days: []int{1}, Hours: 1, Scale: sc, Profile: prof,
		NewRule: func() (autoscale.Scaler, error) {
			return mmscale.NewModServe(sc, prof, mmscale.Sizes{Image: 2, Text: 2})
		},
		Penalty: 0.05,
		Router:  func() mm.Router { r, _ := modserve.New(modserve.RouteOnly); return r }})
	if err != nil {
		panic(err)
	}
	e.Reset(1)
	steps := 0
	for {
		steps++
		_, _, terminated, _, info := e.Step(mmgym.Rule)
		if terminated {
			fmt.Printf("%d steps, attainment above 0.9: %v\n", steps, info["attainment"] > 0.9)
			break
		}
	}
	// Output:
	// 12 steps, attainment above 0.9: true
}
