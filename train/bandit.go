package train

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
)

// trainBandit trains the contextual bandit on e: episodes (seeds from the
// training seed up) in which the heuristic, then the learner, decides with
// epsilon exploration. How a decision is scored is Config.Credit:
//
//   - counterfactual (the default): for up to counterfactuals decisions
//     per episode that differ from the heuristic's choice, the episode is
//     replayed twice from its seed (the same background and jitter: common
//     random numbers), both times with the episode's choices before the
//     decision and the heuristic's after it, once with the decision and
//     once with the heuristic's choice in its place; the decision is worth
//     the GPU-held hours it saved over all jobs (negative when it cost).
//     The heuristic's own choice is worth 0 by definition and anchors the
//     values.
//   - own: every decision with a real choice is worth minus the log of its
//     job's own slowdown, TTA over its trace duration (the run time on a
//     packed, idle placement).
//
// The learner is refitted every few episodes. The counterfactual replays
// of an episode run on Config.Workers environments at once (default
// GOMAXPROCS; newEnv builds each beyond e); each replay is deterministic
// given its seed and actions, so the result does not depend on their
// number.
func trainBandit(r *Run, e *placement.Env, newEnv func() *placement.Env) (func([]float64, []bool) int, map[string]*nn.MLP, error) {
	const (
		epsilon         = 0.2 // share of random valid choices
		warmup          = 5   // episodes decided by the heuristic (plus exploration)
		fitEvery        = 5   // episodes between fits
		reportEvery     = 25  // episodes between progress lines
		counterfactuals = 8   // replays per episode (counterfactual credit)
	)
	credit := r.Train.credit()
	margin := float32(r.Train.Margin)
	if credit != "counterfactual" && credit != "own" {
		return nil, nil, fmt.Errorf("train.credit %q: want counterfactual or own", credit)
	}
	cfg := bandit.DefaultConfig()
	cfg.Seed = r.Train.Seed
	heads, z := max(r.Train.Heads, 1), cmp.Or(r.Train.LowerZ, 1)
	var l interface {
		Add(...bandit.Sample)
		Fit() float64
		Len() int
	}
	var choose func(obs []float64, mask []bool) int
	if heads > 1 {
		ens := bandit.NewEnsemble(cfg, e.ObservationSpace().Shape(), e.ActionSpace().N, heads)
		l, choose = ens, func(o []float64, m []bool) int { return ens.ActLower(o, m, float64(margin), z) }
	} else {
		one := bandit.New(cfg, e.ObservationSpace().Shape(), e.ActionSpace().N)
		l, choose = one, func(o []float64, m []bool) int { return one.ActMargin(o, m, margin) }
	}
	switch r.Train.Support {
	case "", "none":
	case "job":
		r.support = checkpoints.NewSupport(placement.JobFeatures)
	case "all":
		r.support = checkpoints.NewSupport(e.ObservationSpace().Shape())
	default:
		return nil, nil, fmt.Errorf("train.support %q: want none, job or all", r.Train.Support)
	}
	if r.support != nil {
		// The box grows with the samples the values are fitted on.
		choose = r.support.Gate(choose)
	}
	rng := rand.New(rand.NewPCG(r.Train.Seed, 0x65787072))
	type decision struct {
		obs    []float32
		action int
		job    int
		step   int
	}
	mask := make([]bool, 0, e.ActionSpace().N)
	workers := []*placement.Env{e}
	if credit == "counterfactual" {
		n := min(cmp.Or(r.Train.Workers, runtime.GOMAXPROCS(0)), 2*counterfactuals)
		if n < 1 {
			return nil, nil, fmt.Errorf("train.workers %d: want at least 1", r.Train.Workers)
		}
		for len(workers) < n {
			workers = append(workers, newEnv())
		}
	}
	steps := 0
	for ep := 0; steps < r.Train.Steps; ep++ {
		seed := r.Train.Seed*1_000_000 + uint64(ep)
		obs, _ := e.Reset(seed)
		var ds []decision
		var actions []int
		for {
			mask = e.ActionMask(mask)
			valid := 0
			for _, ok := range mask {
				if ok {
					valid++
				}
			}
			a := 0
			switch {
			case valid > 1 && rng.Float64() < epsilon:
				k := rng.IntN(valid)
				for i, ok := range mask {
					if ok {
						if k == 0 {
							a = i
							break
						}
						k--
					}
				}
			case ep >= warmup:
				a = choose(obs, mask)
			}
			if valid > 1 {
				o := make([]float32, len(obs))
				for i, v := range obs {
					o[i] = float32(v)
				}
				ds = append(ds, decision{o, a, e.Job().ID, len(actions)})
			}
			actions = append(actions, a)
			var term, trunc bool
			obs, _, term, trunc, _ = e.Step(a)
			steps++
			if term || trunc {
				break
			}
		}
		var samples []bandit.Sample
		var mean float64
		switch credit {
		case "own":
			jobs := e.Jobs()
			for _, d := range ds {
				j := &jobs[d.job]
				tta := max(j.Held-float64(j.Starts)*env.DefaultRestartDelay, 1)
				rew := -math.Log(tta / max(j.Spec.Duration, 1))
				samples = append(samples, bandit.Sample{Obs: d.obs, Action: d.action, Reward: float32(rew)})
				mean += rew / float64(len(ds))
			}
		case "counterfactual":
			var off []decision
			for _, d := range ds {
				if d.action != 0 {
					off = append(off, d)
				}
			}
			rng.Shuffle(len(off), func(i, j int) { off[i], off[j] = off[j], off[i] })
			off = off[:min(len(off), counterfactuals)]
			// Both branches follow the episode up to the decision, differ
			// there, and let the heuristic decide every later job, so the
			// difference is the decision's alone.
			prefixes := make([][]int, 0, 2*len(off))
			for _, d := range off {
				prefixes = append(prefixes, actions[:d.step], actions[:d.step+1])
			}
			held := replayAll(workers, seed, prefixes)
			for i, d := range off {
				gain := held[2*i] - held[2*i+1]
				samples = append(samples, bandit.Sample{Obs: d.obs, Action: d.action, Reward: float32(gain)},
					bandit.Sample{Obs: d.obs, Action: 0, Reward: 0})
				mean += gain / float64(len(off))
			}
		}
		l.Add(samples...)
		if r.support != nil {
			for _, smp := range samples {
				r.support.Add(smp.Obs)
			}
		}
		if r.bar != nil {
			r.bar.Set(min(steps, r.Train.Steps))
		}
		if r.log != nil {
			r.log.Scalar("bandit/mean_reward", steps, mean)
		}
		if (ep+1)%fitEvery == 0 && l.Len() > 0 {
			loss := l.Fit()
			if r.log != nil {
				r.log.Scalar("bandit/loss", steps, loss)
			}
			if (ep+1)%reportEvery == 0 {
				sum := e.Run(periodicSeeds[0], choose)
				fmt.Fprintf(r.w, "episode %d (%d steps): mean reward %.3f, fit loss %.4f; greedy on seed %d: avg TTA %.0f s\n",
					ep+1, steps, mean, loss, periodicSeeds[0], sum.AvgTTA)
			}
		}
	}
	if ens, ok := l.(*bandit.Ensemble); ok {
		// The rule needs every head: the checkpoint keeps them all, with
		// the margin and z in its hyperparameters (drover eval rebuilds it).
		nets := map[string]*nn.MLP{}
		for h, q := range ens.Heads {
			nets[fmt.Sprintf("q%d", h)] = q.Q
		}
		return choose, nets, nil
	}
	// Bake the margin into the values: every action but the heuristic's
	// loses margin, so the plain argmax is ActMargin.
	one := l.(*bandit.Learner)
	ls := one.Q.Linears()
	for a := 1; a < len(ls[len(ls)-1].B.Value); a++ {
		ls[len(ls)-1].B.Value[a] -= margin
	}
	act := one.Act
	if r.support != nil {
		act = r.support.Gate(act)
	}
	return act, map[string]*nn.MLP{"q": one.Q}, nil
}
