package firstfit

import (
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "first-fit"

// FirstFit is first-fit scheduling with backfilling.
type FirstFit struct {
	free []int
}

var _ policies.Policy = (*FirstFit)(nil)

// New returns a first-fit policy.
func New(policies.Config) (policies.Policy, error) { return &FirstFit{}, nil }

// Schedule implements policies.Policy.
func (f *FirstFit) Schedule(v *env.View) ([]env.Decision, error) {
	f.free = append(f.free[:0], v.Free...)
	left := 0
	for _, n := range f.free {
		left += n
	}
	var ds []env.Decision
	for _, j := range v.Active {
		if left == 0 {
			break
		}
		if j.State != env.Pending || j.Spec.GPUs > left {
			continue
		}
		if a := policies.PackFirstFit(f.free, j.Spec.GPUs); a != nil {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: a})
			left -= j.Spec.GPUs
		}
	}
	return ds, nil
}
