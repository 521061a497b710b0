package serve

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/pdrl"
)

// The route gate: placement's shadow gate (switch.go) for the learned
// router. While HACK answers, the learned router decides every Route in
// shadow (logged, not answered); the core keeps the last
// SwitchConfig.Window routed requests (arrival, prompt and output tokens)
// and, after every SwitchConfig.Every new ones, replays them on the
// configured deployment (RouteConfig.Replay) under HACK and under the
// learned router, cut into SwitchConfig.Seeds consecutive episodes of
// equal length, each starting on an idle deployment. Each episode's cost
// is its mean JCT; gate.Judge decides as for placement (Margin with
// Confidence to switch on; a lower bound at or below BackMargin switches
// back). Decisions are never replayed from the live states: an episode is
// a fresh simulation, so a router's gain is measured on the traffic, not
// on the states the other one left.

// routeArrival is a routed request, for the gate's replay.
type routeArrival struct {
	at             time.Time
	prompt, output int
}

// routeGate is the route gate's state, under routeState.mu.
type routeGate struct {
	ring  []routeArrival
	next  int
	seen  uint64
	fresh int
	// config is the last request's instances (their configuration; the
	// loads are not read), to check the replayed deployment against.
	config []infer.InstanceState

	liveGate // on: the learned router answers (SwitchGate)
}

// liveGate is a live gate's switch and its last evaluation, shared by the
// route gate (routeGate) and the Scale gate (mmGate).
type liveGate struct {
	on      bool // the learned policy answers (SwitchGate)
	since   time.Time
	reason  string
	verdict gate.Verdict
	at      time.Time // of the last evaluation (zero: none)
	summary string
	evals   int64
}

// observe records a routed request and reports whether an evaluation is
// due (cfg.Every new arrivals since the last).
func (g *routeGate) observe(cfg SwitchConfig, r infer.Request, at time.Time, st []infer.InstanceState) bool {
	a := routeArrival{at: at, prompt: r.Prompt, output: r.Output}
	if len(g.ring) < cfg.Window {
		g.ring = append(g.ring, a)
	} else {
		g.ring[g.next] = a
		g.next = (g.next + 1) % len(g.ring)
	}
	if !sameInstances(g.config, st) {
		g.config = slices.Clone(st)
	}
	g.seen++
	g.fresh++
	return cfg.Every > 0 && g.fresh >= cfg.Every
}

func sameInstances(a, b []infer.InstanceState) bool {
	return slices.EqualFunc(a, b, func(x, y infer.InstanceState) bool { return x.Role == y.Role && x.GPU == y.GPU && x.TP == y.TP })
}

// RouteSwitchStatus says who answers Route calls and why, and the route
// gate's last verdict.
type RouteSwitchStatus struct {
	// Mode is the route switch mode (RouteConfig.Mode).
	Mode string
	// Answering is the router that answers a request needing no fallback
	// ("heuristic:hack", "learned:pd-rl@v1"), Shadow the one deciding
	// beside it ("" without a learned router), Reason why, Since since
	// when (zero: from the start).
	Answering, Shadow, Reason string
	Since                     time.Time
	// Verdict is the last evaluation's verdict, VerdictAt when it was
	// made (zero: none), LastGate its summary or why there was none.
	Verdict   gate.Verdict
	VerdictAt time.Time
	LastGate  string
	// Arrivals counts the routed requests so far; Evaluations the gate's
	// evaluations.
	Arrivals    uint64
	Evaluations int64
}

