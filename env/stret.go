package env

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// This file holds the runtime straggler mitigations of the per-worker
// model (Workers.STRET and Workers.Replace); refresh in workers.go calls
// them. See MitigationSTRET and MitigationReplace for the rules and their
// sources.

// STRETStage is a set of STRET's stages (Workers.STRETOff).
type STRETStage uint8

// STRET's stages (see MitigationSTRET).
const (
	// STRETRelay is stage (a), the relay through a peer.
	STRETRelay STRETStage = 1 << iota
	// STRETWithhold is stage (b), gradient withholding.
	STRETWithhold
	// STRETTune is stage (c), the one-time batch tuning.
	STRETTune
)

// ParseSTRETStages reads a comma-separated list of stage names (relay,
// withhold, tune; empty for none) into a set.
func ParseSTRETStages(list string) (STRETStage, error) {
	var set STRETStage
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "":
		case "relay":
			set |= STRETRelay
		case "withhold":
			set |= STRETWithhold
		case "tune":
			set |= STRETTune
		default:
			return 0, fmt.Errorf("env: unknown STRET stage %q (want relay, withhold or tune)", name)
		}
	}
	return set, nil
}

// Curve is implemented by profiles that carry validation curves: STRET's
// gradient withholding reads the slope of a job's curve at its progress.
type Curve interface {
	// ValidationCurve returns, for a global batch size, the iterations
	// done and the validation metric after each epoch up to and including
	// the completion epoch. The metric may rise (accuracy) or fall (loss,
	// word error rate).
	ValidationCurve(batchSize int) (iterations, metric []float64)
}

// MarginalWindow is the window, as a share of a job's training, over which
// STRET measures the recent accuracy increment: the authors' code
// (pcl-projects/STRET method_acc.py) compares the accuracy of the last
// iteration with the one 100 iterations back, every 100 iterations; a
// tenth of the training is the same kind of trailing difference on the
// per-epoch validation curves of the Pollux profiles, long enough to
// span several epochs of the shortest curves (ncf: 10 epochs).
const MarginalWindow = 0.1

// MarginalRate is the threshold of STRET's withholding rule: the accuracy
// increment is marginal when the validation metric improved, over the last
// MarginalWindow of training, at less than this fraction of its average
// rate of improvement since the first validation. The authors' code leaves
// its threshold (acc_thld) undefined and compares an absolute increment
// per iteration, which cannot serve metrics in different units (accuracy,
// F1, WER, loss); Drover's rule is relative. A tenth, an order of
// magnitude below the average, marks the plateaus of the six measured
// curves and not their climbs: cifar10 from about 35% of its training,
// deepspeech2 from 50%, ncf from 70%, imagenet between its learning-rate
// decays (20-30%, 45-65% and from 80%), yolov3 only in its last third and
// not throughout, and bert (two epochs, a straight line) never.
const MarginalRate = 0.1

// curve is a job's validation curve on its own progress scale.
type curve struct {
	at     []float64 // progress (share of the training's iterations) after each epoch
	metric []float64 // validation metric after each epoch
	dir    float64   // 1 for a rising metric, -1 for a falling one
}

// newCurve returns p's validation curve at global batch size b on the
// progress scale [0, 1], or nil when p has none (or it is unusable).
func newCurve(p Profile, b int) *curve {
	cp, ok := p.(Curve)
	if !ok {
		return nil
	}
	its, met := cp.ValidationCurve(b)
	n := len(its)
	if n < 2 || len(met) != n || !(its[n-1] > 0) {
		return nil
	}
	c := &curve{at: make([]float64, n), metric: slices.Clone(met), dir: 1}
	for e, it := range its {
		c.at[e] = it / its[n-1]
	}
	if met[n-1] < met[0] {
		c.dir = -1
	}
	return c
}

// value returns the metric at progress x, linear between epochs and held
// at the first validation before it.
func (c *curve) value(x float64) float64 {
	if x <= c.at[0] {
		return c.metric[0]
	}
	i, _ := slices.BinarySearch(c.at, x)
	if i >= len(c.at) {
		return c.metric[len(c.metric)-1]
	}
	t := (x - c.at[i-1]) / (c.at[i] - c.at[i-1])
	if !(t >= 0 && t <= 1) { // equal progress at two epochs
		return c.metric[i]
	}
	return c.metric[i-1] + t*(c.metric[i]-c.metric[i-1])
}

