package state_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/state"
)

// iterTimes returns n distinct iteration times around 0.1 s, each with
// as many digits as the others (so that snapshots of equal counts have
// equal sizes).
func iterTimes(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 0.1 + float64(i%1000)*1e-6 + 1e-9
	}
	return s
}

// TestIterationTimesBounded is issue 32's case at a tenth of its size:
// eight reports of 1,500 workers x 256 iteration times (3.07 million
// times, the 81 took the server from 50 to 816 MiB and state.json
// to 67 MB). The store keeps at most MaxIterationTimes (default 2^20) of
// them, so its snapshot is no bigger than that of a store that holds
// just the budget's worth, whatever more the cluster reports.
func TestIterationTimesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("3 million iteration times")
	}
	const workers, perWorker = 1500, 256
	secs := iterTimes(perWorker)
	report := func(st *state.Store, job, workers int) {
		for w := range workers {
			st.JobIterations(fmt.Sprintf("job-%03d", job), w, fmt.Sprintf("node-%04d", w), secs, 0, at(float64(job)))
		}
	}
	// The reference: the budget's worth, 2^20 times in four jobs of 1,024
	// workers (the default MaxJobWorkers) x 256.
	budget := state.Config{}.WithDefaults().MaxIterationTimes
	ref := newStore(t, state.Config{})
	for job := range budget / (1024 * perWorker) {
		report(ref, job, 1024)
	}
	refSize := len(mustMarshal(t, ref))

	st := newStore(t, state.Config{})
	for job := range 8 {
		report(st, job, workers)
	}
	size := len(mustMarshal(t, st))
	t.Logf("snapshot after %d times: %d bytes; of the budget's worth: %d bytes", 8*workers*perWorker, size, refSize)
	if size > refSize+refSize/20 {
		t.Errorf("snapshot after 8 x 1,500 x 256 iteration times: %d bytes, more than 1.05 x the %d bytes of %d times (the budget)", size, refSize, budget)
	}
}

