package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/gate"
)

// Switch modes: how a view-level learned policy (strn-rl, sas-rl) is
// served. In every mode it decides each request in shadow while it does
// not answer.
const (
	// SwitchGate runs it in shadow until the evidence gate passes on a
	// replay of the served arrivals, then lets it answer until the live
	// gate fails (the default).
	SwitchGate = "gate"
	// SwitchShadow runs it in shadow only: the gate is evaluated and
	// reported, and it never answers.
	SwitchShadow = "shadow"
	// SwitchConverged lets it answer when its checkpoint says converged
	// (Meta.Converged, the training's held-out gate), as an
	// observation-level checkpoint does; no gate is evaluated.
	SwitchConverged = "converged"
)

// Replay costs the gate compares (SwitchConfig.Metric).
const (
	// MetricTTA is the replay's seconds trained per target reached
	// (env.Summary.TTAPerTarget: the average time to accuracy when every
	// job reached its target; the default, as drover train's gate).
	MetricTTA = "tta"
	// MetricJCT is the replay's average job completion time.
	MetricJCT = "jct"
)

// Shadow results, as drover_shadow_decisions_total and
// StatusResponse.shadow count them.
const (
	shadowDecided = "decided" // placed the job
	shadowHeld    = "held"    // decided not to place it now
)

// SwitchConfig configures how a view-level learned policy is served: its
// shadow runs and the gate that switches the answer between the heuristic
// and it. The zero value is the default gate.
type SwitchConfig struct {
	// Mode is SwitchGate ("" too), SwitchShadow or SwitchConverged.
	Mode string
	// Every evaluates the gate after this many new arrivals (distinct job
	// ids) since the last evaluation (0: 100; negative: never by count).
	Every int
	// Interval also evaluates it when this long has passed on the core's
	// clock without an evaluation (0: never by time).
	Interval time.Duration
	// MinArrivals is the arrivals needed before the gate is evaluated (0:
	// 30), and Window the number of most recent arrivals replayed (0:
	// 200; at least MinArrivals).
	MinArrivals, Window int
	// Seeds is the number of replay seeds, one paired episode each (0: 8;
	// at least 2), and Seed the first (seeds Seed, Seed+1, ...; it also
	// seeds the bootstrap).
	Seeds int
	Seed  uint64
	// Margin is the relative gain the learned policy must show with
	// Confidence to switch on (gate.Config; 0: 2% and 95%), and
	// BackMargin the lower confidence bound at or below which the live
	// gate switches back (default 0: the learned policy is no longer
	// better with confidence). BackMargin < Margin keeps the answer from
	// flapping on evidence between the two.
	Margin, Confidence, BackMargin float64
	// Resamples is the bootstrap's resample count (0: 10,000).
	Resamples int
	// Metric is the replay cost compared: MetricTTA ("" too) or MetricJCT.
	Metric string
	// DefaultDuration is the run time in seconds given to a replayed job
	// that neither its request (expected_duration_s) nor a report tells
	// (0: 3600).
	DefaultDuration float64
	// Profiles are the model profiles the replay uses (nil: the embedded
	// fitted ones, trace.Profiles).
	Profiles map[string]env.Profile
}

// withDefaults fills the zero fields and checks the rest.
func (c SwitchConfig) withDefaults() (SwitchConfig, error) {
	if c.Mode == "" {
		c.Mode = SwitchGate
	}
	if c.Every == 0 {
		c.Every = 100
	}
	if c.MinArrivals == 0 {
		c.MinArrivals = 30
	}
	if c.Window == 0 {
		c.Window = max(200, c.MinArrivals)
	}
	if c.Seeds == 0 {
		c.Seeds = 8
	}
	g := gate.Config{Margin: c.Margin, Confidence: c.Confidence, Resamples: c.Resamples}.WithDefaults()
	c.Margin, c.Confidence, c.Resamples = g.Margin, g.Confidence, g.Resamples
	if c.Metric == "" {
		c.Metric = MetricTTA
	}
	if c.DefaultDuration == 0 {
		c.DefaultDuration = 3600
	}
	switch {
	case c.Mode != SwitchGate && c.Mode != SwitchShadow && c.Mode != SwitchConverged:
		return c, fmt.Errorf("serve: switch mode %q, want %s, %s or %s", c.Mode, SwitchGate, SwitchShadow, SwitchConverged)
	case c.Interval < 0:
		return c, fmt.Errorf("serve: gate interval %v, want >= 0", c.Interval)
	case c.MinArrivals < 2 || c.Window < c.MinArrivals:
		return c, fmt.Errorf("serve: gate min arrivals %d, window %d: want 2 <= min arrivals <= window", c.MinArrivals, c.Window)
	case c.Seeds < 2:
		return c, fmt.Errorf("serve: gate seeds %d, want >= 2 (paired episodes)", c.Seeds)
	case !(c.Confidence > 0 && c.Confidence < 1) || c.Resamples < 1:
		return c, fmt.Errorf("serve: gate confidence %v (want (0, 1)), resamples %d (want > 0)", c.Confidence, c.Resamples)
	case !(c.BackMargin < c.Margin):
		return c, fmt.Errorf("serve: gate back margin %v, want below the margin %v", c.BackMargin, c.Margin)
	case c.Metric != MetricTTA && c.Metric != MetricJCT:
		return c, fmt.Errorf("serve: gate metric %q, want %s or %s", c.Metric, MetricTTA, MetricJCT)
	case !(c.DefaultDuration > 0):
		return c, fmt.Errorf("serve: default duration %v s, want > 0", c.DefaultDuration)
	}
	return c, nil
}

