package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/google/go-cmp/cmp"
)

// withBaselines is a hand-made result over seeds 1 and 2: a method m and
// baselines b1 and b2, with average JCT and TTA per seed
//
//	     JCT        TTA
//	m    108, 152   45, 63
//	b1   100, 200   50, 70
//	b2   120, 160   40, 100
//
// so b2 is the best baseline by mean JCT (140 < 150) and b1 by mean TTA
// (60 < 70).
func withBaselines() *Result {
	mk := func(name string, baseline bool, jct, tta [2]float64) PolicyResult {
		var runs []Run
		for k := range 2 {
			runs = append(runs, Run{Seed: uint64(k + 1), Summary: env.Summary{Jobs: 1, Finished: 1, AvgJCT: jct[k], AvgTTA: tta[k]}})
		}
		p := summarize(name, runs)
		p.Baseline = baseline
		return p
	}
	return &Result{Seeds: []uint64{1, 2}, Policies: []PolicyResult{
		mk("m", false, [2]float64{108, 152}, [2]float64{45, 63}),
		mk("b1", true, [2]float64{100, 200}, [2]float64{50, 70}),
		mk("b2", true, [2]float64{120, 160}, [2]float64{40, 100}),
	}}
}

func TestBestBaseline(t *testing.T) {
	r := withBaselines()
	if got := r.BestBaseline(AvgJCT); got != 2 {
		t.Errorf("best by JCT = %d, want 2 (b2)", got)
	}
	if got := r.BestBaseline(AvgTTA); got != 1 {
		t.Errorf("best by TTA = %d, want 1 (b1)", got)
	}
	r.Policies[1].Baseline, r.Policies[2].Baseline = false, false
	if got := r.BestBaseline(AvgJCT); got != -1 {
		t.Errorf("best without baselines = %d, want -1", got)
	}
}

// TestRelative works the paired differences by hand, with t(0.975, 1) =
// 12.7062 and two seeds: half-width = 12.7062 x |d1 - d2| / 2.
func TestRelative(t *testing.T) {
	r := withBaselines()
	tests := []struct {
		name     string
		m        Metric
		ref      int
		mean, hw []float64
	}{
		{
			// m: 108/120 - 1 = -0.1, 152/160 - 1 = -0.05. b1: -1/6, +0.25.
			name: "JCT vs b2", m: AvgJCT, ref: 2,
			mean: []float64{-0.075, (-1.0/6 + 0.25) / 2, 0},
			hw:   []float64{12.7062 * 0.025, 12.7062 * (0.25 + 1.0/6) / 2, 0},
		},
		{
			// m: -0.1 twice. b2: 40/50 - 1 = -0.2, 100/70 - 1 = 3/7.
			name: "TTA vs b1", m: AvgTTA, ref: 1,
			mean: []float64{-0.1, 0, (-0.2 + 3.0/7) / 2},
			hw:   []float64{0, 0, 12.7062 * (3.0/7 + 0.2) / 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Relative(tt.m, tt.ref)
			for i, e := range got {
				if math.Abs(e.Mean-tt.mean[i]) > 1e-12 || math.Abs(e.HalfWidth-tt.hw[i]) > 1e-4 || e.N != 2 {
					t.Errorf("%s: %+v, want mean %v ± %v over 2", r.Policies[i].Name, e, tt.mean[i], tt.hw[i])
				}
			}
		})
	}
	// A seed where either side has no number is left out of the pairs.
	r.Policies[0].Runs[1].Summary.AvgJCT = math.NaN()
	r.Policies[2].Runs[0].Summary.AvgTTA = 0
	if e := r.Relative(AvgJCT, 2)[0]; e.N != 1 || math.Abs(e.Mean+0.1) > 1e-12 {
		t.Errorf("NaN seed: %+v, want -0.1 over 1 seed", e)
	}
	if e := r.Relative(AvgTTA, 2)[0]; e.N != 1 || math.Abs(e.Mean-(63.0/100-1)) > 1e-12 {
		t.Errorf("zero reference: %+v, want 63/100 - 1 over 1 seed", e)
	}
}

func TestWriteTableBaselines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, withBaselines()); err != nil {
		t.Fatal(err)
	}
	_, got, _ := strings.Cut(b.String(), "\n\n")
	want := "best baseline (lowest mean of the 2 baselines): by avg JCT b2; by avg TTA b1\n\n" +
		"| policy | avg JCT vs b2 | avg TTA vs b1 |\n" +
		"|---|---|---|\n" +
		"| **m** | -7.5 ± 31.8% | -10.0 ± 0.0% |\n" +
		"| b1 | +4.2 ± 264.7% | +0.0 ± 0.0% |\n" +
		"| b2 | +0.0 ± 0.0% | +11.4 ± 399.3% |\n" +
		"\npaired over seeds: mean of (policy / best baseline - 1) ± the half-width of its 95% t-interval; negative is better; bold: not a baseline\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("baseline section (-want,+got):\n%s", diff)
	}
}

func TestWriteJSONBaselines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, withBaselines(), Meta{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Best     map[string]string `json:"best_baseline"`
		Policies []struct {
			Name     string `json:"name"`
			Baseline bool   `json:"baseline"`
			Vs       map[string]struct {
				Mean float64 `json:"mean"`
			} `json:"vs_best_baseline"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"avg_jct_s": "b2", "avg_tta_s": "b1"}, got.Best); diff != "" {
		t.Errorf("best_baseline (-want,+got):\n%s", diff)
	}
	m := got.Policies[0]
	if m.Baseline || !got.Policies[1].Baseline || math.Abs(m.Vs["avg_jct_s"].Mean+0.075) > 1e-12 || math.Abs(m.Vs["avg_tta_s"].Mean+0.1) > 1e-12 {
		t.Errorf("policy m: %+v", m)
	}
}

// TestHeuristicsComposed: a composed name keeps its own sync under a
// sync for everyone (drover eval --sync), a plain name takes it.
func TestHeuristicsComposed(t *testing.T) {
	local8 := env.Sync{Kind: env.LocalSGD, Period: 8}
	ps, err := Heuristics(builtin.Registry(), []string{"first-fit+asp", "first-fit", "gandiva+bsp"}, local8)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"asp", "local(8)", "bsp"} {
		m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
		sim, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, []env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(10).Obj()})
		if err != nil {
			t.Fatal(err)
		}
		v, err := sim.Next()
		if err != nil {
			t.Fatal(err)
		}
		p, err := ps[i].New(1)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := p.Schedule(v)
		if err != nil || len(ds) != 1 || ds[0].Sync.String() != want {
			t.Errorf("%s: decisions %v (%v), want sync %s", ps[i].Name, ds, err, want)
		}
	}
	if _, err := Heuristics(builtin.Registry(), []string{"first-fit+nope"}, env.Sync{}); err == nil || !strings.Contains(err.Error(), `"nope" is neither`) {
		t.Errorf("bad composed name: %v", err)
	}
}
