package direct

import (
	"math"

	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/sched"
)

// normalized divides the environment's rewards by a running standard
// deviation of the discounted return, as Gymnasium's NormalizeReward
// wrapper (which CleanRL's PPO uses) does: an episode of the scheduling
// environment returns minus hundreds of GPU-hours, whose critic gradient
// would otherwise swamp the actor's under PPO's global gradient-norm
// clip. The scale is a deterministic function of the rewards seen.
type normalized struct {
	*sched.Env
	gamma    float64
	ret      float64 // the discounted return so far in the episode
	n        float64 // returns seen
	mean, m2 float64 // Welford's running moments of ret
}

var _ gym.Masker = (*normalized)(nil)

func normalize(e *sched.Env, gamma float64) *normalized { return &normalized{Env: e, gamma: gamma} }

// Step implements gym.Env.
func (w *normalized) Step(a int) ([]float64, float64, bool, bool, gym.Info) {
	return w.StepInto(nil, a)
}

// StepInto implements gym.StepperInto.
func (w *normalized) StepInto(dst []float64, a int) ([]float64, float64, bool, bool, gym.Info) {
	obs, r, term, trunc, info := w.Env.StepInto(dst, a)
	return obs, w.scale(r, term || trunc), term, trunc, info
}

// scale records reward r (the episode's last when done) and returns it
// divided by the running standard deviation of the discounted returns
// seen so far (1 while only one has been seen).
func (w *normalized) scale(r float64, done bool) float64 {
	w.ret = w.ret*w.gamma + r
	w.n++
	d := w.ret - w.mean
	w.mean += d / w.n
	w.m2 += d * (w.ret - w.mean)
	if done {
		w.ret = 0
	}
	sd := 1.0
	if w.n > 1 {
		sd = math.Sqrt(w.m2/(w.n-1)) + 1e-8
	}
	return r / sd
}
