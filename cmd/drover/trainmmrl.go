package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
)

// mmrlEnv is drover train's --env for the learned multimodal autoscaler.
const mmrlEnv = checkpoints.MMRLEnv

// mmrlDefaultSteps is --steps' default for --env mm-rl: 20,000 5-minute
// periods (69 simulated days), a few minutes of one core.
const mmrlDefaultSteps = 20_000

// trainMMRLFlags are drover train's flags for --env mm-rl.
type trainMMRLFlags struct {
	model, router, trainDays, testDays *string
	images                             *string
	requests, stabilize                *int
	histSeed                           *uint64
	factor, target, penalty, hours     *float64
}

// defineTrainMMRLFlags defines drover train's --mm flags on fs.
func defineTrainMMRLFlags(fs *flag.FlagSet) *trainMMRLFlags {
	return &trainMMRLFlags{
		model:     fs.String("mm-model", "llama", "with --env mm-rl: the served model: llama (Llama-3.2-11B-Vision), internvl (InternVL-2.5-26B), llava (LLaVA-OneVision-7B) or an env/infer/mm catalogue name"),
		router:    fs.String("mm-router", modserve.RouteOnly, "with --env mm-rl: the decoupled pools' router in the episodes and the profile: "+modserve.RouteOnly+" (modality-aware routing, FCFS) or "+modserve.Name),
		trainDays: fs.String("mm-train-days", "0,1,2,3,4", "with --env mm-rl: days of the week mm-rl trains on (each episode a day of a freshly drawn week)"),
		testDays:  fs.String("mm-test-days", "5,6", "with --env mm-rl: held-out days the gate judges mm-rl on against ModServe's rule (--eval-seeds episodes, each a day of a week of another seed)"),
		requests:  fs.Int("mm-requests", 0, "with --env mm-rl: the synthetic LMM week's requests, for the episodes and the history week the profile is drawn from (0: the trace's 1,000,000)"),
		stabilize: fs.Int("mm-stabilize", 1, "with --env mm-rl: the rule's scale-in stabilization, in periods (1: ModServe's rule; drover infer mmscale's comparison uses 3)"),
		histSeed:  fs.Uint64("mm-history-seed", 2, "with --env mm-rl: the seed of the history week (profile, initial sizes)"),
		factor:    fs.Float64("mm-factor", 5, "with --env mm-rl: the SLO factor: a request's TTFT objective is this x the larger of its isolated TTFT and its modality's reference"),
		target:    fs.Float64("mm-target", 1, "with --env mm-rl: the share of the profiled capacity the rule sizes pools for (1: ModServe's rule)"),
		penalty:   fs.Float64("mm-penalty", 0.05, "with --env mm-rl: the GPU-hours a request that misses its objective costs (reward = -(GPU-hours + penalty x missed requests))"),
		hours:     fs.Float64("mm-hours", 24, "with --env mm-rl: an episode's length in hours (from the day's start)"),
		images:    fs.String("mm-images", "drawn", "with --env mm-rl: image sizes in the episodes and the profile: drawn (per image, env/infer/mm's default) or fixed (every image 896x896, the simulator before sizes were drawn: the committed checkpoints/mm-rl)"),
	}
}

// given reports the --mm flags given, for the other environments to
// refuse.
func (f *trainMMRLFlags) given(given map[string]bool) []string {
	var out []string
	for name := range given {
		if strings.HasPrefix(name, "mm-") {
			out = append(out, "--"+name)
		}
	}
	slices.Sort(out)
	return out
}

// mmrlTraining is one mm-rl training: the rule it scales (model, rule
// settings, profile, initial sizes), its episodes, PPO's settings and the
// held-out judging.
type mmrlTraining struct {
	model   mm.Model
	scale   mmscale.Config
	profile mmscale.Profile
	initial mmscale.Sizes
	// router names the pools' router; requests and histSeed the weeks.
	router   string
	requests int
	histSeed uint64
	// trainDays, testDays and hours are the episodes; penalty the cost of
	// a missed request.
	trainDays, testDays []int
	hours, penalty      float64
	// steps, seed, numEnvs, numSteps, hidden and lr are PPO's; prior is
	// added to the rule action's initial logit (a start near ModServe's
	// rule, still exploring); parallel steps the environments in
	// goroutines.
	steps, numEnvs, numSteps int
	seed                     uint64
	hidden                   []int
	lr                       float64
	prior                    float32
	parallel                 bool
	// tests is the held-out episodes (0: no verdict, not converged).
	tests int
	// log takes the progress lines.
	log io.Writer
	// fixed896 simulates every image as 896x896 (mmgym.Config.Fixed896).
	fixed896 bool
}

