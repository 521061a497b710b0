package dqn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/env/gym"
)

// Config holds DQN's hyperparameters. Defaults are CleanRL's dqn.py.
type Config struct {
	// Seed seeds the network, exploration, replay sampling and the env.
	Seed uint64
	// TotalSteps is the number of environment steps.
	TotalSteps int
	// LR is Adam's learning rate.
	LR float64
	// BufferSize is the replay capacity.
	BufferSize int
	// Gamma is the discount.
	Gamma float32
	// TargetEvery copies the online network to the target every so many steps.
	TargetEvery int
	// BatchSize is the replay minibatch.
	BatchSize int
	// StartE, EndE and ExplorationFraction set the linear epsilon schedule
	// (from StartE to EndE over that fraction of TotalSteps).
	StartE, EndE, ExplorationFraction float64
	// LearningStarts is the step at which training begins.
	LearningStarts int
	// TrainEvery trains once per so many steps.
	TrainEvery int
	// Hidden are the Q-network's ReLU layer widths.
	Hidden []int
	// Double uses double Q-learning targets.
	Double bool
	// Backend is the NN backend the training steps run on: "" or "go"
	// (the pure-Go default), or "torch" in a binary built with the torch
	// tag (nn.OpenBackend). Acting and the target network use the Go
	// network, which the trained weights are copied into after every
	// training step.
	Backend string
	// Device is the backend's device: "" (cpu), "cpu", "cuda" or "cuda:N"
	// (torch only).
	Device string
}

// DefaultConfig returns CleanRL's dqn.py defaults (CartPole-v1, 500k steps).
func DefaultConfig() Config {
	return Config{
		Seed: 1, TotalSteps: 500000, LR: 2.5e-4, BufferSize: 10000, Gamma: 0.99,
		TargetEvery: 500, BatchSize: 128, StartE: 1, EndE: 0.05, ExplorationFraction: 0.5,
		LearningStarts: 10000, TrainEvery: 10, Hidden: []int{120, 84},
	}
}

// MaxReplayValues caps the replay buffer's observations (its size times
// twice the observation size: each transition and its successor), 2^28
// float32 values or 1 GiB, so that a mistyped buffer_size is an error
// rather than an out-of-memory crash.
const MaxReplayValues = 1 << 28

// Validate reports whether c can train, naming the config key (dqn's
// snake_case field name) that cannot: positive total_steps, batch_size,
// buffer_size, train_every and target_every, with batch_size at most
// buffer_size (a batch is sampled from the buffer); learning_starts >= 0;
// a positive finite lr; gamma in [0, 1]; start_e and end_e in [0, 1];
// exploration_fraction in (0, 1]; hidden widths in [1, nn.MaxWidth]
// within nn.MaxParams (nn.CheckHidden). Train calls it first, so a bad
// config is an error, never a panic.
func (c Config) Validate() error {
	in01 := func(x float64) bool { return x >= 0 && x <= 1 }
	switch {
	case c.TotalSteps <= 0:
		return fmt.Errorf("dqn: config: total_steps %d, want > 0", c.TotalSteps)
	case c.BufferSize <= 0:
		return fmt.Errorf("dqn: config: buffer_size %d, want > 0", c.BufferSize)
	case c.BufferSize > MaxReplayValues/2:
		return fmt.Errorf("dqn: config: buffer_size %d, want at most %d", c.BufferSize, MaxReplayValues/2)
	case c.BatchSize <= 0:
		return fmt.Errorf("dqn: config: batch_size %d, want > 0", c.BatchSize)
	case c.BatchSize > c.BufferSize:
		return fmt.Errorf("dqn: config: batch_size %d is more than buffer_size %d: a batch is drawn from the buffer", c.BatchSize, c.BufferSize)
	case c.TrainEvery <= 0:
		return fmt.Errorf("dqn: config: train_every %d, want > 0", c.TrainEvery)
	case c.TargetEvery <= 0:
		return fmt.Errorf("dqn: config: target_every %d, want > 0", c.TargetEvery)
	case c.LearningStarts < 0:
		return fmt.Errorf("dqn: config: learning_starts %d, want >= 0", c.LearningStarts)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("dqn: config: lr %v, want a positive finite number", c.LR)
	case !in01(float64(c.Gamma)):
		return fmt.Errorf("dqn: config: gamma %v, want a discount in [0, 1]", c.Gamma)
	case !in01(c.StartE):
		return fmt.Errorf("dqn: config: start_e %v, want a probability in [0, 1]", c.StartE)
	case !in01(c.EndE):
		return fmt.Errorf("dqn: config: end_e %v, want a probability in [0, 1]", c.EndE)
	case !(c.ExplorationFraction > 0 && c.ExplorationFraction <= 1):
		return fmt.Errorf("dqn: config: exploration_fraction %v, want (0, 1]", c.ExplorationFraction)
	}
	if err := nn.CheckHidden(c.Hidden); err != nil {
		return fmt.Errorf("dqn: config: hidden %v: %w", c.Hidden, err)
	}
	if err := nn.CheckBackend(c.Backend); err != nil {
		return fmt.Errorf("dqn: config: backend: %w", err)
	}
	return nil
}

