package main

import (
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/ppo"
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
	// strn-rl).
	EvalSeeds int
}

// trainRun is one training run: its effective configs and its logs.
type trainRun struct {
	dir   string
	train trainConfig
	ppo   ppo.Config
	dqn   dqn.Config
	log   *runlog.Logger
	start time.Time
	bar   *progress.Bar
	// curve is the learning curve: the mean return of the episodes that
	// ended in each update (PPO) or each episode's return (DQN).
	curve [][2]float64
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
