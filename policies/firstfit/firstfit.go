package firstfit

import (
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "first-fit"

// FirstFit is first-fit scheduling with backfilling.
type FirstFit struct {
	free  []int // the naive path's scratch copy of the free GPUs
	naive bool  // always take the naive path (tests)

	// The incremental path's state, valid for decision point seq of view.
	view    *env.View
	seq     int
	tree    freeTree
	classes []class    // the pending jobs by GPU count, ascending
	queued  []bool     // by job ID: in a class's heap
	placed  []*env.Job // the jobs the last call started
	touched []int      // the nodes the last call took GPUs from
	ds      []env.Decision
}

var _ policies.Policy = (*FirstFit)(nil)
var _ env.ProgressBlind = (*FirstFit)(nil)

// New returns a first-fit policy.
func New(policies.Config) (policies.Policy, error) { return &FirstFit{}, nil }

// ProgressBlind implements env.ProgressBlind: first-fit reads only the
// pending jobs and the free GPUs.
func (*FirstFit) ProgressBlind() bool { return true }

// Schedule implements policies.Policy. Given the views of a simulation in
// order (env.View.Seq), it keeps the pending jobs in one heap per GPU
// count and the free GPUs in a tree, both updated from the view's change
// lists, so that a decision costs O(log) per job it starts, whatever the
// cluster's size and the queue's length. Other views take the direct
// path: a scan of the active jobs and the nodes. The two decide alike.
//
// When v.Done is closed it stops before the next job it would start and
// returns env.ErrCancelled; the incremental state then counts the jobs
// and nodes it had taken as it counts decisions not applied.
func (f *FirstFit) Schedule(v *env.View) ([]env.Decision, error) {
	var ds []env.Decision
	if f.naive || v.Seq == 0 {
		f.view = nil
		ds = f.scan(v)
	} else {
		if v != f.view || v.Seq != f.seq+1 {
			f.rebuild(v)
		} else {
			f.sync(v)
		}
		f.view, f.seq = v, v.Seq
		ds = f.decide(v.Done)
	}
	if ds == nil && v.Cancelled() {
		return nil, env.ErrCancelled
	}
	return ds, nil
}

// scan is first-fit by direct scan of the active jobs and the nodes; nil
// when v.Done closed before a pending job.
func (f *FirstFit) scan(v *env.View) []env.Decision {
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
		if v.Cancelled() {
			return nil
		}
		if a := env.PackFirstFit(f.free, j.Spec.GPUs); a != nil {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: a})
			left -= j.Spec.GPUs
		}
	}
	return ds
}

// rebuild builds the incremental state from scratch.
func (f *FirstFit) rebuild(v *env.View) {
	f.tree.build(v.Free)
	for i := range f.classes {
		f.classes[i].h = f.classes[i].h[:0]
	}
	clear(f.queued)
	f.placed, f.touched = f.placed[:0], f.touched[:0]
	for _, j := range v.Active {
		f.enqueue(j)
	}
}

// sync brings the incremental state up to v from the previous decision
// point: the nodes whose free GPUs changed (and those the last call took,
// in case its decisions were not all applied) and the jobs that arrived or
// came back to the queue (and those the last call started, likewise).
func (f *FirstFit) sync(v *env.View) {
	for _, n := range f.touched {
		f.tree.set(n, v.Free[n])
	}
	for _, n := range v.Touched {
		f.tree.set(n, v.Free[n])
	}
	for _, j := range f.placed {
		f.enqueue(j)
	}
	for _, j := range v.Changed {
		f.enqueue(j)
	}
	f.placed, f.touched = f.placed[:0], f.touched[:0]
}

// enqueue puts j in its class's heap if it is pending and not there yet.
func (f *FirstFit) enqueue(j *env.Job) {
	if j.State != env.Pending {
		return
	}
	if j.ID >= len(f.queued) {
		n := len(f.queued)
		f.queued = slices.Grow(f.queued, max(j.ID+1, 2*n)-n)[:max(j.ID+1, 2*n)]
		clear(f.queued[n:])
	}
	if f.queued[j.ID] {
		return
	}
	f.queued[j.ID] = true
	g := j.Spec.GPUs
	k, ok := slices.BinarySearchFunc(f.classes, g, func(c class, g int) int { return c.gpus - g })
	if !ok {
		f.classes = slices.Insert(f.classes, k, class{gpus: g})
	}
	f.classes[k].push(j)
}

