package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/google/go-cmp/cmp"
)

// stepClock is a fake monotonic clock that advances 1 ms at every read,
// so that every timed Schedule call (read before and after) takes exactly
// 1 ms. It is safe for concurrent use, but concurrent runs would see each
// other's steps: time them with Parallel 1.
type stepClock struct {
	mu  sync.Mutex
	now time.Duration
}

func (c *stepClock) read() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += time.Millisecond
	return c.now
}

// script is a policy that returns a fixed list of decisions per call.
type script [][]env.Decision

func (s *script) Schedule(*env.View) ([]env.Decision, error) {
	ds := (*s)[0]
	*s = (*s)[1:]
	return ds, nil
}

// The recorder counts calls and placements and times Schedule alone:
// worked by hand, five calls at 1 ms each with four placements are
// 5000/4 = 1250 µs per decision and 1000 µs per call.
func TestRecorderTiming(t *testing.T) {
	jobs := []*env.Job{{ID: 0}, {ID: 1}, {ID: 2}}
	p := script{
		{{Job: 0, Nodes: []int{0}}, {Job: 1, Nodes: []int{0, 1}}}, // two starts: 2
		nil, // nothing: 0
		{{Job: 0, Nodes: []int{0}}, {Job: 1}, {Job: 2, Nodes: []int{1}}}, // no change, a preemption, a start: 1
		{{Job: 0, Nodes: []int{0}}},                                      // no change: 0
		{{Job: 0, Nodes: []int{0}, Sync: env.Sync{Kind: env.ASP}}},       // a sync change: 1
	}
	clock := &stepClock{}
	r := &recorder{p: &p, clock: clock.read}
	v := &env.View{Active: jobs}
	for call := range 5 {
		if _, err := r.Schedule(v); err != nil {
			t.Fatal(err)
		}
		if call == 0 { // the simulator applies the first call's starts
			jobs[0].Alloc, jobs[1].Alloc = []int{0}, []int{0, 1}
		}
	}
	run := Run{ScheduleCalls: r.calls, Decisions: r.decisions, Timed: true, ScheduleTime: r.elapsed}
	type counts struct {
		Calls, Decisions int
		Elapsed          time.Duration
		PerDecision      float64
		PerCall          float64
	}
	want := counts{5, 4, 5 * time.Millisecond, 1250, 1000}
	got := counts{run.ScheduleCalls, run.Decisions, run.ScheduleTime, run.MicrosPerDecision(), run.MicrosPerCall()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if clock.now != 10*time.Millisecond {
		t.Errorf("clock read %v times, want 10 (twice per call)", clock.now/time.Millisecond)
	}
}

// twoJobs is a replay whose decision points can be counted by hand: two
// one-GPU jobs arriving at 0 s and 10 s on one 4-GPU node, decided at
// every arrival and completion (job-level drover model). Schedule runs
// at the first arrival (a start), the second (a start) and the first
// completion (nothing to do); the second completion ends the replay.
// That is three calls and two decisions: with the 1 ms step clock, 1500
// µs per decision and 1000 µs per call.
func twoJobs(t *testing.T) Config {
	t.Helper()
	w := &datasets.Workload{Name: "two", Jobs: []datasets.Job{
		{Name: "a", Submit: 0, GPUs: 1, Duration: 100, Model: "cifar10"},
		{Name: "b", Submit: 10, GPUs: 1, Duration: 100, Model: "cifar10"},
	}}
	ps, err := Heuristics(builtin.Registry(), []string{"first-fit"}, env.Sync{})
	if err != nil {
		t.Fatal(err)
	}
	return Config{Policies: ps, Seeds: []uint64{1, 2}, Parallel: 1,
		Options: func(uint64) (trace.Options, error) {
			profiles, _, err := trace.Profiles("", "")
			return trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Nodes: 1, GPUsPerNode: 4,
				Interval: 0, RestartDelay: -1}, err
		}}
}

