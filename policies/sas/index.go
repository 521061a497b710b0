package sas

import (
	"math"
	"math/bits"
	"slices"

	"github.com/drover-sched/drover/env"
)

// This file keeps SAS's per-decision work from growing with the cluster:
// the workers and flows on each node and the free GPUs follow the
// simulator's change lists (env.View.Changed, Touched) instead of being
// recounted and copied at every decision point, each group's free GPUs
// are a running sum, and the search for a job's single best node visits
// the group's nodes by free GPUs, tightest fit first, and stops as soon as
// no node left can beat the best found. Every decision is the one the
// full scans made (TestMatchesReference).

// Occupancy is an optional ability of a view's Model: the workers, and
// the jobs spanning more than one node, already running on each node
// (indexed as v.Cluster.Nodes) in aggregate, for running jobs that
// v.Active does not list. SAS counts them as it counts v.Active's running
// jobs (a job on several nodes is one flow on each of its distinct
// nodes), so a view whose running jobs are given this way gets the
// decisions of the view that lists them. A live server that tracks tens
// of thousands of running jobs builds the aggregate once for many
// requests instead of handing SAS every job at every request. A view
// whose Model has it is always recounted, never followed through its
// change lists.
type Occupancy interface {
	Occupancy() (workers, multiNodeJobs []int)
}

// sync brings occ, flows, the queue and free up to date with v: from the
// change lists when s saw decision point v.Seq-1 of the same View, else
// by a recount of v's active jobs and a copy of v.Free.
func (s *SAS) sync(v *env.View) {
	_, agg := v.Model.(Occupancy)
	inc := !agg && s.synced && v.Seq != 0 && v == s.view && v.Seq == s.seq+1 && len(v.Free) == len(s.free)
	s.view, s.seq = v, v.Seq
	if !inc {
		s.recount(v)
		return
	}
	// Undo the commits of the last decision point (dropped or applied,
	// an applied one is in the change lists), then follow the lists.
	for _, a := range s.made {
		s.book(a, -1)
		for _, n := range a {
			s.setFree(n, v.Free[n])
		}
	}
	s.made = s.made[:0]
	for _, j := range v.Changed {
		if a, ok := s.booked[j.ID]; ok {
			s.book(a, -1)
			delete(s.booked, j.ID)
		}
		if j.State == env.Running {
			a := slices.Clone(j.Alloc)
			s.book(a, 1)
			s.booked[j.ID] = a
		}
		s.queue.Follow(j)
	}
	for _, n := range v.Touched {
		s.setFree(n, v.Free[n])
	}
}

// recount sets occ and flows from v's running jobs, the queue from its
// pending ones and free from v.Free, and rebuilds the node index.
func (s *SAS) recount(v *env.View) {
	clear(s.occ)
	clear(s.flows)
	if o, ok := v.Model.(Occupancy); ok {
		workers, jobs := o.Occupancy()
		if len(workers) != len(s.occ) || len(jobs) != len(s.flows) {
			panic("sas: Occupancy's length is not the cluster's")
		}
		copy(s.occ, workers)
		for n, c := range jobs {
			s.flows[n] = float64(c)
		}
	}
	s.booked = map[int][]int{}
	s.made = s.made[:0]
	s.queue.Reset(v.Active)
	for _, j := range v.Active {
		if j.State != env.Running {
			continue
		}
		a := slices.Clone(j.Alloc)
		s.book(a, 1)
		s.booked[j.ID] = a
	}
	s.free = append(s.free[:0], v.Free...)
	// A View without the free GPUs (one not made by the simulator) leaves
	// nothing to follow: the next one is recounted.
	s.synced = len(v.Free) == len(s.occ)
	s.index()
}

// book adds d (1 or -1) workers per entry of alloc to occ and, when alloc
// spans nodes, d flows to each of its distinct nodes.
func (s *SAS) book(alloc []int, d int) {
	for _, n := range alloc {
		s.occ[n] += d
	}
	if len(alloc) == 0 || !slices.ContainsFunc(alloc, func(n int) bool { return n != alloc[0] }) {
		return
	}
	s.mark++
	for _, n := range alloc {
		if s.stamp[n] != s.mark {
			s.stamp[n] = s.mark
			s.flows[n] += float64(d)
		}
	}
}

// commit books a new placement into free, occ and flows.
func (s *SAS) commit(alloc []int) {
	for _, n := range alloc {
		s.setFree(n, s.free[n]-1)
	}
	a := slices.Clone(alloc)
	s.book(a, 1)
	s.made = append(s.made, a)
}

// nodeIndex finds nodes by group and free GPUs.
type nodeIndex struct {
	ok     bool    // it follows free and the groups
	group  []int32 // per node: its group
	pos    []int32 // per node: its position in its group
	groups []groupIndex
}

// groupIndex is one group's part of the node index.
type groupIndex struct {
	room  int     // free GPUs
	least float64 // the least floorCost of its nodes
	// sets[f] holds the positions of the group's nodes with f free GPUs,
	// as a bit set; count[f] is their number.
	sets  [][]uint64
	count []int
}

