package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env/placement"
	"github.com/google/go-cmp/cmp"
)

// tinyJobs is a 12-job table (docs/format/jobs.md) of multi-GPU jobs, so
// that workers straggle on a 4 x 4 cluster.
const tinyJobs = `name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib
a,0,4,600,cifar10,0,,,0,0
b,10,2,900,ncf,0,,,0,0
c,20,8,1200,imagenet,0,,,0,0
d,30,4,300,bert,0,,,0,0
e,60,2,1500,deepspeech2,0,,,0,0
f,90,4,800,yolov3,0,,,0,0
g,120,8,400,cifar10,0,,,0,0
h,150,2,700,ncf,0,,,0,0
i,200,4,1000,bert,0,,,0,0
j,260,2,500,cifar10,0,,,0,0
k,300,8,900,imagenet,0,,,0,0
l,360,4,600,deepspeech2,0,,,0,0
`

func TestEval(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "first-fit,strn", "--seeds", "1-2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"workload   tiny (12 jobs)", "seeds      1-2 (2)", "| first-fit | ", "| strn | ", " ± ", "4 simulations"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, name := range []string{"jct_cdf.png", "stragglers.png"} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(stdout, string(table)) {
		t.Errorf("table.md (%v) is not the printed table:\n%s", err, table)
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Seeds    []uint64 `json:"seeds"`
		Policies []struct {
			Name string `json:"name"`
			Runs []struct {
				Finished int `json:"finished"`
			} `json:"runs"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Seeds) != 2 || len(sum.Policies) != 2 || sum.Policies[1].Name != "strn" || sum.Policies[1].Runs[1].Finished != 12 {
		t.Errorf("summary.json: %s", data)
	}
}

// drover eval times every policy's decisions: the table's last column is
// the wall time per decision in µs, the JSON has it per policy and the
// Schedule calls, decisions and time per run, and the output says whether
// the timings are clean (--parallel 1) or not.
func TestEvalDecisionTime(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		parallel string
		note     string
	}{
		{"1", "clean: one simulation at a time"},
		{"2", "2 simulations at a time share the CPUs"},
	} {
		t.Run("parallel="+tt.parallel, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
				"--policies", "first-fit,strn", "--seeds", "1-2", "--parallel", tt.parallel, "--out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "| finished | decision time (µs) |\n") || strings.Count(stdout, tt.note) != 2 {
				t.Errorf("output lacks the decision-time column or the note %q (header and footer):\n%s", tt.note, stdout)
			}
			// Each policy's row ends in a time: a positive number ± its half-width.
			for _, name := range []string{"first-fit", "strn"} {
				i := strings.Index(stdout, "| "+name+" | ")
				row := stdout[i : i+strings.Index(stdout[i:], "\n")]
				cells := strings.Split(strings.Trim(row, "| "), " | ")
				mean, _, _ := strings.Cut(cells[len(cells)-1], " ± ")
				if x, err := strconv.ParseFloat(mean, 64); err != nil || !(x > 0) || len(cells) != 11 {
					t.Errorf("%s: %d cells, decision time %q (%v): %s", name, len(cells), mean, err, row)
				}
			}
			data, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Policies []struct {
					Name         string `json:"name"`
					DecisionTime *struct {
						Mean float64
						N    int
					} `json:"decision_time_us"`
					Runs []struct {
						Finished  int      `json:"finished"`
						Calls     int      `json:"schedule_calls"`
						Decisions int      `json:"decisions"`
						Time      *float64 `json:"schedule_time_s"`
					} `json:"runs"`
				} `json:"policies"`
			}
			if err := json.Unmarshal(data, &sum); err != nil {
				t.Fatal(err)
			}
			for _, p := range sum.Policies {
				if p.DecisionTime == nil || !(p.DecisionTime.Mean > 0) || p.DecisionTime.N != 2 {
					t.Errorf("%s: decision_time_us %+v", p.Name, p.DecisionTime)
				}
				for _, r := range p.Runs {
					// Every finished job was placed at least once.
					if r.Decisions < r.Finished || r.Calls < 1 || r.Time == nil || !(*r.Time > 0) {
						t.Errorf("%s: run %+v", p.Name, r)
					}
				}
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown policy", []string{"--policies", "first-fit,nope"}, 1, `"nope"`},
		{"missing checkpoint", []string{"--policies", "runs/ppo/ckpt"}, 1, "runs/ppo/ckpt/meta.json"},
		{"placement checkpoint", []string{"--policies", "DEFAULT"}, 1, `env "placement" with 3 actions cannot be replayed`},
		{"bad seeds", []string{"--seeds", "5-1"}, 1, `--seeds: "5-1"`},
		{"bad flag", []string{"--nope"}, 2, ""},
		{"empty log", []string{"--log", "DIR"}, 1, "no records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"eval", "--quiet", "--out", t.TempDir()}, tt.args...)
			for i, a := range args {
				switch a {
				case "DIR":
					args[i] = t.TempDir()
				case "DEFAULT":
					args[i] = t.TempDir()
					m, w := checkpoints.DefaultFiles()
					os.WriteFile(filepath.Join(args[i], checkpoints.MetaFile), m, 0o644)
					os.WriteFile(filepath.Join(args[i], checkpoints.WeightsFile), w, 0o644)
				}
			}
			code, _, stderr := drover(t, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestEvalFlagsCheckedFirst (issue 18): a bad flag fails drover eval
// before anything runs, with an error naming the flag. --bins 0 used to
// fail only after every simulation, when the stragglers plot was drawn.
// Nothing printed and no output directory show that no workload was
// loaded and no simulation ran; with --log, the bad flag is reported
// before the (empty) log is read.
func TestEvalFlagsCheckedFirst(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bins 0", []string{"--bins", "0"}, "--bins 0: want 1 or more"},
		{"bins negative", []string{"--bins", "-1"}, "--bins -1"},
		{"parallel negative", []string{"--parallel", "-2"}, "--parallel -2"},
		{"nodes 0", []string{"--nodes", "0"}, "--nodes 0"},
		{"gpus per node 0", []string{"--gpus-per-node", "0"}, "--gpus-per-node 0"},
		{"interval NaN", []string{"--interval", "NaN"}, "--interval NaN"},
		{"interval below a second", []string{"--interval", "0.5"}, "--interval 0.5"},
		{"gpus per node too many", []string{"--gpus-per-node", "2000"}, "--gpus-per-node 2000"},
		{"restart delay Inf", []string{"--restart-delay", "Inf"}, "--restart-delay +Inf"},
		{"load 0", []string{"--load", "0"}, "--load 0"},
		{"threshold negative", []string{"--straggler-threshold", "-0.1"}, "--straggler-threshold -0.1"},
		{"model", []string{"--model", "nope"}, `--model "nope"`},
		{"mitigation", []string{"--mitigation", "nope"}, `--mitigation "nope"`},
		{"regime", []string{"--regime", "nope"}, "--regime: "},
		{"format", []string{"--format", "nope"}, `--format "nope"`},
		{"ps share", []string{"--ps-share", "2"}, "--ps-share 2: want"},
		{"sync", []string{"--sync", "nope"}, "--sync: "},
		{"policies", []string{"--policies", "first-fit,nope"}, `--policies: policies: unknown policy "nope"`},
		{"policies empty", []string{"--policies", ","}, "--policies: empty list"},
		{"seeds", []string{"--seeds", "2,2"}, "--seeds: seed 2 listed twice"},
		{"log replay bins 0", []string{"--log", "DIR", "--policies", "strn", "--bins", "0"}, "--bins 0"},
		{"log replay seeds", []string{"--log", "DIR", "--policies", "strn", "--seeds", "x"}, "--seeds: "},
		{"log replay policies", []string{"--log", "DIR", "--policies", "nope"}, `--policies: policies: unknown policy "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"eval", "--quiet", "--out", out, "--policies", "first-fit", "--seeds", "1"}, tt.args...)
			for i, a := range args {
				if a == "DIR" {
					args[i] = t.TempDir()
				}
			}
			code, stdout, stderr := drover(t, args...)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 mentioning %q", code, stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("printed before failing (a workload was loaded):\n%s", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created: the flag was checked too late", out)
			}
		})
	}
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		in   string
		want []uint64
		ok   bool
	}{
		{"1-5", []uint64{1, 2, 3, 4, 5}, true},
		{"7", []uint64{7}, true},
		{"1,3, 7-9", []uint64{1, 3, 7, 8, 9}, true},
		{"0-0", []uint64{0}, true},
		{"", nil, false},
		{"1,1", nil, false},
		{"3-1", nil, false},
		{"a", nil, false},
		{"-3", nil, false},
		{"1-100000", nil, false},
	}
	for _, tt := range tests {
		got, err := parseSeeds(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("parseSeeds(%q): error %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseSeeds(%q) (-want,+got):\n%s", tt.in, diff)
		}
	}
}

