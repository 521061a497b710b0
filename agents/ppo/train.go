package ppo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/env/gym"
)

// Config holds PPO's hyperparameters. Defaults are CleanRL's ppo.py.
type Config struct {
	// Seed seeds the networks' initialisation, action sampling, minibatch
	// shuffling and the environments.
	Seed uint64
	// TotalSteps is the number of environment steps to train for.
	TotalSteps int
	// LR is Adam's learning rate; AnnealLR decays it linearly to 0.
	LR       float64
	AnnealLR bool
	// NumEnvs environments each step NumSteps times per rollout.
	NumEnvs, NumSteps int
	// Gamma is the discount and Lambda the GAE parameter.
	Gamma, Lambda float32
	// NumMinibatches and UpdateEpochs shape the update.
	NumMinibatches, UpdateEpochs int
	// NormAdv normalises advantages per minibatch.
	NormAdv bool
	// Clip is the surrogate and value clipping coefficient.
	Clip float32
	// EntCoef and VfCoef weight the entropy bonus and the value loss.
	EntCoef, VfCoef float32
	// MaxGradNorm is the global gradient-norm clip.
	MaxGradNorm float64
	// Hidden are the widths of the actor's and critic's hidden layers.
	Hidden []int
	// Parallel steps the environments in goroutines.
	Parallel bool
	// ActionPrior, when set (one value per action), is added to the
	// actor's output bias at initialisation: a prior over actions in
	// logits. A large prior on a heuristic's own choice (action 0 of a
	// env.Proposer environment) starts the policy near the heuristic
	// while it still explores the other candidates.
	ActionPrior []float32
	// Init, when set, is the agent training starts from (its networks are
	// copied; Hidden and the spaces must match): a behaviour-cloned actor,
	// say, that PPO fine-tunes. ActionPrior is then not applied.
	Init *Agent
	// CriticWarmup is the number of first updates that train the critic
	// only, so that a pretrained actor (Init) is not pushed around by the
	// advantages of an untrained critic.
	CriticWarmup int
	// Backend is the NN backend the updates run on: "" or "go" (the
	// pure-Go default), or "torch" in a binary built with the torch tag
	// (nn.OpenBackend). Rollouts act on the Go networks, which the
	// backend's trained weights are copied into after every update.
	Backend string
	// Device is the backend's device: "" (cpu), "cpu", "cuda" or "cuda:N"
	// (torch only).
	Device string
}

// DefaultConfig returns CleanRL's ppo.py defaults (CartPole-v1, 500k steps).
func DefaultConfig() Config {
	return Config{
		Seed: 1, TotalSteps: 500000, LR: 2.5e-4, AnnealLR: true,
		NumEnvs: 4, NumSteps: 128, Gamma: 0.99, Lambda: 0.95,
		NumMinibatches: 4, UpdateEpochs: 4, NormAdv: true, Clip: 0.2,
		EntCoef: 0.01, VfCoef: 0.5, MaxGradNorm: 0.5, Hidden: []int{64, 64},
	}
}

