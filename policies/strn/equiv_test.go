package strn

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/internal/longtest"
)

// steppy is a background that changes every Period seconds on a share of
// the nodes (Every in Every+1 steps on all of them), drawn from a few
// levels so that nodes tie: the class index is then kept up to date
// across steps, rebuilt past them, or bypassed when too many nodes move.
type steppy struct {
	seed   uint64
	period float64
	every  int
}

func (b steppy) Load(node int, t float64) env.Usage {
	k := uint64(t / b.period)
	if b.every > 0 && int(k)%(b.every+1) != 0 && node%3 != 0 {
		k = 0 // most nodes keep their load on most steps
	}
	r := rand.New(rand.NewPCG(b.seed, k<<20|uint64(node)))
	lv := []float64{0, 0, 0.3, 0.75, 0.85}
	return env.Usage{CPU: lv[r.IntN(len(lv))], MemBW: lv[r.IntN(len(lv))], Net: lv[r.IntN(len(lv))]}
}

func (b steppy) Step() float64 { return b.period }

// TestMatchesReference replays random workloads under the STRN of commit
// 779d276 (reference_test.go, every node scored for every job) and under
// STRN with its class index, with chaos (skipped decision points, dropped
// decisions, preemptions, Views without free GPUs), on the job-level
// model (idle telemetry), the per-worker model with backgrounds that
// change on few or many nodes, a model with neither telemetry nor probes,
// and clusters of mixed speeds, and wants the same event log and summary.
// It fails when the class index breaks a tie differently (the lower node
// index first among equal scores), misses a node's change or keeps a
// stale candidate. make test replays 30 seeds, make test-long all 120.
func TestMatchesReference(t *testing.T) {
	profiles := envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.2, Epochs: 10, PerEpoch: 0.1})
	seeds := uint64(30)
	if longtest.Enabled() {
		seeds = 120
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 21))
		c, specs := envtest.RandomScenario(r)
		// Up to 40 nodes, some slower, so that there are classes of many
		// nodes and of few.
		for i := range r.IntN(28) {
			c.Nodes = append(c.Nodes, env.Node{Name: fmt.Sprint("x", i), GPUs: 1 + r.IntN(8), Speed: 1, NICGbps: 100, Rack: (len(c.Nodes)) / 4})
		}
		for i := range c.Nodes {
			if r.IntN(4) == 0 {
				c.Nodes[i].Speed = []float64{0.5, 0.8, 1.25}[r.IntN(3)]
			}
		}
		kind := seed % 4
		interval := 0.0
		if seed%5 == 4 {
			interval = 60
		}
		chaos := [][3]float64{{0, 0, 0}, {0.1, 0.1, 0.05}}[seed/4%2]
		hide := seed%7 == 6
		model := func() env.Model {
			m := &env.Drover{Profiles: profiles, GPUsPerNode: 8}
			switch kind {
			case 1: // per-worker, a few nodes' loads changing now and then
				m.Workers = &env.Workers{Background: steppy{seed: seed, period: 500, every: 3}}
			case 2: // per-worker, every node's load changing every 200 s
				m.Workers = &env.Workers{Background: steppy{seed: seed, period: 200}}
			case 3:
				return plainModel{m}
			}
			return m
		}
		run := func(p env.Scheduler) (string, string) {
			s, err := env.New(env.Config{Cluster: c, Model: model(), Interval: interval, RestartDelay: 30, Log: true}, specs)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Run(&envtest.Chaos{P: p, R: rand.New(rand.NewPCG(seed, 1)),
				Skip: chaos[0], Drop: chaos[1], Preempt: chaos[2], HideFree: hide}, nil)
			return fmt.Sprint(err, "\n", env.LogString(s.Events(), s.Jobs())), fmt.Sprint(s.Summary())
		}
		logRef, sumRef := run(&reference{})
		log, sum := run(&STRN{})
		if log != logRef || sum != sumRef {
			t.Fatalf("seed %d (model kind %d, %d nodes): STRN decided differently from the reference:\n%s",
				seed, kind, len(c.Nodes), firstDiff(logRef, log))
		}
		// Every candidate and its features, not only the first, with a
		// chooser that takes any of them.
		tw := &twin{t: t, seed: seed, ref: &reference{}, got: &STRN{}, r: rand.New(rand.NewPCG(seed, 3))}
		run(tw)
		if tw.proposals == 0 && seed < 4 {
			t.Fatalf("seed %d: no proposals compared", seed)
		}
	}
}

// twin runs the reference and STRN side by side through the proposer
// interface (env.Delegate's loop), wants the same candidates with
// the same features from both for every job, and commits a random one of
// them to both.
type twin struct {
	t         *testing.T
	seed      uint64
	ref       *reference
	got       *STRN
	r         *rand.Rand
	proposals int
}

func (w *twin) Schedule(v *env.View) ([]env.Decision, error) {
	w.ref.defaults()
	w.got.defaults()
	w.ref.Begin(v)
	w.got.Begin(v)
	left := 0
	for _, f := range v.Free {
		left += f
	}
	var ds []env.Decision
	for _, j := range v.Active {
		if left == 0 {
			break
		}
		if j.State != env.Pending || j.Spec.GPUs > left {
			continue
		}
		want, got := w.ref.Propose(v, j), w.got.Propose(v, j)
		w.proposals++
		if !reflect.DeepEqual(want, got) {
			w.t.Fatalf("seed %d, decision point %d, job %d: candidates differ:\nwant %v\ngot  %v", w.seed, v.Seq, j.ID, want, got)
		}
		if len(got) == 0 {
			continue
		}
		k := w.r.IntN(len(got))
		w.ref.Commit(v, j, want[k])
		w.got.Commit(v, j, got[k])
		ds = append(ds, got[k].Decision)
		left -= j.Spec.GPUs
	}
	return ds, nil
}

// plainModel hides the optional interfaces of a model: no telemetry, no
// probes.
type plainModel struct{ env.Model }

// firstDiff returns the first line where a and b differ, with its number.
func firstDiff(a, b string) string {
	la, lb := splitLines(a), splitLines(b)
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n-want %s\n+got  %s", i+1, x, y)
		}
	}
	return "(summaries differ)"
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
