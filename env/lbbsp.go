package env

import (
	"math"
	"slices"
)

// This file holds load-balanced BSP (MitigationLBBSP, Workers.LBBSP):
// refresh in workers.go calls balance before it samples a BSP job's
// iterations and measure after.

// balance sets the local batch shares (ws.shares, mean 1) of a w-worker
// job for this refresh, inversely proportional to each worker's predicted
// compute seconds per unit share: its node's slowdown now (what
// monitoring reports) times the worker's own speed factor, the mean over
// this placement's earlier refreshes of its measured time over its node's
// slowdown then (1 before any).
func (ws *workerState) balance(w int) {
	ws.shares = slices.Grow(ws.shares[:0], w)[:w]
	inv := 0.0
	for i := range w {
		t := ws.slow[i]
		if ws.lbN > 0 && len(ws.lb) == w {
			t *= ws.lb[i] / ws.lbN
		}
		ws.shares[i] = 1 / t
		inv += ws.shares[i]
	}
	for i := range w {
		ws.shares[i] *= float64(w) / inv
	}
}

// measure adds, after a refresh's K sampled iterations, each worker's
// mean compute seconds per unit of batch share (network noise left out)
// over its node's slowdown to the sums balance predicts from.
func (ws *workerState) measure(K, w int) {
	if len(ws.lb) != w {
		ws.lb = slices.Grow(ws.lb[:0], w)[:w]
		clear(ws.lb)
		ws.lbN = 0
	}
	for i := range w {
		t := 0.0
		for k := range K {
			t += ws.c[k][i] - ws.nz[k][i]
		}
		ws.lb[i] += t / float64(K) / ws.shares[i] / (ws.compute * ws.slow[i])
	}
	ws.lbN++
}

// BalancedBatches splits a global batch of batch samples over workers of
// the given relative speeds (samples per second, any unit) as LB-BSP does:
// b_i proportional to speed_i, so that every b_i / speed_i is equal, in
// whole samples (largest remainders round up, the first of equals first).
// It returns nil when a speed is not positive and finite.
func BalancedBatches(batch int, speed []float64) []int {
	sum := 0.0
	for _, v := range speed {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil
		}
		sum += v
	}
	out := make([]int, len(speed))
	frac := make([]float64, len(speed))
	left := batch
	for i, v := range speed {
		x := float64(batch) * v / sum
		out[i] = int(math.Floor(x))
		frac[i] = x - float64(out[i])
		left -= out[i]
	}
	order := make([]int, len(speed))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case frac[a] > frac[b]:
			return -1
		case frac[a] < frac[b]:
			return 1
		}
		return 0
	})
	for k := 0; left > 0 && k < len(order); k++ {
		out[order[k]]++
		left--
	}
	return out
}