// Validate reports whether c can train, naming the config key (ppo's
// snake_case field name) that cannot: positive steps, envs, minibatches
// and epochs with the batch divisible into the minibatches; a positive,
// finite learning rate, clip and max grad norm; gamma and gae_lambda in
// [0, 1]; finite, non-negative ent_coef and vf_coef; hidden widths in
// [1, nn.MaxWidth] within nn.MaxParams (nn.CheckHidden). Train calls it
// first, so a bad config is an error, never a panic.
func (c Config) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.TotalSteps <= 0:
		return fmt.Errorf("ppo: config: total_steps %d, want > 0", c.TotalSteps)
	case c.NumEnvs <= 0:
		return fmt.Errorf("ppo: config: num_envs %d, want > 0", c.NumEnvs)
	case c.NumSteps <= 0:
		return fmt.Errorf("ppo: config: num_steps %d, want > 0", c.NumSteps)
	case c.NumMinibatches <= 0:
		return fmt.Errorf("ppo: config: num_minibatches %d, want > 0", c.NumMinibatches)
	case c.UpdateEpochs <= 0:
		return fmt.Errorf("ppo: config: update_epochs %d, want > 0", c.UpdateEpochs)
	case c.NumEnvs > 1<<16 || c.NumSteps > 1<<24 || c.NumEnvs*c.NumSteps > 1<<24:
		return fmt.Errorf("ppo: config: num_envs x num_steps = %d x %d, want a batch of at most %d", c.NumEnvs, c.NumSteps, 1<<24)
	case (c.NumEnvs*c.NumSteps)%c.NumMinibatches != 0:
		return fmt.Errorf("ppo: config: batch %d (num_envs x num_steps) not divisible into %d minibatches (num_minibatches)", c.NumEnvs*c.NumSteps, c.NumMinibatches)
	case !(c.LR > 0) || !finite(c.LR):
		return fmt.Errorf("ppo: config: lr %v, want a positive finite number", c.LR)
	case !(c.Clip > 0) || !finite(float64(c.Clip)):
		return fmt.Errorf("ppo: config: clip %v, want a positive finite number", c.Clip)
	case !(c.MaxGradNorm > 0) || !finite(c.MaxGradNorm):
		return fmt.Errorf("ppo: config: max_grad_norm %v, want a positive finite number", c.MaxGradNorm)
	case !(c.Gamma >= 0 && c.Gamma <= 1):
		return fmt.Errorf("ppo: config: gamma %v, want a discount in [0, 1]", c.Gamma)
	case !(c.Lambda >= 0 && c.Lambda <= 1):
		return fmt.Errorf("ppo: config: lambda %v, want GAE's lambda in [0, 1]", c.Lambda)
	case !(c.EntCoef >= 0) || !finite(float64(c.EntCoef)):
		return fmt.Errorf("ppo: config: ent_coef %v, want a finite number >= 0", c.EntCoef)
	case !(c.VfCoef >= 0) || !finite(float64(c.VfCoef)):
		return fmt.Errorf("ppo: config: vf_coef %v, want a finite number >= 0", c.VfCoef)
	case c.CriticWarmup < 0:
		return fmt.Errorf("ppo: config: critic_warmup %d updates, want >= 0", c.CriticWarmup)
	}
	for i, b := range c.ActionPrior {
		if !finite(float64(b)) {
			return fmt.Errorf("ppo: config: action_prior[%d] is %v, want a finite number", i, b)
		}
	}
	if err := nn.CheckHidden(c.Hidden); err != nil {
		return fmt.Errorf("ppo: config: hidden %v: %w", c.Hidden, err)
	}
	if err := nn.CheckBackend(c.Backend); err != nil {
		return fmt.Errorf("ppo: config: backend: %w", err)
	}
	return nil
}

// Agent is a separate actor (logits) and critic (value) network, as in
// CleanRL's ppo.py.
type Agent struct {
	// Actor maps observations to action logits; Critic to a value.
	Actor, Critic *nn.MLP
}

// NewAgent builds the networks with CleanRL's layer_init: orthogonal
// weights, gain sqrt(2) in hidden layers, 0.01 at the actor's output and 1
// at the critic's. Like nn.NewStack it panics on a width below 1; check
// hidden widths from a config with Config.Validate (or nn.CheckSizes).
func NewAgent(obsDim, actions int, hidden []int, src rand.Source) *Agent {
	sizes := func(out int) []int { return append(append([]int{obsDim}, hidden...), out) }
	return &Agent{
		Actor:  nn.NewOrthogonalMLP(sizes(actions), nn.NewTanh, math.Sqrt2, 0.01, src),
		Critic: nn.NewOrthogonalMLP(sizes(1), nn.NewTanh, math.Sqrt2, 1, src),
	}
}

// Params returns the actor's then the critic's parameters.
func (a *Agent) Params() []*nn.Param { return append(a.Actor.Params(), a.Critic.Params()...) }

// Update is what one PPO update reports.
type Update struct {
	// Step is the number of environment steps so far.
	Step int
	// Episodes are the returns of the episodes that ended in this rollout.
	Episodes []float64
	// PolicyLoss, ValueLoss, Entropy, OldApproxKL, ApproxKL and ClipFrac
	// are the last epoch's minibatch means, as CleanRL logs them
	// (OldApproxKL = mean(-log r), ApproxKL = mean((r-1) - log r)).
	PolicyLoss, ValueLoss, Entropy, OldApproxKL, ApproxKL, ClipFrac float32
	// ExplainedVariance is 1 - Var(returns - values) / Var(returns) over
	// the rollout, with the values the rollout recorded (NaN when the
	// returns do not vary), as CleanRL computes it.
	ExplainedVariance float64
	// LR is the learning rate used.
	LR float64
	// Agent is the agent being trained, for evaluating it between
	// updates; the callback must not change it or keep using it after
	// returning (its networks are not safe for concurrent use).
	Agent *Agent
}

