package strn

import (
	"cmp"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
)

// classKey is all that a one-node candidate's score reads of its node:
// the node's load on CPU and memory bandwidth (as bits, so that equal
// keys give bit-identical scores), its speed, its free and total GPUs.
// Nodes of one key score alike for every job, so STRN scores each class
// of nodes once instead of each node.
type classKey struct {
	cpu, mem, speed uint64
	free, gpus      int
}

// nodeClass is the set of nodes of one key: a min-heap of node<<32 |
// stamp with stale entries (nodes since moved), which are dropped when
// they reach the top or when they outnumber the live ones.
type nodeClass struct {
	key  classKey
	heap []uint64
	live int
}

// classIndex groups the nodes by classKey, kept up to date across
// decision points from View.Touched and the placements STRN booked, so
// that a one-node job's candidates cost O(classes) rather than O(nodes).
type classIndex struct {
	built   bool
	byKey   map[classKey]int32
	cls     []nodeClass
	spare   []int32  // ids of empty classes, for reuse
	of      []int32  // each node's class
	stamp   []uint32 // each node's current entry, to tell stale ones
	synced  bool     // cls matches s.free and s.load at this decision point
	changed []int    // scratch: the nodes to move

	// What the index was built for, to tell whether the next View
	// continues the run it has seen.
	view    *env.View
	seq     int
	cluster *env.Cluster
	nodes   int
	telem   bool  // the model reports telemetry
	next    bool  // this decision point's View follows the last one seen
	booked  []int // nodes whose free GPUs or load this decision point's placements changed
}

// keyOf returns node n's class key from s.free and s.load.
func (s *STRN) keyOf(c *env.Cluster, n int) classKey {
	u := s.load[n]
	return classKey{cpu: math.Float64bits(u.CPU), mem: math.Float64bits(u.MemBW),
		speed: math.Float64bits(c.Nodes[n].Speed), free: s.free[n], gpus: c.Nodes[n].GPUs}
}

// rebuild puts every node of c in its class.
func (s *STRN) rebuild(c *env.Cluster) {
	ix := &s.ix
	if ix.byKey == nil {
		ix.byKey = make(map[classKey]int32)
	}
	clear(ix.byKey)
	ix.cls, ix.spare = ix.cls[:0], ix.spare[:0]
	n := len(c.Nodes)
	ix.of = slices.Grow(ix.of[:0], n)[:n]
	ix.stamp = slices.Grow(ix.stamp[:0], n)[:n]
	for i := range ix.of {
		ix.of[i] = -1
	}
	for i := range n {
		s.move(c, i)
	}
	ix.synced = true
}

// move puts node n in the class of its current key.
func (s *STRN) move(c *env.Cluster, n int) {
	ix := &s.ix
	k := s.keyOf(c, n)
	if o := ix.of[n]; o >= 0 {
		if ix.cls[o].key == k {
			return
		}
		cl := &ix.cls[o]
		cl.live--
		if cl.live == 0 {
			delete(ix.byKey, cl.key)
			cl.heap = cl.heap[:0]
			ix.spare = append(ix.spare, o)
		}
	}
	id, ok := ix.byKey[k]
	if !ok {
		if len(ix.spare) > 0 {
			id = ix.spare[len(ix.spare)-1]
			ix.spare = ix.spare[:len(ix.spare)-1]
			ix.cls[id].key = k
		} else {
			id = int32(len(ix.cls))
			ix.cls = append(ix.cls, nodeClass{key: k})
		}
		ix.byKey[k] = id
	}
	ix.stamp[n]++
	ix.of[n] = id
	cl := &ix.cls[id]
	cl.live++
	if len(cl.heap) > 2*cl.live+32 {
		// Mostly stale: keep the live entries.
		h := cl.heap[:0]
		for _, e := range cl.heap {
			if ix.valid(id, e) {
				h = append(h, e)
			}
		}
		slices.Sort(h) // a sorted slice is a min-heap
		cl.heap = h
	}
	cl.heap = heapPush(cl.heap, uint64(n)<<32|uint64(ix.stamp[n]))
}

// valid reports whether heap entry e of class id is a node still there.
func (ix *classIndex) valid(id int32, e uint64) bool {
	n := int(e >> 32)
	return ix.of[n] == id && ix.stamp[n] == uint32(e)
}

