package tiresias

import (
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "tiresias"

// DefaultThreshold is the demotion threshold in GPU-seconds (16 GPU-hours).
const DefaultThreshold = 16 * 3600

// Tiresias is the two-queue discretized LAS policy.
type Tiresias struct {
	// Threshold is the demotion threshold in GPU-seconds.
	Threshold int64

	q0, q1 []int
	known  map[int]*jobInfo
}

type jobInfo struct {
	running   bool
	lastCheck int64
	executed  int64
	total     int64
	pending   int64
}

var _ policies.Policy = (*Tiresias)(nil)

// New returns a Tiresias policy with the default threshold.
func New(policies.Config) (policies.Policy, error) {
	return &Tiresias{Threshold: DefaultThreshold, known: map[int]*jobInfo{}}, nil
}

var _ env.ProgressBlind = (*Tiresias)(nil)

// ProgressBlind implements env.ProgressBlind: Tiresias keeps its own
// attained service from the decision times.
func (*Tiresias) ProgressBlind() bool { return true }

// Schedule implements policies.Policy.
func (t *Tiresias) Schedule(v *env.View) ([]env.Decision, error) {
	if len(v.Active) == 0 {
		return nil, nil
	}
	now := int64(v.Now)
	alive := make(map[int]*env.Job, len(v.Active))
	for _, j := range v.Active {
		alive[j.ID] = j
	}
	t.q0 = keep(t.q0, alive)
	t.q1 = keep(t.q1, alive)
	for id := range t.known {
		if alive[id] == nil {
			delete(t.known, id)
		}
	}
	for _, j := range v.Active {
		if t.known[j.ID] == nil {
			t.known[j.ID] = &jobInfo{}
			t.q0 = append(t.q0, j.ID)
		}
	}
	// Update queues.
	for _, j := range v.Active {
		in := t.known[j.ID]
		tmp := now - in.lastCheck
		in.lastCheck = now
		if in.running {
			in.total += tmp
			in.executed += tmp
			if in.executed*int64(j.Spec.GPUs) >= t.Threshold {
				if i := index(t.q0, j.ID); i >= 0 {
					t.q0 = append(t.q0[:i], t.q0[i+1:]...)
					t.q1 = append(t.q1, j.ID)
				}
			}
		} else {
			in.pending += tmp
		}
	}
	// Update statuses.
	gpus := v.Cluster.TotalGPUs()
	want := make(map[int][]int, len(v.Active))
	for _, q := range [2][]int{t.q0, t.q1} {
		for _, id := range q {
			j, in := alive[id], t.known[id]
			if j.Spec.GPUs <= gpus {
				in.running = true
				gpus -= j.Spec.GPUs
				want[id] = j.Alloc
			} else {
				in.running = false
			}
		}
	}
	// Allocate the newly running jobs.
	free := make([]int, len(v.Cluster.Nodes))
	for i, n := range v.Cluster.Nodes {
		free[i] = n.GPUs
	}
	for _, a := range want {
		for _, n := range a {
			free[n]--
		}
	}
	for _, q := range [2][]int{t.q0, t.q1} {
		for _, id := range q {
			if t.known[id].running && len(want[id]) == 0 {
				want[id] = policies.PackMostFree(free, alive[id].Spec.GPUs)
			}
		}
	}
	return policies.Diff(v, want), nil
}

func keep(q []int, alive map[int]*env.Job) []int {
	k := 0
	for _, id := range q {
		if alive[id] != nil {
			q[k] = id
			k++
		}
	}
	return q[:k]
}

func index(q []int, id int) int {
	for i, x := range q {
		if x == id {
			return i
		}
	}
	return -1
}
