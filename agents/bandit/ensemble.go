package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
)

// Ensemble is a bootstrapped ensemble of Learners: each head fits its own
// resample of the samples (every sample enters a head Poisson(1) times,
// the online bootstrap), so where the samples say little, typically away
// from the contexts seen in training, the heads disagree. ActLower then
// deviates from action 0, a trusted default, only where the heads agree
// that another action is better. It is not safe for concurrent use.
type Ensemble struct {
	// Heads are the ensemble's learners, each with its own seed.
	Heads []*Learner
	rng   *rand.Rand
	d     []float64 // per head: scratch
}

// NewEnsemble returns heads untrained learners; head h is seeded
// cfg.Seed + h. It panics when heads < 1 and on a config New refuses.
func NewEnsemble(cfg Config, obsDim, actions, heads int) *Ensemble {
	if heads < 1 {
		panic(fmt.Sprintf("bandit: %d heads", heads))
	}
	e := &Ensemble{rng: rand.New(rand.NewPCG(cfg.Seed, 0x626f6f74)), d: make([]float64, heads)}
	for h := range heads {
		c := cfg
		c.Seed = cfg.Seed + uint64(h)
		e.Heads = append(e.Heads, New(c, obsDim, actions))
	}
	return e
}

// Len returns the number of samples the first head holds.
func (e *Ensemble) Len() int { return e.Heads[0].Len() }

// Add gives each head each sample k times, k drawn from Poisson(1) per
// head and sample (with one head, every sample once).
func (e *Ensemble) Add(s ...Sample) {
	if e.rng == nil {
		panic("bandit: Add on an ensemble of loaded networks")
	}
	if len(e.Heads) == 1 {
		e.Heads[0].Add(s...)
		return
	}
	for _, l := range e.Heads {
		for _, x := range s {
			for range poisson1(e.rng) {
				l.Add(x)
			}
		}
	}
}

// poisson1 draws from the Poisson law of mean 1 by inversion.
func poisson1(r *rand.Rand) int {
	u := r.Float64()
	p := math.Exp(-1)
	k, cdf := 0, p
	for u > cdf && k < 20 {
		k++
		p /= float64(k)
		cdf += p
	}
	return k
}

// Fit fits every head and returns their mean loss.
func (e *Ensemble) Fit() float64 {
	loss := 0.0
	for _, l := range e.Heads {
		loss += l.Fit()
	}
	return loss / float64(len(e.Heads))
}

// ActLower returns action 0 (when valid) unless another valid action a is
// better by more than margin at the heads' lower bound: the mean over
// heads of Q(a) - Q(0) minus z times its standard deviation over heads.
// Among the actions that clear it, the one of highest lower bound wins
// (the lowest index among equals). When action 0 is invalid, it returns
// the valid action of highest mean value. It panics when no action is
// valid.
func (e *Ensemble) ActLower(obs []float64, mask []bool, margin, z float64) int {
	H := float64(len(e.Heads))
	var qs [][]float32
	for _, l := range e.Heads {
		qs = append(qs, l.Values(obs))
	}
	mean := func(a int) float64 {
		m := 0.0
		for _, q := range qs {
			m += float64(q[a])
		}
		return m / H
	}
	valid := func(a int) bool { return mask == nil || mask[a] }
	if !valid(0) {
		best := -1
		for a := range qs[0] {
			if valid(a) && (best < 0 || mean(a) > mean(best)) {
				best = a
			}
		}
		if best < 0 {
			panic("bandit: no valid action")
		}
		return best
	}
	best, bestLow := 0, margin
	for a := 1; a < len(qs[0]); a++ {
		if !valid(a) {
			continue
		}
		m := 0.0
		for h, q := range qs {
			e.d[h] = float64(q[a] - q[0])
			m += e.d[h]
		}
		m /= H
		ss := 0.0
		for _, d := range e.d {
			ss += (d - m) * (d - m)
		}
		low := m
		if len(qs) > 1 {
			low -= z * math.Sqrt(ss/(H-1))
		}
		if low > bestLow {
			best, bestLow = a, low
		}
	}
	return best
}

// EnsembleOf wraps trained value networks (from a checkpoint) as an
// ensemble that can act but not learn (Add panics). Each network
// maps obsDim inputs to one value per action.
func EnsembleOf(qs []*nn.MLP, obsDim int) *Ensemble {
	if len(qs) == 0 {
		panic("bandit: no networks")
	}
	e := &Ensemble{d: make([]float64, len(qs))}
	for _, q := range qs {
		e.Heads = append(e.Heads, &Learner{obsDim: obsDim, Q: q})
	}
	return e
}
