package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/train/runlog"
)

// trainConfig is the `train:` section of a --config file: what the flags
// of the same names set (flags given on the command line win).
type trainConfig struct {
	// Env is the environment: placement, sync, sas-rl, strn-rl or cartpole.
	Env string
	// Algo is the algorithm: ppo or dqn.
	Algo string
	// Steps is the number of environment steps (0: the env's default).
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
	// Credit is how --algo bandit scores a decision: counterfactual (the
	// default) or own (see trainBandit).
	Credit string
	// Margin is how much better (in the credit's units: GPU-held hours
	// for counterfactual) --algo bandit must value another candidate than
	// the heuristic's own before it deviates. It is baked into the saved
	// values (subtracted from every other action's), so the checkpoint
	// acts the same anywhere.
	Margin float64
	// Heads, when above 1, makes --algo bandit a bootstrapped ensemble of
	// that many value networks (agents/bandit.Ensemble): it deviates from
	// the heuristic only when the heads' lower bound on the gain, mean
	// minus LowerZ standard deviations, clears Margin, so that contexts
	// unlike the training ones, where the heads disagree, keep the
	// heuristic's choice. The checkpoint then holds networks q0, q1, ...
	// and the rule's parameters in its hyperparameters.
	Heads int
	// Support restricts --algo bandit's deviations to the box of contexts
	// its values were fitted on (agents/bandit.Support; saved in the
	// checkpoint): none (the default), job (the job part of the
	// observation: its size, length, model, sensitivities and the queue,
	// placement.JobFeatures values) or all (every value, the candidates'
	// features too). Outside the box the heuristic's choice stands, so a
	// job larger than any trained on keeps it, whatever the heads say.
	Support string
	// Workers is the number of environments --algo bandit runs its
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
func (c trainConfig) credit() string { return cmp.Or(c.Credit, "counterfactual") }

// trainRun is one training run: its effective configs and its logs.
type trainRun struct {
	dir   string
	train trainConfig
	ppo   ppo.Config
	dqn   dqn.Config
	log   *runlog.Logger
	// support is the box --algo bandit's choices are restricted to
	// (train.support), saved in the checkpoint; nil without one.
	support *bandit.Support
	start   time.Time
	bar     *progress.Bar
	// curve is the learning curve: the mean return of the episodes that
	// ended in each update (PPO) or each episode's return (DQN).
	curve [][2]float64
	// evalEnv, when set, is where the greedy policy is evaluated during
	// training, on evalSeeds, about ten times per run (evalRuns).
	evalEnv  *placement.Env
	updates  int
	baseline [2]float64 // first-valid-action JCT and TTA on periodicSeeds (0: not yet)
	stdout   io.Writer
}

// evalRuns is about how many times a cluster-environment run evaluates its
// policy during training.
const evalRuns = 10

// periodicSeeds are the held-out episode seeds of the evaluations during
// training (the final comparison uses more).
var periodicSeeds = []uint64{1001, 1002}

// evaluate plays the greedy policy of agent on the periodic seeds and logs
// the mean JCT and TTA under eval/.
//
// Beside it goes the baseline that always takes the first valid action:
// the heuristic itself in sas-rl and strn-rl (its own choice is action
// 0), BSP on the first-fit placement in sync, the first rack group with
// room in placement.
func (r *trainRun) evaluate(step int, agent *ppo.Agent) {
	mean := func(act func([]float64, []bool) int) (jct, tta float64) {
		for _, s := range periodicSeeds {
			sum := r.evalEnv.Run(s, act)
			jct += sum.AvgJCT / float64(len(periodicSeeds))
			tta += sum.AvgTTA / float64(len(periodicSeeds))
		}
		return jct, tta
	}
	if r.baseline[0] == 0 {
		r.baseline[0], r.baseline[1] = mean(placement.FirstValid)
	}
	jct, tta := mean(greedy(agent.Actor))
	r.log.Scalar("eval/avg_jct_s", step, jct)
	r.log.Scalar("eval/avg_tta_s", step, tta)
	r.log.Scalar("eval/baseline_avg_jct_s", step, r.baseline[0])
	r.log.Scalar("eval/baseline_avg_tta_s", step, r.baseline[1])
	if r.stdout != nil {
		fmt.Fprintf(r.stdout, "eval at step %d (greedy, seeds %v): avg JCT %.0f s, avg TTA %.0f s (first valid action: %.0f s, %.0f s)\n",
			step, periodicSeeds, jct, tta, r.baseline[0], r.baseline[1])
	}
}

// sections are the config file's sections, bound to r's configs.
func (r *trainRun) sections() []runlog.Section {
	return []runlog.Section{{Name: "train", Config: &r.train}, {Name: "ppo", Config: &r.ppo}, {Name: "dqn", Config: &r.dqn}}
}

// open starts the run's logs in r.dir: config.yaml, the TensorBoard event
// file and scalars.csv, and prints the config.
func (r *trainRun) open(quiet bool, stdout, stderr io.Writer) error {
	text, err := runlog.RenderConfig(r.sections()...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s\n%s\n", r.dir, text)
	if err := runlog.WriteConfig(r.dir, r.sections()...); err != nil {
		return err
	}
	if r.log, err = runlog.Open(r.dir, runlog.Options{}); err != nil {
		return err
	}
	r.start = time.Now()
	if !quiet {
		r.bar = progress.New(stderr, "train", r.train.Steps)
	}
	return nil
}

// ppoReport logs one PPO update with CleanRL's tags.
func (r *trainRun) ppoReport(u ppo.Update) {
	if r.bar != nil {
		r.bar.Set(u.Step)
	}
	mean := 0.0
	for _, ret := range u.Episodes {
		r.log.Scalar(runlog.TagEpisodicReturn, u.Step, ret)
		mean += ret / float64(len(u.Episodes))
	}
	if len(u.Episodes) > 0 {
		r.curve = append(r.curve, [2]float64{float64(u.Step), mean})
	}
	r.log.Scalar(runlog.TagLearningRate, u.Step, u.LR)
	r.log.Scalar(runlog.TagValueLoss, u.Step, float64(u.ValueLoss))
	r.log.Scalar(runlog.TagPolicyLoss, u.Step, float64(u.PolicyLoss))
	r.log.Scalar(runlog.TagEntropy, u.Step, float64(u.Entropy))
	r.log.Scalar(runlog.TagOldApproxKL, u.Step, float64(u.OldApproxKL))
	r.log.Scalar(runlog.TagApproxKL, u.Step, float64(u.ApproxKL))
	r.log.Scalar(runlog.TagExplainedVariance, u.Step, u.ExplainedVariance)
	r.log.Scalar(runlog.TagClipFrac, u.Step, float64(u.ClipFrac))
	r.log.Scalar(runlog.TagSPS, u.Step, float64(u.Step)/max(time.Since(r.start).Seconds(), 1e-9))
	r.updates++
	if r.evalEnv != nil && u.Agent != nil {
		total := r.train.Steps / (r.ppo.NumEnvs * r.ppo.NumSteps)
		every := max(1, total/evalRuns)
		if r.updates%every == 0 || r.updates == total {
			r.evaluate(u.Step, u.Agent)
		}
	}
}

// dqnReport logs one DQN episode.
func (r *trainRun) dqnReport(u dqn.Update) {
	if r.bar != nil {
		r.bar.Set(u.Step)
	}
	r.curve = append(r.curve, [2]float64{float64(u.Step), u.Return})
	r.log.Scalar(runlog.TagEpisodicReturn, u.Step, u.Return)
	r.log.Scalar(runlog.TagEpsilon, u.Step, u.Epsilon)
	r.log.Scalar(runlog.TagTDLoss, u.Step, u.TDLoss)
	r.log.Scalar(runlog.TagQValues, u.Step, u.QValues)
	r.log.Scalar(runlog.TagSPS, u.Step, float64(u.Step)/max(time.Since(r.start).Seconds(), 1e-9))
}

// close ends the progress bar and closes the logs.
func (r *trainRun) close() error {
	if r.bar != nil {
		r.bar.Finish()
		r.bar = nil
	}
	if r.log == nil {
		return nil
	}
	err := r.log.Close()
	r.log = nil
	return err
}
