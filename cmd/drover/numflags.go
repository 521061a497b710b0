package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/serve/state"
	"github.com/drover-sched/drover/train"
)

// Every numeric flag of every command is checked where it is parsed
// (parse, before the command does anything), against one rule per flag
// name: --restart-delay means the same in drover sim and drover eval, so
// it accepts the same values in both. A flag name that means something
// else in one command (drover agent's -interval is a sampling period,
// drover sim's --interval a scheduling interval in seconds) has that
// command's own rule in cmdNumRules. parse panics on a numeric flag with
// no rule (TestEveryNumericFlagHasARule runs every command's -h), so a new
// flag cannot skip the check. NaN and ±Inf are refused for every flag.
// Rules that relate two flags (-free at most -gpus, -gate-window at least
// -gate-min-arrivals) stay with their command, after parse.

// numRule is what a numeric flag accepts: ok on its value (a duration in
// seconds) and the words that say it in the error.
type numRule struct {
	ok   func(x float64) bool
	want string
}

// within is a rule for values in [lo, hi].
func within(lo, hi float64, want string) numRule {
	return numRule{func(x float64) bool { return x >= lo && x <= hi }, want}
}

// above is a rule for values greater than lo and at most hi.
func above(lo, hi float64, want string) numRule {
	return numRule{func(x float64) bool { return x > lo && x <= hi }, want}
}

// anyNumber is the rule of a seed: every value is one.
var anyNumber = numRule{func(float64) bool { return true }, "any number"}

// Bounds of the rules that no library states.
const (
	// maxDuration bounds the client and server durations (timeouts,
	// polls, grace periods): a day is longer than any of them needs, and a
	// larger value is a typo (-timeout 5000h for 5000ms).
	maxDuration = 24 * 3600
	// maxCount bounds counts of things a command holds in memory or runs
	// at once (connections, in-flight slots, simulations at a time, plot
	// bins, requests in flight, buffered messages): a million is past any
	// machine's use and keeps a typo from an out-of-memory exit.
	maxCount = 1 << 20
	// maxNICGbps bounds -nic-gbps: 100 Tbit/s, over a hundred times the
	// fastest NIC sold (800 Gbit/s); a larger value is a unit mistake.
	maxNICGbps = 1e5
	// maxRequestBytes bounds -max-request-bytes: gRPC's own limit is an
	// int32, and a request of 1 GiB is already far past any real one
	// (4,096 nodes x 4,096 workers is 293 KB).
	maxRequestBytes = 1 << 30
	// maxWork bounds -max-work: the largest request serve.DefaultLimits
	// lets through (4,096 nodes x 4,096 workers), past which the bound
	// bounds nothing.
	maxWork = 1 << 24
	// maxIterationTimes bounds -live-max-iteration-times: 2^28 times are
	// 2 GiB.
	maxIterationTimes = 1 << 28
	// maxMemLimitMiB bounds -memlimit-mib: 1 PiB, so that MiB << 20
	// cannot overflow.
	maxMemLimitMiB = 1 << 30
)