// index rebuilds the node index from free and the groups; without groups
// or free GPUs to follow it stays off, and the searches scan.
func (s *SAS) index() {
	x := &s.idx
	x.ok = false
	if s.groups == nil || len(s.free) != len(s.occ) {
		return
	}
	n := len(s.free)
	if len(x.group) != n {
		x.group, x.pos = make([]int32, n), make([]int32, n)
	}
	x.groups = slices.Grow(x.groups[:0], len(s.groups))[:len(s.groups)]
	for gi, ns := range s.groups {
		g := &x.groups[gi]
		words := (len(ns) + 63) / 64
		g.room = 0
		g.sets = slices.Grow(g.sets[:0], s.gpn+1)[:s.gpn+1]
		g.count = slices.Grow(g.count[:0], s.gpn+1)[:s.gpn+1]
		for f := range g.sets {
			g.sets[f] = slices.Grow(g.sets[f][:0], words)[:words]
			clear(g.sets[f])
			g.count[f] = 0
		}
		least := math.Inf(1)
		for p, nd := range ns {
			f := s.free[nd]
			if f < 0 || f > s.gpn {
				return
			}
			x.group[nd], x.pos[nd] = int32(gi), int32(p)
			g.room += f
			g.sets[f][p/64] |= 1 << (p % 64)
			g.count[f]++
			least = min(least, floorCost(s.view.Cluster.Nodes[nd].Speed))
		}
		g.least = least
	}
	x.ok = true
}

// floorCost is the least factor by which a node of speed sp divides a
// slowdown: 1 over its speed.
func floorCost(sp float64) float64 {
	if sp > 0 {
		return 1 / sp
	}
	return 1
}

// floorBin returns a cost bin below which no single-node slowdown of a job
// with weights in falls on a group whose least floorCost is least: 1 plus
// the weights times the least overload probability any node can have,
// over the speed. Every node is sampled at once, so all hold as many
// samples, L, and all are forecast alike: by the model, whose probability
// can be 0, or by the window, whose probability is at least PriorOver /
// (L + PriorOver + PriorUnder) (no sample over). The bound is taken a
// relative 1e-12 lower so that the rounding of the terms (a probability a
// few ulps below 0) cannot cross it.
func (s *SAS) floorBin(in *jobInfo, least float64, telemetry bool) float64 {
	pmin := 0.0
	if p := s.pred; telemetry && p.Len(0) > 0 && !(p.Model != nil && p.Len(0) >= p.Model.MinHistory && p.period == p.Model.Step) {
		pmin = p.PriorOver / (float64(p.Len(0)) + p.PriorOver + p.PriorUnder)
	}
	lb := (1 + in.weight[CPU]*pmin + in.weight[MemBW]*pmin) * least
	return s.bin(lb - math.Abs(lb)*1e-12)
}

// setFree sets node n's free GPUs to f, keeping the index.
func (s *SAS) setFree(n, f int) {
	old := s.free[n]
	if old == f {
		return
	}
	s.free[n] = f
	x := &s.idx
	if !x.ok {
		return
	}
	if f < 0 || f > s.gpn {
		x.ok = false
		return
	}
	g, p := &x.groups[x.group[n]], x.pos[n]
	g.room += f - old
	g.sets[old][p/64] &^= 1 << (p % 64)
	g.count[old]--
	g.sets[f][p/64] |= 1 << (p % 64)
	g.count[f]++
}

// room returns the free GPUs of group gi.
func (s *SAS) room(gi int) int {
	if s.idx.ok {
		return s.idx.groups[gi].room
	}
	room := 0
	for _, n := range s.groups[gi] {
		room += s.free[n]
	}
	return room
}

// single returns the single node of group gi with room for j that
// candidate's scan picks, the lowest in (cost bin, free GPUs left, index),
// and whether it ran: it visits the nodes by free GPUs, fewest first, and
// by index, and stops once the best found is in the group's floor bin (no
// node left can have a lower bin, and none has as tight a fit with a lower
// index). It does not run without the index, with a non-finite sample
// held (a NaN cost breaks the order), or with negative priors (which
// could make a probability negative).
func (s *SAS) single(v *env.View, in *jobInfo, g int, telemetry bool, gi int) (best candidate, found, ran bool) {
	x := &s.idx
	if !x.ok || gi >= len(x.groups) || !s.pred.finite() || !(s.pred.PriorOver >= 0 && s.pred.PriorUnder >= 0) ||
		math.IsNaN(s.Overload) || math.IsNaN(s.WorkerLoad.CPU) || math.IsNaN(s.WorkerLoad.MemBW) {
		return candidate{}, false, false
	}
	ix := &x.groups[gi]
	ns := s.groups[gi]
	floor := s.floorBin(in, ix.least, telemetry)
	best = candidate{group: gi}
	for f := max(g, 0); f < len(ix.sets); f++ {
		if ix.count[f] == 0 {
			continue
		}
		if found && best.bin <= floor {
			break
		}
		for w, word := range ix.sets[f] {
			for word != 0 {
				p := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				n := ns[p]
				cost := s.slowdown(v, in, n, g, false, telemetry)
				c := candidate{cost: cost, bin: s.bin(cost), leftover: f - g, group: gi}
				if math.IsNaN(c.bin) {
					return candidate{}, false, false
				}
				if !found || c.better(best) {
					c.alloc = slices.Repeat([]int{n}, g)
					best, found = c, true
					if best.bin <= floor {
						return best, true, true
					}
				}
			}
		}
	}
	return best, found, true
}