// TestJobsBounded feeds 20,000 distinct jobs through the cluster's
// reports and 20,000 through one agent (an unauthenticated iteration
// endpoint posted to in a loop): the store holds at most MaxJobs, that
// agent's jobs at most MaxJobsPerNode, each eviction is counted, and the
// snapshot stays the size of MaxJobs jobs.
func TestJobsBounded(t *testing.T) {
	const maxJobs, perNode, n = 500, 50, 20_000
	st := newStore(t, state.Config{MaxJobs: maxJobs, MaxJobsPerNode: perNode})
	mustHello(t, st, hello("n1", "a1"), at(0))
	var sizeAtLimit int
	for i := range n {
		st.JobIterations(fmt.Sprintf("job-%05d", i), 0, "", iterTimes(8), 0, at(float64(i)))
		if i == maxJobs-1 {
			sizeAtLimit = len(mustMarshal(t, st))
		}
	}
	if got := st.Jobs(); got != maxJobs {
		t.Errorf("%d jobs after %d, want MaxJobs %d", got, n, maxJobs)
	}
	sum := st.Summarize(at(n))
	if diff := cmp.Diff(state.Evictions{MaxJobs: n - maxJobs}, sum.Evicted); diff != "" {
		t.Errorf("evictions after the cluster's jobs (-want,+got):\n%s", diff)
	}
	if size := len(mustMarshal(t, st)); size > sizeAtLimit+sizeAtLimit/20 {
		t.Errorf("snapshot of %d jobs after %d: %d bytes, more than 1.05 x the %d bytes at the limit", maxJobs, n, size, sizeAtLimit)
	}
	// The agent's jobs push out the cluster's only up to its quota.
	for i := range n {
		mustApply(t, st, "n1", itersMsg(uint64(i+1), fmt.Sprintf("posted-%05d", i), 0, iterTimes(8)...), at(float64(n+i)))
	}
	posted := 0
	for _, id := range jobIDs(t, st) {
		if id[:6] == "posted" {
			posted++
		}
	}
	if st.Jobs() != maxJobs || posted != perNode {
		t.Errorf("after the agent's %d jobs: %d jobs, %d of them the agent's; want %d, %d", n, st.Jobs(), posted, maxJobs, perNode)
	}
	sum = st.Summarize(at(2 * n))
	want := state.Evictions{MaxJobs: n - maxJobs + perNode, NodeQuota: n - perNode}
	if diff := cmp.Diff(want, sum.Evicted); diff != "" {
		t.Errorf("evictions after the agent's jobs (-want,+got):\n%s", diff)
	}
	// A job the cluster reports on leaves the agent's quota: the agent's
	// next job no longer pushes it out.
	st.JobModel("posted-19999", "bert", at(2*n))
	mustApply(t, st, "n1", itersMsg(n+1, "posted-x", 0, 1), at(2*n+1))
	if !contains(jobIDs(t, st), "posted-19999") {
		t.Error("a job the cluster reported on was evicted for the agent's quota")
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// TestJobWorkersBounded: a job keeps at most MaxJobWorkers workers'
// times; reports for more are dropped and counted.
func TestJobWorkersBounded(t *testing.T) {
	st := newStore(t, state.Config{MaxJobWorkers: 4})
	for w := range 10 {
		st.JobIterations("j", w, "", iterTimes(8), 0, at(1))
	}
	st.JobIterations("j", 2, "", iterTimes(8), 0, at(2)) // a kept worker: kept
	sum := st.Summarize(at(2))
	if sum.IterationTimes != 5*8 || sum.Evicted.Workers != 6 {
		t.Errorf("%d times kept, %d reports dropped; want 40 (4 workers x 8, worker 2 twice), 6", sum.IterationTimes, sum.Evicted.Workers)
	}
}

// TestIterationBudgetEvicts: a report beyond MaxIterationTimes forgets
// other jobs in MaxJobs' order (finished first), never its own job, and
// its own times beyond the budget are dropped.
func TestIterationBudgetEvicts(t *testing.T) {
	st := newStore(t, state.Config{MaxIterationTimes: 20, ProfileIterations: 16})
	st.JobIterations("a", 0, "", iterTimes(8), 0, at(1))
	st.JobIterations("b", 0, "", iterTimes(8), 0, at(2))
	st.JobFinished("b", at(3))
	st.JobIterations("c", 0, "", iterTimes(8), 0, at(4)) // b (finished) goes
	if diff := cmp.Diff([]string{"a", "c"}, jobIDs(t, st)); diff != "" {
		t.Errorf("jobs (-want,+got):\n%s", diff)
	}
	st.JobIterations("c", 1, "", iterTimes(16), 0, at(5)) // a goes, 4 of c's fit
	if diff := cmp.Diff([]string{"c"}, jobIDs(t, st)); diff != "" {
		t.Errorf("jobs (-want,+got):\n%s", diff)
	}
	sum := st.Summarize(at(5))
	if sum.IterationTimes != 20 || sum.Evicted.IterationTimes != 2 {
		t.Errorf("%d times, %d jobs evicted for them; want 20, 2", sum.IterationTimes, sum.Evicted.IterationTimes)
	}
}

// TestLoadBounded: a snapshot of a store with larger limits loads into
// smaller ones, keeping the jobs the store would have kept, and loads
// back the same.
func TestLoadBounded(t *testing.T) {
	big := newStore(t, state.Config{})
	mustHello(t, big, hello("n1", "a1"), at(0))
	for i := range 40 {
		big.JobIterations(fmt.Sprintf("job-%02d", i), 0, "", iterTimes(8), 0, at(float64(i)))
		mustApply(t, big, "n1", itersMsg(uint64(i+1), fmt.Sprintf("posted-%02d", i), 0, iterTimes(8)...), at(float64(i)))
	}
	big.JobFinished("job-39", at(50)) // finished: the first to go
	small := newStore(t, state.Config{MaxJobs: 20, MaxJobsPerNode: 5, MaxIterationTimes: 8 * 18})
	path := t.TempDir() + "/state.json"
	if err := big.Save(path, at(60)); err != nil {
		t.Fatal(err)
	}
	st, err := state.Load(path, small.Config())
	if err != nil {
		t.Fatal(err)
	}
	// Within 20 jobs, the agent's five newest and the newest unfinished
	// of the cluster's (on a tie in time the cluster's job-i goes before
	// posted-i: the smaller id), job-24 to job-38; then within 144
	// times (18 jobs of 8), job-24 and job-25 go too.
	want := []string{"job-26", "job-27", "job-28", "job-29", "job-30", "job-31", "job-32", "job-33", "job-34", "job-35", "job-36", "job-37", "job-38",
		"posted-35", "posted-36", "posted-37", "posted-38", "posted-39"}
	if diff := cmp.Diff(want, jobIDs(t, st)); diff != "" {
		t.Errorf("jobs loaded (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(string(mustMarshal(t, st)), string(mustMarshal(t, saveLoad(t, st)))); diff != "" {
		t.Errorf("re-saved snapshot differs (-first,+second):\n%s", diff)
	}
}

// TestExpireJobs: jobs an agent's iteration reports created are
// forgotten once no report has touched them for AgentJobTTL, the
// cluster's jobs (and an agent job the cluster then reported on) never,
// and each expiry is counted. Times in seconds, worked by hand: TTL 60 s,
// agent jobs touched at 0, 10 and 50 s, swept at 65 s (the one of 0 s
// goes), 75 s (10 s) and 200 s (50 s).
func TestExpireJobs(t *testing.T) {
	st := newStore(t, state.Config{AgentJobTTL: 60 * 1e9})
	mustHello(t, st, hello("n1", "a1"), at(0))
	st.JobIterations("cluster-job", 0, "", iterTimes(4), 0, at(0))
	mustApply(t, st, "n1", itersMsg(1, "agent-0", 0, iterTimes(4)...), at(0))
	mustApply(t, st, "n1", itersMsg(2, "agent-10", 0, iterTimes(4)...), at(10))
	mustApply(t, st, "n1", itersMsg(3, "agent-50", 0, iterTimes(4)...), at(50))
	mustApply(t, st, "n1", itersMsg(4, "adopted", 0, iterTimes(4)...), at(0))
	st.JobIterations("adopted", 1, "", iterTimes(4), 0, at(1)) // the cluster reports on it: no longer charged
	for _, c := range []struct {
		at   float64
		gone int
		left []string
	}{
		{59, 0, []string{"adopted", "agent-0", "agent-10", "agent-50", "cluster-job"}},
		{65, 1, []string{"adopted", "agent-10", "agent-50", "cluster-job"}},
		{75, 1, []string{"adopted", "agent-50", "cluster-job"}},
		{200, 1, []string{"adopted", "cluster-job"}},
		{1e6, 0, []string{"adopted", "cluster-job"}},
	} {
		if got := st.ExpireJobs(at(c.at)); got != c.gone {
			t.Errorf("sweep at %v s forgot %d jobs, want %d", c.at, got, c.gone)
		}
		if diff := cmp.Diff(c.left, jobIDs(t, st)); diff != "" {
			t.Errorf("jobs after the sweep at %v s (-want,+got):\n%s", c.at, diff)
		}
	}
	if got := st.Summarize(at(1e6)).Evicted; got != (state.Evictions{Expired: 3}) {
		t.Errorf("evictions %+v, want 3 expired", got)
	}
}

// TestExpireFinishedJobs: a finished job is forgotten FinishedJobTTL
// after its end, a running one never (TTL 30 s; ends at 10 and 40 s,
// swept at 39, 41 and 71 s, worked by hand), and each is counted.
func TestExpireFinishedJobs(t *testing.T) {
	st := newStore(t, state.Config{FinishedJobTTL: 30 * 1e9})
	for _, id := range []string{"a", "b", "running"} {
		st.JobIterations(id, 0, "", iterTimes(4), 0, at(0))
	}
	st.JobFinished("a", at(10))
	st.JobFinished("b", at(40))
	for _, c := range []struct {
		at   float64
		gone int
		left []string
	}{
		{39, 0, []string{"a", "b", "running"}},
		{41, 1, []string{"b", "running"}},
		{71, 1, []string{"running"}},
		{1e6, 0, []string{"running"}},
	} {
		if got := st.ExpireJobs(at(c.at)); got != c.gone {
			t.Errorf("sweep at %v s forgot %d jobs, want %d", c.at, got, c.gone)
		}
		if diff := cmp.Diff(c.left, jobIDs(t, st)); diff != "" {
			t.Errorf("jobs after the sweep at %v s (-want,+got):\n%s", c.at, diff)
		}
	}
	if got := st.Summarize(at(1e6)).Evicted; got != (state.Evictions{FinishedExpired: 2}) {
		t.Errorf("evictions %+v, want 2 finished expired", got)
	}
}