// numRules are the rules by flag name, the same in every command that has
// the flag.
var numRules = map[string]numRule{
	// The simulation flags of drover sim and eval (and train, trace).
	"seed":                anyNumber,
	"image-seed":          anyNumber,
	"nodes":               within(0, env.MaxNodes, fmt.Sprintf("1 to %d nodes (0: all of a node list's)", env.MaxNodes)),
	"gpus-per-node":       within(1, env.MaxGPUsPerNode, fmt.Sprintf("1 to %d GPUs", env.MaxGPUsPerNode)),
	"interval":            {func(x float64) bool { return x == 0 || x == -1 || x >= env.MinInterval && x <= env.MaxTime }, fmt.Sprintf("0 (decide at every arrival and completion), -1 (the model's default) or %g to %g s", float64(env.MinInterval), float64(env.MaxTime))},
	"restart-delay":       within(0, env.MaxTime, fmt.Sprintf("seconds in [0, %g]", float64(env.MaxTime))),
	"load":                above(0, train.MaxLoad, fmt.Sprintf("a multiple of the background load in (0, %d]: utilisation is capped at 1, so at %d every node busy above 1%% is already saturated and more changes nothing (1 = as fitted; --background none for no load)", train.MaxLoad, train.MaxLoad)),
	"straggler-threshold": above(0, 100, "a fraction in (0, 100] (0.2: 20% slower than the job's median)"),
	"ps-share":            {func(x float64) bool { return x == -1 || x >= 0 && x <= 1 }, "a share in [0, 1], or -1 for the format's default"},
	"parallel":            within(0, maxCount, fmt.Sprintf("0 (GOMAXPROCS) to %d simulations at a time", maxCount)),
	"bins":                within(1, maxCount, fmt.Sprintf("1 or more time bins, at most %d", maxCount)),
	"steps":               within(0, train.MaxSteps, fmt.Sprintf("1 to %d (leave the flag out for the env's default)", train.MaxSteps)),
	"eval-seeds":          within(0, train.MaxEvalSeeds, fmt.Sprintf("0 to %d", train.MaxEvalSeeds)),
	// drover forecast.
	"split":       {func(x float64) bool { return x > 0 && x < 1 }, "a share in (0, 1)"},
	"horizon":     within(1, maxCount, "1 or more steps"),
	"min-history": within(1, maxCount, "1 or more samples"),
	"folds":       {func(x float64) bool { return x == 0 || x >= 2 && x <= maxCount }, "0 (off) or 2 or more (one fold would hold every machine out of its own fit)"},
	"window":      within(1, maxCount, "1 sample or more"),
	// drover trace convert.
	"late":         {func(x float64) bool { return x == 0 || x > 0 && x < 1 }, "0 (off) or a share in (0, 1)"},
	"offered-load": within(0, train.MaxLoad, fmt.Sprintf("a load in (0, %d] (0: off)", train.MaxLoad)),
	// The clients: drover place, bench, agent.
	"timeout":     above(0, maxDuration, "a positive deadline, at most a day"),
	"duration":    within(0, env.MaxTime, fmt.Sprintf("0 to %g s", float64(env.MaxTime))),
	"rate":        above(0, 1e9, "a positive rate, at most 1e9 per second"),
	"n":           within(0, math.MaxInt32, "0 (rate x duration) or more requests"),
	"conns":       within(1, maxCount, fmt.Sprintf("1 to %d connections", maxCount)),
	"concurrency": within(1, maxCount, fmt.Sprintf("1 to %d in-flight slots", maxCount)),
	"warmup":      within(0, maxDuration, "0 or more, at most a day"),
	"server-pid":  within(0, math.MaxInt32, "a process id (0: none)"),
	"workers":     within(1, state.MaxWorker, fmt.Sprintf("1 to %d workers", state.MaxWorker)),
	"ps":          within(0, state.MaxWorker, fmt.Sprintf("0 to %d parameter servers", state.MaxWorker)),
	"free":        within(-1, env.MaxGPUsPerNode, "0 or more free GPUs, or -1 for all"),
	"rack-size":   within(1, env.MaxNodes, "1 or more nodes per rack"),
	"util":        within(0, 1, "a share in [0, 1]"),
	"rack":        within(-1, math.MaxInt32, "a rack index, or -1 for unknown"),
	"nic-gbps":    within(0, maxNICGbps, fmt.Sprintf("a bandwidth in [0, %g] Gbit/s (0: unknown)", float64(maxNICGbps))),
	"buffer":      within(1, maxCount, fmt.Sprintf("1 to %d messages", maxCount)),
	// drover serve.
	"gogc":              {func(x float64) bool { return x == -1 || x >= 1 && x <= maxCount }, "a percentage of 1 or more, or -1 for off"},
	"memlimit-mib":      within(0, maxMemLimitMiB, "0 (no limit) or more MiB"),
	"canary":            {func(x float64) bool { return x >= 0 && x < 1 }, "a share in [0, 1)"},
	"promote-after":     within(0, math.MaxInt32, "0 (never) or more answers"),
	"deadline-margin":   within(0, maxDuration, "0 or more, at most a day"),
	"model-timeout":     above(0, maxDuration, "a positive time limit, at most a day"),
	"poll":              above(0, maxDuration, "a positive interval, at most a day"),
	"max-request-bytes": above(0, maxRequestBytes, fmt.Sprintf("a positive size, at most %d bytes", maxRequestBytes)),
	"shed-above":        within(0, maxCount, fmt.Sprintf("0 (off) to %d requests", maxCount)),
	"max-inflight":      within(0, maxCount, fmt.Sprintf("0 (off) to %d requests", maxCount)),
	"log-seal":          within(0, maxDuration, "0 or more, at most a day"),
	"gate-every":        {func(x float64) bool { return x != 0 && x <= maxCount }, "a positive count of arrivals, or negative for never by count (0 would mean the default, 100)"},
	"gate-interval":     within(0, maxDuration, "0 (never by time) or more, at most a day"),
	"gate-min-arrivals": within(2, maxCount, fmt.Sprintf("2 to %d arrivals (0 would mean the default, 30)", maxCount)),
	"gate-window":       within(2, maxCount, fmt.Sprintf("2 to %d arrivals (0 would mean the default, 200)", maxCount)),
	"gate-seeds":        within(2, 1000, "2 to 1000 seeds, one paired episode each (0 would mean the default, 8)"),
	"gate-margin":       {func(x float64) bool { return x > 0 && x < 1 }, "a relative gain in (0, 1) (0 would mean the default, 0.02)"},
	"gate-back-margin":  {func(x float64) bool { return x < 1 }, "a relative gain below 1 (and below -gate-margin)"},
	"state-every":       above(0, maxDuration, "a positive interval, at most a day"),
	"stale-after":       above(0, maxDuration, "a positive time, at most a day"),
	"shutdown-grace":    within(0, maxDuration, "0 or more, at most a day"),
	"mm-requests":       within(0, 1<<27, "0 (the trace's 1,000,000) to 2^27 requests a week"),
	"mm-history-seed":   anyNumber,
	"mm-factor":         within(1, 1e3, "an SLO factor, 1 to 1000"),
	"mm-target":         {func(x float64) bool { return x > 0 && x <= mmscale.MaxTarget }, fmt.Sprintf("a share of capacity in (0, %v]", mmscale.MaxTarget)},
	"mm-stabilize":      within(1, 1<<10, "1 to 1024 periods"),
	"mm-penalty":        within(0, 1e6, "GPU-hours a missed request, 0 to 1e6"),
	"mm-hours":          within(1, 24, "an episode of 1 to 24 hours"),
	"mm-gate-hours":     above(0, 24*7, "a positive window, at most a week of hours"),
	"mm-gate-every":     within(1, maxCount, fmt.Sprintf("1 to %d period-end calls", maxCount)),
	// drover serve's bounds on one request's work and on the live state
	// (serve.Limits.MaxWork, state.Config).
	"max-work":                 within(1, maxWork, fmt.Sprintf("1 to %d (nodes x workers)", maxWork)),
	"live-max-nodes":           within(1, maxCount, fmt.Sprintf("1 to %d nodes", maxCount)),
	"live-max-jobs":            within(1, maxCount, fmt.Sprintf("1 to %d jobs", maxCount)),
	"live-max-jobs-per-node":   within(1, maxCount, fmt.Sprintf("1 to %d jobs", maxCount)),
	"live-max-job-workers":     within(1, maxCount, fmt.Sprintf("1 to %d workers", maxCount)),
	"live-max-iteration-times": within(1, maxIterationTimes, fmt.Sprintf("1 to %d iteration times", maxIterationTimes)),
	"max-conns-per-peer":       {func(x float64) bool { return x <= maxCount }, fmt.Sprintf("at most %d connections (0: each listener's default; negative: no per-peer limit)", maxCount)},
}

