package direct

import (
	"math"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	pdirect "github.com/drover-sched/drover/policies/direct"
)

// small is one quick training setting: 60 synthetic jobs on 4 x 4 GPUs.
func small(t *testing.T) []Setting {
	t.Helper()
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	jobs := synthetic(16, 0.9, 1.1)
	return []Setting{{Name: "small", Cluster: env.Homogeneous(4, 4), Regime: trace.RegimeDedicated, Profiles: prof,
		NewJobs: func(s uint64) []env.JobSpec { return jobs(s)[:60] }}}
}

// TestTrainDeterministic: BC then PPO, twice with one config, gives the
// same weights bit for bit; the clone agrees with the teacher far more
// often than chance (1 in the ~9 valid actions of a typical job).
func TestTrainDeterministic(t *testing.T) {
	run := func() Result {
		r, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoPPO, Seed: 7, Settings: small(t), TeacherEpisodes: 3, BCEpochs: 20, Steps: 2048, Hidden: []int{32}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	for i, p := range a.Nets["actor"].Params() {
		if !slices.Equal(p.Value, b.Nets["actor"].Params()[i].Value) {
			t.Fatalf("actor %s differs between two runs of one config", p.Name)
		}
	}
	if a.Samples != 180 || !(a.Agreement > 0.3) {
		t.Errorf("%d samples, agreement %.2f: want 180 (3 episodes of 60 jobs) and well above chance", a.Samples, a.Agreement)
	}
	if a.Meta.Env != pdirect.STRNRL || !pdirect.IsDirect(a.Meta) || len(a.Returns) == 0 {
		t.Errorf("meta %+v, %d returns", a.Meta, len(a.Returns))
	}
	if _, err := pdirect.FromCheckpoint(a.Meta, a.Nets); err != nil {
		t.Error(err)
	}
}

// TestDQNOnSchedEnv: DQN trains on the scheduling environment (masked
// actions) and yields a servable direct checkpoint.
func TestDQNOnSchedEnv(t *testing.T) {
	r, err := Train(Config{Name: pdirect.SASRL, Algo: AlgoDQN, Seed: 2, Settings: small(t), Steps: 600, Hidden: []int{16}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Returns) < 5 || r.Meta.Activation != "relu" || r.Nets["q"] == nil {
		t.Fatalf("%d episodes, activation %s", len(r.Returns), r.Meta.Activation)
	}
	if _, err := pdirect.FromCheckpoint(r.Meta, r.Nets); err != nil {
		t.Error(err)
	}
}

func TestConfigRejects(t *testing.T) {
	for _, c := range []Config{{Name: "x"}, {Name: pdirect.STRNRL, Algo: "a2c"}, {Name: pdirect.STRNRL, Hidden: []int{0}}, {Name: pdirect.STRNRL, BCBatch: -1}} {
		c.Settings = small(t)
		if _, err := Train(c); err == nil {
			t.Errorf("config %+v: no error", c)
		}
	}
}

// TestInit: a BC run from Init at a vanishing learning rate returns
// Init's actor (to 1e-20), whatever its seed; Init of another shape is
// refused.
func TestInit(t *testing.T) {
	a, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Seed: 3, Settings: small(t), TeacherEpisodes: 1, BCEpochs: 1, Hidden: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Seed: 4, Settings: small(t), TeacherEpisodes: 1, BCEpochs: 1, BCLR: 1e-30, Hidden: []int{8}, Init: a.Nets["actor"]})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range b.Nets["actor"].Params() {
		for k, v := range p.Value {
			if d := v - a.Nets["actor"].Params()[i].Value[k]; d > 1e-20 || d < -1e-20 {
				t.Fatalf("actor %s[%d] moved by %g from Init", p.Name, k, d)
			}
		}
	}
	if _, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Settings: small(t), TeacherEpisodes: 1, Hidden: []int{16}, Init: a.Nets["actor"]}); err == nil {
		t.Error("Init of hidden 8 into hidden 16: no error")
	}
}

// TestNormalizedRewards: the wrapper divides each reward by the running
// standard deviation of the discounted return; by hand, rewards 1, 2 in
// one episode, then 4 opening the next (gamma 0.5): returns 1, 2.5 and 4,
// whose sample standard deviations are 1.0607 after two and 1.5 after
// three, so the rewards read 1 (one return seen), 2/1.0607 and 4/1.5.
func TestNormalizedRewards(t *testing.T) {
	w := &normalized{gamma: 0.5}
	got := []float64{w.scale(1, false), w.scale(2, true), w.scale(4, false)}
	want := []float64{1, 2 / 1.0606601717798212, 4 / 1.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-7 {
			t.Errorf("normalized rewards %v, want %v", got, want)
			break
		}
	}
}