// least appends to dst the up to m nodes of least index in class id.
func (ix *classIndex) least(id int32, m int, dst []int) []int {
	cl := &ix.cls[id]
	var got [MaxPlacements]uint64
	k := 0
	for k < m && k < len(got) && len(cl.heap) > 0 {
		var e uint64
		cl.heap, e = heapPop(cl.heap)
		if ix.valid(id, e) {
			got[k] = e
			k++
		}
	}
	for _, e := range got[:k] {
		dst = append(dst, int(e>>32))
		cl.heap = heapPush(cl.heap, e)
	}
	return dst
}

// first returns the node of least index in class id (which has one).
func (ix *classIndex) first(id int32) int {
	cl := &ix.cls[id]
	for !ix.valid(id, cl.heap[0]) {
		cl.heap, _ = heapPop(cl.heap)
	}
	return int(cl.heap[0] >> 32)
}

func heapPush(h []uint64, e uint64) []uint64 {
	h = append(h, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= e {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	return h
}

func heapPop(h []uint64) ([]uint64, uint64) {
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	n := len(h)
	if n == 0 {
		return h, top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h[r] < h[l] {
			l = r
		}
		if last <= h[l] {
			break
		}
		h[i] = h[l]
		i = l
	}
	h[i] = last
	return h, top
}

// classScore is one class's score for the job being placed.
type classScore struct {
	pc placed
	id int32
}

// candNode is one node among the candidates, with its class's score.
type candNode struct {
	pc   *placed
	node int
}

// placeOne fills s.cands with the one-node candidates of g GPUs from the
// class index: each class with room is scored once (on its node of least
// index, every node of it scoring the same), and the MaxPlacements
// candidates of least score are taken, the lower node index first among
// equal scores, as the scan over every node in index order with a stable
// selection gives. It reports false when a score is NaN (the scan must
// then decide, since NaN has no place in the order).
func (s *STRN) placeOne(c *env.Cluster, g, gpn int, sens Sensitivity) bool {
	ix := &s.ix
	s.cs = s.cs[:0]
	// A class whose bound exceeds MaxPlacements classes' scores (each of
	// at least one node) holds no candidate kept; with many classes (the
	// per-worker model's loads) most are skipped so.
	prune := len(ix.cls) > 4*MaxPlacements && s.prepareBound(sens)
	var l bestScores
	for id := range ix.cls {
		cl := &ix.cls[id]
		if cl.live == 0 || cl.key.free < g {
			continue
		}
		n := ix.first(int32(id))
		if prune {
			b := s.bound(c, n, g, sens)
			if math.IsNaN(b) {
				return false
			}
			if l.beaten(b, false) {
				continue
			}
		}
		s.order = append(s.order[:0], n)
		s.take = append(s.take[:0], g)
		pc := s.score(c, g, gpn, sens)
		if math.IsNaN(pc.score) {
			return false
		}
		l.add(pc.score)
		s.cs = append(s.cs, classScore{pc: pc, id: int32(id)})
	}
	if len(s.cs) == 0 {
		return true
	}
	// Only the classes of score up to S can hold a candidate kept, where S
	// is the score at which the classes taken least score first bring
	// MaxPlacements nodes (every node, when they have fewer). The
	// MaxPlacements least-scored classes, at least one node each, find
	// S; the order among classes of equal score does not matter, as they
	// are all taken or none.
	s.top = s.top[:0]
	for i := range s.cs {
		sc := s.cs[i].pc.score
		if len(s.top) == MaxPlacements && !(sc < s.cs[s.top[MaxPlacements-1]].pc.score) {
			continue
		}
		j := len(s.top)
		for j > 0 && sc < s.cs[s.top[j-1]].pc.score {
			j--
		}
		s.top = slices.Insert(s.top, j, i)
		if len(s.top) > MaxPlacements {
			s.top = s.top[:MaxPlacements]
		}
	}
	all, cut, have := true, 0.0, 0
	for _, i := range s.top {
		have += ix.cls[s.cs[i].id].live
		if have >= MaxPlacements {
			all, cut = false, s.cs[i].pc.score
			break
		}
	}
	s.cn = s.cn[:0]
	for i := range s.cs {
		if !all && cut < s.cs[i].pc.score {
			continue
		}
		s.nodesScratch = ix.least(s.cs[i].id, MaxPlacements, s.nodesScratch[:0])
		for _, n := range s.nodesScratch {
			s.cn = append(s.cn, candNode{pc: &s.cs[i].pc, node: n})
		}
	}
	slices.SortFunc(s.cn, func(a, b candNode) int {
		if c := byScore(*a.pc, *b.pc); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	for _, cn := range s.cn[:min(len(s.cn), MaxPlacements)] {
		pc := *cn.pc
		pc.one = cn.node + 1
		s.cands = append(s.cands, pc)
	}
	return true
}