// WithSwitch sets how a view-level learned policy is served (default: the
// zero SwitchConfig, the gate). It does not start the periodic
// evaluation: run Core.RunSwitch.
func WithSwitch(c SwitchConfig) Option {
	return func(k *Core) error {
		c, err := c.withDefaults()
		if err != nil {
			return err
		}
		k.sw.cfg = c
		return nil
	}
}

// WithPolicyLoader sets the loader of view-level checkpoints (strn-rl,
// sas-rl) for Core.LoadVersion and the Watcher.
func WithPolicyLoader(l PolicyLoader) Option {
	return func(k *Core) error {
		if l == nil {
			return errors.New("serve: nil policy loader")
		}
		k.loader = l
		return nil
	}
}

// arrival is a job seen in a Place request, for the replay.
type arrival struct {
	id       string
	at       time.Time
	spec     env.JobSpec // Duration: the request's expected run time (0: unknown)
	started  time.Time   // from reports (zero: none)
	finished time.Time
	jct      float64
}

// answer is who answers: the version of the learned policy that does
// (nil: the heuristic), since when and why.
type answer struct {
	v      *Version
	since  time.Time
	reason string
}

// switcher holds the arrivals a Core has seen and the gate's state.
type switcher struct {
	cfg SwitchConfig

	mu       sync.Mutex
	ring     []arrival // the last cfg.Window arrivals, oldest at next once full
	next     int
	seen     uint64         // arrivals so far
	byJob    map[string]int // job id -> ring index
	cluster  env.Cluster    // the nodes of a recent request (Nodes reused)
	fresh    int            // arrivals since the last evaluation
	kick     chan struct{}
	evalMu   sync.Mutex // one evaluation at a time
	lastEval time.Time

	on   atomic.Pointer[answer]
	last atomic.Pointer[gateResult]
	// shadow counts the shadow decisions by result.
	shadow map[string]*atomic.Int64
	evals  atomic.Int64
	rep    replayCache
}

// gateResult is the outcome of the last evaluation.
type gateResult struct {
	at      time.Time
	version string
	verdict gate.Verdict
	report  gate.Report // the verdict and the teacher's comparison
	summary string      // the report, or why there is none
	err     error
}

var shadowResults = []string{shadowDecided, shadowHeld, FallbackDeadline, FallbackError, FallbackInfeasible, FallbackOverload}

func newSwitcher() *switcher {
	c, _ := SwitchConfig{}.withDefaults()
	sw := &switcher{cfg: c, byJob: map[string]int{}, kick: make(chan struct{}, 1), shadow: map[string]*atomic.Int64{}}
	for _, r := range shadowResults {
		sw.shadow[r] = new(atomic.Int64)
	}
	sw.on.Store(&answer{reason: "no view-level learned policy loaded"})
	return sw
}

