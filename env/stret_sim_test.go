package env_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// curvedFlat is envtest.Flat with a validation curve: Metric after each of
// len(Metric) equal epochs.
type curvedFlat struct {
	envtest.Flat
	Metric []float64
}

// ValidationCurve implements env.Curve.
func (c curvedFlat) ValidationCurve(int) ([]float64, []float64) {
	its := make([]float64, len(c.Metric))
	for e := range its {
		its[e] = float64(e + 1)
	}
	return its, c.Metric
}

// cpuFrom saturates node Node's CPU from time From on.
type cpuFrom struct {
	Node int
	From float64
}

func (b cpuFrom) Load(n int, t float64) env.Usage {
	if n == b.Node && t >= b.From {
		return env.Usage{CPU: 1}
	}
	return env.Usage{}
}
func (cpuFrom) Step() float64 { return 300 }

// runMitigation replays one job, one worker per node, under BSP with the
// per-worker model (no jitter unless newJitter, no network noise, a 300 s
// period, a 10 s restart delay) and returns it.
func runMitigation(t *testing.T, prof env.Profile, sens env.Sensitivity, bg env.Background, mitigation string, off env.STRETStage,
	newJitter func(int, rand.Source) env.Jitter, job env.JobSpec) *env.Job {
	t.Helper()
	wk := &env.Workers{
		Background: bg, NewJitter: newJitter, Period: 300, BurstNoise: -1,
		Sensitivities: map[string]env.Sensitivity{envtest.FlatName: sens},
		STRET:         mitigation == env.MitigationSTRET,
		Replace:       mitigation == env.MitigationReplace,
		STRETOff:      off,
	}
	m := &env.Drover{Profiles: envtest.Profiles(prof), Workers: wk}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(job.GPUs, 1), Model: m, RestartDelay: 10}, []env.JobSpec{job})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(spreadWith{}, nil); err != nil {
		t.Fatal(err)
	}
	return &s.Jobs()[0]
}

// stages is what a job's mitigation did.
type stages struct {
	Relayed, Withheld                   float64
	RelayChanges, Tunings, Replacements int
}

func stagesOf(j *env.Job) stages {
	return stages{j.Relayed, j.Withheld, j.RelayChanges, j.Tunings, j.Replacements}
}