// marginal reports whether the accuracy increment is marginal at progress
// x: over the last MarginalWindow of the training the metric improved at
// no more than MarginalRate times its average rate since the first
// validation (no improvement at all counts as marginal only when the
// recent one is none too). Before a whole window of validations exists it
// is false: the controller has not seen enough of the curve.
func (c *curve) marginal(x float64) bool {
	if c == nil || x-MarginalWindow < c.at[0] {
		return false
	}
	now := c.value(x)
	recent := c.dir * (now - c.value(x-MarginalWindow)) / MarginalWindow
	avg := c.dir * (now - c.metric[0]) / (x - c.at[0])
	return recent <= MarginalRate*max(avg, 0)
}

// expectedNoise is E|z| for a standard normal z: the mean of the network
// burst noise per unit of its scale.
var expectedNoise = math.Sqrt(2 / math.Pi)

// nicSlowdown is how much slower than an idle link a flow of a job with
// duty cycle duty runs on a NIC with background share bg and the given
// concurrent flows (each job's counted at its duty cycle, so the job's own
// flow is added back to full), as exchange computes it.
func nicSlowdown(bg, flows, duty float64) float64 {
	return max(1, (flows+1-duty)/max(0.05, 1-bg))
}

// hopSlowdown returns how much slower than an idle intra-rack link a
// transfer of a job with duty cycle duty between nodes a and b runs as the
// model sees the cluster now: the more contended of the two NICs (bgA and
// bgB their background shares; extraB more flows on b than its occupancy
// counts) and, across racks, the share of the two racks' uplinks. The
// inverse is the pair's bandwidth in units of an idle link: STRET's
// per-pair bandwidth matrix, one entry at a time.
func (m *Drover) hopSlowdown(a, b int, bgA, bgB, extraB, duty float64) float64 {
	c := max(nicSlowdown(bgA, m.occ[a].flows, duty), nicSlowdown(bgB, m.occ[b].flows+extraB, duty))
	ra, rb := m.cluster.Nodes[a].Rack, m.cluster.Nodes[b].Rack
	if ra != rb {
		c = max(c, m.up.factor(rackHop{from: int32(ra), to: int32(rb)}, duty))
	}
	return c
}

// stretState is a job's STRET state beyond workerState: the relays and
// their scratch (per node of the job, in ring order, or per worker), the
// validation curve and whether this placement has been tuned.
type stretState struct {
	curve    *curve    // nil: the profile has no validation curves
	tuned    bool      // the one-time batch tuning of this placement is done
	nodeOf   []int     // per worker: the index of its node in workerState.nodes
	first    []int     // per node: its first worker
	bg       []float64 // per worker: its NIC's background share this refresh
	tmp      []float64 // per worker: scratch for medians
	strag    []bool    // per node: one of its workers straggles
	comm     []bool    // per node: one of its workers is a communication straggler
	peer     []int     // per node: the node it relays through, -1 in the ring
	peerPrev []int     // per node: peer at the previous refresh
	extra    []float64 // per node: the relays' flows it carries (on the occupancy)
	relayM   []float64 // per relaying node or peer: its exchange
	relayQ   []float64 // per relaying node or peer: that exchange's queueing part
	// The buffers the slices above share.
	ints   []int
	floats []float64
	bools  []bool
}

// size sets st up for a placement: its nodes' indices and first workers,
// no relays. Its buffers are three allocations, reused while they fit.
func (st *stretState) size(alloc, nodes []int) {
	w, n := len(alloc), len(nodes)
	st.tuned = false
	if cap(st.ints) < w+3*n || cap(st.floats) < 2*w+3*n || cap(st.bools) < 2*n {
		st.ints = make([]int, w+3*n)
		st.floats = make([]float64, 2*w+3*n)
		st.bools = make([]bool, 2*n)
	}
	ints := st.ints[:w+3*n]
	st.nodeOf, st.first = ints[:w:w], ints[w:w+n:w+n]
	st.peer, st.peerPrev = ints[w+n:w+2*n:w+2*n], ints[w+2*n:w+3*n:w+3*n]
	fs := st.floats[:2*w+3*n]
	st.bg, st.tmp = fs[:w:w], fs[w:w:2*w]
	st.extra, st.relayM, st.relayQ = fs[2*w:2*w+n:2*w+n], fs[2*w+n:2*w+2*n:2*w+2*n], fs[2*w+2*n:2*w+3*n:2*w+3*n]
	bs := st.bools[:2*n]
	st.strag, st.comm = bs[:n:n], bs[n:2*n:2*n]
	for k := range n {
		st.first[k], st.peer[k], st.peerPrev[k] = -1, -1, -1
		st.extra[k] = 0
	}
	for i, a := range alloc {
		k := slices.Index(nodes, a)
		if st.first[k] < 0 {
			st.first[k] = i
		}
		st.nodeOf[i] = k
	}
}

