package main

import (
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

// The issue-18 reproductions for the simulator and the command line. Each
// runs in well under a second; those that used to hang run under a
// deadline, so that a regression fails instead of hanging.

const tinyJobsHeader = "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib,arch,ps_shards\n"

// writeTemp writes body to name in a fresh directory and returns its path.
func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// droverWithin is drover(t, args...) that fails the test when the command
// has not returned after d (the goroutine is left behind).
func droverWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var o, e strings.Builder
		c := run(args, &o, &e)
		done <- result{c, o.String(), e.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("drover %s: still running after %v", strings.Join(args, " "), d)
	}
	return 0, "", ""
}

// TestSimHugeTimesRefused: a duration of 1e12 s or a submit time of 1e300
// used to make drover sim run for ever; now the file, line and field are
// named.
func TestSimHugeTimesRefused(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"duration 1e12 (jobs)", tinyJobsHeader + "a,0,4,1e12,cifar10,0,,,0,0,ring,0\nb,10,2,100,cifar10,0,,,0,0,ring,0\n", []string{"w.csv:2", "field duration", "at most 1e+08"}},
		{"submit 1e300 (jobs)", tinyJobsHeader + "a,0,4,100,cifar10,0,,,0,0,ring,0\nb,1e300,2,100,cifar10,0,,,0,0,ring,0\n", []string{"w.csv:3", "field submit", "at most 1e+08"}},
		{"duration 1e12 (philly)", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1e12,1,66.0,c\n", []string{"w.csv:2", "field duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeTemp(t, "w.csv", tt.body)
			code, _, errOut := droverWithin(t, testDeadline, "sim", "--quiet", p)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q does not mention %q", errOut, w)
				}
			}
		})
	}
}

// TestSimFarArrivalIsCheap: a job arriving at the bound (1e8 s), long after
// the first has finished, costs its events, not the idle time between
// (the per-worker model's refreshes used to step through it).
func TestSimFarArrivalIsCheap(t *testing.T) {
	p := writeTemp(t, "far.csv", tinyJobsHeader+"a,0,4,100,cifar10,0,,,0,0,ring,0\nb,100000000,2,100,cifar10,0,,,0,0,ring,0\n")
	code, out, errOut := droverWithin(t, testDeadline, "sim", "--quiet", "--profiles", "builtin", p)
	if code != 0 || !strings.Contains(out, "finished   2/2 jobs") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

// TestSimFlagsRefused: values the simulator took silently for others
// (--restart-delay -100 read as the default), or that never ended
// (--interval 0.000001) or exhausted memory (--nodes 100000000), are
// refused with the flag named, before any work.
func TestSimFlagsRefused(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--load", "0"}, "--load 0"},
		{[]string{"--load", "-1"}, "--load -1"},
		{[]string{"--load", "NaN"}, "--load NaN"},
		{[]string{"--restart-delay", "-100"}, "--restart-delay -100"},
		{[]string{"--straggler-threshold", "-5"}, "--straggler-threshold -5"},
		{[]string{"--straggler-threshold", "0"}, "--straggler-threshold 0"},
		{[]string{"--interval", "0.000001", "--model", "pollux"}, "--interval 1e-06"},
		{[]string{"--interval", "-2"}, "--interval -2"},
		{[]string{"--interval", "+Inf"}, "--interval +Inf"},
		{[]string{"--nodes", "100000000"}, "--nodes 100000000"},
		{[]string{"--nodes", "0"}, "--nodes 0"},
		{[]string{"--gpus-per-node", "100000"}, "--gpus-per-node 100000"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := droverWithin(t, testDeadline, append([]string{"sim", "--quiet"}, tt.args...)...)
			if code != 1 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 naming %q", code, errOut, tt.want)
			}
		})
	}
}

