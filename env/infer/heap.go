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
	e := h[pos]
	for pos > start {
		parent := (pos - 1) >> 1
		if e.t < h[parent].t {
			h[pos] = h[parent]
			pos = parent
			continue
		}
		break
	}
	h[pos] = e
}

// siftUp is heapq._siftup: the entry at pos goes down to a leaf along the
// smaller children (the right one unless the left is strictly less), then
// back up with siftDown.
func (h eventHeap) siftUp(pos int) {
	end := len(h)
	start := pos
	e := h[pos]
	child := 2*pos + 1
	for child < end {
		right := child + 1
		if right < end && !(h[child].t < h[right].t) {
			child = right
		}
		h[pos] = h[child]
		pos = child
		child = 2*pos + 1
	}
	h[pos] = e
	h.siftDown(start, pos)
}