// relaySize is the traffic of a relayed worker (its gradient to the peer,
// the result back) over a ring member's on n nodes (2(n-1)/n gradients
// each way): n / (2(n-1)), 1 for two nodes and towards 1/2 for many. A
// relay's flow counts as that share of a flow.
func relaySize(n int) float64 { return float64(n) / float64(2*(n-1)) }

// relayExchange returns the slowdown of the hop from the job's node k to
// its node p when p carries extra relay flows besides its occupancy (this
// relay's included), the exchange and its queueing part of k relaying
// through p at that slowdown (its bandwidth-bound part scaled to the
// relay's traffic), and p's own exchange with those flows on its NIC (PS
// factor f applied to all).
func (m *Drover) relayExchange(ws *workerState, k, p int, extra, f float64) (c, mk, qk, mp float64) {
	st := ws.stret
	a, b := ws.nodes[k], ws.nodes[p]
	i, ip := st.first[k], st.first[p]
	v := relaySize(len(ws.nodes))
	net := ws.sens.Net
	c = m.hopSlowdown(a, b, st.bg[i], st.bg[ip], extra, ws.duty)
	mk = f * ws.sync * (1 - net + net*v*c)
	qk = f * ws.sync * net * v * (c - 1)
	mp, _ = exchange(ws.sync, net, st.bg[ip], m.occ[b].flows+extra, ws.duty, m.up.factor(ws.hops[ip], ws.duty))
	return c, mk, qk, f * mp
}

