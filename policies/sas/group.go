package sas

import (
	"math"
	"slices"
)

// MaxGroups caps the number of node groups GroupCount returns.
const MaxGroups = 8

// GroupCount returns the number of node groups SAS forms on a cluster of
// nodes nodes: round(sqrt(nodes/2)), the common rule of thumb for k-means,
// at least 1 and at most MaxGroups. 16 nodes make 3 groups, 22 make 3, 128
// make 8.
func GroupCount(nodes int) int {
	k := int(math.Round(math.Sqrt(float64(nodes) / 2)))
	return min(max(k, 1), MaxGroups)
}

// Features returns the point that stands for a node in the grouping: for
// each resource its predicted median utilisation (P50) and spread (P90 -
// P10), in the order CPU, MemBW, Net, then slow = 1/speed - 1 (0 on a
// reference GPU). All are fractions of capacity, so they share one scale
// and are not standardised: a 0.1 gap in CPU is as far from overload as a
// 0.1 gap in Net.
func Features(f Forecast, speed float64) []float64 {
	if speed <= 0 {
		speed = 1
	}
	return []float64{
		f.P50.CPU, f.P90.CPU - f.P10.CPU,
		f.P50.MemBW, f.P90.MemBW - f.P10.MemBW,
		f.P50.Net, f.P90.Net - f.P10.Net,
		1/speed - 1,
	}
}

// kmeansIters bounds the Lloyd iterations of Group.
const kmeansIters = 50

// Group partitions points (one per node, equal lengths) into at most k
// groups of alike points by k-means, and returns each group's node
// indices, ascending. The initial centres are picked deterministically by
// farthest-point traversal (Gonzalez): first the point with the smallest
// coordinate sum (the most available node), then repeatedly the point
// farthest from every centre so far, ties to the lowest index; it stops
// early when every point coincides with a centre, so identical nodes form
// one group. Lloyd iterations then move each point to its nearest centre
// (ties to the lower centre) until nothing moves. Groups come out ordered
// by their centre's coordinate sum (most available first), ties by their
// lowest node. No randomness is involved.
func Group(points [][]float64, k int) [][]int { return group(points, k, true) }

// group is Group; with bounds false its Lloyd iterations compute every
// distance (the reference the bounded form is tested against).
func group(points [][]float64, k int, bounds bool) [][]int {
	n := len(points)
	if n == 0 {
		return nil
	}
	k = min(max(k, 1), n)
	// Farthest-point initialisation.
	first := 0
	for i := range points {
		if sum(points[i]) < sum(points[first]) {
			first = i
		}
	}
	centres := [][]float64{slices.Clone(points[first])}
	dmin := make([]float64, n)
	for i := range points {
		dmin[i] = dist2(points[i], centres[0])
	}
	for len(centres) < k {
		far := -1
		for i, d := range dmin {
			if d > 0 && (far < 0 || d > dmin[far]) {
				far = i
			}
		}
		if far < 0 {
			break // every point sits on a centre
		}
		c := slices.Clone(points[far])
		centres = append(centres, c)
		for i := range points {
			dmin[i] = min(dmin[i], dist2(points[i], c))
		}
	}
	// Lloyd iterations. With bounds, Hamerly's: up[i] bounds from above
	// point i's distance to its centre and low[i] from below its distance
	// to every other centre; while up[i] is below low[i] by more than
	// slack, no centre can have come nearer, and the point keeps its
	// centre without a distance computed. Otherwise every distance is
	// computed and compared as plain Lloyd does, so the assignments, ties
	// and all, are plain Lloyd's. slack covers the rounding of the bounds'
	// updates, far below it for points of this scale.
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	var up, low []float64
	slack := math.Inf(1)
	if bounds {
		up, low = make([]float64, n), make([]float64, n)
		scale, origin := 0.0, make([]float64, len(points[0]))
		for _, pt := range points {
			scale = max(scale, math.Sqrt(dist2(pt, origin)))
		}
		slack = 1e-9 * (1 + scale)
	}
	for range kmeansIters {
		moved := false
		for i, pt := range points {
			if bounds && assign[i] >= 0 && up[i]+slack < low[i] {
				continue
			}
			best, bestD, nextD := 0, dist2(pt, centres[0]), math.Inf(1)
			for c := 1; c < len(centres); c++ {
				if d := dist2(pt, centres[c]); d < bestD {
					best, bestD, nextD = c, d, bestD
				} else if d < nextD {
					nextD = d
				}
			}
			if bounds {
				up[i], low[i] = math.Sqrt(bestD), math.Sqrt(nextD)
			}
			if assign[i] != best {
				assign[i], moved = best, true
			}
		}
		if !moved {
			break
		}
		var old [][]float64
		if bounds {
			old = slices.Clone(centres)
		}
		// Each centre becomes its points' mean, summed in index order (one
		// pass over the points for all centres).
		cnt := make([]int, len(centres))
		acc := make([][]float64, len(centres))
		for c := range acc {
			acc[c] = make([]float64, len(points[0]))
		}
		for i, pt := range points {
			c := assign[i]
			cnt[c]++
			for d, x := range pt {
				acc[c][d] += x
			}
		}
		for c := range centres {
			if cnt[c] == 0 {
				continue // an emptied centre stays where it was
			}
			for d := range acc[c] {
				acc[c][d] /= float64(cnt[c])
			}
			centres[c] = acc[c]
		}
		if bounds {
			// A centre that moved by m can be m nearer or farther.
			move := make([]float64, len(centres))
			most, second := -1, -1 // the centres that moved most
			sane := true
			for c := range centres {
				move[c] = math.Sqrt(dist2(old[c], centres[c]))
				sane = sane && !math.IsNaN(move[c]) && !math.IsInf(move[c], 0)
				if most < 0 || move[c] > move[most] {
					most, second = c, most
				} else if second < 0 || move[c] > move[second] {
					second = c
				}
			}
			for i := range points {
				if !sane { // no bound holds: compute every distance next time
					low[i] = math.Inf(-1)
					continue
				}
				a := assign[i]
				up[i] += move[a]
				other := move[most]
				if a == most {
					other = 0
					if second >= 0 {
						other = move[second]
					}
				}
				low[i] -= other
			}
		}
	}
	groups := make([][]int, len(centres))
	for i, c := range assign {
		groups[c] = append(groups[c], i)
	}
	type ranked struct {
		nodes []int
		score float64
	}
	var rs []ranked
	for c, g := range groups {
		if len(g) > 0 {
			rs = append(rs, ranked{g, sum(centres[c])})
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return a.nodes[0] - b.nodes[0]
	})
	out := make([][]int, len(rs))
	for i, r := range rs {
		out[i] = r.nodes
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func dist2(a, b []float64) float64 {
	if len(a) == 7 && len(b) == 7 { // Features' points, unrolled in the loop's order
		t0, t1, t2, t3, t4, t5, t6 := a[0]-b[0], a[1]-b[1], a[2]-b[2], a[3]-b[3], a[4]-b[4], a[5]-b[5], a[6]-b[6]
		d := 0.0
		d += t0 * t0
		d += t1 * t1
		d += t2 * t2
		d += t3 * t3
		d += t4 * t4
		d += t5 * t5
		d += t6 * t6
		return d
	}
	d := 0.0
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
	}
	return d
}
