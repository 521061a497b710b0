package state_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/state"
)

// TestRunningVersion: RunningVersion changes with every change to the
// running jobs (a start, a finish, a running job forgotten to make room)
// and with nothing else (a job that has not started, iteration reports, a
// finished job forgotten), RangeRunning visits exactly the running jobs'
// nodes at the version it returns, RunningSince's changes bring a count
// of them from one version to the next, and a reader further behind than
// the changes kept (a number of changes, and of their workers) is told to
// start again.
func TestRunningVersion(t *testing.T) {
	st, err := state.New(state.Config{MaxJobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	ranged := func() ([]string, uint64) {
		var got []string
		v := st.RangeRunning(func(nodes []string) { got = append(got, nodes...) })
		slices.Sort(got)
		return got, v
	}
	steps := []struct {
		name    string
		do      func()
		changed bool
		nodes   []string
	}{
		{"a job's model", func() { st.JobModel("a", "cifar10", at(0)) }, false, nil},
		{"iterations of a job not started", func() { st.JobIterations("a", 0, "n0", []float64{1, 1}, 0, at(1)) }, false, nil},
		{"a starts", func() { st.JobStarted("a", "", []string{"n0", "n1"}, at(2), at(2)) }, true, []string{"n0", "n1"}},
		{"b starts", func() { st.JobStarted("b", "", []string{"n1"}, at(3), at(3)) }, true, []string{"n0", "n1", "n1"}},
		{"iterations of a running job", func() { st.JobIterations("b", 0, "n1", []float64{1}, 0, at(4)) }, false, []string{"n0", "n1", "n1"}},
		{"b finishes", func() { st.JobFinished("b", at(5)) }, true, []string{"n0", "n1"}},
		{"b finishes again", func() { st.JobFinished("b", at(6)) }, false, []string{"n0", "n1"}},
		{"c and d, not started (d forgets finished b)", func() {
			st.JobModel("c", "x", at(7))
			st.JobModel("d", "x", at(7))
		}, false, []string{"n0", "n1"}},
		{"e forgets running a", func() { st.JobModel("e", "x", at(8)) }, true, nil},
	}
	// since follows the running jobs' nodes through RunningSince alone.
	since := map[string]int{}
	_, last := ranged()
	for _, s := range steps {
		s.do()
		if v := st.RunningVersion(); (v != last) != s.changed {
			t.Errorf("%s: version %d -> %d, want changed %v", s.name, last, v, s.changed)
		}
		nodes, v := ranged()
		if v != st.RunningVersion() {
			t.Errorf("%s: RangeRunning's version %d, RunningVersion %d", s.name, v, st.RunningVersion())
		}
		if diff := cmp.Diff(s.nodes, nodes); diff != "" {
			t.Errorf("%s: running nodes (-want,+got):\n%s", s.name, diff)
		}
		if to, ok := st.RunningSince(last, func(nodes []string, d int) {
			for _, n := range nodes {
				since[n] += d
			}
		}); !ok || to != v {
			t.Errorf("%s: RunningSince(%d) = %d, %v; want %d, true", s.name, last, to, ok, v)
		}
		want := map[string]int{}
		for _, n := range nodes {
			want[n]++
		}
		maps.DeleteFunc(since, func(_ string, c int) bool { return c == 0 })
		if diff := cmp.Diff(want, since); diff != "" {
			t.Errorf("%s: workers per node through RunningSince (-want,+got):\n%s", s.name, diff)
		}
		last = v
	}
	// A reader more than the kept changes behind is told to start again.
	for k := range 3000 {
		st.JobStarted("a", "", []string{fmt.Sprint("n", k%7)}, at(9), at(9))
	}
	if _, ok := st.RunningSince(last, func([]string, int) { t.Fatal("called") }); ok {
		t.Errorf("RunningSince %d versions back: ok", st.RunningVersion()-last)
	}
	if _, ok := st.RunningSince(st.RunningVersion()-10, func([]string, int) {}); !ok {
		t.Errorf("RunningSince 10 versions back: not ok")
	}
	// The changes kept are bounded by their workers too (2^16 to 2^17):
	// 1,000-worker jobs keep between 65 and 131 changes.
	big := make([]string, 1000)
	for k := range big {
		big[k] = fmt.Sprint("n", k)
	}
	for range 200 {
		st.JobStarted("a", "", big, at(10), at(10))
	}
	if _, ok := st.RunningSince(st.RunningVersion()-132, func([]string, int) {}); ok {
		t.Errorf("RunningSince 132 changes of 1,000 workers back: ok")
	}
	if _, ok := st.RunningSince(st.RunningVersion()-64, func([]string, int) {}); !ok {
		t.Errorf("RunningSince 64 changes of 1,000 workers back: not ok")
	}
}