// mmrlRewardScale divides mm-rl's reward (GPU-hours of a period) in
// training.
const mmrlRewardScale = 10

// gymConfig is the environment of days.
func (t mmrlTraining) gymConfig(days []int) mmgym.Config {
	router := t.router
	return mmgym.Config{Model: t.model, Requests: t.requests, Days: days, Hours: t.hours, Scale: t.scale, Profile: t.profile, Penalty: t.penalty,
		RewardScale: mmrlRewardScale, NewRule: modServeRule(t.scale, t.profile, t.initial), Fixed896: t.fixed896,
		Router: func() mm.Router {
			r, err := modserve.New(router)
			if err != nil {
				panic(err) // checked with the flags
			}
			return r
		}}
}

// trainMMRL trains mm-rl by PPO on the training days, judges it against
// ModServe's rule on t.tests held-out episodes with policies/gate (cost =
// GPU-hours + penalty x missed requests, on the very policy a server
// loads: serve.MMRL's greedy actor), and returns the checkpoint's
// metadata and networks.
func trainMMRL(t mmrlTraining) (checkpoints.Meta, map[string]*nn.MLP, error) {
	trainCfg := t.gymConfig(t.trainDays)
	if _, err := mmgym.New(trainCfg); err != nil {
		return checkpoints.Meta{}, nil, err
	}
	pc := ppo.DefaultConfig()
	pc.Seed, pc.TotalSteps, pc.NumEnvs, pc.NumSteps, pc.LR, pc.Hidden, pc.Parallel = t.seed, t.steps, t.numEnvs, t.numSteps, t.lr, t.hidden, t.parallel
	pc.ActionPrior = make([]float32, 9)
	pc.ActionPrior[mmgym.Rule] = t.prior
	updates := max(1, t.steps/(t.numEnvs*t.numSteps))
	every := max(1, updates/20)
	t0 := time.Now()
	var recent []float64
	n := 0
	agent, err := ppo.Train(pc, func(int) gym.Env {
		e, err := mmgym.New(trainCfg)
		if err != nil {
			panic(err) // checked above
		}
		return e
	}, func(u ppo.Update) {
		n++
		for _, r := range u.Episodes {
			recent = append(recent, -r*mmrlRewardScale)
		}
		if n%every == 0 || n == updates {
			cost := "no episode ended yet"
			if len(recent) > 0 {
				cost = fmt.Sprintf("%d episodes, mean cost %.1f GPU-hours (penalty included)", len(recent), meanOf(recent))
			}
			fmt.Fprintf(t.log, "mm-rl: update %d/%d, step %d/%d, %s, entropy %.3f, explained variance %.2f, %.0f s\n",
				n, updates, u.Step, t.steps, cost, u.Entropy, u.ExplainedVariance, time.Since(t0).Seconds())
			recent = recent[:0]
		}
	})
	if err != nil {
		return checkpoints.Meta{}, nil, err
	}
	s := serve.MMRLScale(t.model, t.scale, t.profile, t.initial)
	images := "drawn"
	if t.fixed896 {
		images = "fixed896"
	}
	s.Training = checkpoints.MMTraining{Requests: t.requests, HistorySeed: t.histSeed, Router: t.router, Images: images, TrainDays: t.trainDays, TestDays: t.testDays,
		Hours: t.hours, Penalty: t.penalty, RewardScale: mmrlRewardScale}
	gc := gate.Config{Seed: 1}.WithDefaults()
	s.Gate = checkpoints.MMGate{Baseline: serve.MMRLBaseline, Margin: gc.Margin, Confidence: gc.Confidence}
	meta := checkpoints.Meta{Env: mmrlEnv, Algo: "ppo", ObsDim: mmgym.ObsDim, Actions: 9, Hidden: t.hidden, Activation: "tanh",
		Networks: []string{"actor", "critic"}, Seed: t.seed, Steps: t.steps, MM: &s,
		Hyperparams: map[string]float64{"ppo_lr": pc.LR, "ppo_num_envs": float64(pc.NumEnvs), "ppo_num_steps": float64(pc.NumSteps),
			"ppo_ent_coef": float64(pc.EntCoef), "ppo_update_epochs": float64(pc.UpdateEpochs), "ppo_minibatches": float64(pc.NumMinibatches),
			"action_prior_rule": float64(pc.ActionPrior[mmgym.Rule])}}
	nets := map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}
	if t.tests == 0 {
		return meta, nets, nil
	}
	if err := t.judge(&meta, nets); err != nil {
		return checkpoints.Meta{}, nil, err
	}
	return meta, nets, nil
}