func TestSTRETStages(t *testing.T) {
	flat := envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}
	// A curve that climbs over its first 20% and is flat from there.
	plateau := curvedFlat{flat, []float64{0.5, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9}}
	steep := curvedFlat{flat, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}}
	// Node 3's CPU saturates at 300 s: its worker then computes for 1 +
	// overload (1 + 1/16 - 0.8)/0.2 = 2.3125 s against the others' 1 s;
	// the median is 1 and it straggles. Batch tuning would give the
	// workers shares of 1/t over their mean, equal times of
	// 4 / (3 + 1/2.3125) = 1.165354 s.
	late := cpuFrom{Node: 3, From: 300}
	tuned := 4 / (3 + 1/2.3125)
	// The relay case: four nodes, compute 1 s, an all-reduce of
	// 0.5 x 3 = 1.5 s, all bandwidth (Net 1); node 0's NIC is 60% busy in
	// the background, so its ring exchange takes 1.5/0.4 = 3.75 s: times
	// 4.75, 2.5, 2.5, 2.5, median 2.5, and node 0 straggles for its
	// exchange. Relaying through node 1 (the first of three equal peers:
	// every pair runs at node 0's NIC, 2.5x) moves 4/6 of a ring member's
	// traffic: 1.5 x 2/3 x 2.5 = 2.5 s; node 1's NIC carries 1 + 2/3
	// flows: 2.5 s. Times 3.5, 3.5, 2.5, 2.5: median 3, nothing above
	// 3.6, so nothing is tuned. An iteration takes 1 + 2.5 = 3.5 s
	// instead of 4.75.
	nicBusy := envtest.Background{Loads: map[int]env.Usage{0: {Net: 0.6}}}
	ring := envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}
	tests := []struct {
		name       string
		prof       env.Profile
		sens       env.Sensitivity
		bg         env.Background
		mitigation string
		off        env.STRETStage
		duration   float64
		jct        float64
		want       stages
	}{
		// 10 s to start; 100 s of work at 1/4.75 s per iteration.
		{"relay: none", ring, env.Sensitivity{Net: 1}, nicBusy, env.MitigationNone, 0, 100, 10 + 475, stages{}},
		// 10 s to start, 10 s to set the relay up at the first refresh,
		// then 100 iterations of 3.5 s, each with a relaying worker.
		{"relay removes the straggler", ring, env.Sensitivity{Net: 1}, nicBusy, env.MitigationSTRET, 0, 100, 20 + 350,
			stages{Relayed: 100, RelayChanges: 1}},
		// With the relay off the straggler remains and the batch is tuned;
		// every worker computes for 1 s, so the shares stay even and the
		// iteration takes 4.75 s as before.
		{"relay off", ring, env.Sensitivity{Net: 1}, nicBusy, env.MitigationSTRET, env.STRETRelay, 100, 10 + 475,
			stages{Tunings: 1}},
		// Without STRET: 290 s of work by 300, the other 310 at 2.3125 s.
		{"late straggler: none", plateau, env.Sensitivity{CPU: 1}, late, env.MitigationNone, 0, 600, 300 + 310*2.3125, stages{}},
		// At 300 s the job is at 290/600 = 0.483 of its curve, flat since
		// 0.2: the straggler's gradient is marginal and withheld. An
		// iteration takes 1 s and delivers 3/4 of a global batch: the
		// other 310 s of work take 413.33 s, 413.33 iterations each
		// withholding one worker. Nothing is tuned.
		{"withheld late on a flat curve", plateau, env.Sensitivity{CPU: 1}, late, env.MitigationSTRET, 0, 600, 300 + 310/0.75,
			stages{Withheld: 310 / 0.75}},
		// The same point of a straight curve: not marginal, so the
		// straggler remains and the batch is tuned once.
		{"tuned on a steep curve", steep, env.Sensitivity{CPU: 1}, late, env.MitigationSTRET, 0, 600, 300 + 310*tuned,
			stages{Tunings: 1}},
		// The plateau curve, but at 300 s the job is at 290/6000 = 0.048,
		// before a window of validations exists: tuned, never withheld
		// (nothing straggles after the tuning).
		{"tuned early on a flat curve", plateau, env.Sensitivity{CPU: 1}, late, env.MitigationSTRET, 0, 6000, 300 + 5710*tuned,
			stages{Tunings: 1}},
		// No straggler ever: nothing to do.
		// Withholding off: the straggler on the flat curve is tuned away.
		{"withholding off", plateau, env.Sensitivity{CPU: 1}, late, env.MitigationSTRET, env.STRETWithhold, 600, 300 + 310*tuned,
			stages{Tunings: 1}},
		// Both off: nothing is done.
		{"withholding and tuning off", plateau, env.Sensitivity{CPU: 1}, late, env.MitigationSTRET, env.STRETWithhold | env.STRETTune, 600,
			300 + 310*2.3125, stages{}},
		// No straggler ever: nothing to do.
		{"no straggler", plateau, env.Sensitivity{CPU: 1}, nil, env.MitigationSTRET, 0, 600, 610, stages{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := runMitigation(t, tt.prof, tt.sens, tt.bg, tt.mitigation, tt.off, nil, envtest.MakeJob("a").GPUs(4).Duration(tt.duration).Obj())
			if math.Abs(j.JCT()-tt.jct) > 1e-9 {
				t.Errorf("JCT %v, want %v", j.JCT(), tt.jct)
			}
			if diff := cmp.Diff(tt.want, stagesOf(j), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("stages (-want,+got):\n%s", diff)
			}
		})
	}
}

// slowWorker is a jitter process that slows worker 1 of a multi-worker
// job Factor times in every iteration, and nothing else: a one-worker
// process (a replacement's) runs at 1.
type slowWorker struct {
	n      int
	factor float64
}

func (p slowWorker) Next(dst []float64) {
	for i := range dst {
		dst[i] = 1
	}
	if p.n > 1 {
		dst[1] = p.factor
	}
}

