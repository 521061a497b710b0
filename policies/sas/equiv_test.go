package sas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// noisy is a background that changes every 300 s: per node and period a
// load drawn from a hash, on a coarse grid (multiples of 0.05) so that
// nodes often tie, with some nodes always busy.
type noisy struct {
	seed uint64
	busy float64 // share of the nodes that run hot
	nan  int     // a node that reports NaN CPU from t = 6000 s (-1: none)
}

func (b noisy) Load(node int, t float64) env.Usage {
	k := uint64(math.Floor(t / 300))
	r := rand.New(rand.NewPCG(b.seed^uint64(node)*0x9e3779b97f4a7c15, k))
	hot := rand.New(rand.NewPCG(b.seed, uint64(node))).Float64() < b.busy
	grid := func(hi float64) float64 { return math.Round(r.Float64()*hi*20) / 20 }
	u := env.Usage{CPU: grid(0.3), MemBW: grid(0.2), Net: grid(0.4)}
	if hot {
		u.CPU += 0.4
		u.MemBW += grid(0.5)
	}
	if node == b.nan && t >= 6000 {
		u.CPU = math.NaN()
	}
	return u
}

func (noisy) Step() float64 { return 300 }

// twin runs SAS and the reference on the same views and applies SAS's
// decisions. At every other decision point, and at all with pick, it runs
// both through env.Delegate and wants the same candidates
// (decisions and features, to the bit) for every job either proposes
// for; the chooser picks the first candidate, or, with pick, one drawn
// from the job's ID, so the candidates after the first matter too. At the
// others it wants SAS.Schedule's decisions to be the reference's.
type twin struct {
	t    *testing.T
	name string
	a    *SAS
	b    *refSAS
	pick bool
	n    int // decision points compared
}

func (w *twin) Schedule(v *env.View) ([]env.Decision, error) {
	var got, want []string
	rec := func(out *[]string) env.Chooser {
		return func(_ *env.View, j *env.Job, cs []env.Candidate) int {
			k := 0
			if w.pick {
				k = (j.ID*7 + len(cs)) % len(cs)
			}
			*out = append(*out, fmt.Sprintf("job %d: %d candidates, pick %d: %+v", j.ID, len(cs), k, cs))
			return k
		}
	}
	var da, db []env.Decision
	if w.pick || w.n%2 == 1 {
		da, _ = env.Delegate(w.a, v, rec(&got))
		db, _ = env.Delegate(w.b, v, rec(&want))
	} else { // SAS's own loop, and the reference's through Delegate
		da, _ = w.a.Schedule(v)
		db, _ = w.b.Schedule(v)
	}
	if !slices.Equal(got, want) || fmt.Sprint(da) != fmt.Sprint(db) {
		for i := range max(len(got), len(want)) {
			g, h := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				h = want[i]
			}
			if g != h {
				w.t.Fatalf("%s: at %v (seq %d), proposal %d:\n got %s\nwant %s", w.name, v.Now, v.Seq, i, g, h)
			}
		}
		w.t.Fatalf("%s: at %v: decisions %v, want %v", w.name, v.Now, da, db)
	}
	w.n++
	w.checkFloor(v)
	return da, nil
}

// checkFloor wants every node's single-node cost bin, for the first
// pending jobs and every size up to the node's GPUs, at or above the
// floor bin of its group (the bound single stops at).
func (w *twin) checkFloor(v *env.View) {
	s := w.a
	if !s.idx.ok || !s.pred.finite() {
		return
	}
	k := 0
	for _, j := range v.Active {
		if j.State != env.Pending || k == 3 {
			continue
		}
		k++
		in := s.info(j, s.prober)
		for gi, ns := range s.groups {
			floor := s.floorBin(in, s.idx.groups[gi].least, s.tel != nil)
			for _, n := range ns {
				for g := 1; g <= v.Cluster.Nodes[n].GPUs; g++ {
					if b := s.bin(s.slowdown(v, in, n, g, false, s.tel != nil)); !(b >= floor) {
						w.t.Fatalf("%s: at %v: node %d, %d GPUs: bin %v below the floor %v", w.name, v.Now, n, g, b, floor)
					}
				}
			}
		}
	}
}

