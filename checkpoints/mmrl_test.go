package checkpoints

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
)

// testMMRL is a small mm-rl checkpoint: 13 observations, 9 actions, the
// setting of serve's tests (Llama's profile at 2M requests a week).
func testMMRL() (Meta, map[string]*nn.MLP) {
	src := rand.NewPCG(3, 4)
	obs := make([]string, 13)
	for i := range obs {
		obs[i] = "x" + string(rune('a'+i))
	}
	s := &MMScale{Model: "llama-3.2-11b-vision", Observation: obs, Factors: []float64{2.0 / 3, 1, 1.5}, RuleAction: 4,
		Profile:  MMProfile{ImageTokensPerSec: 21701, TextTokensPerSec: 9552, MonoRequestsPerSec: 0.8225, EncodeSeconds: 0.1224},
		Rule:     MMRule{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLOFactor: 5, SLOText: 0.026287, SLOImage: 0.104971, Target: 1, Stabilize: 3, InitialImage: 2, InitialText: 2},
		Training: MMTraining{Requests: 2_000_000, HistorySeed: 2, Router: "modserve-route", Images: "fixed896", TrainDays: []int{0}, TestDays: []int{2}, Hours: 3, Penalty: 0.05, RewardScale: 10},
		Gate:     MMGate{Baseline: "modserve", Episodes: 2, MeanGain: -0.1, Lower: -0.2, Margin: 0.02, Confidence: 0.95, GPUHours: 71.2, Attainment: 0.95, RuleGPUHours: 54.6, RuleAttainment: 0.94}}
	m := Meta{Env: MMRLEnv, Algo: "ppo", ObsDim: 13, Actions: 9, Hidden: []int{8, 8}, Activation: "tanh", Networks: []string{"actor", "critic"}, Seed: 9, Steps: 96, MM: s}
	return m, map[string]*nn.MLP{
		"actor":  nn.NewOrthogonalMLP([]int{13, 8, 8, 9}, nn.NewTanh, math.Sqrt2, 0.01, src),
		"critic": nn.NewOrthogonalMLP([]int{13, 8, 8, 1}, nn.NewTanh, math.Sqrt2, 1, src),
	}
}

// An mm-rl checkpoint's setting comes back as saved, field for field, and
// its actor gives the saved outputs bit for bit.
func TestMMRLRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, nets := testMMRL()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	got, loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.MM, m.MM) {
		t.Errorf("mm: got %+v, saved %+v", got.MM, m.MM)
	}
	x := nn.MatFrom(1, 13, []float32{0.2, 0.2, 0.3, 0.2, 0.5, 0.4, 0.3, 0.3, 0.97, 0.01, 0.02, 0.5, -0.8})
	a, b := nets["actor"].Forward(x).Clone(), loaded["actor"].Forward(x)
	if !reflect.DeepEqual(a.Data, b.Data) {
		t.Errorf("actor: %v, loaded %v", a.Data, b.Data)
	}
	// Save refuses to write an mm-rl checkpoint without its setting.
	m.MM = nil
	if err := Save(t.TempDir(), m, nets); err == nil || !strings.Contains(err.Error(), "mm: missing") {
		t.Errorf("saved an mm-rl checkpoint without mm: %v", err)
	}
}

// A corrupt mm section is refused, the error naming meta.json and the
// field.
func TestMMRLCorrupt(t *testing.T) {
	dir := t.TempDir()
	m, nets := testMMRL()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	weights, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	edit := func(old, new string) []byte {
		if !strings.Contains(string(meta), old) {
			t.Fatalf("meta.json has no %q", old)
		}
		return []byte(strings.Replace(string(meta), old, new, 1))
	}
	for _, tt := range []struct {
		name string
		meta []byte
		want string
	}{
		{"no mm", edit(`"mm": {`, `"mx": {`), "mm: missing"},
		{"mm in another env", edit(`"env": "mm-rl"`, `"env": "pd-rl"`), "mm: present in a checkpoint of env \"pd-rl\""},
		{"empty model", edit(`"model": "llama-3.2-11b-vision"`, `"model": ""`), "mm.model"},
		{"short observation", edit(`"xa",`, ``), "mm.observation: 12 names for obs_dim 13"},
		{"empty observation name", edit(`"xc"`, `" "`), "mm.observation[2]"},
		{"too few factors", edit(`1,
      1.5`, `1`), "mm.factors: 2 factors for 9 actions"},
		{"negative factor", edit(`0.6666666666666666`, `-0.5`), "mm.factors[0]"},
		{"rule action", edit(`"rule_action": 4`, `"rule_action": 9`), "mm.rule_action"},
		{"zero capacity", edit(`"image_tokens_per_sec": 21701`, `"image_tokens_per_sec": 0`), "mm.profile.image_tokens_per_sec"},
		{"monitor past the period", edit(`"monitor": 60`, `"monitor": 600`), "mm.rule.monitor"},
		{"threshold", edit(`"threshold": 0.99`, `"threshold": 1.5`), "mm.rule.threshold"},
		{"target", edit(`"target": 1`, `"target": -1`), "mm.rule.target"},
		{"stabilize", edit(`"stabilize": 3`, `"stabilize": 0`), "mm.rule.stabilize"},
		{"initial", edit(`"initial_text": 2`, `"initial_text": -2`), "mm.rule.initial_text"},
		{"day", edit(`"test_days": [
        2`, `"test_days": [
        7`), "mm.training.test_days[0]"},
		{"hours", edit(`"hours": 3`, `"hours": 0`), "mm.training.hours"},
		{"images", edit(`"images": "fixed896"`, `"images": "fixed"`), "mm.training.images"},
		{"verdict disagrees", edit(`"converged": false,
      "gpu_hours"`, `"converged": true,
      "gpu_hours"`), "mm.gate.converged"},
		{"not json", edit(`"penalty": 0.05`, `"penalty": "high"`), "meta.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(tt.meta, weights)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "meta.json") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrCorrupt naming meta.json and %q", err, tt.want)
			}
		})
	}
}