// Train runs PPO on NumEnvs environments made by makeEnv and calls report
// after every update (if not nil). When the environments implement
// gym.Masker, invalid actions are masked out of the policy both when acting
// and when updating, as MaskablePPO does. The same config and seed give the
// same agent, bit for bit.
func Train(cfg Config, makeEnv func(i int) gym.Env, report func(Update)) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	envs, err := gym.NewVector(makeEnv, cfg.NumEnvs, gym.SameStep, cfg.Parallel)
	if err != nil {
		return nil, err
	}
	defer envs.Close()
	obsDim, nA := envs.ObservationSpace().Shape(), envs.ActionSpace().N
	if err := nn.CheckSizes(append(append([]int{obsDim}, cfg.Hidden...), nA)); err != nil {
		return nil, fmt.Errorf("ppo: %d observations, hidden %v, %d actions: %w", obsDim, cfg.Hidden, nA, err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x70706f))
	agent := NewAgent(obsDim, nA, cfg.Hidden, rng)
	if cfg.Init != nil {
		if err := copyAgent(agent, cfg.Init); err != nil {
			return nil, err
		}
	} else if len(cfg.ActionPrior) > 0 {
		if len(cfg.ActionPrior) != nA {
			return nil, fmt.Errorf("ppo: ActionPrior has %d values for %d actions", len(cfg.ActionPrior), nA)
		}
		ls := agent.Actor.Linears()
		for i, b := range cfg.ActionPrior {
			ls[len(ls)-1].B.Value[i] += b
		}
	}
	l, err := newLearner(cfg, agent, rng)
	if err != nil {
		return nil, err
	}
	defer l.tr.Close()
	opt := l.tr

	N, T := cfg.NumEnvs, cfg.NumSteps
	B := N * T
	roll := newRollout(B, obsDim, nA)
	obsBuf, actions, logps, values, adv, ret := roll.obs, roll.act, roll.logp, roll.value, roll.adv, roll.ret
	rewards := make([]float32, B)
	nextValues := make([]float32, B)
	terms := make([]bool, B)
	truncs := make([]bool, B)
	epRet := make([]float64, N)

	next := nn.NewMat(N, obsDim)
	first, _ := envs.Reset(cfg.Seed)
	copyObs(next, first)
	valueOf := func(x nn.Mat) []float32 {
		v := agent.Critic.Forward(x)
		out := make([]float32, x.Rows)
		copy(out, v.Data)
		return out
	}
	numUpdates := cfg.TotalSteps / B
	step := 0
	for u := 1; u <= numUpdates; u++ {
		lr := cfg.LR
		if cfg.AnnealLR {
			lr = (1 - float64(u-1)/float64(numUpdates)) * cfg.LR
		}
		opt.SetLR(lr)
		var up Update
		// The networks do not change during a rollout, so each
		// observation's value is computed once: as step t's successor,
		// then reused as step t+1's own value.
		curV := valueOf(next)
		for t := range T {
			step += N
			row := t * N
			copy(obsBuf[row*obsDim:(row+N)*obsDim], next.Data)
			logits := agent.Actor.Forward(next)
			var mask []bool
			if ms := envs.ActionMasks(); ms != nil {
				if roll.mask == nil {
					roll.mask = make([]bool, B*nA)
				}
				mask = roll.mask[row*nA : (row+N)*nA]
				for i, m := range ms {
					copy(mask[i*nA:(i+1)*nA], m)
				}
			}
			dist := nn.NewCategorical(logits, mask)
			a := dist.Sample(rng)
			lp := dist.LogProb(a)
			copy(actions[row:row+N], a)
			copy(logps[row:row+N], lp)
			copy(values[row:row+N], curV)
			res := envs.Step(a)
			copyObs(next, res.Obs)
			// Successor values: the next observation's, except where the
			// episode ended: its final observation's when truncated (a
			// time limit is not terminal), unused when terminated.
			nv := valueOf(next)
			curV = nv
			for i := range N {
				k := row + i
				rewards[k] = float32(res.Rewards[i])
				terms[k], truncs[k] = res.Terminated[i], res.Truncated[i]
				nextValues[k] = nv[i]
				epRet[i] += res.Rewards[i]
				if terms[k] || truncs[k] {
					if truncs[k] && !terms[k] && res.FinalObs[i] != nil {
						f := nn.NewMat(1, obsDim)
						for j, x := range res.FinalObs[i] {
							f.Data[j] = float32(x)
						}
						nextValues[k] = valueOf(f)[0]
					}
					up.Episodes = append(up.Episodes, epRet[i])
					epRet[i] = 0
				}
			}
		}
		// GAE per environment (column i of the T x N layout).
		col := func(src []float32, i int, dst []float32) {
			for t := range T {
				dst[t] = src[t*N+i]
			}
		}
		colB := func(src []bool, i int, dst []bool) {
			for t := range T {
				dst[t] = src[t*N+i]
			}
		}
		r, v, nv, a1, r1 := make([]float32, T), make([]float32, T), make([]float32, T), make([]float32, T), make([]float32, T)
		te, tr := make([]bool, T), make([]bool, T)
		for i := range N {
			col(rewards, i, r)
			col(values, i, v)
			col(nextValues, i, nv)
			colB(terms, i, te)
			colB(truncs, i, tr)
			GAE(r, v, nv, te, tr, cfg.Gamma, cfg.Lambda, a1, r1)
			for t := range T {
				adv[t*N+i], ret[t*N+i] = a1[t], r1[t]
			}
		}
		// Optimise.
		l.frozen = u <= cfg.CriticWarmup
		if err := l.update(&roll, &up); err != nil {
			return nil, fmt.Errorf("ppo: update %d: %w", u, err)
		}
		up.Step, up.LR, up.Agent = step, lr, agent
		if report != nil {
			report(up)
		}
	}
	return agent, nil
}

