package fifo

import (
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "fifo"

// FIFO is strict arrival-order scheduling.
type FIFO struct{}

var _ policies.Policy = (*FIFO)(nil)

// New returns a FIFO policy.
func New(policies.Config) (policies.Policy, error) { return &FIFO{}, nil }

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next pending job and returns env.ErrCancelled.
func (*FIFO) Schedule(v *env.View) ([]env.Decision, error) {
	free := append([]int(nil), v.Free...)
	var ds []env.Decision
	for _, j := range v.Active {
		if j.State != env.Pending {
			continue
		}
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		a := env.PackFirstFit(free, j.Spec.GPUs)
		if a == nil {
			break
		}
		ds = append(ds, env.Decision{Job: j.ID, Nodes: a})
	}
	return ds, nil
}