func TestReplace(t *testing.T) {
	slow := func(n int, _ rand.Source) env.Jitter { return slowWorker{n, 3} }
	cpu1 := envtest.Background{Loads: map[int]env.Usage{1: {CPU: 1}}}
	job := envtest.MakeJob("a").GPUs(2).Duration(400).Obj()
	flat := envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}
	tests := []struct {
		name       string
		bg         env.Background
		jitter     func(int, rand.Source) env.Jitter
		mitigation string
		jct, tta   float64
		replaced   int
	}{
		// Worker 1's own process is 3x slow: median 2, limit 2.4, it
		// straggles in every iteration; BSP waits for it: 10 s to start,
		// then 400 x 3 s.
		{"own straggler: none", nil, slow, env.MitigationNone, 1210, 1200, 0},
		// It straggles at the refreshes at 0 and 300 and is replaced at
		// 600: by then 290/3 + 300/3 = 196.67 s of work are done; the
		// restart costs 10 s, and the fresh worker runs at 1 s, so the
		// other 203.33 s of work end at 813.33. The replacement's 10 s
		// are training time (TTA), the start's are not.
		{"own straggler replaced", nil, slow, env.MitigationReplace, 610 + (400 - 590.0/3), 600 + (400 - 590.0/3), 1},
		// Worker 1's node has its CPU saturated: 2.3125 s a step against
		// 1; limit 1.2 x 1.65625. Replaced at 600, it straggles again on
		// the same node (at 600 and 900; done before 1200): the
		// replacement only cost its 10 s: 20 + 400 x 2.3125.
		{"node's straggler: none", cpu1, nil, env.MitigationNone, 10 + 400*2.3125, 400 * 2.3125, 0},
		{"node's straggler replaced in vain", cpu1, nil, env.MitigationReplace, 20 + 400*2.3125, 10 + 400*2.3125, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := runMitigation(t, flat, env.Sensitivity{CPU: 1}, tt.bg, tt.mitigation, 0, tt.jitter, job)
			if math.Abs(j.JCT()-tt.jct) > 1e-9 {
				t.Errorf("JCT %v, want %v", j.JCT(), tt.jct)
			}
			if tta := j.Held - 10; math.Abs(tta-tt.tta) > 1e-9 {
				t.Errorf("training time %v, want %v", tta, tt.tta)
			}
			if j.Replacements != tt.replaced {
				t.Errorf("%d replacements, want %d", j.Replacements, tt.replaced)
			}
		})
	}
}

// lognormalJitter slows each worker by exp(0.5 z), z standard normal from
// its source, every iteration.
type lognormalJitter struct{ r *rand.Rand }

func (p lognormalJitter) Next(dst []float64) {
	for i := range dst {
		dst[i] = math.Exp(0.5 * p.r.NormFloat64())
	}
}

func TestMitigationDeterminism(t *testing.T) {
	// A busy little cluster with random jitter and uneven NICs: the same
	// seed gives the same results, bit for bit, whatever the mitigation.
	bg := envtest.Background{Loads: map[int]env.Usage{0: {Net: 0.6}, 2: {CPU: 0.9, Net: 0.3}, 5: {Net: 0.5}}}
	prof := curvedFlat{envtest.Flat{Step: 1, Sync: 0.3, PerEpoch: 1, Epochs: 1}, []float64{0.3, 0.7, 0.8, 0.82, 0.821}}
	var jobs []env.JobSpec
	for i, g := range []int{4, 2, 3, 4, 1, 6} {
		jobs = append(jobs, envtest.MakeJob(string(rune('a'+i))).GPUs(g).Duration(2000+500*float64(i)).Submit(100*float64(i)).Obj())
	}
	run := func(mitigation string) []env.JobResult {
		wk := &env.Workers{
			Background: bg, Seed: 7, Period: 300,
			NewJitter:     func(_ int, src rand.Source) env.Jitter { return lognormalJitter{rand.New(src)} },
			Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 0.8, Net: 0.7}},
			STRET:         mitigation == env.MitigationSTRET,
			Replace:       mitigation == env.MitigationReplace,
		}
		m := &env.Drover{Profiles: envtest.Profiles(prof), Workers: wk}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(8, 2), Model: m, RestartDelay: 30}, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(spreadWith{}, nil); err != nil {
			t.Fatal(err)
		}
		return s.Results()
	}
	for _, mit := range []string{env.MitigationNone, env.MitigationSTRET, env.MitigationReplace} {
		t.Run(mit, func(t *testing.T) {
			a, b := run(mit), run(mit)
			if diff := cmp.Diff(a, b, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("two runs differ (-first,+second):\n%s", diff)
			}
		})
	}
}
