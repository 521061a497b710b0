package tiresias

import (
	"fmt"
	"slices"

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
	// info is indexed by job ID (env.Job.ID, the job's index in the
	// workload): the per-job state that maps keyed by ID held before,
	// rebuilt at every decision (a 10k-job replay on 10k GPUs spent
	// three quarters of its time in map operations). It is kept small
	// (48 bytes) and read once per active job per decision: on a large
	// cluster a decision is a walk over tens of thousands of jobs, bound
	// by memory latency.
	info  []jobInfo
	epoch uint64 // stamps the jobs of the current View
	free  []int  // free GPUs per node, reused between decisions
	pack  policies.MostFree
	// Scratch, per decision: the jobs started and stopped, and the
	// decisions they make.
	start, stop []int
	changes     []change
}

// change is a job started or stopped by a decision: its place in the View
// and the nodes it gets (none when stopped).
type change struct {
	pos   int32
	id    int
	nodes []int
}

type jobInfo struct {
	alive     uint64 // == epoch: active in the current View
	lastCheck int64
	executed  int64
	job       *env.Job // when alive
	pos       int32    // when alive: the job's index in View.Active
	gpus      int32    // when alive: job.Spec.GPUs
	known     bool     // in q0 or q1
	inQ0      bool
	running   bool
}

var _ policies.Policy = (*Tiresias)(nil)

// New returns a Tiresias policy with the default threshold.
func New(policies.Config) (policies.Policy, error) {
	return &Tiresias{Threshold: DefaultThreshold}, nil
}

var _ env.ProgressBlind = (*Tiresias)(nil)

// ProgressBlind implements env.ProgressBlind: Tiresias keeps its own
// attained service from the decision times.
func (*Tiresias) ProgressBlind() bool { return true }

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next job of its pass over the View and returns
// env.ErrCancelled; the attained service of the jobs it went through is
// then brought to v.Now, as the next call would have.
func (t *Tiresias) Schedule(v *env.View) ([]env.Decision, error) {
	if len(v.Active) == 0 {
		return nil, nil
	}
	now := int64(v.Now)
	t.epoch++
	// One pass over the View: new jobs join queue 0 in arrival order;
	// every job's attained service is brought to now, and a running job
	// past the threshold moves to the back of queue 1. Jobs gone from the
	// View then leave the queues and are forgotten (every known job is in
	// exactly one queue): dropping them after the pass keeps each queue's
	// order what the reference's separate passes give, since new and
	// demoted jobs are alive and a demotion only removes its own job from
	// queue 0.
	for i, j := range v.Active {
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		if j.ID < 0 {
			return nil, fmt.Errorf("tiresias: job %d: negative ID", j.ID)
		}
		if j.ID >= len(t.info) {
			t.info = slices.Grow(t.info, j.ID+1-len(t.info))[:j.ID+1]
		}
		in := &t.info[j.ID]
		if !in.known {
			*in = jobInfo{known: true, inQ0: true}
			t.q0 = append(t.q0, j.ID)
		}
		in.alive, in.job, in.pos, in.gpus = t.epoch, j, int32(i), int32(j.Spec.GPUs)
		tmp := now - in.lastCheck
		in.lastCheck = now
		if in.running {
			in.executed += tmp
			if in.executed*int64(j.Spec.GPUs) >= t.Threshold && in.inQ0 {
				k := slices.Index(t.q0, j.ID)
				t.q0 = slices.Delete(t.q0, k, k+1)
				t.q1 = append(t.q1, j.ID)
				in.inQ0 = false
			}
		}
	}
	t.q0 = t.keep(t.q0)
	t.q1 = t.keep(t.q1)
	// Update statuses: walk queue 0 then queue 1, marking a job running
	// while its GPUs fit in the cluster's count. The free GPUs per node
	// are those of the jobs kept running: the View's free GPUs plus what
	// the jobs stopped now hold, when the View has them (else counted
	// from the nodes' GPUs).
	gpus := v.Cluster.TotalGPUs()
	nodes := v.Cluster.Nodes
	t.free = slices.Grow(t.free[:0], len(nodes))[:len(nodes)]
	fromView := len(v.Free) == len(nodes)
	if fromView {
		copy(t.free, v.Free)
	} else {
		for i, n := range nodes {
			t.free[i] = n.GPUs
		}
	}
	t.start, t.stop = t.start[:0], t.stop[:0]
	for _, q := range [2][]int{t.q0, t.q1} {
		for _, id := range q {
			in := &t.info[id]
			if g := int(in.gpus); g <= gpus {
				in.running = true
				gpus -= g
				if len(in.job.Alloc) == 0 {
					t.start = append(t.start, id)
				} else if !fromView {
					for _, n := range in.job.Alloc {
						t.free[n]--
					}
				}
			} else {
				in.running = false
				if len(in.job.Alloc) > 0 {
					t.stop = append(t.stop, id)
					if fromView {
						for _, n := range in.job.Alloc {
							t.free[n]++
						}
					}
				}
			}
		}
	}
	if len(t.start)+len(t.stop) == 0 {
		return nil, nil
	}
	// The changes: the jobs stopped (no nodes) and the jobs started, each
	// given nodes in queue order. A job kept running keeps its
	// allocation.
	t.changes = t.changes[:0]
	for _, id := range t.stop {
		t.changes = append(t.changes, change{pos: t.info[id].pos, id: id})
	}
	// A few jobs are packed by scanning the nodes; more through a max
	// tree, built once (same nodes: TestMostFreeMatchesPack).
	tree := len(t.start) > 4
	if tree {
		t.pack.Reset(t.free)
	}
	for _, id := range t.start {
		in := &t.info[id]
		var nodes []int
		if tree {
			nodes = t.pack.Pack(int(in.gpus))
		} else {
			nodes = env.PackMostFree(t.free, int(in.gpus))
		}
		t.changes = append(t.changes, change{pos: in.pos, id: id, nodes: nodes})
	}
	// Decisions in the View's order.
	slices.SortFunc(t.changes, func(a, b change) int { return int(a.pos - b.pos) })
	var ds []env.Decision
	for _, c := range t.changes {
		if !slices.Equal(c.nodes, t.info[c.id].job.Alloc) {
			ds = append(ds, env.Decision{Job: c.id, Nodes: c.nodes})
		}
	}
	return ds, nil
}

// keep drops from q the jobs absent from the current View, forgetting them.
func (t *Tiresias) keep(q []int) []int {
	k := 0
	for _, id := range q {
		if in := &t.info[id]; in.alive == t.epoch {
			q[k] = id
			k++
		} else {
			*in = jobInfo{}
		}
	}
	return q[:k]
}
