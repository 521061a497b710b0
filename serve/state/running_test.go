package state_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/state"
)

// TestRunningVersion: RunningVersion changes with every change to the
// running jobs (a start, a finish, a running job forgotten to make room)
// and with nothing else (a job that has not started, iteration reports, a
// finished job forgotten), and RangeRunning visits exactly the running
// jobs' nodes at the version it returns.
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
		last = v
	}
}
