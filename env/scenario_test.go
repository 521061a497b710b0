package env_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scenarios")

// TestScenarios runs the scripts in testdata/*.txt. A script is a series of
// cases; a case is command lines, a "----" line, and the expected output up
// to a blank line. Commands:
//
//	cluster nodes=N gpus=G              a homogeneous cluster
//	profile step=S sync=Y epoch=P epochs=E   the envtest.Flat profile
//	model pollux|drover                  the throughput model
//	job NAME gpus=G submit=T duration=D batch=B
//	run policy=NAME interval=I restart=R seed=S
//
// run prints the event log and a summary line. `go test ./env -rewrite`
// regenerates the expected outputs; commit only diffs you understand.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

type scenario struct {
	cluster  env.Cluster
	profile  envtest.Flat
	model    string
	jobs     []env.JobSpec
	hasNodes bool
}

func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := &scenario{model: "drover", profile: envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 1}}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		out.WriteString(line + "\n")
		got, err := sc.exec(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		if i+1 < len(lines) && lines[i+1] == "----" {
			i++
			var want []string
			for i+1 < len(lines) && lines[i+1] != "" {
				i++
				want = append(want, lines[i])
			}
			out.WriteString("----\n" + got)
			if w := strings.Join(want, "\n") + "\n"; !*rewrite && w != got {
				t.Errorf("%s:%d: %s\n--- want\n%s--- got\n%s", path, i+1, line, w, got)
			}
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func args(fields []string) (map[string]string, error) {
	m := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("argument %q: want key=value", f)
		}
		m[k] = v
	}
	return m, nil
}

func num(m map[string]string, k string, def float64) (float64, error) {
	v, ok := m[k]
	if !ok {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return x, nil
}

func (sc *scenario) exec(line string) (string, error) {
	f := strings.Fields(line)
	switch f[0] {
	case "cluster":
		a, err := args(f[1:])
		if err != nil {
			return "", err
		}
		n, err := num(a, "nodes", 1)
		if err != nil {
			return "", err
		}
		g, err := num(a, "gpus", 1)
		if err != nil {
			return "", err
		}
		sc.cluster = env.Homogeneous(int(n), int(g))
	case "profile":
		a, err := args(f[1:])
		if err != nil {
			return "", err
		}
		var p envtest.Flat
		var e float64
		for k, dst := range map[string]*float64{"step": &p.Step, "sync": &p.Sync, "epoch": &p.PerEpoch, "epochs": &e} {
			if *dst, err = num(a, k, 0); err != nil {
				return "", err
			}
		}
		p.Epochs = int(e)
		sc.profile = p
	case "model":
		if len(f) != 2 || (f[1] != "pollux" && f[1] != "drover") {
			return "", fmt.Errorf("model: want pollux or drover")
		}
		sc.model = f[1]
	case "job":
		if len(f) < 2 {
			return "", fmt.Errorf("job: want a name")
		}
		a, err := args(f[2:])
		if err != nil {
			return "", err
		}
		w := envtest.MakeJob(f[1])
		vals := map[string]float64{}
		for _, k := range []string{"gpus", "submit", "duration", "batch"} {
			def := 0.0
			if k == "gpus" {
				def = 1
			}
			if vals[k], err = num(a, k, def); err != nil {
				return "", err
			}
		}
		sc.jobs = append(sc.jobs, w.GPUs(int(vals["gpus"])).Submit(vals["submit"]).Duration(vals["duration"]).Batch(int(vals["batch"])).Obj())
	case "run":
		a, err := args(f[1:])
		if err != nil {
			return "", err
		}
		iv, err := num(a, "interval", 0)
		if err != nil {
			return "", err
		}
		rd, err := num(a, "restart", 0)
		if err != nil {
			return "", err
		}
		seed, err := num(a, "seed", 1)
		if err != nil {
			return "", err
		}
		var m env.Model = &env.Drover{Profiles: envtest.Profiles(sc.profile)}
		if sc.model == "pollux" {
			m = &env.Pollux{Profiles: envtest.Profiles(sc.profile)}
		}
		s, err := env.New(env.Config{Cluster: sc.cluster, Model: m, Interval: iv, RestartDelay: rd, Log: true}, sc.jobs)
		if err != nil {
			return "", err
		}
		p, err := builtin.Registry().New(a["policy"], policies.Config{Seed: uint64(seed)})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if err := s.Run(p, nil); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		w := bufio.NewWriter(&b)
		env.WriteLog(w, s.Events(), s.Jobs())
		w.Flush()
		sum := s.Summary()
		fmt.Fprintf(&b, "avg JCT %.3f, makespan %.3f, util %.4f, restarts %d\n", sum.AvgJCT, sum.Makespan, sum.GPUUtil, sum.Restarts)
		sc.jobs = nil
		return b.String(), nil
	default:
		return "", fmt.Errorf("unknown command %q", f[0])
	}
	return "", nil
}
