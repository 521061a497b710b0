package serve

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
)

// The Scale gate: the route gate (routegate.go) for the learned
// autoscaler. In switch mode SwitchGate (MMConfig.Mode) ModServe's rule
// answers Scale while the learned autoscaler decides every call in shadow
// (logged, not answered); the core keeps the requests RouteMM routed over
// the last MMConfig.GateWindow seconds of their arrival times and, after
// every MMConfig.GateEvery period-end Scale calls, replays them on the
// served deployment (MMConfig.Base's decoupled pools, the served router,
// the rule's settings MMConfig.Rule) under the rule and under the learned
// autoscaler, cut into SwitchConfig.Seeds consecutive episodes of equal
// request counts, each starting both autoscalers afresh at their initial
// sizes (a learned autoscaler with a clock, mm-rl's, set to the
// episode's first arrival on the deployment's clock, the RouteMM
// requests' arrival_seconds, as a live one counts from the first call). An episode's cost is its GPU-hours plus MMConfig.Penalty per
// request that missed its objective, the cost the learned autoscaler
// trained on; gate.Judge decides as the route gate does (Margin with
// Confidence to switch on; a lower bound at or below BackMargin switches
// back). The learned autoscaler's shadow sizes on the live windows are
// not what is judged: they depend on pools the rule sized, so only a
// replay pairs the two on the same traffic.

// Defaults of the Scale gate.
const (
	// DefaultMMGateWindow is the seconds of routed requests replayed: 4
	// hours, 8 episodes of half an hour (6 periods) at the default 8
	// seeds.
	DefaultMMGateWindow = 4 * 3600
	// DefaultMMGateEvery is the period-end Scale calls between
	// evaluations: an hour of 5-minute periods.
	DefaultMMGateEvery = 12
)

// mmGateMaxRequests bounds the routed requests the Scale gate holds,
// whatever the window: a client whose arrival times stand still or go
// back cannot grow it without end.
const mmGateMaxRequests = 1 << 20

// mmGate is the Scale gate's state, under mmState.mu.
type mmGate struct {
	reqs    []mm.Request // routed requests; reqs[head:] are in the window
	head    int
	periods int // period-end Scale calls since the last evaluation

	liveGate // on: the learned autoscaler answers (SwitchGate)
}

// observe records a routed request, leaving out those that arrived more
// than window seconds before it (and the oldest past mmGateMaxRequests).
func (g *mmGate) observe(r mm.Request, window float64) {
	g.reqs = append(g.reqs, r)
	for g.head < len(g.reqs) && (g.reqs[g.head].Arrival < r.Arrival-window || len(g.reqs)-g.head > mmGateMaxRequests) {
		g.head++
	}
	if g.head > len(g.reqs)/2 {
		g.reqs = slices.Delete(g.reqs, 0, g.head) // amortized: at most once per head's worth of appends
		g.head = 0
	}
}

// window returns the requests in the window.
func (g *mmGate) window() []mm.Request { return g.reqs[g.head:] }

// gated reports whether the Scale gate runs (under or outside st.mu: it
// reads only what WithMM set).
func (st *mmState) gated() bool {
	return st.learned != nil && st.router != nil && (st.mode == SwitchGate || st.mode == SwitchShadow) && st.rule.Period > 0
}

