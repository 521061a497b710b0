package train

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/train/runlog"
)

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
func (r *Run) evaluate(step int, agent *ppo.Agent) {
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
	jct, tta := mean(Greedy(agent.Actor))
	r.log.Scalar("eval/avg_jct_s", step, jct)
	r.log.Scalar("eval/avg_tta_s", step, tta)
	r.log.Scalar("eval/baseline_avg_jct_s", step, r.baseline[0])
	r.log.Scalar("eval/baseline_avg_tta_s", step, r.baseline[1])
	fmt.Fprintf(r.w, "eval at step %d (greedy, seeds %v): avg JCT %.0f s, avg TTA %.0f s (first valid action: %.0f s, %.0f s)\n",
		step, periodicSeeds, jct, tta, r.baseline[0], r.baseline[1])
}

// open starts the run's logs in r.Dir: config.yaml, the TensorBoard event
// file and scalars.csv, and reports the config.
func (r *Run) open() error {
	text, err := runlog.RenderConfig(r.Sections()...)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.w, "run %s\n%s\n", r.Dir, text)
	if err := runlog.WriteConfig(r.Dir, r.Sections()...); err != nil {
		return err
	}
	if r.log, err = runlog.Open(r.Dir, runlog.Options{}); err != nil {
		return err
	}
	r.start = time.Now()
	if r.Progress != nil {
		r.bar = progress.New(r.Progress, "train", r.Train.Steps)
	}
	return nil
}

// ppoReport logs one PPO update with CleanRL's tags.
func (r *Run) ppoReport(u ppo.Update) {
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
		total := r.Train.Steps / (r.PPO.NumEnvs * r.PPO.NumSteps)
		every := max(1, total/evalRuns)
		if r.updates%every == 0 || r.updates == total {
			r.evaluate(u.Step, u.Agent)
		}
	}
}

// dqnReport logs one DQN episode.
func (r *Run) dqnReport(u dqn.Update) {
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
func (r *Run) close() error {
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

// CurveFile is the learning-curve plot in a run directory: the episodic
// return over the environment steps, raw and as a trailing mean.
const CurveFile = "learning-curve.png"

// finish closes the logs, plots the learning curve and reports where they
// are.
func (r *Run) finish() error {
	if err := r.close(); err != nil {
		return err
	}
	if len(r.curve) > 0 {
		raw := plot.Series{Name: "episodic return"}
		for _, p := range r.curve {
			raw.X, raw.Y = append(raw.X, p[0]), append(raw.Y, p[1])
		}
		// A trailing mean over 20 points, as one reads a noisy curve.
		smooth := plot.Series{Name: "mean of the last 20"}
		for i := range raw.Y {
			lo, sum := max(0, i-19), 0.0
			for _, y := range raw.Y[lo : i+1] {
				sum += y
			}
			smooth.X, smooth.Y = append(smooth.X, raw.X[i]), append(smooth.Y, sum/float64(i+1-lo))
		}
		path := filepath.Join(r.Dir, CurveFile)
		o := plot.Options{Title: fmt.Sprintf("%s, %s, seed %d", r.Train.Env, r.Train.Algo, r.Train.Seed), XLabel: "environment steps", YLabel: "episodic return"}
		if err := plot.WriteFile(path, func(w io.Writer) error { return plot.Lines(w, o, []plot.Series{raw, smooth}) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(r.w, "logs %s (tensorboard --logdir %s; scalars.csv; %s)\n", r.Dir, filepath.Dir(r.Dir), CurveFile)
	return nil
}
