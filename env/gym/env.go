package gym

import (
	"errors"
	"maps"
	"math"
)

// Env is a reinforcement-learning environment with Gymnasium's API: a
// seeded Reset starts an episode, Step advances it by one action. An Env
// is a single-goroutine state machine (like raft's RawNode): it need not
// be safe for concurrent use, and it must read no clock and no global
// random source, so that the same seed and the same actions give the same
// trajectory bit for bit (Check tests this).
//
// Ownership: the observation slices returned by Reset and Step belong to
// the caller, and the env never reads or writes them afterwards; an env
// must not return a slice it keeps or returns again. Envs that can write
// into a caller's buffer implement StepperInto as well. Info maps also
// belong to the caller.
type Env interface {
	// Reset starts a new episode whose randomness derives from seed
	// alone, and returns its first observation and an info (nil when
	// there is nothing to report). The same seed gives the same
	// observation; Reset may be called at any time, including mid-episode.
	Reset(seed uint64) ([]float64, Info)

	// Step applies action, which must lie in ActionSpace, and returns the
	// next observation, the reward for the transition, and whether the
	// episode ended. Terminated means a terminal state of the MDP was
	// reached (no bootstrapping past it: V(obs) = 0); truncated means the
	// episode was cut short from outside the MDP, e.g. by a time limit
	// (bootstrap from V(obs)). Both may be true on one step (Gymnasium's
	// TimeLimit wrapper truncates regardless of termination); then
	// terminated takes precedence for value targets. Calling Step before
	// the first Reset, or after a step that returned terminated or
	// truncated without a Reset in between, is a programmer error and
	// panics (after an episode end with ErrStepAfterEnd). An action
	// outside the action space panics too.
	Step(action int) (obs []float64, reward float64, terminated, truncated bool, info Info)

	// ObservationSpace returns the space every observation lies in. It
	// must not change over the env's life.
	ObservationSpace() Box

	// ActionSpace returns the space of valid actions. It must not change
	// over the env's life.
	ActionSpace() Discrete
}

// StepperInto is implemented by envs that can write an observation into a
// caller-provided buffer, so that stepping allocates nothing. StepInto is
// Step, except that the observation is written to dst[:n] when cap(dst) >=
// n (n = ObservationSpace().Shape()) and returned; with a smaller dst it
// allocates. The caller owns dst throughout. Vector uses StepInto when the
// env has it.
type StepperInto interface {
	StepInto(dst []float64, action int) (obs []float64, reward float64, terminated, truncated bool, info Info)
}

// Masker is implemented by envs whose valid actions depend on the state,
// for invalid-action masking as in MaskablePPO. ActionMask returns, for
// each action of the action space, whether it is valid now (true = valid),
// writing into dst when cap(dst) >= ActionSpace().N and allocating
// otherwise. Between Reset and the end of an episode at least one action
// must be valid. A policy must choose only valid actions.
type Masker interface {
	ActionMask(dst []bool) []bool
}

// Info carries auxiliary per-step diagnostics, Gymnasium's info dict
// restricted to numbers (for example "episode_return"). It is never an
// input to learning. A nil Info is the empty info: envs return nil when
// there is nothing to report, which keeps Step allocation-free.
type Info map[string]float64

// ErrStepAfterEnd is the value an Env panics with when Step is called
// after the episode ended (terminated or truncated) and before Reset.
// Check requires this panic (or a string panic with the same text).
var ErrStepAfterEnd = errors.New("gym: step after episode end")

// infosIdentical reports whether two infos hold the same keys with
// bit-identical values; nil equals an empty map.
func infosIdentical(a, b Info) bool {
	return maps.EqualFunc(a, b, func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y)
	})
}