// scaleDue reports whether the Scale gate is to be evaluated: by count of
// period-end calls, or on the switch interval's tick.
func (k *Core) scaleDue(ticked bool) bool {
	st := k.mm
	if st == nil || !st.gated() {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return ticked || st.gate.periods >= st.gateEvery
}

// EvaluateScale evaluates the Scale gate once, now, on the calling
// goroutine: it replays the recent routed requests on the deployment under
// ModServe's rule and under the learned autoscaler (SwitchConfig.Seeds
// paired episodes), judges their costs (GPU-hours + MMConfig.Penalty x
// missed requests) with gate.Judge and switches the answer: to the learned
// autoscaler when the verdict is converged, back to the rule when the
// learned one answers and the verdict's lower bound is at or below
// BackMargin. It does nothing without a learned autoscaler and a router,
// outside SwitchGate and SwitchShadow modes (SwitchShadow evaluates,
// never switches), or with fewer than max(MinArrivals, 2 x Seeds) routed
// requests. It returns the status after it and the replay's error (then
// nothing switches).
func (k *Core) EvaluateScale(ctx context.Context) (MMSwitchStatus, error) {
	st := k.mm
	if st == nil || !st.gated() {
		return k.MMSwitch(), nil
	}
	cfg := k.sw.cfg
	st.mu.Lock()
	reqs := slices.Clone(st.gate.window())
	st.gate.periods = 0
	st.mu.Unlock()
	if need := max(cfg.MinArrivals, 2*cfg.Seeds); len(reqs) < need {
		st.mu.Lock()
		st.gate.summary, st.gate.at = fmt.Sprintf("waiting: %d of %d routed requests", len(reqs), need), k.clock.Now()
		st.mu.Unlock()
		k.scaleGateMetric("waiting", nil)
		return k.MMSwitch(), nil
	}
	learned, base, err := st.replayCosts(ctx, reqs, cfg.Seeds)
	now := k.clock.Now()
	st.mu.Lock()
	defer func() {
		answers := st.learnedAnswers()
		st.mu.Unlock()
		if k.metrics != nil {
			k.metrics.scaleLearned.Set(map[bool]float64{false: 0, true: 1}[answers])
		}
	}()
	g := &st.gate
	g.at = now
	if err != nil {
		g.summary = "replay failed: " + err.Error()
		k.scaleGateMetric("error", nil)
		return k.mmSwitchLocked(), err
	}
	v := gate.Judge(learned, base, gate.Config{Margin: cfg.Margin, Confidence: cfg.Confidence, Resamples: cfg.Resamples, Seed: cfg.Seed})
	k.scaleGateMetric(map[bool]string{false: "failed", true: "passed"}[v.Converged], &v)
	g.verdict, g.evals = v, g.evals+1
	g.summary = fmt.Sprintf("%s vs %s on a replay of %d routed requests in %d episodes (GPU-hours + %g x missed requests): %v",
		st.learnedScalePolicy(), st.heurScalePolicy(), len(reqs), cfg.Seeds, st.penalty, v)
	switch {
	case st.mode == SwitchShadow:
		would := "not switch"
		if v.Converged {
			would = "switch"
		}
		g.reason = "shadow only (switch mode shadow); the gate would " + would + ": " + g.summary
	case !g.on && v.Converged:
		g.on, g.since, g.reason = true, now, "gate passed: "+g.summary
	case g.on && !(v.Lower > cfg.BackMargin):
		g.on, g.since = false, now
		g.reason = fmt.Sprintf("live gate failed (lower bound %.1f%% <= back margin %.1f%%): %s", 100*v.Lower, 100*cfg.BackMargin, g.summary)
	case g.on:
		g.reason = "live gate holds: " + g.summary
	default:
		g.reason = "in shadow, gate not passed: " + g.summary
	}
	return k.mmSwitchLocked(), nil
}

// scaleGateMetric counts a Scale gate evaluation and, with a verdict, sets
// its gauges.
func (k *Core) scaleGateMetric(result string, v *gate.Verdict) {
	if k.metrics != nil {
		k.metrics.scaleGate.record(result, v)
	}
}

// replayCosts replays reqs, cut into n consecutive episodes, under the
// learned autoscaler and the rule, each afresh, and returns each
// episode's cost under each.
func (st *mmState) replayCosts(ctx context.Context, reqs []mm.Request, n int) (learned, base []float64, err error) {
	slices.SortStableFunc(reqs, func(a, b mm.Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
	per := len(reqs) / n
	skip := len(reqs) - per*n
	cfg := st.base
	cfg.Instances = [3]int{0, 1, 1}
	for e := range n {
		chunk := slices.Clone(reqs[skip+e*per : skip+(e+1)*per])
		t0 := chunk[0].Arrival
		for i := range chunk {
			chunk[i].ID, chunk[i].Arrival = i, chunk[i].Arrival-t0
		}
		for _, side := range []struct {
			newScaler func() (mmscale.Scaler, error)
			out       *[]float64
		}{{st.newLearned, &learned}, {st.newScaler, &base}} {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			sc, err := side.newScaler()
			if err != nil {
				return nil, nil, err
			}
			if c, ok := sc.(interface{ StartAt(float64) }); ok {
				c.StartAt(t0) // mm-rl's time of day: the episode's, on the deployment's clock
			}
			r, err := modserve.New(st.router.Name())
			if err != nil {
				return nil, nil, err
			}
			s, err := mm.New(cfg, chunk)
			if err != nil {
				return nil, nil, err
			}
			out, err := mmscale.Run(s, chunk, r, sc, st.rule)
			if err != nil {
				return nil, nil, err
			}
			*side.out = append(*side.out, out.Summary.GPUHours+st.penalty*float64(len(chunk)-out.Met))
		}
	}
	return learned, base, nil
}
