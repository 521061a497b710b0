package gandiva

import (
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "gandiva"

// Gandiva is affinity-aware best-fit packing.
type Gandiva struct{}

var _ policies.Policy = (*Gandiva)(nil)

// New returns a Gandiva packing policy.
func New(policies.Config) (policies.Policy, error) { return &Gandiva{}, nil }

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next pending job and returns env.ErrCancelled.
func (*Gandiva) Schedule(v *env.View) ([]env.Decision, error) {
	free := slices.Clone(v.Free)
	left := 0
	for _, f := range free {
		left += f
	}
	// sizes[n] holds the GPU counts of the jobs on node n (affinity).
	var sizes map[int]map[int]bool
	var ds []env.Decision
	for _, j := range v.Active {
		if left == 0 {
			break
		}
		g := j.Spec.GPUs
		if j.State != env.Pending || g > left {
			continue
		}
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		if sizes == nil {
			sizes = affinity(v)
		}
		best := -1
		for n, f := range free {
			if f < g {
				continue
			}
			if best < 0 {
				best = n
				continue
			}
			aff, bestAff := sizes[n][g], sizes[best][g]
			if aff != bestAff {
				if aff {
					best = n
				}
				continue
			}
			if f < free[best] {
				best = n
			}
		}
		var nodes []int
		if best >= 0 {
			free[best] -= g
			nodes = slices.Repeat([]int{best}, g)
		} else {
			nodes = spread(v, free, g)
		}
		for _, n := range nodes {
			if sizes[n] == nil {
				sizes[n] = map[int]bool{}
			}
			sizes[n][g] = true
		}
		left -= g
		ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes})
	}
	return ds, nil
}

func affinity(v *env.View) map[int]map[int]bool {
	m := map[int]map[int]bool{}
	for _, j := range v.Active {
		for _, n := range j.Alloc {
			if m[n] == nil {
				m[n] = map[int]bool{}
			}
			m[n][j.Spec.GPUs] = true
		}
	}
	return m
}

// spread places g GPUs over whole free nodes first, then the fullest-free.
func spread(v *env.View, free []int, g int) []int {
	var nodes []int
	for n, f := range free {
		if len(nodes) == g {
			break
		}
		if f == v.Cluster.Nodes[n].GPUs && f <= g-len(nodes) {
			free[n] = 0
			nodes = append(nodes, slices.Repeat([]int{n}, f)...)
		}
	}
	if len(nodes) < g {
		nodes = append(nodes, env.PackMostFree(free, g-len(nodes))...)
	}
	slices.Sort(nodes)
	return nodes
}
