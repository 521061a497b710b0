package dqn

import (
	"math/rand/v2"
)

// LinearSchedule returns CleanRL's linear_schedule: the value falls
// linearly from start to end over duration steps and stays at end,
// max(start + (end-start)/duration * t, end) for a falling schedule.
func LinearSchedule(start, end, duration, t float64) float64 {
	slope := (end - start) / duration
	v := start + slope*t
	if start >= end {
		return max(v, end)
	}
	return min(v, end)
}

// Targets writes the TD targets of a batch into y:
//
//	y_i = r_i + gamma * (1 - terminated_i) * Q_target(s'_i, a*_i)
//
// where a*_i = argmax_a Q_target(s'_i, a) (DQN), or argmax_a
// Q_online(s'_i, a) when double is set (double DQN: the online network
// picks, the target network rates). qTargetNext and qOnlineNext hold each
// sample's nActions values in a row (qOnlineNext may be nil without
// double). A truncated transition is not terminal: it bootstraps from its
// final observation, which the caller stores as s'.
func Targets(reward []float32, terminated []bool, qTargetNext, qOnlineNext []float32, nActions int, gamma float32, double bool, y []float32) {
	MaskedTargets(reward, terminated, qTargetNext, qOnlineNext, nil, nActions, gamma, double, y)
}

// MaskedTargets is Targets where the next state's valid actions are
// nextMask (nActions entries per sample, true for valid; nil: all): the
// argmax runs over the valid actions only, as a masked environment can
// take no other. A sample without a valid next action bootstraps nothing
// (its target is its reward), as a terminal one.
func MaskedTargets(reward []float32, terminated []bool, qTargetNext, qOnlineNext []float32, nextMask []bool, nActions int, gamma float32, double bool, y []float32) {
	n := len(reward)
	if len(terminated) != n || len(y) != n || len(qTargetNext) != n*nActions || (double && len(qOnlineNext) != n*nActions) ||
		(nextMask != nil && len(nextMask) != n*nActions) {
		panic("dqn: Targets length mismatch")
	}
	for i := range n {
		if terminated[i] {
			y[i] = reward[i]
			continue
		}
		row := qTargetNext[i*nActions : (i+1)*nActions]
		var m []bool
		if nextMask != nil {
			m = nextMask[i*nActions : (i+1)*nActions]
		}
		pick := row
		if double {
			pick = qOnlineNext[i*nActions : (i+1)*nActions]
		}
		a := argmaxMasked(pick, m)
		if a < 0 {
			y[i] = reward[i]
			continue
		}
		y[i] = reward[i] + gamma*row[a]
	}
}

// argmax returns the index of the largest value, the first among equals.
func argmax(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// argmaxMasked is argmax over the indices mask allows (all when mask is
// nil); -1 when it allows none.
func argmaxMasked(xs []float32, mask []bool) int {
	if mask == nil {
		return argmax(xs)
	}
	best := -1
	for i, x := range xs {
		if mask[i] && (best < 0 || x > xs[best]) {
			best = i
		}
	}
	return best
}

// Replay is a fixed-capacity uniform experience replay buffer. Once full,
// each new transition overwrites the oldest. It draws samples from its own
// random source, so a seed fixes the batches.
type Replay struct {
	dim        int
	obs, next  []float32
	action     []int
	reward     []float32
	terminated []bool
	nextMask   []bool // actions entries per transition; nil until AddMasked
	actions    int
	n, head    int
	rng        *rand.Rand
}

// Batch is a sample of transitions, in row-major arrays.
type Batch struct {
	// Obs and NextObs hold one observation per sample, dim values each.
	Obs, NextObs []float32
	// Action, Reward and Terminated hold one entry per sample.
	Action     []int
	Reward     []float32
	Terminated []bool
	// NextMask holds the next state's valid actions, one row of actions
	// per sample (nil when the buffer stores no masks: AddMasked).
	NextMask []bool
}

// NewReplay returns an empty buffer for capacity transitions of
// observations with dim values, sampling with src.
func NewReplay(capacity, dim int, src rand.Source) *Replay {
	if capacity <= 0 || dim <= 0 {
		panic("dqn: replay capacity and observation size must be positive")
	}
	return &Replay{
		dim: dim, obs: make([]float32, capacity*dim), next: make([]float32, capacity*dim),
		action: make([]int, capacity), reward: make([]float32, capacity), terminated: make([]bool, capacity),
		rng: rand.New(src),
	}
}

// Len returns the number of stored transitions.
func (r *Replay) Len() int { return r.n }

// Add stores a transition. obs and next must have the buffer's dimension.
func (r *Replay) Add(obs []float32, action int, reward float32, next []float32, terminated bool) {
	if len(obs) != r.dim || len(next) != r.dim {
		panic("dqn: observation size mismatch")
	}
	i := r.head
	copy(r.obs[i*r.dim:], obs)
	copy(r.next[i*r.dim:], next)
	r.action[i], r.reward[i], r.terminated[i] = action, reward, terminated
	r.head = (r.head + 1) % len(r.action)
	r.n = min(r.n+1, len(r.action))
}

// AddMasked stores a transition with the valid actions of its next state
// (for MaskedTargets). A buffer takes either Add or AddMasked, not both,
// and every mask must have the same length.
func (r *Replay) AddMasked(obs []float32, action int, reward float32, next []float32, terminated bool, nextMask []bool) {
	if r.nextMask == nil {
		if r.n > 0 {
			panic("dqn: AddMasked on a buffer filled by Add")
		}
		r.actions = len(nextMask)
		r.nextMask = make([]bool, len(r.action)*r.actions)
	}
	if len(nextMask) != r.actions {
		panic("dqn: mask size mismatch")
	}
	copy(r.nextMask[r.head*r.actions:], nextMask)
	r.Add(obs, action, reward, next, terminated)
}

// Sample draws size transitions uniformly with replacement. It panics on
// an empty buffer.
func (r *Replay) Sample(size int) Batch {
	if r.n == 0 {
		panic("dqn: sample from an empty replay buffer")
	}
	b := Batch{
		Obs: make([]float32, size*r.dim), NextObs: make([]float32, size*r.dim),
		Action: make([]int, size), Reward: make([]float32, size), Terminated: make([]bool, size),
	}
	for k := range size {
		i := r.rng.IntN(r.n)
		copy(b.Obs[k*r.dim:(k+1)*r.dim], r.obs[i*r.dim:(i+1)*r.dim])
		copy(b.NextObs[k*r.dim:(k+1)*r.dim], r.next[i*r.dim:(i+1)*r.dim])
		b.Action[k], b.Reward[k], b.Terminated[k] = r.action[i], r.reward[i], r.terminated[i]
		if r.nextMask != nil {
			if b.NextMask == nil {
				b.NextMask = make([]bool, size*r.actions)
			}
			copy(b.NextMask[k*r.actions:(k+1)*r.actions], r.nextMask[i*r.actions:(i+1)*r.actions])
		}
	}
	return b
}
