package env

import "slices"

// The two packing rules below place a job's workers on free GPUs. They
// live in env because env/placement's actions are defined by them (an
// action packs a job into a node group most-free first; the sync
// environment places first-fit); the heuristics in package policies use
// the same functions.

// PackMostFree places n workers by repeatedly taking the node with the most
// free GPUs (the lowest index among equals) and filling as much of it as
// needed, the way the Pollux simulator's Tiresias and Optimus allocate
// (collections.Counter.most_common). It decrements free and returns the
// node of each worker, or nil if fewer than n GPUs are free.
func PackMostFree(free []int, n int) []int {
	total := 0
	for _, f := range free {
		total += f
	}
	if n > total {
		return nil
	}
	alloc := make([]int, 0, n)
	for len(alloc) < n {
		best := -1
		for i, f := range free {
			if f > 0 && (best < 0 || f > free[best]) {
				best = i
			}
		}
		k := min(free[best], n-len(alloc))
		for range k {
			alloc = append(alloc, best)
		}
		free[best] -= k
	}
	return alloc
}

// PackFirstFit places n workers on the first node (by index) with n free
// GPUs; if no node has that many, it fills nodes in index order. It
// decrements free and returns the node of each worker, or nil if fewer than
// n GPUs are free.
func PackFirstFit(free []int, n int) []int {
	for i, f := range free {
		if f >= n {
			free[i] -= n
			return slices.Repeat([]int{i}, n)
		}
	}
	total := 0
	for _, f := range free {
		total += f
	}
	if n > total {
		return nil
	}
	alloc := make([]int, 0, n)
	for i := range free {
		k := min(free[i], n-len(alloc))
		for range k {
			alloc = append(alloc, i)
		}
		free[i] -= k
		if len(alloc) == n {
			break
		}
	}
	return alloc
}
