package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// helpArgs runs every command's and subcommand's help: each parses its
// flag set (parse), which is how TestEveryNumericFlagHasARule sees them.
var helpArgs = [][]string{
	{"sim", "-h"}, {"eval", "-h"}, {"train", "-h"}, {"serve", "-h"}, {"place", "-h"}, {"agent", "-h"},
	{"bench", "place", "-h"}, {"bench", "plot", "-h"}, {"bench", "soak", "-h"}, {"calibrate", "-h"}, {"profile", "fit", "-h"},
	{"forecast", "eval", "-h"}, {"forecast", "fit", "-h"},
	{"trace", "inspect", "-h"}, {"trace", "convert", "-h"}, {"trace", "synth", "-h"}, {"version", "-h"},
	{"infer", "sim", "-h"}, {"infer", "eval", "-h"},
}

// absurd is a value out of every numeric flag's range (no count, share,
// time or rate the commands take goes near it), spelled for the flag's
// type.
func absurd(f *flag.Flag) string {
	switch f.Value.(flag.Getter).Get().(type) {
	case time.Duration:
		return "2000000h"
	case float64:
		return "9e18"
	}
	return "9000000000000000000"
}

// TestEveryNumericFlagHasARule: every numeric flag of every command has a
// rule its default passes (parse panics otherwise), and a value out of
// any range (and NaN for a float) is refused by the command's entry
// point with an error that names the flag, for every numeric flag but
// the seeds, which take any value.
func TestEveryNumericFlagHasARule(t *testing.T) {
	sets := map[string]*flag.FlagSet{}
	onParse = func(fs *flag.FlagSet) { sets[fs.Name()] = fs }
	for _, args := range helpArgs {
		if code, _, e := drover(t, args...); code != 0 {
			t.Errorf("drover %s: exit %d: %s", strings.Join(args, " "), code, e)
		}
	}
	onParse = nil
	if len(sets) != len(helpArgs) {
		t.Errorf("%d flag sets parsed, want %d", len(sets), len(helpArgs))
	}
	checked := 0
	for name, fs := range sets {
		cmd := strings.Fields(strings.TrimPrefix(name, "drover "))
		fs.VisitAll(func(f *flag.Flag) {
			if _, numeric := flagNumber(f); !numeric || f.Name == "seed" {
				return
			}
			values := []string{absurd(f)}
			if _, isFloat := f.Value.(flag.Getter).Get().(float64); isFloat {
				values = append(values, "NaN", "-Inf")
			}
			for _, v := range values {
				args := slices.Concat(cmd, []string{"-" + f.Name, v})
				code, out, e := drover(t, args...)
				if want := flagName(fs, f.Name) + " "; code != 1 || !strings.Contains(e, want) || out != "" {
					t.Errorf("drover %s: exit %d, stdout %q, stderr %q; want exit 1 naming %s", strings.Join(args, " "), code, out, e, want)
				}
				checked++
			}
		})
	}
	if checked < 80 {
		t.Errorf("%d bad values checked, want the numeric flags of every command", checked)
	}
}