// mmrlHeldOut is one held-out episode played under mm-rl and under
// ModServe's rule: each one's cost (GPU-hours + penalty x missed
// requests), final info, and the share of mm-rl's periods that took the
// rule's action.
type mmrlHeldOut struct {
	seed                  uint64
	learnedCost, ruleCost float64
	learned, rule         gym.Info
	ruleShare             float64
}

// heldOut plays t.tests held-out episodes (seeds t.seed+1000+k on the
// test days) under policy and under ModServe's rule.
func (t mmrlTraining) heldOut(policy func([]float64) int) ([]mmrlHeldOut, error) {
	testCfg := t.gymConfig(t.testDays)
	out := make([]mmrlHeldOut, 0, t.tests)
	for k := range t.tests {
		h := mmrlHeldOut{seed: t.seed + 1000 + uint64(k)}
		var err error
		if h.learnedCost, h.learned, h.ruleShare, err = mmrlEpisode(testCfg, h.seed, policy); err != nil {
			return nil, err
		}
		if h.ruleCost, h.rule, _, err = mmrlEpisode(testCfg, h.seed, func([]float64) int { return mmgym.Rule }); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// judge plays t.tests held-out episodes under the checkpoint's policy (as
// a server loads it: serve.MMRL's greedy actor) and under ModServe's rule,
// and records the gate's verdict in meta.
func (t mmrlTraining) judge(meta *checkpoints.Meta, nets map[string]*nn.MLP) error {
	p, err := serve.NewMMRL(*meta, nets)
	if err != nil {
		return err
	}
	eps, err := t.heldOut(p.Policy())
	if err != nil {
		return err
	}
	g := &meta.MM.Gate
	var learned, rule []float64
	for k, h := range eps {
		li, ri := h.learned, h.rule
		learned, rule = append(learned, h.learnedCost), append(rule, h.ruleCost)
		f := 1 / float64(t.tests)
		g.GPUHours += f * li["gpu_hours"]
		g.Attainment += f * li["attainment"]
		g.RuleGPUHours += f * ri["gpu_hours"]
		g.RuleAttainment += f * ri["attainment"]
		fmt.Fprintf(t.log, "mm-rl: held-out episode %d (seed %d, day %d): mm-rl %.1f GPU-hours at %.4f attainment, cost %.1f; ModServe's rule %.1f at %.4f, cost %.1f\n",
			k+1, h.seed, int(li["day"]), li["gpu_hours"], li["attainment"], h.learnedCost, ri["gpu_hours"], ri["attainment"], h.ruleCost)
	}
	v := gate.Judge(learned, rule, gate.Config{Seed: 1, Margin: g.Margin, Confidence: g.Confidence})
	g.Episodes, g.MeanGain, g.Lower, g.Converged = v.Episodes, v.MeanGain, v.Lower, v.Converged
	meta.Converged = v.Converged
	return nil
}

// check validates --env mm-rl's steps, held-out episodes and router (the
// --mm numbers have their rules in numRules).
func (f *trainMMRLFlags) check(steps, evalSeeds int) error {
	switch {
	case steps < 0 || steps > 100_000_000:
		return errors.New("--steps: want 0 (the default, 20,000) to 1e8 periods")
	case evalSeeds < 0 || evalSeeds > 1000:
		return errors.New("--eval-seeds: want 0 to 1000 held-out episodes")
	case *f.router != modserve.RouteOnly && *f.router != modserve.Name:
		return fmt.Errorf("--mm-router %q: want %s or %s", *f.router, modserve.RouteOnly, modserve.Name)
	case *f.images != "drawn" && *f.images != "fixed":
		return fmt.Errorf("--mm-images %q: want drawn or fixed", *f.images)
	}
	return nil
}

// runTrainInference runs the inference environments' trainings (pd-rl,
// mm-rl) and reports whether --env named one; other environments get an
// error for any --mm flag given.
func runTrainInference(f *trainFlags, mf *trainMMRLFlags, given map[string]bool, stdout io.Writer) (bool, error) {
	switch {
	case *f.envName == mmrlEnv:
		return true, runTrainMMRL(f, mf, given, stdout)
	case given["teacher"] && *f.envName != pdrlEnv:
		return true, fmt.Errorf("--teacher given without --env %s, the only environment that takes it", pdrlEnv)
	case given["judge"] && *f.envName != pdrlEnv && *f.envName != mmrlEnv:
		return true, fmt.Errorf("--judge given without --env %s or %s, the environments that take it", pdrlEnv, mmrlEnv)
	case len(mf.given(given)) > 0:
		return true, fmt.Errorf("%s given without --env %s, the only environment that takes them", strings.Join(mf.given(given), ", "), mmrlEnv)
	case *f.envName == pdrlEnv:
		return true, runTrainPDRL(f, given, stdout)
	}
	return false, nil
}

// runTrainMMRL is `drover train --env mm-rl`: ModServe's rule profiled for
// --mm-model on the history week (as drover serve -mm-model does), PPO
// over env/mmgym on the training days, the gate against the rule on
// --eval-seeds held-out episodes, and the checkpoint (converged as the
// gate says) to --out.
func runTrainMMRL(f *trainFlags, mf *trainMMRLFlags, given map[string]bool, stdout io.Writer) error {
	for _, name := range []string{"resume", "from-log", "init", "config", "backend", "device", "cluster", "nodes", "gpus-per-node"} {
		if given[name] {
			return fmt.Errorf("--env %s does not take --%s", mmrlEnv, name)
		}
	}
	if *f.judge != "" {
		return judgeMMRL(f, mf, given, stdout)
	}
	if *f.algo != "ppo" {
		return fmt.Errorf("--env %s --algo %q: want ppo", mmrlEnv, *f.algo)
	}
	if err := mf.check(*f.steps, *f.evalSeeds); err != nil {
		return err
	}
	m, err := mmModel(*mf.model)
	if err != nil {
		return fmt.Errorf("--mm-model: %w", err)
	}
	trainDays, err := parseDays("mm-train-days", *mf.trainDays)
	if err != nil {
		return err
	}
	testDays, err := parseDays("mm-test-days", *mf.testDays)
	if err != nil {
		return err
	}
	for _, d := range append(slices.Clone(trainDays), testDays...) {
		if float64(d)*24+*mf.hours > 7*24 {
			return fmt.Errorf("--mm-hours %v from day %d: past the week's end", *mf.hours, d)
		}
	}
	steps := *f.steps
	if steps == 0 {
		steps = mmrlDefaultSteps
	}
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s__ppo__%d", mmrlEnv, *f.seed))
	}
	var log io.Writer = stdout
	if *f.quiet {
		log = io.Discard
	}
	fixed := *mf.images == "fixed"
	r, err := profileMM(m, *mf.requests, *mf.histSeed, *mf.factor, *mf.target, *mf.router, fixed)
	if err != nil {
		return err
	}
	r.cfg.Stabilize = *mf.stabilize
	week := *mf.requests
	if week == 0 {
		week = 1_000_000
	}
	fmt.Fprintf(stdout, "%s: ppo on %s, days %v of synthetic weeks of %d requests, %v-hour episodes, %d steps (5-minute periods), penalty %g GPU-hours a missed request, seed %d\n",
		mmrlEnv, m.Name, trainDays, week, *mf.hours, steps, *mf.penalty, *f.seed)
	fmt.Fprintf(stdout, "%s: ModServe's rule (target %g, stabilize %d, router %s, images %s): %s\n", mmrlEnv, *mf.target, *mf.stabilize, *mf.router, *mf.images, r)
	meta, nets, err := trainMMRL(mmrlTraining{model: m, scale: r.cfg, profile: r.p.Profile, initial: r.init, router: *mf.router, requests: *mf.requests,
		histSeed: *mf.histSeed, trainDays: trainDays, testDays: testDays, hours: *mf.hours, penalty: *mf.penalty, steps: steps, seed: *f.seed,
		numEnvs: 4, numSteps: 96, hidden: []int{64, 64}, lr: 3e-4, prior: 2, parallel: true, tests: *f.evalSeeds, log: log, fixed896: fixed})
	if err != nil {
		return err
	}
	if g := meta.MM.Gate; g.Episodes > 0 {
		fmt.Fprintf(stdout, "gate vs %s on %d held-out episodes (cost = GPU-hours + %g x missed requests): mm-rl %.1f GPU-hours at %.4f attainment, the rule %.1f at %.4f; %v\n",
			g.Baseline, g.Episodes, *mf.penalty, g.GPUHours, g.Attainment, g.RuleGPUHours, g.RuleAttainment,
			gate.Verdict{Converged: g.Converged, MeanGain: g.MeanGain, Lower: g.Lower, Episodes: g.Episodes})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := checkpoints.Save(dir, meta, nets); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "checkpoint: %s (converged %v); serve it with drover serve -mm-model %s -mm-policy %s\n", dir, meta.Converged, *mf.model, dir)
	return nil
}

// judgeMMRL is `drover train --env mm-rl --judge DIR`: the saved mm-rl
// checkpoint in dir judged as drover train judged it when it was made: its
// model, ModServe's rule (profile, objective, initial sizes), the training's
// week, router, image sizes, held-out days, hours and penalty, all read
// from its meta.json, on --eval-seeds held-out episodes (default: as many
// as its record), its verdict printed beside the recorded one. Nothing is
// written.
func judgeMMRL(f *trainFlags, mf *trainMMRLFlags, given map[string]bool, stdout io.Writer) error {
	dir := *f.judge
	// runTrainMMRL has refused the flags no mm-rl run takes.
	refused := []string{}
	for _, name := range []string{"algo", "steps", "out", "teacher"} {
		if given[name] {
			refused = append(refused, "--"+name)
		}
	}
	if refused = append(refused, mf.given(given)...); len(refused) > 0 {
		return fmt.Errorf("--judge %s trains nothing and reads its settings from the checkpoint: it does not take %s", dir, refused[0])
	}
	m, nets, err := checkpoints.Load(dir)
	if err != nil {
		return fmt.Errorf("--judge %s: %w", dir, err)
	}
	p, err := serve.NewMMRL(m, nets)
	if err != nil {
		return fmt.Errorf("--judge %s: %w", filepath.Join(dir, checkpoints.MetaFile), err)
	}
	rec := p.Meta
	tr := rec.MM.Training
	tests := rec.MM.Gate.Episodes
	if given["eval-seeds"] || tests == 0 {
		tests = *f.evalSeeds
	}
	if tests < 1 || tests > 1000 {
		return fmt.Errorf("--judge %s --eval-seeds %d: want 1 to 1000 held-out episodes", dir, tests)
	}
	if tr.Router != modserve.RouteOnly && tr.Router != modserve.Name {
		return fmt.Errorf("--judge %s: meta.json: mm.training.router %q: want %s or %s", dir, tr.Router, modserve.RouteOnly, modserve.Name)
	}
	if tr.Images != "drawn" && tr.Images != "fixed896" {
		return fmt.Errorf("--judge %s: meta.json: mm.training.images %q: want drawn or fixed896", dir, tr.Images)
	}
	var log io.Writer = stdout
	if *f.quiet {
		log = io.Discard
	}
	fmt.Fprintf(stdout, "%s: judging %s (%s, seed %d) on %s, days %v of synthetic weeks of %d requests, %v-hour episodes, penalty %g GPU-hours a missed request, %d held-out episodes\n",
		mmrlEnv, dir, rec.Algo, rec.Seed, p.Model.Name, tr.TestDays, cmp.Or(tr.Requests, 1_000_000), tr.Hours, tr.Penalty, tests)
	t := mmrlTraining{model: p.Model, scale: p.Scale, profile: p.Profile, initial: p.Initial, router: tr.Router, requests: tr.Requests,
		histSeed: tr.HistorySeed, trainDays: tr.TrainDays, testDays: tr.TestDays, hours: tr.Hours, penalty: tr.Penalty, seed: rec.Seed,
		tests: tests, log: log, fixed896: tr.Images == "fixed896"}
	if _, err := mmgym.New(t.gymConfig(t.testDays)); err != nil {
		return fmt.Errorf("--judge %s: meta.json: %w", dir, err)
	}
	now := rec
	s := *rec.MM
	now.MM = &s
	now.MM.Gate = checkpoints.MMGate{Baseline: s.Gate.Baseline, Margin: s.Gate.Margin, Confidence: s.Gate.Confidence}
	if err := t.judge(&now, nets); err != nil {
		return err
	}
	for _, c := range []struct {
		what string
		g    checkpoints.MMGate
	}{{"now", now.MM.Gate}, {"recorded in " + filepath.Join(dir, checkpoints.MetaFile), rec.MM.Gate}} {
		g := c.g
		fmt.Fprintf(stdout, "%s: gate vs %s on %d held-out episodes: mm-rl %.1f GPU-hours at %.4f attainment, the rule %.1f at %.4f; %v\n",
			c.what, g.Baseline, g.Episodes, g.GPUHours, g.Attainment, g.RuleGPUHours, g.RuleAttainment,
			gate.Verdict{Converged: g.Converged, MeanGain: g.MeanGain, Lower: g.Lower, Episodes: g.Episodes})
	}
	same := now.MM.Gate == rec.MM.Gate && now.Converged == rec.Converged
	fmt.Fprintf(stdout, "converged %v now, %v recorded (%s)\n", now.Converged, rec.Converged, map[bool]string{true: "the same figures", false: "differs from the record"}[same])
	return nil
}
