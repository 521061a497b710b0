package env

import (
	"fmt"
	"math"
)

// Arch is a job's communication architecture.
type Arch uint8

// The architectures.
const (
	// Ring: ring all-reduce among the workers (the default).
	Ring Arch = iota
	// PS: parameter servers holding the model in shards.
	PS
)

// String returns the Arch's name as the command line and logs spell it.
func (a Arch) String() string {
	switch a {
	case Ring:
		return "ring"
	case PS:
		return "ps"
	}
	return fmt.Sprintf("Arch(%d)", a)
}

// RingAllReduceTime returns the seconds a bandwidth-optimal ring all-reduce
// of a gradient of size bytes takes among w workers whose slowest link
// carries bw bytes/s: each worker sends and receives 2(w-1)/w of the
// gradient (reduce-scatter then all-gather; Patarasuk and Yuan, 2009).
// One worker needs no communication.
func RingAllReduceTime(size, bw float64, w int) float64 {
	if w <= 1 {
		return 0
	}
	return 2 * float64(w-1) / float64(w) * size / bw
}

// PSTime returns the seconds one synchronous push-and-pull of a gradient of
// size bytes takes with w workers and k parameter-server shards, each
// worker and each server on a link of bw bytes/s: a worker sends its whole
// gradient and receives the whole model (2·size over its link), while each
// server receives size/k from every worker and sends as much back
// (2·w·size/k over its link). The slower side is the bottleneck; with
// fewer servers than workers the servers are.
func PSTime(size, bw float64, w, k int) float64 {
	if w < 1 || k < 1 {
		return math.Inf(1)
	}
	worker := 2 * size / bw
	server := 2 * float64(w) * size / (float64(k) * bw)
	return max(worker, server)
}

// psOverRing is the ratio of PSTime to RingAllReduceTime for the same
// gradient and bandwidth: how much slower (or faster) a job's measured
// ring all-reduce time becomes on k parameter servers.
func psOverRing(w, k int) float64 {
	if w <= 1 {
		return 1
	}
	return max(1, float64(w)/float64(k)) / (float64(w-1) / float64(w))
}

// median returns the median of xs (the mean of the middle two for an even
// count), using scratch (reordered) and leaving xs as it is.
func median(xs []float64, scratch []float64) float64 {
	s := append(scratch[:0], xs...)
	if len(s) == 0 {
		return math.NaN()
	}
	med, _ := middle(s)
	return med
}

// middle reorders the non-empty s so that s[len(s)/2] holds its upper
// middle value, and returns its median (the mean of the middle two for an
// even count) and that upper middle value.
func middle(s []float64) (med, hi float64) {
	n := len(s)
	if n <= 12 {
		// Insertion sort beats selection on the small jobs that dominate.
		for i := 1; i < n; i++ {
			for k := i; k > 0 && s[k] < s[k-1]; k-- {
				s[k], s[k-1] = s[k-1], s[k]
			}
		}
		if n%2 == 1 {
			return s[n/2], s[n/2]
		}
		return (s[n/2-1] + s[n/2]) / 2, s[n/2]
	}
	hi = selectKth(s, n/2)
	if n%2 == 1 {
		return hi, hi
	}
	// After selection the lower half holds the n/2 smallest values.
	lo := s[0]
	for _, x := range s[1 : n/2] {
		lo = max(lo, x)
	}
	return (lo + hi) / 2, hi
}

// selectKth reorders s so that s[k] is its k-th smallest element, every
// element before it no larger and every element after it no smaller
// (Hoare's quickselect with a median-of-three pivot), and returns s[k].
func selectKth(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three as pivot.
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// CountStragglers returns how many of the workers' iteration times exceed
// the median by more than threshold (0.2 = 20%).
func CountStragglers(times []float64, threshold float64) int {
	var buf [16]float64
	return countStragglers(times, threshold, buf[:0])
}

// countStragglers is CountStragglers with scratch space for the median (of
// capacity len(times) or more, to spare an allocation).
func countStragglers(times []float64, threshold float64, scratch []float64) int {
	m := median(times, scratch)
	n := 0
	for _, t := range times {
		if t > m*(1+threshold) {
			n++
		}
	}
	return n
}