// TestBadNumbersRefusedBeforeWork: issue 32's bad invocations (item 7)
// are refused by the command's entry point with an error naming the flag,
// before anything runs: no output file is written, nothing printed on
// stdout, no server listens.
func TestBadNumbersRefusedBeforeWork(t *testing.T) {
	tests := []struct {
		name string
		args []string // OUT is replaced by a path that must stay absent, BATCHCSV by a job table
		want string
	}{
		{"sim load 1e6", []string{"sim", "--quiet", "--load", "1e6", "--jobs-out", "OUT"}, "--load 1e+06: want a multiple of the background load in (0, 100]"},
		{"sim format bogus, built-in workload", []string{"sim", "--quiet", "--format", "bogus", "--jobs-out", "OUT"}, `--format "bogus": want auto or one of`},
		{"sim sync local(0)", []string{"sim", "--quiet", "--sync", "local(0)", "--jobs-out", "OUT"}, `--sync: env: sync strategy "local(0)": period must be >= 1`},
		{"sim nodes 0, homogeneous", []string{"sim", "--quiet", "--nodes", "0", "--jobs-out", "OUT"}, "--nodes 0: want 1 to"},
		{"eval restart-delay -1", []string{"eval", "--quiet", "--restart-delay", "-1", "--out", "OUT"}, "--restart-delay -1: want seconds in [0, 1e+08]"},
		{"eval load 1e6", []string{"eval", "--quiet", "--load", "1e6", "--out", "OUT"}, "--load 1e+06"},
		{"serve gate-window 0", []string{"serve", "-gate-window", "0"}, "-gate-window 0: want 2 to"},
		{"serve gate-margin -1", []string{"serve", "-gate-margin", "-1"}, "-gate-margin -1: want a relative gain in (0, 1)"},
		{"serve gate-margin below the back margin", []string{"serve", "-gate-margin", "0.01", "-gate-back-margin", "0.05"}, "-gate-back-margin 0.05: want below -gate-margin (0.01)"},
		{"serve gate-min-arrivals above the window", []string{"serve", "-gate-min-arrivals", "500"}, "-gate-min-arrivals 500: want at most -gate-window (200)"},
		{"serve gate-every 0", []string{"serve", "-gate-every", "0"}, "-gate-every 0"},
		{"serve poll 0", []string{"serve", "-poll", "0"}, "-poll 0s: want a positive interval"},
		{"serve poll -1s", []string{"serve", "-poll", "-1s"}, "-poll -1s"},
		{"serve shutdown-grace -1s", []string{"serve", "-shutdown-grace", "-1s"}, "-shutdown-grace -1s"},
		{"serve max-request-bytes 0", []string{"serve", "-max-request-bytes", "0"}, "-max-request-bytes 0"},
		{"serve state-every 0", []string{"serve", "-state-dir", "OUT", "-state-every", "0"}, "-state-every 0s"},
		{"agent nic-gbps NaN", []string{"agent", "-nic-gbps", "NaN", "-server", "127.0.0.1:1", "-iter-addr", ""}, "-nic-gbps NaN: want a bandwidth"},
		{"agent interval 0", []string{"agent", "-interval", "0", "-server", "127.0.0.1:1", "-iter-addr", ""}, "-interval 0s"},
		{"forecast eval window 0", []string{"forecast", "eval", "--window", "0"}, "--window 0: want 1 sample or more"},
		{"forecast eval folds -1", []string{"forecast", "eval", "--folds", "-1"}, "--folds -1"},
		{"forecast eval folds 1", []string{"forecast", "eval", "--folds", "1"}, "--folds 1: want 0 (off) or 2 or more"},
		{"forecast fit split 1", []string{"forecast", "fit", "--split", "1", "-o", "OUT"}, "--split 1: want a share in (0, 1)"},
		{"trace synth load Inf", []string{"trace", "synth", "-jobs", "10", "-nodes", "2", "-load", "Inf", "-o", "OUT"}, "-load +Inf"},
		{"trace convert offered-load -1", []string{"trace", "convert", "-late", "0.5", "-offered-load", "-1", "-gpus", "8", "-o", "OUT", "builtin"}, "-offered-load -1"},
		{"trace inspect format bogus", []string{"trace", "inspect", "-format", "bogus", "builtin"}, `-format "bogus"`},
		{"train eval-seeds -1", []string{"train", "--eval-seeds", "-1", "--out", "OUT"}, "--eval-seeds -1: want 0 to 1000"},
		{"place util NaN", []string{"place", "-util", "NaN"}, "-util NaN: want a share in [0, 1]"},
		{"bench rate 0", []string{"bench", "place", "-rate", "0", "-addr", "127.0.0.1:1"}, "-rate 0: want a positive rate"},
		{"bench timeout 0", []string{"bench", "place", "-timeout", "0", "-addr", "127.0.0.1:1"}, "-timeout 0s"},
		{"batch 99999999999999 with a duration", []string{"sim", "--quiet", "--jobs-out", "OUT", "BATCHCSV"}, "w.csv:2: field batch_size: datasets: beyond the bound: 99999999999999, want at most 16777216"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := slices.Clone(tt.args)
			for i, a := range args {
				switch a {
				case "OUT":
					args[i] = out
				case "BATCHCSV":
					args[i] = writeTemp(t, "w.csv", tinyJobsHeader+"a,0,4,3600,cifar10,99999999999999,,,0,0,ring,0\n")
				}
			}
			code, stdout, stderr := droverWithin(t, testDeadline, args...)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q: something ran", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written (stat: %v): something ran", out, err)
			}
		})
	}
}

