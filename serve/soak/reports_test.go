package soak

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJobReports(t *testing.T) {
	// Job 5 of 4 workers on 64 nodes: started on node-5..node-8, one
	// Iterations per worker, then Finished. Job 7 (7 % 4 == 3) never
	// finishes.
	reqs := jobReports("j-5", 5, 4, 16, 64)
	if len(reqs) != 2 || len(reqs[0].GetOutcomes()) != 5 || reqs[1].GetOutcomes()[0].GetFinished() == nil {
		t.Fatalf("job 5: %v", reqs)
	}
	if got := reqs[0].GetOutcomes()[0].GetStarted().GetNodeIds(); !cmp.Equal(got, []string{"node-5", "node-6", "node-7", "node-8"}) {
		t.Errorf("job 5 started on %v", got)
	}
	// Worker 1's times: 0.1 + 0.001 x ((5+1+k) % 7) for k = 0, 1, 2: 0.106, 0.100, 0.101.
	secs := reqs[0].GetOutcomes()[2].GetIterations().GetSeconds()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if len(secs) != 16 || !near(secs[0], 0.106) || !near(secs[1], 0.100) || !near(secs[2], 0.101) {
		t.Errorf("worker 1's times %v", secs)
	}
	if reqs := jobReports("j-7", 7, 4, 16, 64); len(reqs) != 1 {
		t.Errorf("job 7: %d reports, want 1 (it never finishes)", len(reqs))
	}
}
