package mm

// event kinds.
const (
	evPreprocessed uint8 = iota // an image of req preprocessed at image instance inst
	evReady                     // req's images are all at its text instance (or preprocessed, monolith)
	evEncoded                   // inst's encoder batch ends
	evIter                      // inst's language-model iteration (or decode run) ends, if ver matches
	evStarted                   // inst has started
)

// event is one pending event; seq breaks ties in the order they were
// scheduled, so that a run is deterministic.
type event struct {
	t    float64
	seq  uint64
	inst int32
	req  int32
	ver  uint32
	kind uint8
}

func (a *event) less(b *event) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// eventHeap is a binary min-heap of events on (t, seq).
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !a[i].less(&a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	*h = a
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a[r].less(&a[l]) {
			m = r
		}
		if !a[m].less(&a[i]) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	return top
}

// item is one entry of a queue inside an instance: a request (or one of
// its images) with the priority key its router gave (lower first) and the
// order it came in (ties).
type item struct {
	key float64
	seq uint64
	req int32
	img int32 // the image's index in its request (encoder queues)
}

func (a *item) less(b *item) bool {
	return a.key < b.key || (a.key == b.key && a.seq < b.seq)
}

// queue is a binary min-heap of items.
type queue []item

func (q *queue) push(it item) {
	*q = append(*q, it)
	a := *q
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !a[i].less(&a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (q *queue) pop() item {
	a := *q
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	*q = a
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a[r].less(&a[l]) {
			m = r
		}
		if !a[m].less(&a[i]) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	return top
}

// done is one running request's place in a decode batch: the decode
// iteration (the instance's count) after which it has made its last token.
type done struct {
	at  int64
	req int32
}

// doneHeap is a binary min-heap of running requests on (at, req).
type doneHeap []done

func (h *doneHeap) push(d done) {
	*h = append(*h, d)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !(a[i].at < a[p].at || (a[i].at == a[p].at && a[i].req < a[p].req)) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *doneHeap) pop() done {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	*h = a
	i := 0
	lt := func(x, y done) bool { return x.at < y.at || (x.at == y.at && x.req < y.req) }
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && lt(a[r], a[l]) {
			m = r
		}
		if !lt(a[m], a[i]) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	return top
}