// cmdNumRules are the rules of the flags whose name means something else
// in one command, by flag set name and flag name.
var cmdNumRules = map[string]map[string]numRule{
	"drover agent": {
		"interval": above(0, maxDuration, "a positive sampling interval, at most a day"),
		"gpus":     within(0, state.MaxGPUs, fmt.Sprintf("0 (as NVML finds) to %d GPUs, the server's limit", state.MaxGPUs)),
	},
	"drover place": {
		"gpus": within(1, env.MaxGPUsPerNode, fmt.Sprintf("1 to %d GPUs per node", env.MaxGPUsPerNode)),
	},
	"drover bench place": {
		// A length of run, not a job's expected run time as drover
		// place's -duration.
		"duration": within(0, maxDuration, "0 or more (with -n), at most a day"),
	},
	"drover bench soak":    soakNumRules,
	"drover infer sim":     inferNumRules,
	"drover infer eval":    inferNumRules,
	"drover infer mmscale": mmscaleNumRules,
	"drover eval routes":   inferNumRules, // drover eval --log ROUTES.jsonl (evalroute.go)
	"drover trace convert": {
		"gpus": within(0, env.MaxNodes*env.MaxGPUsPerNode, "0 or more GPUs"),
	},
	"drover trace synth": {
		"nodes": within(0, env.MaxNodes, fmt.Sprintf("0 (Philly's own rate) to %d nodes", env.MaxNodes)),
		// GenerateScaled keeps 24 bytes a job: 1e8 jobs are 2.4 GB.
		"jobs":     within(0, 1e8, "0 (the default workload) to 1e8 jobs"),
		"load":     above(0, train.MaxLoad, fmt.Sprintf("a load in (0, %d] (above 1 the cluster is overloaded)", train.MaxLoad)),
		"ps-share": within(0, 1, "a share in [0, 1]"),
	},
	"drover train": {
		// A learned policy's cluster: its observation has a row per
		// node and a column per GPU (train.MaxNodes, MaxGPUsPerNode).
		"nodes":         within(1, train.MaxNodes, fmt.Sprintf("1 to %d", train.MaxNodes)),
		"gpus-per-node": within(1, train.MaxGPUsPerNode, fmt.Sprintf("1 to %d", train.MaxGPUsPerNode)),
	},
}

// ruleFor returns the rule of flag name in the flag set named set.
func ruleFor(set, name string) (numRule, bool) {
	if r, ok := cmdNumRules[set][name]; ok {
		return r, true
	}
	r, ok := numRules[name]
	return r, ok
}