// TestMatchesReference replays random workloads on random clusters
// (heterogeneous GPUs and speeds, up to 200 nodes, noisy and tied
// backgrounds, a NaN sample in some runs), with and without the per-worker
// model, the learned forecaster and a candidate other than the first,
// under chaos (skipped decision points, dropped decisions, preemptions,
// hidden free GPUs), and wants SAS's candidates and decisions to be the
// reference's, the implementation before its per-decision work was made
// incremental, at every decision point. make test replays 20 seeds (277 s
// of the race run for all 80, issue 31); make test-long all 80.
func TestMatchesReference(t *testing.T) {
	seeds := uint64(20)
	if longtest.Enabled() {
		seeds = 80
	}
	profiles := envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.2, Epochs: 10, PerEpoch: 0.1})
	compared := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 20))
		c, specs := envtest.RandomScenario(r)
		if seed%4 == 3 { // a larger cluster: groups of more than 64 nodes
			for i := len(c.Nodes); i < 150+r.IntN(60); i++ {
				c.Nodes = append(c.Nodes, env.Node{Name: fmt.Sprint(i), GPUs: 1 + r.IntN(8), Speed: 1, NICGbps: 100, Rack: i / 4})
			}
			for i := range specs {
				specs[i].GPUs = 1 + r.IntN(8)
				if r.IntN(10) == 0 {
					specs[i].GPUs = 1 + r.IntN(40)
				}
			}
			for i := range 400 {
				specs = append(specs, env.JobSpec{Name: fmt.Sprint("k", i), Submit: float64(r.IntN(20000)), GPUs: 1 + r.IntN(8),
					Duration: float64(1 + r.IntN(20000)), Model: envtest.FlatName})
			}
		}
		for i := range c.Nodes {
			c.Nodes[i].Speed = []float64{1, 1, 1, 0.5, 2, 0.8}[r.IntN(6)]
		}
		for i := range specs { // long enough for learned forecasts
			specs[i].Submit *= 4
			specs[i].Duration *= 4
		}
		workers := seed%3 != 0
		learned := seed%2 == 0
		pick := seed%5 == 1
		bg := noisy{seed: seed, busy: []float64{0, 0.3, 0.7}[seed%3], nan: -1}
		if seed%7 == 4 {
			bg.nan = r.IntN(len(c.Nodes))
		}
		groups := []int{0, 0, 1, 3, 8}[r.IntN(5)]
		hide := seed%6 == 5
		var m env.Model = &env.Drover{Profiles: profiles, GPUsPerNode: 8}
		if workers {
			m = &env.Drover{Profiles: profiles, GPUsPerNode: 8, Workers: &env.Workers{Background: bg,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1, MemBW: 0.5, Net: 1}}}}
		}
		s, err := env.New(env.Config{Cluster: c, Model: m, RestartDelay: 30, Log: true}, specs)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := New(policies.Config{})
		a := p.(*SAS)
		a.Groups = groups
		if !learned {
			a.Forecaster = nil
		} else {
			a.Forecaster = forecast.Default()
		}
		a.EvenPS = seed%4 == 2
		w := &twin{t: t, name: fmt.Sprintf("seed %d", seed), a: a, b: newRef(a), pick: pick}
		ch := &envtest.Chaos{P: w, R: rand.New(rand.NewPCG(seed, 1)), Skip: 0.05, Drop: 0.1, Preempt: 0.05, HideFree: hide}
		// A chaos that skips or drops the last runnable job's start may
		// stall the run: every decision point up to there was compared.
		if err := s.Run(ch, nil); err != nil && !strings.Contains(err.Error(), "stalled") {
			t.Fatalf("seed %d: %v", seed, err)
		}
		compared += w.n
	}
	t.Logf("%d decision points compared", compared)
}
