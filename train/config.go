package train

import "cmp"

// Config is the pipeline's own settings, the `train:` section of a run's
// config file (docs/format/train-config.md, with each field's bounds:
// Run.Validate); drover train's flags of the same names set them too. The agents' settings are ppo.Config and
// dqn.Config, beside it in Run.
type Config struct {
	// Env is the environment: placement, sync, sas-rl, strn-rl or cartpole.
	Env string
	// Algo is the algorithm: ppo or dqn (cartpole); ppo or bandit
	// (sas-rl, strn-rl); ppo (placement, sync).
	Algo string
	// Steps is the number of environment steps, at most MaxSteps (0: the
	// env's default; a config file's steps: 0 is an error, DecodeConfig).
	Steps int
	// Seed seeds everything.
	Seed uint64
	// EvalSeeds is the number of held-out seeds per workload (sas-rl,
	// strn-rl; PAI gets half).
	EvalSeeds int
	// HeliosSeeds, when positive, is the number of held-out seeds for
	// Helios and for a trace workload's later part instead of EvalSeeds:
	// their episodes are cheap, and with a per-seed spread of about 11
	// points on Helios the gate needs 20 or more to see a gain of a few
	// percent (docs/results/learning.md, "Twenty seeds").
	HeliosSeeds int
	// PAISeeds, when positive, is the number of held-out seeds for PAI
	// instead of half of EvalSeeds (its episodes cost several seconds
	// each, Helios's about one).
	PAISeeds int
	// Workload is the training workload of sas-rl and strn-rl: builtin
	// (the embedded Philly-fitted default, every episode), synthetic (a
	// fresh Philly-fitted synthetic workload per episode, from the
	// episode's seed: datasets.GenerateDefault), or the path of a trace
	// file: each episode is then a window of consecutive jobs from the
	// trace's first Split of jobs, and the rest is evaluated as held out
	// (the trace's own future), with the model profiles found near the
	// trace as drover sim would use them.
	Workload string
	// Split is the share of a trace workload's jobs, in submit order,
	// that training draws its episodes from (default 0.5).
	Split float64
	// Nodes and GPUsPerNode shape the training cluster of sas-rl and
	// strn-rl (default 16 x 4, the built-in workload's). With the
	// synthetic workload, arrivals scale with the cluster's GPUs (the
	// default rate is for 64) and the largest job is the cluster.
	Nodes, GPUsPerNode int
	// Cluster is the training cluster of sas-rl and strn-rl, as drover
	// sim's --cluster takes it: homogeneous (the default: Nodes x
	// GPUsPerNode), pai (the PAI v2023 GPU node list: GPU types and speeds;
	// Nodes > 0 keeps its first Nodes nodes) or a PAI-format node list. A
	// deployed placement policy knows its cluster, so training on the
	// target's node list is fair; the held-out evaluation keeps the PAI
	// workload unseen either way.
	Cluster string
	// Credit is how Algo bandit scores a decision: counterfactual (the
	// default) or own (see trainBandit in bandit.go).
	Credit string
	// Margin is how much better (in the credit's units: GPU-held hours
	// for counterfactual) Algo bandit must value another candidate than
	// the heuristic's own before it deviates. It is baked into the saved
	// values (subtracted from every other action's), so the checkpoint
	// acts the same anywhere.
	Margin float64
	// Heads, when above 1, makes Algo bandit a bootstrapped ensemble of
	// that many value networks (agents/bandit.Ensemble): it deviates from
	// the heuristic only when the heads' lower bound on the gain, mean
	// minus LowerZ standard deviations, clears Margin, so that contexts
	// unlike the training ones, where the heads disagree, keep the
	// heuristic's choice. The checkpoint then holds networks q0, q1, ...
	// and the rule's parameters in its hyperparameters.
	Heads int
	// Support restricts Algo bandit's deviations to the box of contexts
	// its values were fitted on (checkpoints.Support; saved in the
	// checkpoint): none (the default), job (the job part of the
	// observation: its size, length, model, sensitivities and the queue,
	// placement.JobFeatures values) or all (every value, the candidates'
	// features too). Outside the box the heuristic's choice stands, so a
	// job larger than any trained on keeps it, whatever the heads say.
	Support string
	// Workers is the number of environments Algo bandit runs its
	// counterfactual replays on at once (default GOMAXPROCS, at most 16);
	// the result does not depend on it.
	Workers int
	// LowerZ is the number of standard deviations of Heads' lower bound
	// (default 1).
	LowerZ float64
	// Load multiplies the arrival rate of the synthetic training workload.
	Load float64
	// Tilt tilts the synthetic training workload's GPU-count mix toward
	// large jobs (datasets.SynthParams.Tilt): each episode draws its
	// exponent uniformly from [0, Tilt], so training sees mixes from
	// Philly's own (95% one-GPU jobs) to GPU-weighted ones and beyond,
	// with Philly's durations and arrivals throughout.
	Tilt float64
	// OfferedLoad, when positive, rescales each training workload's
	// arrivals (a synthetic workload, or a trace window) to this offered
	// load on the training cluster (datasets.Workload.ScaleLoad: its
	// GPU-seconds over the arrival span times the cluster's GPUs), in
	// place of Load. With a trace workload the held-out "late" part is
	// rescaled the same way.
	OfferedLoad float64
	// Profiles is where the training model's profiles come from: a
	// directory of measured profiles (pollux_apps' layout), or builtin for
	// the embedded fitted ones. Empty: builtin for the built-in and
	// synthetic workloads, the measured ones found near a trace workload
	// (as drover sim finds them). The held-out evaluation always uses the
	// profiles drover sim finds for each workload, so training on Philly-
	// fitted jobs with the measured profiles matches how Helios and PAI are
	// judged.
	Profiles string
	// Objective is the reward of the cluster environments: jct, tta or
	// tta-finish (placement.Objective*; empty: tta for sas-rl and
	// strn-rl, jct otherwise).
	Objective string
}

// credit returns Credit with its default filled in.
func (c Config) credit() string { return cmp.Or(c.Credit, "counterfactual") }