// TestTraceInspectWarns: drover trace inspect printed a job of
// 1,099,511,627,776 GPUs (a Parquet row) in its figures without a word
// (issue 32, item 7); it now warns on stderr, naming the job, about GPU
// counts beyond any real cluster and durations beyond a year, the first
// ten by name and the rest counted, and prints its figures as before.
func TestTraceInspectWarns(t *testing.T) {
	w := &datasets.Workload{Name: "w", Jobs: []datasets.Job{
		{Name: "ok", Submit: 0, GPUs: 8, Duration: 3600, Model: "cifar10"},
		{Name: "huge", Submit: 1, GPUs: 1 << 40, Duration: 3600, Model: "cifar10"},
		{Name: "long", Submit: 2, GPUs: 1, Duration: 2 * plausibleSeconds, Model: "cifar10"},
	}}
	var b strings.Builder
	if err := datasets.WriteParquet(&b, w); err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, "w.parquet", b.String())
	code, out, errOut := drover(t, "trace", "inspect", p)
	if code != 0 || !strings.Contains(out, "jobs") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		`warning: job "huge": 1099511627776 GPUs, more than any real cluster (262144)`,
		`warning: job "long": a duration of 6.307e+07 s (730 days), more than a year`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, `"ok"`) {
		t.Errorf("warned about a plausible job:\n%s", errOut)
	}
	if _, _, errOut := drover(t, "trace", "inspect", "builtin"); errOut != "" {
		t.Errorf("warnings on the built-in workload: %s", errOut)
	}
	many := &datasets.Workload{}
	for i := range 13 {
		many.Jobs = append(many.Jobs, datasets.Job{Name: fmt.Sprint(i), GPUs: 1 << 20})
	}
	if got := implausible(many, maxWarnings); len(got) != 11 || got[10] != "3 more jobs with implausible values" {
		t.Errorf("13 implausible jobs: %q", got)
	}
}

// TestForecastFitSays: drover forecast fit printed nothing at all (issue
// 32, item 7); it says what it fitted and where it wrote it: on stdout
// with -o FILE, on stderr with -o - (stdout holds the model alone).
func TestForecastFitSays(t *testing.T) {
	path := sharedtraces.Path(t, "alibaba_v2018", "machine_usage.csv.gz")
	out := filepath.Join(t.TempDir(), "model.json")
	code, stdout, stderr := drover(t, "forecast", "fit", "--trace", path, "--split", "0.02", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"fitted the forecaster on " + path + ": 16 machines, the first 2% of each one's time", "horizon 12 steps, window 64", "to " + out + "\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forecast.Decode(b); err != nil {
		t.Errorf("%s: %v", out, err)
	}
	code, stdout, stderr = drover(t, "forecast", "fit", "--trace", path, "--split", "0.02")
	if _, err := forecast.Decode([]byte(stdout)); code != 0 || err != nil {
		t.Errorf("-o -: exit %d, stdout not the model alone: %v", code, err)
	}
	if !strings.Contains(stderr, "16 machines") || !strings.Contains(stderr, "to stdout") {
		t.Errorf("-o -: stderr lacks the summary:\n%s", stderr)
	}
}
