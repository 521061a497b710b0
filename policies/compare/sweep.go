package compare

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// Band is one convergence model a Sweep runs the comparison under: a
// point of the fitted model's confidence band (env.Convergence.Band).
type Band struct {
	// Name labels the band in reports ("fit", "low", "high").
	Name string
	// Convergence is the model the band's runs use
	// (env.Workers.Convergence); nil is env.DefaultConvergence, the fit.
	Convergence *env.Convergence
}

// Sweep runs the comparison cfg once per band, every contender on every
// seed under each band's convergence model, and returns one Result per
// band, in order. The first band's runs are all simulated; a later band
// reuses the first band's run of a policy and seed when it needs no
// simulation (recompute): when every job of it trained BSP only (Run.BSPOnly) and BSP
// reaches every finished job's target with a run length of one (an
// iteration factor of 1) under both bands. Such a run's schedule is the
// same under both: its jobs train at the same pace, and policies weigh
// strategies by the fit whatever the band (env.Believed), so they decide
// alike. Only its final accuracy differs: Summary.AvgAccuracy is
// recomputed from BSP's final accuracy under the band for each finished
// job's model (Run.Recomputed). Every other run is simulated under the
// band.
//
// cfg.Options must give the per-worker model (Stragglers) when a band has
// a Convergence; Sweep sets it through Stragglers.Tune, after any Tune of
// the options' own. cfg.Progress, when set, counts the runs of every band
// (a reused run counts as done), out of len(bands) x policies x seeds.
func Sweep(cfg Config, bands []Band) ([]*Result, error) {
	if len(bands) == 0 {
		return nil, errors.New("compare: a sweep with no band")
	}
	total := len(bands) * len(cfg.Policies) * len(cfg.Seeds)
	out := make([]*Result, len(bands))
	kept := make([][][]finishedJob, len(cfg.Policies)) // the first band's BSP-only runs' finished jobs
	for p := range kept {
		kept[p] = make([][]finishedJob, len(cfg.Seeds))
	}
	for k, b := range bands {
		c := cfg
		c.Options = bandOptions(cfg.Options, b)
		if k == 0 && len(bands) > 1 {
			c.keep = func(p, s int, jobs []finishedJob) { kept[p][s] = jobs }
		}
		if cfg.Progress != nil {
			offset := k * len(cfg.Policies) * len(cfg.Seeds)
			c.Progress = func(done, _ int) { cfg.Progress(offset+done, total) }
		}
		if k > 0 {
			first, from, to := out[0], bands[0].Convergence, b.Convergence
			c.Reuse = func(p, s int) (Run, bool) {
				return recompute(first.Policies[p].Runs[s], kept[p][s], from, to)
			}
		}
		res, err := Compare(c)
		if err != nil {
			return nil, fmt.Errorf("convergence band %s: %w", b.Name, err)
		}
		out[k] = res
	}
	return out, nil
}

// bandOptions returns options that set b's convergence model on the
// per-worker model of each run.
func bandOptions(options func(uint64) (trace.Options, error), b Band) func(uint64) (trace.Options, error) {
	if b.Convergence == nil {
		return options
	}
	return func(seed uint64) (trace.Options, error) {
		o, err := options(seed)
		if err != nil {
			return o, err
		}
		if o.Stragglers == nil {
			return o, fmt.Errorf("compare: convergence band %s needs the per-worker model", b.Name)
		}
		st := *o.Stragglers
		tune := st.Tune
		st.Tune = func(w *env.Workers) {
			if tune != nil {
				tune(w)
			}
			w.Convergence = b.Convergence
		}
		o.Stragglers = &st
		return o, nil
	}
}

// recompute returns run r, simulated under convergence model from, as it
// is under model to without simulating it, when it can be (ok): r trained
// every job BSP only (Run.BSPOnly), its finished jobs are known (non-nil
// jobs), and BSP reaches every finished job's target with a run length of
// one under both models, so that the schedule is the same. Its summary's
// AvgAccuracy is then the mean over the finished jobs of BSP's final
// accuracy under to (a diverged job, NaN, counting 0, as env.Summary
// counts it), and everything else is r's. nil models are
// env.DefaultConvergence.
func recompute(r Run, jobs []finishedJob, from, to *env.Convergence) (Run, bool) {
	if !r.BSPOnly || jobs == nil || len(jobs) != r.Summary.Finished {
		return Run{}, false
	}
	if from == nil {
		from = env.DefaultConvergence
	}
	if to == nil {
		to = env.DefaultConvergence
	}
	acc := 0.0
	for _, j := range jobs {
		a, errA := from.Outcome(j.model, env.Sync{}, j.gpus)
		b, errB := to.Outcome(j.model, env.Sync{}, j.gpus)
		if errA != nil || errB != nil || !a.Reached || !b.Reached || a.Run != 1 || b.Run != 1 {
			return Run{}, false
		}
		if !math.IsNaN(b.Accuracy) {
			acc += b.Accuracy
		}
	}
	out := r
	out.Recomputed = true
	if len(jobs) > 0 {
		out.Summary.AvgAccuracy = acc / float64(len(jobs))
	}
	return out, true
}
