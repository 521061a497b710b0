package infer

// eventHeap is the pending events, a binary min-heap on time that moves its
// entries exactly as CPython's heapq does (heappush: append, _siftdown;
// heappop: the last entry to the root, _siftup to a leaf, _siftdown), with
// only "<" on times. SplitwiseSim keeps its events in a heapq ordered by
// time alone (simulator.py, Event.__lt__), so events at equal times come
// out in whatever order the heap's shape gives; moving entries the same way
// gives the same order, and cancelled events stay in the heap until popped
// (Simulator.cancel only marks them) to keep the same shape.
type eventHeap []heapEntry

type heapEntry struct {
	t  float64
	id int32
}

func (h *eventHeap) push(e heapEntry) {
	*h = append(*h, e)
	h.siftDown(0, len(*h)-1)
}

func (h *eventHeap) pop() heapEntry {
	a := *h
	last := a[len(a)-1]
	a = a[:len(a)-1]
	*h = a
	if len(a) == 0 {
		return last
	}
	top := a[0]
	a[0] = last
	h.siftUp(0)
	return top
}

// siftDown is heapq._siftdown: the entry at pos moves towards the root
// past every parent it is strictly less than.
func (h eventHeap) siftDown(start, pos int) {
	// Unsigned indices let the compiler drop the bounds checks: pos is
	// in range, and so is every parent of it.
	p, st := uint(pos), uint(start)
	if p >= uint(len(h)) {
		panic("infer: heap position out of range")
	}
	e := h[p]
	for p > st {
		parent := (p - 1) >> 1
		if parent >= uint(len(h)) {
			break // never: parent < p
		}
		if e.t < h[parent].t {
			h[p] = h[parent]
			p = parent
			continue
		}
		break
	}
	h[p] = e
}

// siftUp is heapq._siftup: the entry at pos goes down to a leaf along the
// smaller children (the right one unless the left is strictly less), then
// back up with siftDown.
func (h eventHeap) siftUp(pos int) {
	end := uint(len(h))
	p := uint(pos)
	if p >= end {
		panic("infer: heap position out of range")
	}
	e := h[p]
	for child := 2*p + 1; child < end; child = 2*p + 1 {
		c := h[child]
		if right := child + 1; right < end {
			if r := h[right]; !(c.t < r.t) {
				child, c = right, r
			}
		}
		h[p] = c
		p = child
	}
	h[p] = e
	h.siftDown(pos, int(p))
}