// decide starts, in arrival order, every pending job whose GPUs fit in
// what is left: the next one is the lowest ID among the heads of the
// classes small enough, since a job passed over for its size stays too
// large while the free GPUs only shrink. It returns nil when done closes
// before a job.
func (f *FirstFit) decide(done <-chan struct{}) []env.Decision {
	left := f.tree.total
	var ds []env.Decision
	for left > 0 {
		var best *env.Job
		bc := -1
		for c := range f.classes {
			cl := &f.classes[c]
			if cl.gpus > left {
				break
			}
			for len(cl.h) > 0 && cl.h[0].State != env.Pending {
				f.queued[cl.pop().ID] = false // started or gone otherwise
			}
			if len(cl.h) > 0 && (best == nil || cl.h[0].ID < best.ID) {
				best, bc = cl.h[0], c
			}
		}
		if best == nil {
			break
		}
		if env.Closed(done) {
			return nil
		}
		f.classes[bc].pop()
		f.queued[best.ID] = false
		a := f.pack(best.Spec.GPUs)
		ds = append(ds, env.Decision{Job: best.ID, Nodes: a})
		f.placed = append(f.placed, best)
		left -= best.Spec.GPUs
	}
	return ds
}

// pack is env.PackFirstFit on the tree: the first node with n free
// GPUs, else nodes in index order. n is at most the free total.
func (f *FirstFit) pack(n int) []int {
	if i := f.tree.first(n); i >= 0 {
		f.tree.set(i, f.tree.free[i]-n)
		f.touched = append(f.touched, i)
		return slices.Repeat([]int{i}, n)
	}
	alloc := make([]int, 0, n)
	for len(alloc) < n {
		i := f.tree.first(1)
		k := min(f.tree.free[i], n-len(alloc))
		for range k {
			alloc = append(alloc, i)
		}
		f.tree.set(i, f.tree.free[i]-k)
		f.touched = append(f.touched, i)
	}
	return alloc
}

// class is the pending jobs of one GPU count: a min-heap by ID.
type class struct {
	gpus int
	h    []*env.Job
}

func (c *class) push(j *env.Job) {
	c.h = append(c.h, j)
	for i := len(c.h) - 1; i > 0; {
		p := (i - 1) / 2
		if c.h[p].ID <= c.h[i].ID {
			break
		}
		c.h[p], c.h[i] = c.h[i], c.h[p]
		i = p
	}
}

func (c *class) pop() *env.Job {
	top := c.h[0]
	last := len(c.h) - 1
	c.h[0] = c.h[last]
	c.h[last] = nil
	c.h = c.h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < last && c.h[l].ID < c.h[m].ID {
			m = l
		}
		if r := l + 1; r < last && c.h[r].ID < c.h[m].ID {
			m = r
		}
		if m == i {
			break
		}
		c.h[m], c.h[i] = c.h[i], c.h[m]
		i = m
	}
	return top
}

// freeTree holds each node's free GPUs and, over them, a max tree that
// finds the first node with at least n free in O(log nodes).
type freeTree struct {
	free  []int
	max   []int // max[1] the root; leaf of node i at len(max)/2 + i
	total int
}

func (t *freeTree) build(free []int) {
	t.free = append(t.free[:0], free...)
	size := 1
	for size < len(free) {
		size *= 2
	}
	t.max = slices.Grow(t.max[:0], 2*size)[:2*size]
	clear(t.max)
	t.total = 0
	for i, x := range free {
		t.max[size+i] = x
		t.total += x
	}
	for i := size - 1; i >= 1; i-- {
		t.max[i] = max(t.max[2*i], t.max[2*i+1])
	}
}

// set sets node i's free GPUs to x.
func (t *freeTree) set(i, x int) {
	t.total += x - t.free[i]
	t.free[i] = x
	k := len(t.max)/2 + i
	t.max[k] = x
	for k > 1 {
		k /= 2
		m := max(t.max[2*k], t.max[2*k+1])
		if t.max[k] == m {
			break
		}
		t.max[k] = m
	}
}

// first returns the lowest-index node with at least n free GPUs, or -1.
func (t *freeTree) first(n int) int {
	if len(t.max) < 2 || t.max[1] < n {
		return -1
	}
	k := 1
	for k < len(t.max)/2 {
		if t.max[2*k] >= n {
			k = 2 * k
		} else {
			k = 2*k + 1
		}
	}
	return k - len(t.max)/2
}