// observe records the snapshot's job as an arrival, the first time its id
// is seen among the recent ones, and the request's nodes now and then. It
// kicks the evaluation loop after cfg.Every new arrivals.
func (sw *switcher) observe(s *snapshot, now time.Time) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if _, dup := sw.byJob[s.jobID]; dup {
		return
	}
	// The cluster: on a change of size, and every 16th arrival (its
	// memory is reused, so this does not allocate).
	if len(sw.cluster.Nodes) != len(s.cluster.Nodes) || sw.seen%16 == 0 {
		sw.cluster.Nodes = append(sw.cluster.Nodes[:0], s.cluster.Nodes...)
		sw.cluster.IntraRackGbps, sw.cluster.CrossRackGbps = s.cluster.IntraRackGbps, s.cluster.CrossRackGbps
	}
	a := arrival{id: s.jobID, at: now, spec: s.job}
	a.spec.Name = s.jobID
	if len(sw.ring) < sw.cfg.Window {
		sw.byJob[a.id] = len(sw.ring)
		sw.ring = append(sw.ring, a)
	} else {
		if old := sw.ring[sw.next].id; sw.byJob[old] == sw.next {
			delete(sw.byJob, old)
		}
		sw.ring[sw.next] = a
		sw.byJob[a.id] = sw.next
		sw.next = (sw.next + 1) % sw.cfg.Window
	}
	sw.seen++
	sw.fresh++
	if sw.cfg.Every > 0 && sw.fresh >= sw.cfg.Every {
		select {
		case sw.kick <- struct{}{}:
		default:
		}
	}
}

// outcome records a reported start or finish of a recent arrival.
func (sw *switcher) outcome(r *OutcomeRecord) {
	if r.Kind != OutcomeStarted && r.Kind != OutcomeFinished {
		return
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	i, ok := sw.byJob[r.JobID]
	if !ok {
		return
	}
	a := &sw.ring[i]
	if r.Kind == OutcomeStarted {
		a.started = r.At
	} else if r.Success {
		a.finished, a.jct = r.At, r.JCTSeconds
	}
}

// window returns copies of the recent arrivals, oldest first, and of the
// cluster, and resets the count of fresh arrivals.
func (sw *switcher) window() ([]arrival, env.Cluster) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	out := make([]arrival, 0, len(sw.ring))
	out = append(out, sw.ring[sw.next:]...)
	out = append(out, sw.ring[:sw.next]...)
	c := sw.cluster
	c.Nodes = append([]env.Node(nil), sw.cluster.Nodes...)
	sw.fresh = 0
	return out, c
}

// answering reports whether the view-level learned version v, active,
// answers now (rather than deciding in shadow).
func (k *Core) answering(v *Version) bool {
	switch k.sw.cfg.Mode {
	case SwitchConverged:
		return v.Meta.Converged
	case SwitchGate:
		return k.sw.on.Load().v == v
	}
	return false
}

// SwitchStatus describes who answers and why, and the gate's last verdict.
type SwitchStatus struct {
	// Mode is the switch mode.
	Mode string
	// Answering is the policy that answers a request needing no fallback
	// ("learned@v3", "heuristic:strn"), Shadow the one deciding beside it
	// in shadow ("" when no view-level policy is loaded).
	Answering, Shadow string
	// Since is when Answering started answering (zero: from the start).
	Since time.Time
	// Reason says why it answers.
	Reason string
	// Verdict is the last gate evaluation's verdict and VerdictAt when it
	// was made (zero: none yet); LastGate summarises it, or says why there
	// was none (too few arrivals, a failed replay).
	Verdict   gate.Verdict
	VerdictAt time.Time
	LastGate  string
	// Report is the last evaluation's report: Verdict, and the learned
	// policy's comparison with its teacher (Report.Teacher and
	// VsTeacher; policies/direct.TeacherOf), which does not decide the
	// switch but says how much of the learned policy's gain is its
	// teacher's.
	Report gate.Report
	// Evaluations counts the gate's evaluations.
	Evaluations int64
}

// Switch returns the switch's status.
func (k *Core) Switch() SwitchStatus {
	sw := k.sw
	st := SwitchStatus{Mode: sw.cfg.Mode, Answering: k.heurPolicy, Evaluations: sw.evals.Load()}
	on := sw.on.Load()
	st.Since, st.Reason = on.since, on.reason
	v := k.active.Load()
	if v != nil && v.ViewLevel() {
		st.Shadow = "learned@" + v.Name
		if k.answering(v) {
			st.Answering, st.Shadow = "learned@"+v.Name, k.heurPolicy
			if sw.cfg.Mode == SwitchConverged {
				st.Reason = "the checkpoint says converged (switch mode converged)"
			}
		} else if sw.cfg.Mode == SwitchConverged {
			st.Reason = "the checkpoint says not converged (switch mode converged)"
		}
	}
	if g := sw.last.Load(); g != nil {
		st.Verdict, st.VerdictAt, st.LastGate, st.Report = g.verdict, g.at, g.summary, g.report
	}
	return st
}

