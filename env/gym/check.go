package gym

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// CheckOption adjusts what Check requires.
type CheckOption func(*checkConfig)

type checkConfig struct {
	seedIndependentReset bool
}

// SeedIndependentReset tells Check that the env's first observation does
// not depend on the seed (a fixed initial state), so that Reset with
// different seeds may return the same observation.
func SeedIndependentReset() CheckOption {
	return func(c *checkConfig) { c.seedIndependentReset = true }
}

// checkStream is the PCG stream of Check's random policy.
const checkStream = 0x636865636b // "check"

// Check tests that an env honours the Env contract, in the spirit of
// Gymnasium's check_env. It makes two envs with makeEnv and drives both
// for steps steps with the same seeds and actions, and returns an error
// describing the first violation of:
//
//   - spaces: the observation space is a well-formed Box, the action space
//     has at least one action, and both envs report the same spaces;
//   - reset determinism: Reset(seed) twice (with a Reset(seed+1) between)
//     and on a fresh env gives bit-identical observations and infos, and
//     Reset(seed+1) gives a different first observation (unless the
//     SeedIndependentReset option is given);
//   - step determinism: both envs return bit-identical observations,
//     rewards, flags and infos at every step;
//   - every observation lies in the observation space (bounds of ±Inf or
//     ±MaxFloat32 make a coordinate effectively unbounded) and rewards are
//     not NaN;
//   - ownership: a returned observation is not modified by later calls;
//   - action masks (for a Masker): one entry per action, at least one
//     valid action, the same in both envs, and the policy picks a valid one;
//   - Step after an episode end panics with ErrStepAfterEnd.
//
// Terminated and truncated may both be true on one step: Gymnasium allows
// it (its TimeLimit wrapper sets truncated regardless of termination).
// After an episode ends, both envs are reset with seed+k for the k-th
// episode (k = 1, 2, ...) and checking continues until steps steps ran.
//
// policy(obs, step) picks the action (it gets a copy of the observation);
// a nil policy picks uniformly among the valid actions, from a PCG seeded
// with seed. An action outside the action space is reported as an error.
// A panic from the env, other than the required one, is returned as an
// error.
func Check(makeEnv func() Env, seed uint64, steps int, policy func(obs []float64, step int) int, opts ...CheckOption) (err error) {
	var cfg checkConfig
	for _, o := range opts {
		o(&cfg)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gym: check: env panicked: %v", r)
		}
	}()
	a, b := makeEnv(), makeEnv()
	if a == nil || b == nil {
		return errors.New("gym: check: makeEnv returned nil")
	}
	if a == b {
		return errors.New("gym: check: makeEnv returned the same env twice")
	}
	obsSpace, actSpace := a.ObservationSpace(), a.ActionSpace()
	if err := obsSpace.validate(); err != nil {
		return fmt.Errorf("gym: check: observation space: %w", err)
	}
	if actSpace.N < 1 {
		return fmt.Errorf("gym: check: action space has %d actions", actSpace.N)
	}
	if !b.ObservationSpace().equal(obsSpace) || b.ActionSpace() != actSpace {
		return errors.New("gym: check: two envs from makeEnv report different spaces")
	}
	inSpace := func(what string, o []float64) error {
		if !obsSpace.Contains(o) {
			return fmt.Errorf("gym: check: %s observation %v outside the observation space %v", what, o, obsSpace)
		}
		return nil
	}

	// Reset determinism.
	o1, i1 := a.Reset(seed)
	keep := slices.Clone(o1)
	if err := inSpace("reset", o1); err != nil {
		return err
	}
	o2, _ := a.Reset(seed + 1)
	if !floatsIdentical(o1, keep) {
		return fmt.Errorf("gym: check: observation %v returned by Reset was modified to %v by the next Reset", keep, o1)
	}
	if !cfg.seedIndependentReset && floatsIdentical(o1, o2) {
		return fmt.Errorf("gym: check: Reset(%d) and Reset(%d) gave the same observation %v (use SeedIndependentReset if intended)", seed, seed+1, o1)
	}
	o3, i3 := a.Reset(seed)
	if !floatsIdentical(o1, o3) || !infosIdentical(i1, i3) {
		return fmt.Errorf("gym: check: Reset(%d) twice gave %v %v, then %v %v", seed, o1, i1, o3, i3)
	}
	ob, ib := b.Reset(seed)
	if !floatsIdentical(o1, ob) || !infosIdentical(i1, ib) {
		return fmt.Errorf("gym: check: Reset(%d) on two envs gave %v %v and %v %v", seed, o1, i1, ob, ib)
	}

	var rng *rand.Rand
	if policy == nil {
		rng = rand.New(rand.NewPCG(seed, checkStream))
	}
	_, masker := a.(Masker)
	obs := o3
	prev := slices.Clone(obs)
	episode := uint64(0)
	for t := range steps {
		var mask []bool
		if masker {
			ma, mb := a.(Masker).ActionMask(nil), b.(Masker).ActionMask(nil)
			if len(ma) != actSpace.N || !slices.Equal(ma, mb) || !slices.Contains(ma, true) {
				return fmt.Errorf("gym: check: step %d: action masks %v and %v: want %d entries, equal, at least one valid", t, ma, mb, actSpace.N)
			}
			mask = ma
		}
		var act int
		if policy != nil {
			act = policy(slices.Clone(obs), t)
		} else {
			act = randomAction(rng, actSpace.N, mask)
		}
		if !actSpace.Contains(act) {
			return fmt.Errorf("gym: check: step %d: policy chose action %d outside %d actions", t, act, actSpace.N)
		}
		if mask != nil && !mask[act] {
			return fmt.Errorf("gym: check: step %d: policy chose masked action %d (mask %v)", t, act, mask)
		}
		oa, ra, terma, trunca, ia := a.Step(act)
		ob, rb, termb, truncb, ib := b.Step(act)
		switch {
		case !floatsIdentical(oa, ob):
			return fmt.Errorf("gym: check: step %d: same seed and actions gave observations %v and %v", t, oa, ob)
		case math.Float64bits(ra) != math.Float64bits(rb):
			return fmt.Errorf("gym: check: step %d: same seed and actions gave rewards %v and %v", t, ra, rb)
		case terma != termb || trunca != truncb:
			return fmt.Errorf("gym: check: step %d: same seed and actions gave terminated/truncated %v/%v and %v/%v", t, terma, trunca, termb, truncb)
		case !infosIdentical(ia, ib):
			return fmt.Errorf("gym: check: step %d: same seed and actions gave infos %v and %v", t, ia, ib)
		case math.IsNaN(ra):
			return fmt.Errorf("gym: check: step %d: reward is NaN", t)
		case !floatsIdentical(obs, prev):
			return fmt.Errorf("gym: check: step %d: previous observation %v was modified to %v", t, prev, obs)
		}
		if err := inSpace(fmt.Sprintf("step %d", t), oa); err != nil {
			return err
		}
		obs = oa
		if terma || trunca {
			for _, e := range []Env{a, b} {
				if err := stepAfterEndPanics(e, act); err != nil {
					return fmt.Errorf("gym: check: step %d: %w", t, err)
				}
			}
			episode++
			oa, ia := a.Reset(seed + episode)
			ob, ib := b.Reset(seed + episode)
			if !floatsIdentical(oa, ob) || !infosIdentical(ia, ib) {
				return fmt.Errorf("gym: check: Reset(%d) on two envs gave %v %v and %v %v", seed+episode, oa, ia, ob, ib)
			}
			if err := inSpace("reset", oa); err != nil {
				return err
			}
			obs = oa
		}
		prev = append(prev[:0], obs...)
	}
	return nil
}

// stepAfterEndPanics returns nil when e.Step(act) panics with
// ErrStepAfterEnd (or its text), and an error otherwise.
func stepAfterEndPanics(e Env, act int) (err error) {
	defer func() {
		r := recover()
		switch r := r.(type) {
		case error:
			if errors.Is(r, ErrStepAfterEnd) {
				return
			}
		case string:
			if r == ErrStepAfterEnd.Error() {
				return
			}
		}
		err = fmt.Errorf("step after episode end panicked with %v, want %v", r, ErrStepAfterEnd)
	}()
	e.Step(act)
	return nil // replaced by the deferred check
}

// randomAction picks uniformly among the valid actions of n (all when
// mask is nil).
func randomAction(rng *rand.Rand, n int, mask []bool) int {
	if mask == nil {
		return rng.IntN(n)
	}
	valid := 0
	for _, ok := range mask {
		if ok {
			valid++
		}
	}
	k := rng.IntN(valid)
	for a, ok := range mask {
		if ok {
			if k == 0 {
				return a
			}
			k--
		}
	}
	panic("unreachable")
}