// RouteSwitch returns the route switch's status (the zero value without a
// router).
func (k *Core) RouteSwitch() RouteSwitchStatus {
	rs := k.router
	if rs == nil {
		return RouteSwitchStatus{}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	heur, learned := "heuristic:"+pdrl.HACKName, "learned:"+pdrl.Name+"@"+rs.version
	st := RouteSwitchStatus{Mode: rs.mode, Answering: heur, Reason: rs.gate.reason, Since: rs.gate.since,
		Verdict: rs.gate.verdict, VerdictAt: rs.gate.at, LastGate: rs.gate.summary, Arrivals: rs.gate.seen, Evaluations: rs.gate.evals}
	if rs.learned != nil {
		st.Shadow = learned
		if rs.learnedAnswers() {
			st.Answering, st.Shadow = learned, heur
		}
	}
	return st
}

// EvaluateRoute evaluates the route gate once, now, on the calling
// goroutine: it replays the recent routed requests on the deployment under
// HACK and under the learned router (SwitchConfig.Seeds paired episodes),
// judges their mean JCTs with gate.Judge and switches the answer: to the
// learned router when the verdict is converged, back to HACK when the
// learned one answers and the verdict's lower bound is at or below
// BackMargin. It does nothing without a learned router, outside
// SwitchGate and SwitchShadow modes (SwitchShadow evaluates, never
// switches), with fewer than MinArrivals requests, or when the requests'
// instances are not the deployment's. It returns the status after it and
// the replay's error (then nothing switches).
func (k *Core) EvaluateRoute(ctx context.Context) (RouteSwitchStatus, error) {
	rs := k.router
	if rs == nil || rs.learned == nil || rs.replay == nil || rs.mode == SwitchConverged {
		return k.RouteSwitch(), nil
	}
	cfg := k.sw.cfg
	rs.mu.Lock()
	arrivals := append(slices.Clone(rs.gate.ring[rs.gate.next:]), rs.gate.ring[:rs.gate.next]...)
	config := slices.Clone(rs.gate.config)
	rs.gate.fresh = 0
	rs.mu.Unlock()

	waiting := ""
	switch {
	case len(arrivals) < max(cfg.MinArrivals, 2*cfg.Seeds):
		waiting = fmt.Sprintf("waiting: %d of %d routed requests", len(arrivals), max(cfg.MinArrivals, 2*cfg.Seeds))
	case !sameInstances(config, deploymentStates(rs.replay)):
		waiting = fmt.Sprintf("not evaluated: the requests list %d instances that are not deployment %q's %d", len(config), rs.deployment, len(rs.replay.Instances))
	}
	if waiting != "" {
		k.routeGateMetric("waiting", nil)
		rs.mu.Lock()
		rs.gate.summary, rs.gate.at = waiting, k.clock.Now()
		rs.mu.Unlock()
		return k.RouteSwitch(), nil
	}
	learned, base, err := routeReplayCosts(ctx, *rs.replay, rs.enc.Arch, rs.newLearned, arrivals, cfg.Seeds)
	err = k.judgeRoute(cfg, len(arrivals), learned, base, err)
	return k.RouteSwitch(), err
}

// judgeRoute judges the replay's costs and switches.
func (k *Core) judgeRoute(cfg SwitchConfig, arrivals int, learned, base []float64, err error) error {
	rs := k.router
	now := k.clock.Now()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.gate.at = now
	if err != nil {
		rs.gate.summary = "replay failed: " + err.Error()
		k.routeGateMetric("error", nil)
		return err
	}
	v := gate.Judge(learned, base, gate.Config{Margin: cfg.Margin, Confidence: cfg.Confidence, Resamples: cfg.Resamples, Seed: cfg.Seed})
	k.routeGateMetric(map[bool]string{false: "failed", true: "passed"}[v.Converged], &v)
	rs.gate.verdict, rs.gate.evals = v, rs.gate.evals+1
	summary := fmt.Sprintf("learned:%s@%s vs heuristic:%s on a replay of %d routed requests in %d episodes (mean JCT): %v",
		pdrl.Name, rs.version, pdrl.HACKName, arrivals, cfg.Seeds, v)
	rs.gate.summary = summary
	switch {
	case rs.mode == SwitchShadow:
		would := "not switch"
		if v.Converged {
			would = "switch"
		}
		rs.gate.reason = "shadow only (switch mode shadow); the gate would " + would + ": " + summary
	case !rs.gate.on && v.Converged:
		rs.gate.on, rs.gate.since, rs.gate.reason = true, now, "gate passed: "+summary
	case rs.gate.on && !(v.Lower > cfg.BackMargin):
		rs.gate.on, rs.gate.since = false, now
		rs.gate.reason = fmt.Sprintf("live gate failed (lower bound %.1f%% <= back margin %.1f%%): %s", 100*v.Lower, 100*cfg.BackMargin, summary)
	case rs.gate.on:
		rs.gate.reason = "live gate holds: " + summary
	default:
		rs.gate.reason = "in shadow, gate not passed: " + summary
	}
	if k.metrics != nil {
		k.metrics.routeLearned.Set(map[bool]float64{false: 0, true: 1}[rs.learnedAnswers()])
	}
	return nil
}

// routeGateMetric counts a route gate evaluation and, with a verdict, sets
// its gauges.
func (k *Core) routeGateMetric(result string, v *gate.Verdict) {
	if k.metrics != nil {
		k.metrics.routeGate.record(result, v)
	}
}

// deploymentStates returns the configuration of c's instances as states.
func deploymentStates(c *infer.Config) []infer.InstanceState {
	out := make([]infer.InstanceState, len(c.Instances))
	for i, ic := range c.Instances {
		out[i] = infer.InstanceState{Role: ic.Role, GPU: ic.GPU, TP: ic.TP}
	}
	return out
}

// routeEpisodes cuts arrivals (in arrival order) into n consecutive
// episodes of equal length (the first len % n requests are left out), each
// a request stream arriving from 0 at its first request.
func routeEpisodes(arrivals []routeArrival, n int) [][]infer.Request {
	per := len(arrivals) / n
	skip := len(arrivals) - per*n
	out := make([][]infer.Request, n)
	for e := range n {
		chunk := arrivals[skip+e*per : skip+(e+1)*per]
		reqs := make([]infer.Request, len(chunk))
		for i, a := range chunk {
			reqs[i] = infer.Request{ID: i, Arrival: max(a.at.Sub(chunk[0].at).Seconds(), 0), Prompt: a.prompt, Output: a.output}
		}
		// Concurrent clients' arrivals may reach the core out of order.
		slices.SortStableFunc(reqs, func(a, b infer.Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
		for i := range reqs {
			reqs[i].ID = i
		}
		out[e] = reqs
	}
	return out
}

// routeReplayCosts replays the episodes under the learned router and
// HACK and returns each episode's mean JCT under each.
func routeReplayCosts(ctx context.Context, cfg infer.Config, arch kv.Arch, newLearned func() *pdrl.Policy, arrivals []routeArrival, n int) (learned, base []float64, err error) {
	for _, reqs := range routeEpisodes(arrivals, n) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for _, side := range []struct {
			d   pdrl.Decider
			out *[]float64
		}{{newLearned(), &learned}, {pdrl.NewHACK(arch), &base}} {
			s, err := infer.New(cfg, reqs)
			if err != nil {
				return nil, nil, err
			}
			sum, err := s.Run(pdrl.Router(side.d))
			if err != nil {
				return nil, nil, err
			}
			*side.out = append(*side.out, sum.E2E.Mean)
		}
	}
	return learned, base, nil
}
