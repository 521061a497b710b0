package state

import "container/heap"

// jobHeap orders jobs by the order they are forgotten in: finished jobs
// first, then the least recently touched, then the smaller id (so the
// order is total and eviction does not depend on map order). A job sits in
// two heaps, the store's and its node's (a job an agent's reports
// created); slot says which of the job's positions this heap keeps.
type jobHeap struct {
	h    []*job
	slot int
}

func (q *jobHeap) Len() int { return len(q.h) }

func (q *jobHeap) Less(i, k int) bool { return forgetFirst(q.h[i], q.h[k]) }

func (q *jobHeap) Swap(i, k int) {
	q.h[i], q.h[k] = q.h[k], q.h[i]
	q.h[i].pos[q.slot] = i
	q.h[k].pos[q.slot] = k
}

func (q *jobHeap) Push(x any) {
	j := x.(*job)
	j.pos[q.slot] = len(q.h)
	q.h = append(q.h, j)
}

func (q *jobHeap) Pop() any {
	j := q.h[len(q.h)-1]
	q.h[len(q.h)-1] = nil
	q.h = q.h[:len(q.h)-1]
	j.pos[q.slot] = -1
	return j
}

// top returns the job forgotten next (nil: none).
func (q *jobHeap) top() *job {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

func (q *jobHeap) add(j *job)    { heap.Push(q, j) }
func (q *jobHeap) remove(j *job) { heap.Remove(q, j.pos[q.slot]) }
func (q *jobHeap) fix(j *job)    { heap.Fix(q, j.pos[q.slot]) }

// forgetFirst reports whether a is forgotten before b.
func forgetFirst(a, b *job) bool {
	if a.finished != b.finished {
		return a.finished
	}
	if !a.touched.Equal(b.touched) {
		return a.touched.Before(b.touched)
	}
	return a.id < b.id
}