// EvaluateSwitch evaluates the gate once, now, on the calling goroutine:
// it replays the recent arrivals under the heuristic and under the active
// view-level learned policy (SwitchConfig.Seeds paired episodes), judges
// the costs with gate.Judge and switches the answer: to the learned policy
// when the verdict is converged, back to the heuristic when the learned
// one answers and the verdict's lower bound is at or below BackMargin. It
// does nothing without a view-level learned policy, in SwitchConverged
// mode, or with fewer than MinArrivals arrivals, and never switches in
// SwitchShadow mode. It returns the status after the evaluation and the
// replay's error, if any (then nothing switches).
func (k *Core) EvaluateSwitch(ctx context.Context) (SwitchStatus, error) {
	sw := k.sw
	sw.evalMu.Lock()
	defer sw.evalMu.Unlock()
	sw.lastEval = k.clock.Now()
	v := k.active.Load()
	if v == nil || !v.ViewLevel() || sw.cfg.Mode == SwitchConverged {
		return k.Switch(), nil
	}
	arrivals, cluster := sw.window()
	if len(arrivals) < sw.cfg.MinArrivals {
		sw.last.Store(&gateResult{at: k.clock.Now(), version: v.Name,
			summary: fmt.Sprintf("waiting: %d of %d arrivals", len(arrivals), sw.cfg.MinArrivals)})
		k.gateMetric("waiting", nil)
		return k.Switch(), nil
	}
	err := k.judge(ctx, v, arrivals, cluster)
	sw.evals.Add(1) // counted once its verdict is applied
	return k.Switch(), err
}

// judge replays the arrivals, judges the costs and switches.
func (k *Core) judge(ctx context.Context, v *Version, arrivals []arrival, cluster env.Cluster) error {
	sw := k.sw
	learned, base, tc, note, err := k.replayCosts(ctx, v, arrivals, cluster)
	now := k.clock.Now()
	if err != nil {
		summary := "replay failed: " + err.Error()
		sw.last.Store(&gateResult{at: now, version: v.Name, summary: summary, err: err})
		k.gateMetric("error", nil)
		var lf *learnedFailed
		if on := sw.on.Load(); errors.As(err, &lf) && k.active.Load() == v {
			// The learned policy's own replay failed: evidence against it.
			if on.v == v {
				k.setAnswer(&answer{since: now, reason: "live gate failed: " + summary})
			} else {
				sw.on.Store(&answer{since: on.since, reason: "in shadow: " + summary})
			}
		}
		return err
	}
	// The switch is decided against the heuristic that would answer
	// instead; the teacher's comparison is reported beside it.
	rep := gate.Evaluate(learned, base, k.heurPolicy, tc.costs, tc.name, gate.Config{Margin: sw.cfg.Margin,
		Confidence: sw.cfg.Confidence, Resamples: sw.cfg.Resamples, Seed: sw.cfg.Seed})
	verdict := rep.Verdict
	if tc.err != nil {
		note += fmt.Sprintf(" (its teacher not compared: %v)", tc.err)
	}
	summary := fmt.Sprintf("learned@%s vs %s on a replay of %d arrivals (avg %s): %v%s%s", v.Name, k.heurPolicy,
		len(arrivals), sw.cfg.Metric, verdict, rep.TeacherNote(), note)
	sw.last.Store(&gateResult{at: now, version: v.Name, verdict: verdict, report: rep, summary: summary})
	result := "failed"
	if verdict.Converged {
		result = "passed"
	}
	k.gateMetric(result, &verdict)
	if k.metrics != nil && rep.Teacher != "" {
		k.metrics.gateTeacherGain.Set(rep.VsTeacher.MeanGain)
	}
	if k.active.Load() != v {
		return nil // a new version arrived meanwhile: it starts in shadow
	}
	on := sw.on.Load()
	switch {
	case sw.cfg.Mode == SwitchShadow:
		would := "not switch"
		if verdict.Converged {
			would = "switch"
		}
		sw.on.Store(&answer{since: on.since, reason: "shadow only (switch mode shadow); the gate would " + would + ": " + summary})
	case on.v != v && verdict.Converged:
		k.setAnswer(&answer{v: v, since: now, reason: "gate passed: " + summary})
	case on.v == v && !(verdict.Lower > sw.cfg.BackMargin):
		k.setAnswer(&answer{since: now, reason: fmt.Sprintf("live gate failed (lower bound %.1f%% <= back margin %.1f%%): %s",
			100*verdict.Lower, 100*sw.cfg.BackMargin, summary)})
	case on.v == v:
		sw.on.Store(&answer{v: v, since: on.since, reason: "live gate holds: " + summary})
	default:
		sw.on.Store(&answer{since: on.since, reason: "in shadow, gate not passed: " + summary})
	}
	return nil
}