// TestPositionalArguments: drover sim FILE used to ignore FILE (and run
// the built-in workload); every command ignored extra arguments. sim FILE
// is now sim --workload FILE, and the others are refused by name.
func TestPositionalArguments(t *testing.T) {
	p := writeTemp(t, "tiny.csv", tinyJobsHeader+"a,0,4,100,cifar10,0,,,0,0,ring,0\nb,10,2,200,ncf,0,,,0,0,ring,0\n")
	strip := func(out string) string { // the wall time differs between runs
		i := strings.Index(out, "wall time")
		if i < 0 {
			return out
		}
		return out[:i]
	}
	_, byFlag, _ := droverWithin(t, testDeadline, "sim", "--quiet", "--workload", p)
	for _, args := range [][]string{{"sim", "--quiet", p}, {"sim", p, "--quiet"}} {
		code, out, errOut := droverWithin(t, testDeadline, args...)
		if code != 0 || !strings.Contains(out, "workload   tiny (2 jobs)") {
			t.Fatalf("drover %v: exit %d: %s%s", args, code, out, errOut)
		}
		if strip(out) != strip(byFlag) {
			t.Errorf("drover %v differs from --workload:\n%s\nwant\n%s", args, out, byFlag)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--quiet", p, "extra.csv"}, `unexpected argument "extra.csv"`},
		{[]string{"sim", "--quiet", "--workload", p, "other.csv"}, `workload given twice`},
		{[]string{"train", "--quiet", "foo", "bar"}, `drover train: unexpected arguments "foo" "bar"`},
		{[]string{"eval", "x"}, `drover eval: unexpected argument "x"`},
		{[]string{"place", "x"}, `drover place: unexpected argument "x"`},
		{[]string{"trace", "synth", "x"}, `drover trace synth: unexpected argument "x"`},
		{[]string{"version", "x"}, `drover version: unexpected argument "x"`},
		{[]string{"trace", "inspect", "builtin", "extra"}, `drover trace inspect: unexpected argument "extra"`},
		{[]string{"trace", "convert", "-o", "x.csv", "builtin", "extra"}, `drover trace convert: unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := droverWithin(t, testDeadline, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

// TestSimProfilesHeader: the run header says which profiles a run used,
// and why (results depend on whether measured profiles sit near the
// workload).
func TestSimProfilesHeader(t *testing.T) {
	p := writeTemp(t, "tiny.csv", tinyJobsHeader+"a,0,4,100,cifar10,0,,,0,0,ring,0\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{p}, "profiles   builtin (fitted) (no measured profiles near the workload"},
		{[]string{"--profiles", "builtin", p}, "profiles   builtin (fitted) (--profiles builtin)"},
	}
	for _, tt := range tests {
		code, out, errOut := droverWithin(t, testDeadline, append([]string{"sim", "--quiet"}, tt.args...)...)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("drover sim %v: exit %d, want %q in:\n%s%s", tt.args, code, tt.want, out, errOut)
		}
	}
	if code, _, errOut := drover(t, "sim", "--quiet", "--profiles", filepath.Join(t.TempDir(), "none"), p); code != 1 || !strings.Contains(errOut, "load profiles") {
		t.Errorf("--profiles of a missing directory: exit %d, %q", code, errOut)
	}
}

// TestHMS: durations past ~9.2e9 s printed negative (time.Duration
// overflow: -2562047h47m16.85s). Checked against hand-worked values and,
// where time.Duration holds the value, against its String.
func TestHMS(t *testing.T) {
	tests := []struct {
		sec  float64
		want string
	}{
		{3469.69, "57m50s"}, // Pollux's published avg JCT for workload-6 (README)
		{1e10, "2777777h46m40s"},
		{-1e10, "-2777777h46m40s"},
		{1e10 + 0.4, "2777777h46m40s"},
		{1e15, "277777777777h46m40s"},
		{0, "0s"},
	}
	for _, tt := range tests {
		if got := hms(tt.sec); got != tt.want {
			t.Errorf("hms(%v) = %q, want %q", tt.sec, got, tt.want)
		}
	}
	f := func(x uint64) bool {
		sec := float64(x % 9e9)
		return hms(sec) == (time.Duration(int64(sec)) * time.Second).String()
	}
	if err := quick.Check(f, &quick.Config{Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

// TestWriteErrorNamesPath: write errors named the temporary file
// (.drover-NNNN), not the path the user asked for.
func TestWriteErrorNamesPath(t *testing.T) {
	dir := t.TempDir()
	failWrite := func(w io.Writer) error { // a write to the temporary file fails, as on a full disk
		f := w.(*os.File)
		f.Close()
		_, err := f.Write([]byte("x"))
		return err
	}
	tests := []struct {
		name  string
		path  string
		write func(io.Writer) error
	}{
		{"missing directory", filepath.Join(dir, "no", "such", "jobs.csv"), func(io.Writer) error { return nil }},
		{"write fails", filepath.Join(dir, "jobs.csv"), failWrite},
		{"rename onto a directory", mkdirWithFile(t, filepath.Join(dir, "taken")), func(io.Writer) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := writeFile(tt.path, tt.write)
			if err == nil || !strings.Contains(err.Error(), tt.path) || strings.Contains(err.Error(), ".drover-") {
				t.Errorf("writeFile = %v, want an error naming %s and not the temporary file", err, tt.path)
			}
		})
	}
	// From the command line.
	out := filepath.Join(dir, "no", "such", "jobs.csv")
	code, _, errOut := droverWithin(t, testDeadline, "sim", "--quiet", "--jobs-out", out, writeTemp(t, "tiny.csv", tinyJobsHeader+"a,0,4,100,cifar10,0,,,0,0,ring,0\n"))
	if code != 1 || !strings.Contains(errOut, "write "+out+":") || strings.Contains(errOut, ".drover-") {
		t.Errorf("--jobs-out into a missing directory: exit %d, %q", code, errOut)
	}
}

// mkdirWithFile makes a non-empty directory at p (a rename cannot replace
// it) and returns p.
func mkdirWithFile(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVersion: drover version and --version did not exist.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, errOut := drover(t, args...)
		if code != 0 || !strings.HasPrefix(out, "drover ") || !strings.Contains(out, "go       "+runtime.Version()) {
			t.Errorf("drover %v: exit %d: %s%s", args, code, out, errOut)
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/drover-sched/drover", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "drover v1.2.3\nmodule   github.com/drover-sched/drover\nrevision abc123 (modified)\ntime     2026-12-01T10:00:00Z\ngo       go1.26.0\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText:\n%s\nwant\n%s", got, want)
	}
	if got := versionText(nil, false); !strings.Contains(got, "no build information") {
		t.Errorf("versionText without build info = %q", got)
	}
}

// TestHelpCommand: drover help sim ignored sim, and drover trace -h failed.
// drover help CMD is now drover CMD -h.
func TestHelpCommand(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want []string // in stdout or stderr
	}{
		{[]string{"help", "sim"}, 0, []string{"usage: drover sim", "-workload", "-straggler-threshold", "-profiles"}},
		{[]string{"sim", "-h"}, 0, []string{"usage: drover sim", "-workload"}},
		{[]string{"trace", "-h"}, 0, []string{"inspect", "convert", "synth"}},
		{[]string{"help", "trace"}, 0, []string{"inspect", "convert", "synth"}},
		{[]string{"help", "trace", "convert"}, 0, []string{"usage: drover trace convert", "-late"}},
		{[]string{"profile", "-h"}, 0, []string{"usage: drover profile fit", "fit"}},
		{[]string{"help", "profile"}, 0, []string{"usage: drover profile fit"}},
		{[]string{"help"}, 0, []string{"version", "help COMMAND"}},
		{[]string{"help", "nope"}, 2, []string{`unknown command "nope"`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := drover(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %s%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// Issue 32: drover serve's numeric flags that were accepted silently (a
// zero or negative value the server replaced with its default, or used
// as is) or panicked after "serving" are refused, naming the flag,
// before anything listens.
func TestServeRefusesBadNumbers(t *testing.T) {
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"poll 0", []string{"-poll", "0"}, "-poll"},
		{"poll negative", []string{"-poll", "-1s"}, "-poll"},
		{"max request bytes 0", []string{"-max-request-bytes", "0"}, "-max-request-bytes"},
		{"shutdown grace negative", []string{"-shutdown-grace", "-1s"}, "-shutdown-grace"},
		{"state every 0", []string{"-state-dir", t.TempDir(), "-state-every", "0"}, "-state-every"},
		{"log seal negative", []string{"-log-seal", "-1s"}, "-log-seal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "-addr", "127.0.0.1:0", "-metrics-addr", ""}, tt.args...)
			code, out, errOut := drover(t, args...)
			if code == 0 || !strings.Contains(errOut, tt.flag) {
				t.Errorf("exit %d, stderr %q: want a refusal naming %s", code, errOut, tt.flag)
			}
			if strings.Contains(out, "serving") {
				t.Errorf("said it serves before refusing:\n%s", out)
			}
		})
	}
}

// Issue 32: forecast eval --window 0 panicked; --folds -1 was accepted
// silently and --folds 1 misled. Each is refused, naming the flag, before
// the trace is read.
func TestForecastRefusesBadNumbers(t *testing.T) {
	for _, tt := range []struct{ flag, value string }{{"--window", "0"}, {"--window", "-3"}, {"--folds", "-1"}, {"--folds", "1"}} {
		code, _, errOut := drover(t, "forecast", "eval", "--trace", "/nonexistent", tt.flag, tt.value)
		if code == 0 || !strings.Contains(errOut, tt.flag+" "+tt.value) {
			t.Errorf("%s %s: exit %d, stderr %q: want a refusal naming the flag", tt.flag, tt.value, code, errOut)
		}
	}
}
