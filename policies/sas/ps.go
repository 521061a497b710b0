package sas

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/policies"
)

// NameEvenPS is the registry name of SAS without its parameter-server load
// reassignment (NewEvenPS).
const NameEvenPS = "sas-even-ps"

// NewEvenPS returns SAS with EvenPS set: the same placements, but a PS
// job's parameters stay evenly split over its servers, so every exchange
// waits for the slowest server. It is the baseline of SAS's claim for the
// reassignment (up to 48% lower JCT).
func NewEvenPS(cfg policies.Config) (policies.Policy, error) {
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	p.(*SAS).EvenPS = true
	return p, nil
}

// Reassignment is the outcome of Reassign.
type Reassignment struct {
	// Server is the new server of each shard.
	Server []int
	// Before and After are the predicted bottleneck times, the largest
	// load/speed over the servers, of the old and new assignments.
	Before, After float64
	// Moves counts the shards moved.
	Moves int
}

// ServerTimes returns each server's predicted service time per
// synchronisation, load/speed, where load is the summed size of the shards
// assigned to it. It panics if the slices disagree in length, a shard names
// an unknown server, or a speed is not positive.
func ServerTimes(sizes []float64, server []int, speed []float64) []float64 {
	if len(sizes) != len(server) {
		panic(fmt.Sprintf("sas: %d shard sizes, %d shard servers", len(sizes), len(server)))
	}
	load := make([]float64, len(speed))
	for i, s := range server {
		if s < 0 || s >= len(speed) {
			panic(fmt.Sprintf("sas: shard %d on unknown server %d", i, s))
		}
		load[s] += sizes[i]
	}
	for k, v := range speed {
		if !(v > 0) {
			panic(fmt.Sprintf("sas: server %d speed %v, want > 0", k, v))
		}
		load[k] /= v
	}
	return load
}

// SpeedsFromTimes turns observed per-server service times into speeds
// (load served per second): speed = load/time, where load is the size the
// server held when it was measured. A server that held nothing, or whose
// time is not positive, gets the median speed of the others (1 when none
// was measured).
func SpeedsFromTimes(sizes []float64, server []int, times []float64) []float64 {
	ones := make([]float64, len(times))
	for i := range ones {
		ones[i] = 1
	}
	load := ServerTimes(sizes, server, ones)
	speed := make([]float64, len(times))
	var known []float64
	for k := range times {
		if load[k] > 0 && times[k] > 0 {
			speed[k] = load[k] / times[k]
			known = append(known, speed[k])
		}
	}
	fill := 1.0
	if len(known) > 0 {
		slices.Sort(known)
		fill = medianSorted(known)
	}
	for k := range speed {
		if speed[k] == 0 {
			speed[k] = fill
		}
	}
	return speed
}

// Reassign moves parameter shards off straggling parameter servers. A
// server straggles when its service time (load/speed) exceeds the median
// over all servers by more than threshold (0.2 = 20%). While the slowest
// server straggles, it gives up the one shard whose move to another server
// minimises the larger of the two servers' new times, provided that is
// below the slowest server's current time (the move shortens the
// bottleneck); ties go to the smaller shard, then the lower shard and
// server index. It stops when the slowest server no longer straggles or no
// move helps it. Greedy, shard-granular and deterministic; sizes and
// server are not modified. It panics as ServerTimes does.
//
// In a synchronous PS job every push-and-pull waits for the slowest
// server, so the bottleneck time is what the job's communication scales
// with (env.PSTime with equal shards and speeds).
func Reassign(sizes []float64, server []int, speed []float64, threshold float64) Reassignment {
	times := ServerTimes(sizes, server, speed)
	out := Reassignment{Server: slices.Clone(server), Before: maxOf(times)}
	load := make([]float64, len(speed))
	for k := range times {
		load[k] = times[k] * speed[k]
	}
	scratch := make([]float64, len(times))
	for range len(sizes) * len(speed) { // every move shortens the bottleneck; bound the loop anyway
		slow := 0
		for k := range times {
			if times[k] > times[slow] {
				slow = k
			}
		}
		copy(scratch, times)
		slices.Sort(scratch)
		if !(times[slow] > medianSorted(scratch)*(1+threshold)) {
			break
		}
		bestShard, bestDst, bestT := -1, -1, times[slow]
		for i, s := range out.Server {
			if s != slow {
				continue
			}
			src := (load[slow] - sizes[i]) / speed[slow]
			for d := range speed {
				if d == slow {
					continue
				}
				t := max(src, (load[d]+sizes[i])/speed[d])
				better := t < bestT
				if !better && t == bestT && bestShard >= 0 && sizes[i] < sizes[bestShard] {
					better = true
				}
				if better {
					bestShard, bestDst, bestT = i, d, t
				}
			}
		}
		if bestShard < 0 {
			break
		}
		sz := sizes[bestShard]
		load[slow] -= sz
		load[bestDst] += sz
		times[slow] = load[slow] / speed[slow]
		times[bestDst] = load[bestDst] / speed[bestDst]
		out.Server[bestShard] = bestDst
		out.Moves++
	}
	out.After = maxOf(times)
	return out
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// medianSorted returns the median of the ascending xs (the mean of the
// middle two for an even count).
func medianSorted(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
