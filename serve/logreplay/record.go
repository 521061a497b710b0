package logreplay

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/serve/remote"
)

// recorder is the simulated cluster's stand-in for its agents: it wraps
// the per-worker model and, at every refresh period boundary, writes each
// node's total load (env.Drover's NodeLoad: background plus the placed
// workers) to the telemetry log, as an agent's sample reaches the server.
// The simulator refreshes the running jobs at each boundary after the
// jobs ending there have left and before the decision point's placements;
// the recorder writes the loads then. A boundary without a refresh had no
// job running: its sample is the background alone (capped at 1, as
// NodeLoad caps it).
type recorder struct {
	*env.Drover
	step     float64
	next     int  // index of the next boundary to record
	applying bool // inside Sim.Apply: the refreshes of new placements
	ids      []string
	epoch    time.Time
	w        *telemlog.Writer
	err      error
}

// Refresh implements env.Dynamic: it records the boundaries up to now,
// then refreshes j.
func (r *recorder) Refresh(j *env.Job, c *env.Cluster, now float64) {
	if !r.applying {
		r.recordUntil(now)
	}
	r.Drover.Refresh(j, c, now)
}

// recordUntil records every boundary at or before now not recorded yet:
// the one at now with the model's loads, earlier ones (no refresh: no job
// ran) with the background alone.
func (r *recorder) recordUntil(now float64) {
	for r.err == nil {
		t := float64(r.next) * r.step
		if t > now {
			return
		}
		for n, id := range r.ids {
			var u env.Usage
			if t == now {
				u = r.NodeLoad(n, t)
			} else if r.Workers.Background != nil {
				u = r.Workers.Background.Load(n, t)
				u.CPU, u.MemBW, u.Net = min(u.CPU, 1), min(u.MemBW, 1), min(u.Net, 1)
			}
			at := r.epoch.Add(time.Duration(math.Round(t * 1e9)))
			if err := r.w.Write(telemlog.Raw(id, at, u.CPU, u.MemBW, u.Net)); err != nil {
				r.err = err
				return
			}
		}
		r.next++
	}
}

// RunRecorded replays o under the remote policy r as trace.Run does, and
// with tw set writes the simulated nodes' telemetry to it (per-worker
// model only). It reports the finishes after the last decision point
// (r.Flush). The returned step is the telemetry's (0: none recorded).
func RunRecorded(o trace.Options, r *remote.Remote, tw *telemlog.Writer, epoch time.Time) (*trace.Result, float64, error) {
	if o.Workload == nil || len(o.Workload.Jobs) == 0 {
		return nil, 0, errors.New("empty workload")
	}
	c := *o.Cluster
	gpn := 0
	for _, n := range c.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	m, err := trace.NewModel(o.Model, o.Profiles, gpn)
	if err != nil {
		return nil, 0, err
	}
	var rec *recorder
	if o.Stragglers != nil {
		d, ok := m.(*env.Drover)
		if !ok {
			return nil, 0, fmt.Errorf("the per-worker straggler model needs the %s model, not %s", trace.ModelDrover, o.Model)
		}
		st := *o.Stragglers
		if st.Regime == trace.RegimeAuto {
			st.Regime = trace.AutoRegime(o.Workload.Format, &c)
		}
		if d.Workers, err = st.Workers(len(c.Nodes)); err != nil {
			return nil, 0, err
		}
		if tw != nil {
			rec = &recorder{Drover: d, step: d.Period(), w: tw, epoch: epoch, ids: make([]string, len(c.Nodes))}
			for i := range c.Nodes {
				rec.ids[i] = remote.NodeID(&c, i)
			}
			m = rec
		}
	}
	iv := o.Interval
	if iv < 0 {
		iv = 0
		if o.Model == trace.ModelPollux {
			iv = 60
		}
	}
	rd := o.RestartDelay
	if rd < 0 {
		rd = env.DefaultRestartDelay
	}
	s, err := env.New(env.Config{Cluster: c, Model: m, Interval: iv, RestartDelay: rd, Log: o.Log}, trace.Specs(o.Workload))
	if err != nil {
		return nil, 0, err
	}
	for {
		v, err := s.Next()
		if errors.Is(err, env.ErrDone) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		ds, err := r.Schedule(v)
		if err != nil {
			return nil, 0, fmt.Errorf("policy at t=%.0f s: %w", s.Now(), err)
		}
		if rec != nil {
			rec.applying = true
		}
		err = s.Apply(ds)
		if rec != nil {
			rec.applying = false
		}
		if err != nil {
			return nil, 0, fmt.Errorf("at t=%.0f s: %w", s.Now(), err)
		}
		if o.Progress != nil {
			o.Progress(s.Finished(), len(o.Workload.Jobs))
		}
	}
	if o.Progress != nil {
		o.Progress(s.Finished(), len(o.Workload.Jobs))
	}
	step := 0.0
	if rec != nil {
		rec.recordUntil(s.Now())
		if rec.err != nil {
			return nil, 0, fmt.Errorf("telemetry: %w", rec.err)
		}
		step = rec.step
	}
	if err := r.Flush(); err != nil {
		return nil, 0, err
	}
	return &trace.Result{Summary: s.Summary(), Jobs: s.Results(), Events: s.Events(), Sim: s}, step, nil
}