// flagNumber returns a numeric flag's value (a duration in seconds), and
// false for a flag that is not numeric.
func flagNumber(f *flag.Flag) (float64, bool) {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return 0, false
	}
	switch v := g.Get().(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	case time.Duration:
		return v.Seconds(), true
	}
	return 0, false
}

// doubleDash are the commands whose help and errors spell flags --name.
var doubleDash = map[string]bool{"drover sim": true, "drover eval": true, "drover train": true,
	"drover infer sim": true, "drover infer eval": true,
	"drover forecast eval": true, "drover forecast fit": true, "drover calibrate": true}

// flagName is the flag as fs's command spells it in errors: --name or
// -name.
func flagName(fs *flag.FlagSet, name string) string {
	if doubleDash[fs.Name()] {
		return "--" + name
	}
	return "-" + name
}

// onParse, when not nil, is called with every flag set parse is given
// (TestEveryNumericFlagHasARule collects the commands' flag sets).
var onParse func(fs *flag.FlagSet)

// mustHaveRules panics when a numeric flag of fs has no rule, or a
// default its rule refuses: a programmer's mistake, caught by any run of
// the command (its -h too).
func mustHaveRules(fs *flag.FlagSet) {
	if onParse != nil {
		onParse(fs)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, numeric := flagNumber(f); numeric {
			if _, ok := ruleFor(fs.Name(), f.Name); !ok {
				panic(fmt.Sprintf("drover: numeric flag -%s of %s has no rule in numRules", f.Name, fs.Name()))
			}
		}
	})
	if err := checkNumbers(fs); err != nil {
		panic(fmt.Sprintf("drover: %s: a default breaks its rule: %v", fs.Name(), err))
	}
}

// checkNumbers checks every numeric flag of fs, given or not, against its
// rule and returns an error naming the first bad one, its value as given
// and what it wants.
func checkNumbers(fs *flag.FlagSet) error {
	var bad []string
	fs.VisitAll(func(f *flag.Flag) {
		x, numeric := flagNumber(f)
		if !numeric {
			return
		}
		r, _ := ruleFor(fs.Name(), f.Name)
		if math.IsNaN(x) || math.IsInf(x, 0) || !r.ok(x) {
			bad = append(bad, fmt.Sprintf("%s %s: want %s", flagName(fs, f.Name), f.Value.String(), r.want))
		}
	})
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(bad, "; "))
}

// checkModelFlags checks what drover sim and eval share beyond each
// flag's own rule, before the workload is read: --nodes 0 only with a
// node list (a homogeneous cluster needs a count), the names of --model,
// --mitigation, --regime and --format (a bogus --format was taken
// silently with the built-in workload, which ignores it), --sync's
// strategy and its parameter (drover sim read it after the workload), and
// --convergence's band (sweep only in drover eval).
func checkModelFlags(fs *flag.FlagSet, nodes int, cluster, model, mitigation, regime, format, sync string) error {
	if nodes == 0 && (cluster == "homogeneous" || cluster == "") {
		return fmt.Errorf("%s 0: want 1 to %d nodes (0: all of a node list's, with %s)", flagName(fs, "nodes"), env.MaxNodes, flagName(fs, "cluster"))
	}
	switch model {
	case "auto", trace.ModelPollux, trace.ModelDrover:
	default:
		return fmt.Errorf("%s %q: want %s, %s or auto", flagName(fs, "model"), model, trace.ModelPollux, trace.ModelDrover)
	}
	switch mitigation {
	case "", env.MitigationNone, env.MitigationSTRET, env.MitigationReplace, env.MitigationLBBSP:
	default:
		return fmt.Errorf("%s %q: want %s, %s, %s or %s", flagName(fs, "mitigation"), mitigation, env.MitigationNone, env.MitigationSTRET, env.MitigationReplace, env.MitigationLBBSP)
	}
	if _, err := trace.ParseRegime(regime); err != nil {
		return fmt.Errorf("%s: %w", flagName(fs, "regime"), err)
	}
	if _, err := env.ParseSync(sync); err != nil {
		return fmt.Errorf("%s: %w", flagName(fs, "sync"), err)
	}
	if c := fs.Lookup("convergence"); c != nil {
		if _, err := convergenceBands(fs, c.Value.String(), fs.Name() == "drover eval"); err != nil {
			return err
		}
	}
	return checkFormat(fs, format)
}

// checkFormat checks a workload --format name, whatever the workload (the
// built-in one ignores it).
func checkFormat(fs *flag.FlagSet, format string) error {
	if f := datasets.Format(format); f != "" && f != datasets.FormatAuto && !slices.Contains(datasets.Formats, f) {
		return fmt.Errorf("%s %q: want auto or one of %v", flagName(fs, "format"), format, datasets.Formats)
	}
	return nil
}
