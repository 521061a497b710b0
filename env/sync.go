package env

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SyncKind is a synchronization strategy for data-parallel training.
type SyncKind uint8

// The strategies.
const (
	// BSP: bulk-synchronous; every iteration waits for the slowest worker.
	BSP SyncKind = iota
	// ASP: asynchronous; workers never wait, gradients are stale.
	ASP
	// SSP: stale-synchronous; a worker may run at most Staleness
	// iterations ahead of the slowest.
	SSP
	// LocalSGD: workers train alone and average models every Period
	// iterations.
	LocalSGD
)

// Sync is a job's synchronization strategy with its parameter.
type Sync struct {
	// Kind is the strategy.
	Kind SyncKind
	// Staleness is SSP's bound s, in iterations.
	Staleness int
	// Period is local SGD's averaging period H, in iterations.
	Period int
}

// What a strategy costs in iterations to reach a job's target, and in the
// accuracy it ends with, is the convergence model's (Convergence, fitted
// to measured training curves in package env/converge); this file holds
// only the strategies and their iteration times.

// String returns the Sync's name as the command line and logs spell it.
func (s Sync) String() string {
	switch s.Kind {
	case BSP:
		return "bsp"
	case ASP:
		return "asp"
	case SSP:
		return "ssp(" + strconv.Itoa(s.Staleness) + ")"
	case LocalSGD:
		return "local(" + strconv.Itoa(s.Period) + ")"
	}
	return fmt.Sprintf("SyncKind(%d)", s.Kind)
}

// ParseSync parses "bsp", "asp", "ssp(S)" / "ssp:S" and "local(H)" /
// "local:H".
func ParseSync(v string) (Sync, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	name, arg, hasArg := strings.Cut(strings.TrimSuffix(strings.Replace(v, "(", ":", 1), ")"), ":")
	n := 0
	if hasArg {
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n < 0 {
			return Sync{}, fmt.Errorf("env: sync strategy %q: bad parameter %q", v, arg)
		}
	}
	switch name {
	case "bsp":
		return Sync{Kind: BSP}, nil
	case "asp":
		return Sync{Kind: ASP}, nil
	case "ssp":
		if !hasArg {
			n = 3
		}
		return Sync{Kind: SSP, Staleness: n}, nil
	case "local", "localsgd", "local-sgd":
		if !hasArg {
			n = 8
		}
		if n < 1 {
			return Sync{}, fmt.Errorf("env: sync strategy %q: period must be >= 1", v)
		}
		return Sync{Kind: LocalSGD, Period: n}, nil
	}
	return Sync{}, fmt.Errorf("env: unknown sync strategy %q (want bsp, asp, ssp(S) or local(H))", v)
}

// IterTime returns the mean seconds per global iteration (one global batch
// of progress) under the strategy, from the compute seconds c[k][i] of each
// worker i in K consecutive iterations and each worker's communication
// seconds m[i] per synchronization:
//
//   - BSP waits for the slowest worker every iteration, and the all-reduce
//     runs at the slowest link: mean over k of max_i c[k][i], plus max_i m[i].
//   - ASP never waits: worker i completes an update every a_i = mean_k
//     c[k][i] + m[i] seconds, and w updates make one global iteration, so
//     the time is w / sum_i 1/a_i.
//   - SSP(s) lets a worker start iteration k only once every worker has
//     finished iteration k-s-1 (Ho et al., NIPS 2013): jitter is absorbed,
//     persistent differences still gate the pace. The time is the finish
//     of the last worker's K-th iteration over K (see SSPSchedule), each
//     iteration costing c[k][i] + m[i].
//   - Local SGD(H) averages every H iterations: mean over windows of H of
//     max_i window mean of c[.][i], plus max_i m[i] / H.
//
// Windows longer than K are cut to K.
func (s Sync) IterTime(c [][]float64, m []float64) float64 {
	K := len(c)
	if K == 0 || len(m) == 0 {
		return math.NaN()
	}
	w := len(m)
	mmax := 0.0
	for _, x := range m {
		mmax = max(mmax, x)
	}
	switch s.Kind {
	case ASP:
		inv := 0.0
		for i := range w {
			a := m[i]
			for k := range K {
				a += c[k][i] / float64(K)
			}
			inv += 1 / a
		}
		return float64(w) / inv
	case SSP:
		return sspEnd(c, m, s.Staleness) / float64(K)
	case LocalSGD:
		h := max(s.Period, 1)
		return windowMax(c, nil, min(h, K)) + mmax/float64(h)
	}
	t := 0.0
	for k := range K {
		worst := 0.0
		for _, x := range c[k] {
			worst = max(worst, x)
		}
		t += worst
	}
	return bspTime(t, K, mmax)
}

// bspTime is BSP's iteration time over K sampled iterations from the sum
// of each iteration's slowest compute and the slowest exchange: every
// iteration waits for its slowest worker, then for the slowest exchange.
// The per-worker refresh calls it with the maxima it finds while scanning
// the samples.
func bspTime(sumSlowest float64, K int, slowestExchange float64) float64 {
	return sumSlowest/float64(K) + slowestExchange
}

// SSPSchedule returns the finish time f[k][i] of each worker's iteration k
// under stale-synchronous parallel with bound s: worker i starts iteration
// k when it has finished iteration k-1 and every worker has finished
// iteration k-s-1, and the iteration takes c[k][i] + m[i]. So no worker
// ever works on an iteration more than s ahead of the slowest worker's
// completed ones. s = 0 is a barrier every iteration.
func SSPSchedule(c [][]float64, m []float64, s int) [][]float64 {
	K, w := len(c), len(m)
	f := make([][]float64, K)
	gate := make([]float64, K) // gate[k]: every worker has finished iteration k
	for k := range K {
		f[k] = make([]float64, w)
		g := 0.0
		if j := k - s - 1; j >= 0 {
			g = gate[j]
		}
		for i := range w {
			start := g
			if k > 0 {
				start = max(start, f[k-1][i])
			}
			f[k][i] = start + c[k][i] + m[i]
			gate[k] = max(gate[k], f[k][i])
		}
	}
	return f
}

// sspEnd is the finish of the last worker's last iteration of
// SSPSchedule(c, m, s), max_i f[K-1][i], computed with one row of finish
// times instead of K (the same operations in the same order, so the same
// bits).
func sspEnd(c [][]float64, m []float64, s int) float64 {
	K, w := len(c), len(m)
	f := make([]float64, w)    // each worker's latest finish
	gate := make([]float64, K) // gate[k]: every worker has finished iteration k
	for k := range K {
		g := 0.0
		if j := k - s - 1; j >= 0 {
			g = gate[j]
		}
		for i := range w {
			start := g
			if k > 0 {
				start = max(start, f[i])
			}
			f[i] = start + c[k][i] + m[i]
			gate[k] = max(gate[k], f[i])
		}
	}
	end := 0.0
	for _, x := range f {
		end = max(end, x)
	}
	return end
}

// windowMax averages, over consecutive windows of b iterations, the
// largest per-worker window mean of c (plus m[i] when m is given).
func windowMax(c [][]float64, m []float64, b int) float64 {
	K, w := len(c), len(c[0])
	total, windows := 0.0, 0
	for start := 0; start+b <= K; start += b {
		worst := 0.0
		for i := range w {
			a := 0.0
			for k := start; k < start+b; k++ {
				a += c[k][i]
			}
			a /= float64(b)
			if m != nil {
				a += m[i]
			}
			worst = max(worst, a)
		}
		total += worst
		windows++
	}
	return total / float64(windows)
}