func TestCompareTiming(t *testing.T) {
	cfg := twoJobs(t)
	untimed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = (&stepClock{}).read
	timed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := timed.Policies[0]
	for _, r := range p.Runs {
		if r.ScheduleCalls != 3 || r.Decisions != 2 || r.ScheduleTime != 3*time.Millisecond {
			t.Errorf("seed %d: %d calls, %d decisions, %v; want 3, 2, 3ms", r.Seed, r.ScheduleCalls, r.Decisions, r.ScheduleTime)
		}
		// One series sample per call, and one at the end.
		if n := len(r.Stragglers.T); n != r.ScheduleCalls+1 {
			t.Errorf("seed %d: %d series samples, want calls+1 = %d", r.Seed, n, r.ScheduleCalls+1)
		}
	}
	if want := (Estimate{Mean: 1500, HalfWidth: 0, N: 2}); p.DecisionTime != want {
		t.Errorf("DecisionTime %+v, want %+v", p.DecisionTime, want)
	}
	if want := (Estimate{Mean: 1000, HalfWidth: 0, N: 2}); p.CallTime != want {
		t.Errorf("CallTime %+v, want %+v", p.CallTime, want)
	}
	// Untimed: the same counts, no time, NaN estimates.
	u := untimed.Policies[0]
	if u.Timed() || untimed.Timed() || u.Runs[0].ScheduleCalls != 3 || u.Runs[0].Decisions != 2 || !math.IsNaN(u.DecisionTime.Mean) || u.DecisionTime.N != 0 {
		t.Errorf("untimed: timed %v, runs %+v, DecisionTime %+v", u.Timed(), u.Runs[0], u.DecisionTime)
	}
	// Timing changes nothing else.
	strip := func(r *Result) *Result {
		for i := range r.Policies {
			p := &r.Policies[i]
			p.DecisionTime, p.CallTime = Estimate{}, Estimate{}
			for k := range p.Runs {
				p.Runs[k].Timed, p.Runs[k].ScheduleTime = false, 0
			}
		}
		return r
	}
	if diff := cmp.Diff(strip(untimed), strip(timed), cmp.Comparer(func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) })); diff != "" {
		t.Errorf("timed vs untimed (-untimed,+timed):\n%s", diff)
	}
}

// The table has a decision-time column only when timed; the JSON has the
// per-policy estimates and per-run times only then, and the counts always.
func TestTimingReports(t *testing.T) {
	cfg := twoJobs(t)
	cfg.Seeds = []uint64{1}
	untimed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = (&stepClock{}).read
	timed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := WriteTable(&a, untimed); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&b, timed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.String(), DecisionTimeHeader) {
		t.Errorf("untimed table has a decision-time column:\n%s", a.String())
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[0], "| "+DecisionTimeHeader+" |") || strings.Count(lines[1], "---") != 11 || !strings.HasSuffix(lines[2], "| 1500 |") {
		t.Errorf("timed table:\n%s", b.String())
	}

	type run struct {
		Calls     int      `json:"schedule_calls"`
		Decisions int      `json:"decisions"`
		Time      *float64 `json:"schedule_time_s"`
	}
	type summary struct {
		Policies []struct {
			DecisionTime *struct{ Mean float64 } `json:"decision_time_us"`
			CallTime     *struct{ Mean float64 } `json:"schedule_call_time_us"`
			Runs         []run                   `json:"runs"`
		} `json:"policies"`
	}
	decode := func(r *Result) summary {
		var js bytes.Buffer
		if err := WriteJSON(&js, r, Meta{}); err != nil {
			t.Fatal(err)
		}
		var s summary
		if err := json.Unmarshal(js.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	u, s := decode(untimed).Policies[0], decode(timed).Policies[0]
	if u.DecisionTime != nil || u.CallTime != nil || u.Runs[0].Time != nil || u.Runs[0].Calls != 3 || u.Runs[0].Decisions != 2 {
		t.Errorf("untimed JSON: %+v", u)
	}
	if s.DecisionTime == nil || s.DecisionTime.Mean != 1500 || s.CallTime == nil || s.CallTime.Mean != 1000 ||
		s.Runs[0].Time == nil || *s.Runs[0].Time != 0.003 {
		t.Errorf("timed JSON: %+v", s)
	}
}

func TestFormatMicros(t *testing.T) {
	tests := []struct {
		us   float64
		want string
	}{{1.5234, "1.52"}, {31.24, "31.2"}, {312.4, "312"}, {2105.3, "2105"}, {0, "0.00"}}
	for _, tt := range tests {
		if got := FormatMicros(tt.us); got != tt.want {
			t.Errorf("FormatMicros(%v) = %q, want %q", tt.us, got, tt.want)
		}
	}
}

var _ policies.Policy = (*script)(nil)

// TestTimingLeavesPerWorkerRunsAlone: timing reads every node's telemetry
// before each call (off the clock); under the per-worker model, whose
// background is made lazily on first read, the runs' figures are still
// those of an untimed comparison, bit for bit.
func TestTimingLeavesPerWorkerRunsAlone(t *testing.T) {
	w := datasets.Builtin()
	w.Jobs = w.Jobs[:60]
	ps, err := Heuristics(builtin.Registry(), []string{"strn", "first-fit"}, env.Sync{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Policies: ps, Seeds: []uint64{4}, Parallel: 1, Options: func(s uint64) (trace.Options, error) {
		profiles, _, err := trace.Profiles("", "")
		return trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Nodes: 8, GPUsPerNode: 4,
			RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: s}}, err
	}}
	untimed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = (&stepClock{}).read
	timed, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if a, b := untimed.Policies[i].Runs[0].Summary, timed.Policies[i].Runs[0].Summary; a != b {
			t.Errorf("%s: timed %+v, untimed %+v", ps[i].Name, b, a)
		}
	}
}
