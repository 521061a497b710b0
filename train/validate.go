package train

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/train/runlog"
)

// Bounds Validate puts on a run's config (docs/format/train-config.md).
// They keep a mistyped number from starting a run that cannot end or
// cannot fit in memory; the agents' own bounds (hidden widths, the replay
// buffer) are ppo.Config.Validate's and dqn.Config.Validate's.
const (
	// MaxSteps is the most environment steps a run takes: CartPole's
	// 500k steps take about 11 s on one core, so this is days.
	MaxSteps = 1_000_000_000
	// MaxEvalSeeds bounds eval_seeds, helios_seeds and pai_seeds.
	MaxEvalSeeds = 1000
	// MaxNodes and MaxGPUsPerNode bound the training cluster.
	MaxNodes, MaxGPUsPerNode = 100_000, 64
	// MaxHeads bounds the bandit ensemble and MaxWorkers its replays at
	// once.
	MaxHeads, MaxWorkers = 64, 1024
	// MaxLoad bounds load and offered_load, MaxTilt tilt.
	MaxLoad, MaxTilt = 100, 100
)

// ErrInvalidConfig wraps every problem Validate finds.
var ErrInvalidConfig = errors.New("train: invalid config")

// Algorithms and environments a config may name (Validate); resolve and
// drover train then check their combination.
var (
	envs  = []string{"placement", "sync", "sas-rl", "strn-rl", "cartpole"}
	algos = map[string][]string{
		"cartpole":  {"ppo", "dqn"},
		"placement": {"ppo"},
		"sync":      {"ppo"},
		"sas-rl":    {"ppo", "bc", "dqn", "bandit", "rerank-ppo"},
		"strn-rl":   {"ppo", "bc", "dqn", "bandit", "rerank-ppo"},
	}
)

// Validate checks the whole run config before any work: the train
// section's fields against the bounds above and their documented values,
// and the ppo and dqn sections with their agents' Validate. The error
// wraps ErrInvalidConfig and names the field as its config key
// (train.nodes, ppo.hidden, dqn.batch_size). Execute calls it first.
func (r *Run) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidConfig, key, fmt.Sprintf(format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	tc := r.Train
	if !slices.Contains(envs, tc.Env) {
		return bad("train.env", "%q, want one of %v", tc.Env, envs)
	}
	if !slices.Contains(algos[tc.Env], tc.Algo) {
		return bad("train.algo", "%q with env %s, want one of %v", tc.Algo, tc.Env, algos[tc.Env])
	}
	switch {
	case tc.Steps < 0 || tc.Steps > MaxSteps:
		return bad("train.steps", "%d, want 1 to %d (or leave it out for the env's default)", tc.Steps, MaxSteps)
	case tc.EvalSeeds < 0 || tc.EvalSeeds > MaxEvalSeeds:
		return bad("train.eval_seeds", "%d, want 0 to %d", tc.EvalSeeds, MaxEvalSeeds)
	case tc.HeliosSeeds < 0 || tc.HeliosSeeds > MaxEvalSeeds:
		return bad("train.helios_seeds", "%d, want 0 to %d", tc.HeliosSeeds, MaxEvalSeeds)
	case tc.PAISeeds < 0 || tc.PAISeeds > MaxEvalSeeds:
		return bad("train.pai_seeds", "%d, want 0 to %d", tc.PAISeeds, MaxEvalSeeds)
	case !(tc.Split >= 0 && tc.Split < 1):
		return bad("train.split", "%v, want a share in (0, 1) (0: the default, 0.5)", tc.Split)
	case tc.Nodes < 0 || tc.Nodes > MaxNodes:
		return bad("train.nodes", "%d, want 1 to %d (0: the default)", tc.Nodes, MaxNodes)
	case tc.GPUsPerNode < 0 || tc.GPUsPerNode > MaxGPUsPerNode:
		return bad("train.gpus_per_node", "%d, want 1 to %d (0: the default)", tc.GPUsPerNode, MaxGPUsPerNode)
	case !slices.Contains([]string{"", "counterfactual", "own"}, tc.Credit):
		return bad("train.credit", "%q, want counterfactual or own", tc.Credit)
	case !finite(tc.Margin):
		return bad("train.margin", "%v, want a finite number", tc.Margin)
	case tc.Heads < 0 || tc.Heads > MaxHeads:
		return bad("train.heads", "%d, want 0 to %d", tc.Heads, MaxHeads)
	case !slices.Contains([]string{"", "none", "job", "all"}, tc.Support):
		return bad("train.support", "%q, want none, job or all", tc.Support)
	case tc.Workers < 0 || tc.Workers > MaxWorkers:
		return bad("train.workers", "%d, want 1 to %d (0: GOMAXPROCS)", tc.Workers, MaxWorkers)
	case !(tc.LowerZ >= 0) || !finite(tc.LowerZ):
		return bad("train.lower_z", "%v, want a finite number >= 0", tc.LowerZ)
	case !(tc.Load >= 0 && tc.Load <= MaxLoad):
		return bad("train.load", "%v, want (0, %d] (0: the default, 1)", tc.Load, MaxLoad)
	case !(tc.Tilt >= 0 && tc.Tilt <= MaxTilt):
		return bad("train.tilt", "%v, want 0 to %d", tc.Tilt, MaxTilt)
	case !(tc.OfferedLoad >= 0 && tc.OfferedLoad <= MaxLoad):
		return bad("train.offered_load", "%v, want (0, %d] (0: off)", tc.OfferedLoad, MaxLoad)
	case !slices.Contains([]string{"", placement.ObjectiveJCT, placement.ObjectiveTTA, placement.ObjectiveTTAFinish}, tc.Objective):
		return bad("train.objective", "%q, want jct, tta or tta-finish", tc.Objective)
	}
	// The agents check their own sections; their TotalSteps comes from
	// train.steps, so check them as they will run.
	p, d := r.PPO, r.DQN
	p.TotalSteps, d.TotalSteps = max(tc.Steps, 1), max(tc.Steps, 1)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// unsetSteps stands for "train.steps not in the file" while DecodeConfig
// overlays one: the file's steps: 0 is then told apart from no key.
const unsetSteps = math.MinInt

// DecodeConfig overlays the YAML config data (from the file name, for
// errors) onto r's Sections and validates the result (Validate); on error
// r is unchanged. A steps of 0 in the file is an error, not the env's
// default: leave the key out for that.
func DecodeConfig(name string, data []byte, r *Run) error {
	c := *r
	steps := c.Train.Steps
	c.Train.Steps = unsetSteps
	if err := runlog.OverlayConfig(name, data, c.Sections()...); err != nil {
		return err
	}
	switch c.Train.Steps {
	case unsetSteps:
		c.Train.Steps = steps
	case 0:
		return fmt.Errorf("%w: %s: train.steps: 0, want 1 to %d (leave the key out for the env's default)", ErrInvalidConfig, name, MaxSteps)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	*r = c
	return nil
}

// LoadConfig reads the YAML config file at path and decodes it onto r
// with DecodeConfig.
func LoadConfig(path string, r *Run) error {
	data, err := inputfile.ReadFile(path, inputfile.Document)
	if err != nil {
		return fmt.Errorf("%w: %w", runlog.ErrConfig, err)
	}
	return DecodeConfig(path, data, r)
}