// relay is STRET's stage (a) for a job whose ring exchanges are in ws.m
// and ws.q (PS factor f applied): it picks the communication stragglers
// and the peers they relay through, rewrites the exchanges of both, puts
// the relays' flows on the peers' NICs (the job's own and every other
// job's exchanges there see them) and returns the number of relaying
// workers and whether the relays differ from the previous refresh's.
//
// The controller's view is each worker's expected time this period:
// compute x node slowdown x tuned share, plus the exchange and its mean
// burst noise (the jitter, alike in law for every worker, is left out: it
// is no communication matter). A worker straggles when that exceeds the
// median by more than the threshold; it is a communication straggler when
// with the median exchange instead of its own it would not. A node
// relays when one of its workers is a communication straggler (a node's
// workers share its NIC and ring hop): through the non-straggling,
// non-relaying node with the least hop slowdown to it (the highest
// bandwidth), counting the relays already assigned there (ties: the first
// in ring order; the previous refresh's peer is kept while it qualifies),
// and only when that shortens the job's exchange: both the relayed
// transfer and the peer's exchange, which now carries the relay's flow on
// its NIC, end before the straggler's ring exchange would. The relayed
// node leaves the ring: its exchange becomes the transfer of its gradient
// to the peer and of the result back, at the pair's slowdown, which moves
// relaySize of a ring member's traffic; the peer's NIC carries that as a
// flow of that size (for every job whose exchange meets it). The ring
// keeps its measured all-reduce time and its hops' racks on the uplinks:
// one member fewer changes neither much.
//
// A change of relays reconfigures the job's communication and pays the
// restart delay (the caller charges it), so the controller makes one
// only when it pays for itself: when the slowest exchange it saves per
// iteration, against the previous relays at today's loads, times the
// iterations the job has left exceeds the delay; otherwise the previous
// relays stay.
func (m *Drover) relay(j *Job, s *droverJob, f float64) (relayed int, changed bool) {
	wk := m.Workers
	ws := s.w
	st := ws.stret
	w, n := len(j.Alloc), len(ws.nodes)
	bn := max(wk.BurstNoise, 0)
	if j.Sync.Kind == ASP || j.Sync.Kind == SSP {
		bn *= ws.duty
	}
	T, e := ws.scratch[:w], ws.sorted[:w]
	for i := range w {
		base := ws.compute * ws.slow[i]
		if ws.shares != nil {
			base *= ws.shares[i]
		}
		e[i] = ws.m[i] + ws.q[i]*bn*expectedNoise
		T[i] = base + e[i]
	}
	medT, _ := typical(T, st.tmp)
	medE, _ := typical(e, st.tmp)
	lim := medT * (1 + wk.Threshold)
	clear(st.strag)
	clear(st.comm)
	for i, k := range st.nodeOf {
		if T[i] > lim {
			st.strag[k] = true
			if T[i]-e[i]+medE <= lim {
				st.comm[k] = true
			}
		}
	}
	copy(st.peerPrev, st.peer)
	for k := range n {
		st.peer[k], st.extra[k] = -1, 0
	}
	x := relaySize(n) * ws.relayDuty // a relay's flow on its peer's NIC
	ok := func(k, p int) bool { return p != k && !st.strag[p] && st.peer[p] < 0 }
	for k := range n {
		if !st.comm[k] {
			continue
		}
		ring := ws.m[st.first[k]]
		best := -1
		if p := st.peerPrev[k]; p >= 0 && ok(k, p) {
			if _, mk, _, mp := m.relayExchange(ws, k, p, st.extra[p]+x, f); max(mk, mp) < ring {
				best = p
			}
		}
		if best < 0 {
			// The least slowdown wins; the first of equals.
			bc := math.Inf(1)
			for p := range n {
				if !ok(k, p) {
					continue
				}
				if c, mk, _, mp := m.relayExchange(ws, k, p, st.extra[p]+x, f); c < bc && max(mk, mp) < ring {
					best, bc = p, c
				}
			}
		}
		if best < 0 {
			// No peer helps: stay in the ring.
			continue
		}
		st.peer[k] = best
		st.extra[best] += x
	}
	if !slices.Equal(st.peerPrev, st.peer) {
		gain := m.relayPlan(ws, st.peerPrev, f) - m.relayPlan(ws, st.peer, f)
		left := (s.work - s.done) / s.ref // iterations, about
		if !(gain*left > max(s.restart, 0)) {
			copy(st.peer, st.peerPrev)
		}
	}
	m.relayPlan(ws, st.peer, f)
	for i, k := range st.nodeOf {
		switch {
		case st.peer[k] >= 0:
			ws.m[i], ws.q[i] = st.relayM[k], st.relayQ[k]
			relayed++
		case st.extra[k] > 0:
			ws.m[i], ws.q[i] = st.relayM[k], st.relayQ[k]
		}
	}
	for k, x := range st.extra {
		m.occ[ws.nodes[k]].flows += x
	}
	return relayed, !slices.Equal(st.peerPrev, st.peer)
}

// relayPlan evaluates the relays peer (per node: its peer, or -1) at the
// current loads: it sets each node's relay flows in st.extra and, in
// st.relayM and st.relayQ, the exchange and its queueing part of every
// relaying node (through its peer) and every peer (with the relays' flows
// on its NIC), and returns the slowest exchange of the job's nodes.
func (m *Drover) relayPlan(ws *workerState, peer []int, f float64) float64 {
	st := ws.stret
	x := relaySize(len(ws.nodes)) * ws.relayDuty
	clear(st.extra)
	for _, p := range peer {
		if p >= 0 {
			st.extra[p] += x
		}
	}
	slowest := 0.0
	for k, p := range peer {
		i := st.first[k]
		mk := ws.m[i]
		switch {
		case p >= 0:
			_, st.relayM[k], st.relayQ[k], _ = m.relayExchange(ws, k, p, st.extra[p], f)
			mk = st.relayM[k]
		case st.extra[k] > 0:
			mp, qp := exchange(ws.sync, ws.sens.Net, st.bg[i], m.occ[ws.nodes[k]].flows+st.extra[k], ws.duty, m.up.factor(ws.hops[i], ws.duty))
			st.relayM[k], st.relayQ[k] = f*mp, f*qp
			mk = st.relayM[k]
		}
		slowest = max(slowest, mk)
	}
	return slowest
}

// unrelay takes the flows that a job's relays put on their peers' NICs off
// the occupancy again (before a refresh decides anew, and when the job
// leaves its nodes).
func (m *Drover) unrelay(ws *workerState) {
	st := ws.stret
	if st == nil {
		return
	}
	for k, x := range st.extra {
		if x != 0 {
			m.occ[ws.nodes[k]].flows -= x
			st.extra[k] = 0
		}
	}
}