// copyAgent copies src's parameters into dst, which must have the same
// shapes.
func copyAgent(dst, src *Agent) error {
	d, s := dst.Params(), src.Params()
	if len(d) != len(s) {
		return fmt.Errorf("ppo: Init has %d parameters, want %d (same hidden layers and spaces)", len(s), len(d))
	}
	for i := range d {
		if len(d[i].Value) != len(s[i].Value) {
			return fmt.Errorf("ppo: Init's %s has %d values, want %d (same hidden layers and spaces)", s[i].Name, len(s[i].Value), len(d[i].Value))
		}
		copy(d[i].Value, s[i].Value)
	}
	return nil
}

// rollout holds one rollout's samples for the update, row t*NumEnvs+i.
type rollout struct {
	obsDim, actions int
	// obs holds the observations, one row of obsDim per sample.
	obs []float32
	// act, logp and value are the actions taken, their log-probabilities
	// and the critic's values when acting; adv and ret the GAE advantages
	// and returns.
	act                   []int
	logp, value, adv, ret []float32
	// mask has actions entries per sample, true for a valid action; nil
	// when the environments have no masks.
	mask []bool
}

func newRollout(n, obsDim, actions int) rollout {
	return rollout{obsDim: obsDim, actions: actions, obs: make([]float32, n*obsDim), act: make([]int, n),
		logp: make([]float32, n), value: make([]float32, n), adv: make([]float32, n), ret: make([]float32, n)}
}

// learner is PPO's optimisation phase: UpdateEpochs passes over a rollout
// in NumMinibatches shuffled minibatches, one Adam step each. Its buffers
// are reused from update to update.
type learner struct {
	cfg   Config
	agent *Agent
	tr    nn.Trainer // the backend's networks (0: actor, 1: critic) and Adam
	rng   *rand.Rand

	idx                                              []int
	mbObs                                            nn.Mat
	mbMask                                           []bool
	mbAct                                            []int
	mbOldLogp, mbAdv, mbRet, mbOldV, dLogp, dV, dEnt []float32
	frozen                                           bool // the actor does not learn (critic warm-up)
}

func newLearner(cfg Config, agent *Agent, rng *rand.Rand) (*learner, error) {
	be, err := nn.OpenBackend(cfg.Backend, cfg.Device)
	if err != nil {
		return nil, fmt.Errorf("ppo: %w", err)
	}
	tr, err := be.NewTrainer([]*nn.MLP{agent.Actor, agent.Critic}, cfg.LR, 1e-5)
	if err != nil {
		return nil, fmt.Errorf("ppo: %w", err)
	}
	return &learner{cfg: cfg, agent: agent, tr: tr, rng: rng}, nil
}