// SetAnswering makes the active view-level learned version answer from
// now on (learned true) or the heuristic, with reason as the answers'
// reason, as a gate switch does; it does nothing when that one answers
// already. It is for a replay of a served log that says who answered each
// request (serve/logreplay), where the log, not a gate, decides: a gate
// evaluation (EvaluateSwitch, RunSwitch) may switch again on its own
// evidence. It is an error without a view-level version active or in a
// switch mode other than SwitchGate.
func (k *Core) SetAnswering(learned bool, reason string) error {
	v := k.active.Load()
	if v == nil || !v.ViewLevel() {
		return errors.New("serve: no view-level learned version is active")
	}
	if k.sw.cfg.Mode != SwitchGate {
		return fmt.Errorf("serve: switch mode %s: only the gate's answer can be set", k.sw.cfg.Mode)
	}
	if (k.sw.on.Load().v == v) == learned {
		return nil
	}
	a := &answer{since: k.clock.Now(), reason: reason}
	if learned {
		a.v = v
	}
	k.setAnswer(a)
	return nil
}

// setAnswer switches who answers and updates the metrics.
func (k *Core) setAnswer(a *answer) {
	k.sw.on.Store(a)
	if k.metrics == nil {
		return
	}
	to, learned := "heuristic", 0.0
	if a.v != nil {
		to, learned = "learned", 1
	}
	k.metrics.switches.WithLabelValues(to).Inc()
	k.metrics.learnedAnswering.Set(learned)
	k.metrics.answeringSince.Set(float64(a.since.UnixNano()) / 1e9)
}

// gateMetric counts an evaluation and, with a verdict, sets its gauges.
func (k *Core) gateMetric(result string, v *gate.Verdict) {
	if k.metrics != nil {
		k.metrics.gate.record(result, v)
	}
}

// newActive resets the switch when a new version becomes active: a
// view-level one starts in shadow (each version earns the answer on its
// own evidence).
func (k *Core) newActive(v *Version) {
	if v == nil || !v.ViewLevel() {
		return
	}
	prev := k.sw.on.Load()
	reason := fmt.Sprintf("learned@%s loaded: in shadow until the gate passes", v.Name)
	switch k.sw.cfg.Mode {
	case SwitchShadow:
		reason = fmt.Sprintf("learned@%s loaded: shadow only (switch mode shadow)", v.Name)
	case SwitchConverged:
		reason = fmt.Sprintf("learned@%s loaded (switch mode converged)", v.Name)
	}
	a := &answer{since: prev.since, reason: reason}
	if prev.v != nil {
		a.since = k.clock.Now()
	}
	if prev.v != nil {
		k.setAnswer(a)
	} else {
		k.sw.on.Store(a)
	}
}

// RunSwitch evaluates the gate off the request path until ctx ends: after
// every SwitchConfig.Every new arrivals and, with an Interval, when that
// long has passed on the core's clock since the last evaluation; and the
// route gate (EvaluateRoute) likewise after Every new routed requests, and
// the Scale gate (EvaluateScale) after MMConfig.GateEvery period-end Scale
// calls. A failed
// evaluation is reported in Status and the metrics, and the loop goes on.
func (k *Core) RunSwitch(ctx context.Context) {
	sw := k.sw
	for {
		var tick <-chan time.Time
		if sw.cfg.Interval > 0 {
			tick = k.clock.After(sw.cfg.Interval)
		}
		ticked := false
		select {
		case <-ctx.Done():
			return
		case <-sw.kick:
		case <-tick:
			ticked = true
		}
		k.EvaluateSwitch(ctx)
		if k.routeDue(ticked) {
			k.EvaluateRoute(ctx)
		}
		if k.scaleDue(ticked) {
			k.EvaluateScale(ctx)
		}
	}
}

// routeDue reports whether the route gate is to be evaluated: by count
// (SwitchConfig.Every new routed requests) or on the interval's tick.
func (k *Core) routeDue(ticked bool) bool {
	rs := k.router
	if rs == nil || rs.learned == nil || rs.replay == nil || rs.mode == SwitchConverged {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return ticked || (k.sw.cfg.Every > 0 && rs.gate.fresh >= k.sw.cfg.Every)
}
