package train

import (
	"sync"
	"sync/atomic"

	"github.com/drover-sched/drover/env/placement"
)

// replayAll plays episode seed once per prefix, on the environments envs
// in parallel, and returns the GPU-held hours of all jobs in each replay,
// in prefixes' order. A replay takes the prefix's actions, then the
// heuristic's choice (action 0) for every later job; an action no longer
// valid becomes the heuristic's. Each replay depends only on seed and its
// prefix, so the result does not depend on len(envs).
func replayAll(envs []*placement.Env, seed uint64, prefixes [][]int) []float64 {
	out := make([]float64, len(prefixes))
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, e := range envs[:min(len(envs), len(prefixes))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mask []bool
			for {
				i := int(next.Add(1) - 1)
				if i >= len(prefixes) {
					return
				}
				actions := prefixes[i]
				e.Reset(seed)
				for k := 0; ; k++ {
					mask = e.ActionMask(mask)
					a := 0
					if k < len(actions) && mask[actions[k]] {
						a = actions[k]
					}
					if _, _, term, trunc, _ := e.Step(a); term || trunc {
						break
					}
				}
				h := 0.0
				for j := range e.Jobs() {
					h += e.Jobs()[j].Held
				}
				out[i] = h / 3600
			}
		}()
	}
	wg.Wait()
	return out
}