// update optimises the agent on r (the learning rate is the optimiser's)
// and records the last epoch's minibatch means in up. The agent's
// networks hold the trained weights when it returns.
func (l *learner) update(r *rollout, up *Update) error {
	cfg, rng, tr := l.cfg, l.rng, l.tr
	actor, critic := tr.Module(0), tr.Module(1)
	B, obsDim, nA := len(r.act), r.obsDim, r.actions
	mbSize := B / cfg.NumMinibatches
	if len(l.idx) != B || l.mbObs.Rows != mbSize || l.mbObs.Cols != obsDim {
		l.idx = make([]int, B)
		l.mbObs = nn.NewMat(mbSize, obsDim)
		l.mbAct = make([]int, mbSize)
		l.mbOldLogp, l.mbAdv, l.mbRet, l.mbOldV = make([]float32, mbSize), make([]float32, mbSize), make([]float32, mbSize), make([]float32, mbSize)
		l.dLogp, l.dV, l.dEnt = make([]float32, mbSize), make([]float32, mbSize), make([]float32, mbSize)
		l.mbMask = nil
	}
	if r.mask != nil && len(l.mbMask) != mbSize*nA {
		l.mbMask = make([]bool, mbSize*nA)
	}
	mbMask := l.mbMask
	if r.mask == nil {
		mbMask = nil
	}
	idx, mbObs, mbAct := l.idx, l.mbObs, l.mbAct
	mbOldLogp, mbAdv, mbRet, mbOldV := l.mbOldLogp, l.mbAdv, l.mbRet, l.mbOldV
	dLogp, dV, dEnt := l.dLogp, l.dV, l.dEnt
	for i := range idx {
		idx[i] = i
	}
	for range cfg.UpdateEpochs {
		rng.Shuffle(B, func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		var pl, vl, ent, okl, kl, cf float32
		for mb := range cfg.NumMinibatches {
			ids := idx[mb*mbSize : (mb+1)*mbSize]
			for k, id := range ids {
				copy(mbObs.Data[k*obsDim:(k+1)*obsDim], r.obs[id*obsDim:(id+1)*obsDim])
				mbAct[k], mbOldLogp[k], mbAdv[k], mbRet[k], mbOldV[k] = r.act[id], r.logp[id], r.adv[id], r.ret[id], r.value[id]
				if mbMask != nil {
					copy(mbMask[k*nA:(k+1)*nA], r.mask[id*nA:(id+1)*nA])
				}
			}
			if cfg.NormAdv {
				NormalizeAdvantages(mbAdv)
			}
			tr.ZeroGrad()
			logits := actor.Forward(mbObs)
			dist := nn.NewCategorical(logits, mbMask)
			newLogp := dist.LogProb(mbAct)
			entropy := dist.Entropy()
			p, k2, c := ClippedPolicyLoss(newLogp, mbOldLogp, mbAdv, cfg.Clip, dLogp)
			var ok float64
			for k := range newLogp {
				ok += float64(mbOldLogp[k] - newLogp[k])
			}
			okl += float32(ok / float64(len(newLogp)))
			newV := critic.Forward(mbObs)
			vloss := ClippedValueLoss(newV.Data, mbOldV, mbRet, cfg.Clip, dV)
			var e float32
			for k := range entropy {
				e += entropy[k]
				dEnt[k] = -cfg.EntCoef / float32(mbSize) // d(-ent_coef * mean entropy)
			}
			gl := dist.LogProbGrad(mbAct, dLogp)
			ge := dist.EntropyGrad(dEnt)
			for k := range gl.Data {
				gl.Data[k] += ge.Data[k]
			}
			if !l.frozen {
				actor.Accumulate(gl)
			}
			for k := range dV {
				dV[k] *= cfg.VfCoef
			}
			critic.Accumulate(nn.MatFrom(mbSize, 1, dV))
			tr.ClipGradNorm(cfg.MaxGradNorm)
			if err := tr.Step(); err != nil {
				return err
			}
			pl, vl, ent, kl, cf = pl+p, vl+vloss, ent+e/float32(mbSize), kl+k2, cf+c
		}
		m := float32(cfg.NumMinibatches)
		up.PolicyLoss, up.ValueLoss, up.Entropy, up.OldApproxKL, up.ApproxKL, up.ClipFrac = pl/m, vl/m, ent/m, okl/m, kl/m, cf/m
	}
	up.ExplainedVariance = ExplainedVariance(r.value, r.ret)
	return tr.Sync()
}

// ExplainedVariance returns 1 - Var(y - pred) / Var(y) (population
// variances), NaN when y does not vary: how much of the returns' variance
// the value predictions explain (1 is perfect, 0 no better than the mean).
func ExplainedVariance(pred, y []float32) float64 {
	if len(pred) != len(y) {
		panic("ppo: ExplainedVariance length mismatch")
	}
	variance := func(f func(i int) float64) float64 {
		mean, ss := 0.0, 0.0
		for i := range y {
			mean += f(i)
		}
		mean /= float64(len(y))
		for i := range y {
			d := f(i) - mean
			ss += d * d
		}
		return ss / float64(len(y))
	}
	vy := variance(func(i int) float64 { return float64(y[i]) })
	if vy == 0 || len(y) == 0 {
		return math.NaN()
	}
	return 1 - variance(func(i int) float64 { return float64(y[i]) - float64(pred[i]) })/vy
}

func copyObs(dst nn.Mat, rows [][]float64) {
	for i, r := range rows {
		for j, x := range r {
			dst.Data[i*dst.Cols+j] = float32(x)
		}
	}
}