func TestEvalLog(t *testing.T) {
	dir := t.TempDir()
	w, err := declog.NewWriter(dir, declog.WithClock(func() time.Time { return time.Unix(1e9, 0) }), declog.WithMaxRecords(3))
	if err != nil {
		t.Fatal(err)
	}
	w.Append(
		declog.Decision{JobID: "a", Source: "learned@v2", Latency: 120 * time.Microsecond}.Record(),
		declog.Decision{JobID: "b", Source: "heuristic:strn", Fallback: "deadline", Latency: 2 * time.Millisecond}.Record(),
		declog.Outcome{JobID: "a", Kind: declog.Finished, JCT: 3600}.Record(),
		declog.Outcome{JobID: "b", Kind: declog.Started}.Record(),
	)
	w.Close()
	// An unsealed file (as a crash leaves) is reported with the records read from its write-ahead log (none: a .tmp has none).
	tmp := filepath.Join(dir, declog.FileName(9)+declog.TmpSuffix)
	os.WriteFile(tmp, []byte("PAR1 partial"), 0o644)
	code, stdout, stderr := drover(t, "eval", "--log", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"(2 files)", "unsealed   " + tmp + ": 0 records read", "records    4 (2 decisions, 2 outcomes)",
		"| learned@v2 | 1 | 50.0% | 0 | 120µs |", "| 1 | 3600 | 3600 | 3600 |", "| deadline | 1 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// A sas-rl checkpoint whose actor always prefers candidate 0 (the
// heuristic's own choice) replays SAS exactly: drover eval simulates the
// learned variant through the same candidates.
func TestEvalLearnedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := placement.CandidateObsDim(placement.DefaultCandidates, 10)
	actor := checkpoints.Build(obs, []int{8}, placement.DefaultCandidates, "tanh")
	critic := checkpoints.Build(obs, []int{8}, 1, "tanh")
	ls := actor.Linears()
	ls[len(ls)-1].B.Value[0] = 100
	ck := filepath.Join(dir, "sasrl")
	meta := checkpoints.Meta{Env: "sas-rl", Algo: "ppo", ObsDim: obs, Actions: placement.DefaultCandidates, Hidden: []int{8}, Activation: "tanh", Networks: []string{"actor", "critic"}}
	if err := checkpoints.Save(ck, meta, map[string]*nn.MLP{"actor": actor, "critic": critic}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "sas,"+ck, "--seeds", "1-2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []struct {
			Name string           `json:"name"`
			Runs []map[string]any `json:"runs"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Policies) != 2 || sum.Policies[1].Name != "sas-rl@sasrl" {
		t.Fatalf("policies in summary.json: %s", data)
	}
	// Everything but the wall time of the decisions.
	for _, p := range sum.Policies {
		delete(p.Runs[0], "schedule_time_s")
	}
	if diff := cmp.Diff(sum.Policies[0].Runs[0], sum.Policies[1].Runs[0]); diff != "" {
		t.Errorf("learned(always 0) differs from sas (-sas,+learned):\n%s", diff)
	}
}
