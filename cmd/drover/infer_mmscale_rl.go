package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/serve"
)

// mmrlOpts are drover infer mmscale's mm-rl flags.
type mmrlOpts struct {
	steps    int
	penalty  float64
	train    []int
	test     []int
	tests    int
	requests int
	hours    float64
	seed     uint64
	// ruleTargets are further targets the rule runs at on the held-out
	// episodes.
	ruleTargets []float64
}

// defineMmrlFlags defines the mm-rl flags on fs and returns what reads
// them after parsing.
func defineMmrlFlags(fs *flag.FlagSet) func(requests int, seed uint64) (mmrlOpts, error) {
	steps := fs.Int("rl-steps", 0, "train mm-rl (PPO over env/mmgym) for this many 5-minute periods after the sweep and judge it against ModServe's rule on held-out days (0: no mm-rl)")
	penalty := fs.Float64("rl-penalty", 0.05, "mm-rl's cost of a request that misses its objective, in GPU-hours")
	train := fs.String("rl-train-days", "0,1,2,3,4", "days of the week mm-rl trains on")
	test := fs.String("rl-test-days", "5,6", "held-out days mm-rl is judged on")
	tests := fs.Int("rl-tests", 6, "held-out episodes (each a day of a fresh week)")
	ruleTargets := fs.String("rl-rule-targets", "0.8,0.6", "further targets ModServe's rule is also run at on the held-out episodes, to compare GPU-hours at mm-rl's attainment")
	return func(requests int, seed uint64) (mmrlOpts, error) {
		tr, err := parseDays("rl-train-days", *train)
		if err != nil {
			return mmrlOpts{}, err
		}
		te, err := parseDays("rl-test-days", *test)
		if err != nil {
			return mmrlOpts{}, err
		}
		var rts []float64
		for _, f := range strings.Split(*ruleTargets, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(x > 0 && x <= mmscale.MaxTarget) {
				return mmrlOpts{}, fmt.Errorf("--rl-rule-targets %q: %q is not a share in (0, %v]", *ruleTargets, f, mmscale.MaxTarget)
			}
			rts = append(rts, x)
		}
		return mmrlOpts{steps: *steps, penalty: *penalty, train: tr, test: te, tests: *tests, requests: requests, hours: 24, seed: seed, ruleTargets: rts}, nil
	}
}

// parseDays parses a comma-separated list of days of the week.
func parseDays(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 0 || d > 6 {
			return nil, fmt.Errorf("--%s %q: %q is not a day 0..6", flag, s, f)
		}
		out = append(out, d)
	}
	return out, nil
}

// mmscaleRL trains mm-rl (PPO over env/mmgym: each period, ModServe's
// asks scaled down, kept or up per pool) on the training days, as drover
// train --env mm-rl does (trainMMRL), and judges it against ModServe's
// rule (the Rule action every period) on held-out days with
// policies/gate, cost = GPU-hours + penalty x missed requests, printing
// each held-out episode and the rule at further targets.
func mmscaleRL(w io.Writer, m mm.Model, p mmscale.Profile, scale mmscale.Config, init mmscale.Sizes, o mmscaleOpts, r mmrlOpts) error {
	t := mmrlTraining{model: m, scale: scale, profile: p, initial: init, router: o.router, requests: r.requests,
		trainDays: r.train, testDays: r.test, hours: r.hours, penalty: r.penalty, steps: r.steps, seed: r.seed,
		numEnvs: 4, numSteps: 96, hidden: []int{64, 64}, lr: 3e-4, prior: 2, log: w, fixed896: o.images == "fixed"}
	meta, nets, err := trainMMRL(t) // t.tests is 0: judged here, with the table
	if err != nil {
		return err
	}
	pol, err := serve.NewMMRL(meta, nets)
	if err != nil {
		return err
	}
	t.tests = r.tests
	eps, err := t.heldOut(pol.Policy())
	if err != nil {
		return err
	}
	var learned, rule []float64
	var lg, la float64
	fmt.Fprintln(w, "\n| held-out episode (day) | mm-rl GPU-hours | attainment | ModServe's rule GPU-hours | attainment | mm-rl's share of rule actions |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, h := range eps {
		li, ri := h.learned, h.rule
		learned, rule = append(learned, h.learnedCost), append(rule, h.ruleCost)
		lg += li["gpu_hours"] / float64(r.tests)
		la += li["attainment"] / float64(r.tests)
		fmt.Fprintf(w, "| %d (%v) | %.1f | %.4f | %.1f | %.4f | %.2f |\n", h.seed, r.test[h.seed%uint64(len(r.test))], li["gpu_hours"], li["attainment"], ri["gpu_hours"], ri["attainment"], h.ruleShare)
	}
	fmt.Fprintf(w, "\nmm-rl on the held-out episodes: mean %.1f GPU-hours, attainment %.4f\n", lg, la)
	fmt.Fprintf(w, "gate (cost = GPU-hours + %.3f x missed requests, mm-rl against ModServe's rule): %v\n\n", r.penalty, gate.Judge(learned, rule, gate.Config{Seed: 1}))
	return mmrlRuleTargets(w, t.gymConfig(t.testDays), init, r)
}

// mmrlRuleTargets runs ModServe's rule at further targets on the same
// held-out episodes: the GPU-hours the rule needs for mm-rl's attainment.
// init is the pools' initial sizes.
func mmrlRuleTargets(w io.Writer, c mmgym.Config, init mmscale.Sizes, r mmrlOpts) error {
	for _, tg := range r.ruleTargets {
		c.Scale.Target = tg
		c.NewRule = modServeRule(c.Scale, c.Profile, init)
		gpuH, att := 0.0, 0.0
		for k := range r.tests {
			_, info, _, err := mmrlEpisode(c, r.seed+1000+uint64(k), func([]float64) int { return mmgym.Rule })
			if err != nil {
				return err
			}
			gpuH += info["gpu_hours"] / float64(r.tests)
			att += info["attainment"] / float64(r.tests)
		}
		fmt.Fprintf(w, "ModServe's rule at target %.2f on the same held-out episodes: mean %.1f GPU-hours, attainment %.4f\n", tg, gpuH, att)
	}
	return nil
}

// modServeRule returns mmgym's rule: ModServe's autoscaler on cfg and p,
// starting from init, afresh for each episode.
func modServeRule(cfg mmscale.Config, p mmscale.Profile, init mmscale.Sizes) func() (mmscale.Scaler, error) {
	return func() (mmscale.Scaler, error) { return mmscale.NewModServe(cfg, p, init) }
}

// mmrlEpisode plays one episode of policy and returns its cost (minus the
// return, unscaled), its final info, and the share of steps that took the
// Rule action.
func mmrlEpisode(c mmgym.Config, seed uint64, policy func([]float64) int) (float64, gym.Info, float64, error) {
	e, err := mmgym.New(c)
	if err != nil {
		return 0, nil, 0, err
	}
	obs, _ := e.Reset(seed)
	cost, steps, rules := 0.0, 0, 0
	for {
		a := policy(obs)
		if a == mmgym.Rule {
			rules++
		}
		steps++
		var rew float64
		var term, trunc bool
		var info gym.Info
		obs, rew, term, trunc, info = e.Step(a)
		cost -= rew * c.RewardScale
		if term || trunc {
			return cost, info, float64(rules) / float64(steps), nil
		}
	}
}