// tune is STRET's stage (c), the one-time batch-size tuning: from this
// refresh's measured compute times (the samples in ws.c less their network
// noise) each worker gets a share of the global batch inversely
// proportional to its time, scaled to mean 1, and the samples are
// rescaled to it, so the persistent part of compute times is equalised
// (transient jitter remains). The authors' find_batch.py does the same
// from measurements: for each worker it looks up the batch size whose
// computation time matches the fastest worker's.
func (ws *workerState) tune(K, w int) {
	ws.shares = make([]float64, w)
	inv := 0.0
	for i := range w {
		t := 0.0
		for k := range K {
			t += ws.c[k][i] - ws.nz[k][i]
		}
		ws.shares[i] = float64(K) / t
		inv += ws.shares[i]
	}
	for i := range w {
		ws.shares[i] *= float64(w) / inv
		for k := range K {
			ws.c[k][i] = (ws.c[k][i]-ws.nz[k][i])*ws.shares[i] + ws.nz[k][i]
		}
	}
}

// placeMitigation sets up the mitigations' state for j's new placement
// (its nodes known): STRET's relays and tuning start afresh, and so does
// the replacement baseline's count of straggling refreshes; replaced
// workers keep their processes while the job keeps its worker count.
func (m *Drover) placeMitigation(j *Job, ws *workerState) {
	w := len(j.Alloc)
	if ws.stret != nil {
		ws.stret.size(j.Alloc, ws.nodes)
	}
	if !m.Workers.Replace {
		return
	}
	r := ws.replace
	if r == nil {
		r = &replaceState{}
		ws.replace = r
	}
	r.persist = slices.Grow(r.persist[:0], w)[:w]
	r.hits = slices.Grow(r.hits[:0], w)[:w]
	clear(r.persist)
	clear(r.hits)
	if len(r.jit) != w {
		r.jit = nil
	}
}

// replaceState is a job's state under the replace-straggler baseline, per
// worker.
type replaceState struct {
	persist []uint8  // refreshes in a row at which it straggled (up to 2)
	hits    []int32  // sampled iterations it straggled in at this refresh
	jit     []Jitter // its replacement's jitter process (nil: not replaced)
	made    int      // replacements so far (seeds their processes)
}

// count ends a refresh of K samples: a worker straggled at it when it did
// in at least half of the samples.
func (r *replaceState) count(K int) {
	for i, h := range r.hits {
		if h > 0 && 2*int(h) >= K {
			r.persist[i] = min(r.persist[i]+1, 2)
		} else {
			r.persist[i] = 0
		}
		r.hits[i] = 0
	}
}

// stragglersRemain reports whether any of this refresh's K sampled
// iterations (compute in ws.c, exchanges in ws.m) has a worker slower than
// the median by more than the threshold.
func (ws *workerState) stragglersRemain(K, w int, threshold float64) bool {
	times := ws.scratch[:w]
	for k := range K {
		for i, x := range ws.c[k] {
			times[i] = x + ws.m[i]
		}
		med, _ := typical(times, ws.sorted)
		lim := med * (1 + threshold)
		for _, t := range times {
			if t > lim {
				return true
			}
		}
	}
	return false
}

// replaceSeed seeds the jitter of replaced workers (with the job's ID and
// the replacement's number).
const replaceSeed = 0x7265706c616365

// replace is the restart/replace-straggler baseline at the start of a
// refresh: every worker that straggled at the two previous refreshes (in
// at least half of each one's sampled iterations) is replaced: the job
// checkpoints and restarts, paying its restart delay, and the worker's
// process starts afresh on the same GPU, with a jitter process of its own
// drawn anew from the regime's law. It counts the replacements in j.
func (m *Drover) replace(j *Job, s *droverJob) {
	r := s.w.replace
	wk := m.Workers
	did := false
	for i, c := range r.persist {
		if c < 2 {
			continue
		}
		r.persist[i] = 0
		did = true
		j.Replacements++
		r.made++
		if wk.NewJitter == nil {
			continue
		}
		if r.jit == nil {
			r.jit = make([]Jitter, len(r.persist))
		}
		r.jit[i] = wk.NewJitter(1, rand.NewPCG(wk.Seed^replaceSeed, uint64(j.ID)<<24|uint64(r.made)))
	}
	if did {
		s.delay += max(s.restart, 0)
	}
}