// Update is what Train reports about each finished episode.
type Update struct {
	// Step is the environment step at which the episode ended.
	Step int
	// Return is the episode's return.
	Return float64
	// Epsilon is the exploration rate at that step.
	Epsilon float64
	// TDLoss and QValues are the mean squared TD error and the mean
	// Q-value of the actions taken in the last training batch before the
	// episode ended (0 before learning starts), CleanRL's
	// losses/td_loss and losses/q_values.
	TDLoss, QValues float64
}

// NewQNetwork builds obs -> hidden (ReLU) -> actions with torch's default
// Linear initialisation, as CleanRL's QNetwork.
func NewQNetwork(obsDim, actions int, hidden []int, src rand.Source) *nn.MLP {
	m := nn.NewStack(append(append([]int{obsDim}, hidden...), actions), nn.NewReLU)
	for _, l := range m.Linears() {
		nn.TorchDefaultInit(l, src)
	}
	return m
}

// Train runs DQN on one environment and calls report at every episode end.
// When the environment is a gym.Masker, exploration draws among the valid
// actions, the greedy action is the best valid one, and the TD targets
// maximise over the next state's valid actions (MaskedTargets). The same
// config gives the same network, bit for bit.
func Train(cfg Config, env gym.Env, report func(Update)) (*nn.MLP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	obsDim, nA := env.ObservationSpace().Shape(), env.ActionSpace().N
	if err := nn.CheckSizes(append(append([]int{obsDim}, cfg.Hidden...), nA)); err != nil {
		return nil, fmt.Errorf("dqn: %d observations, hidden %v, %d actions: %w", obsDim, cfg.Hidden, nA, err)
	}
	if obsDim > MaxReplayValues/cfg.BufferSize/2 {
		return nil, fmt.Errorf("dqn: config: buffer_size %d x %d observations is more than %d values", cfg.BufferSize, obsDim, MaxReplayValues)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x64716e))
	q := NewQNetwork(obsDim, nA, cfg.Hidden, rng)
	target := NewQNetwork(obsDim, nA, cfg.Hidden, rng)
	copyParams(target, q)
	be, err := nn.OpenBackend(cfg.Backend, cfg.Device)
	if err != nil {
		return nil, fmt.Errorf("dqn: %w", err)
	}
	tr, err := be.NewTrainer([]*nn.MLP{q}, cfg.LR, 1e-8)
	if err != nil {
		return nil, fmt.Errorf("dqn: %w", err)
	}
	defer tr.Close()
	online := tr.Module(0)
	buf := NewReplay(cfg.BufferSize, obsDim, rand.NewPCG(cfg.Seed, 0x627566))

	masker, _ := env.(gym.Masker)
	var mask []bool
	obs64, _ := env.Reset(cfg.Seed)
	obs := toF32(obs64)
	one := nn.NewMat(1, obsDim)
	y := make([]float32, cfg.BatchSize)
	episode, ret := 0, 0.0
	var tdLoss, qMean float64 // the last training batch's, for the report
	for step := range cfg.TotalSteps {
		eps := LinearSchedule(cfg.StartE, cfg.EndE, cfg.ExplorationFraction*float64(cfg.TotalSteps), float64(step))
		var a int
		if masker != nil {
			mask = masker.ActionMask(mask)
		}
		if rng.Float64() < eps {
			a = randomValid(rng, nA, mask)
		} else {
			copy(one.Data, obs)
			a = argmaxMasked(q.Forward(one).Data, mask)
		}
		next64, r, term, trunc, _ := env.Step(a)
		next := toF32(next64)
		// A truncated transition stores its final observation and is not
		// terminal, so its target bootstraps.
		if masker != nil {
			mask = masker.ActionMask(mask)
			buf.AddMasked(obs, a, float32(r), next, term, mask)
		} else {
			buf.Add(obs, a, float32(r), next, term)
		}
		ret += r
		if term || trunc {
			if report != nil {
				report(Update{Step: step + 1, Return: ret, Epsilon: eps, TDLoss: tdLoss, QValues: qMean})
			}
			episode++
			ret = 0
			next64, _ = env.Reset(cfg.Seed + uint64(episode))
			next = toF32(next64)
		}
		obs = next
		if step+1 > cfg.LearningStarts {
			if (step+1)%cfg.TrainEvery == 0 {
				b := buf.Sample(cfg.BatchSize)
				nextM := nn.MatFrom(cfg.BatchSize, obsDim, b.NextObs)
				qt := target.Forward(nextM).Clone()
				var qo []float32
				if cfg.Double {
					qo = q.Forward(nextM).Clone().Data
				}
				MaskedTargets(b.Reward, b.Terminated, qt.Data, qo, b.NextMask, nA, cfg.Gamma, cfg.Double, y)
				tr.ZeroGrad()
				pred := online.Forward(nn.MatFrom(cfg.BatchSize, obsDim, b.Obs))
				qa := nn.Gather(pred, b.Action)
				loss, dq := nn.MSE(qa, nn.MatFrom(cfg.BatchSize, 1, y))
				tdLoss, qMean = float64(loss), 0
				for _, v := range qa.Data {
					qMean += float64(v) / float64(len(qa.Data))
				}
				online.Accumulate(nn.GatherGrad(dq, b.Action, nA))
				if err := tr.Step(); err != nil {
					return nil, fmt.Errorf("dqn: step %d: %w", step+1, err)
				}
				if err := tr.Sync(); err != nil {
					return nil, fmt.Errorf("dqn: step %d: %w", step+1, err)
				}
			}
			if (step+1)%cfg.TargetEvery == 0 {
				copyParams(target, q)
			}
		}
	}
	return q, nil
}

// randomValid draws an action uniformly among the valid ones of mask (all
// nA when mask is nil, drawing exactly as rng.IntN(nA)).
func randomValid(rng *rand.Rand, nA int, mask []bool) int {
	if mask == nil {
		return rng.IntN(nA)
	}
	n := 0
	for _, ok := range mask {
		if ok {
			n++
		}
	}
	if n == 0 {
		return rng.IntN(nA)
	}
	k := rng.IntN(n)
	for a, ok := range mask {
		if ok {
			if k == 0 {
				return a
			}
			k--
		}
	}
	return -1 // unreachable
}

func copyParams(dst, src *nn.MLP) {
	ps := src.Params()
	for i, p := range dst.Params() {
		copy(p.Value, ps[i].Value)
	}
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
