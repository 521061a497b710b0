package random

import (
	"math/rand/v2"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "random"

// Random is a seeded random scheduler.
type Random struct {
	rng *rand.Rand
}

var _ policies.Policy = (*Random)(nil)

// New returns a random policy seeded from cfg.Seed.
func New(cfg policies.Config) (policies.Policy, error) {
	return &Random{rng: rand.New(rand.NewPCG(cfg.Seed, 0x72616e646f6d))}, nil
}

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next job it would place and returns env.ErrCancelled (its
// random stream then has moved on as far as it went).
func (r *Random) Schedule(v *env.View) ([]env.Decision, error) {
	var pending []*env.Job
	for _, j := range v.Active {
		if j.State == env.Pending {
			pending = append(pending, j)
		}
	}
	if len(pending) == 0 {
		return nil, nil
	}
	var slots []int // one entry per free GPU
	for n, f := range v.Free {
		for range f {
			slots = append(slots, n)
		}
	}
	r.rng.Shuffle(len(pending), func(a, b int) { pending[a], pending[b] = pending[b], pending[a] })
	var ds []env.Decision
	for _, j := range pending {
		if j.Spec.GPUs > len(slots) {
			continue
		}
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		r.rng.Shuffle(len(slots), func(a, b int) { slots[a], slots[b] = slots[b], slots[a] })
		nodes := append([]int(nil), slots[:j.Spec.GPUs]...)
		slices.Sort(nodes)
		slots = slots[j.Spec.GPUs:]
		ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes})
	}
	return ds, nil
}
