package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env/placement"
)

// replayAll's GPU-held hours depend only on the seed and each prefix, not
// on how many environments replay them; a prefix of the heuristic's own
// choices (action 0) replays the all-heuristic episode.
func TestReplayAll(t *testing.T) {
	pcfg, _, _, err := builtinEnvConfig(16, 4, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if pcfg.NewProposer, err = Proposer("sas"); err != nil {
		t.Fatal(err)
	}
	pcfg.Objective = placement.ObjectiveTTA
	mk := envMaker(pcfg)
	envs := func(n int) []*placement.Env {
		var es []*placement.Env
		for range n {
			es = append(es, mk(0).(*placement.Env))
		}
		return es
	}
	prefixes := [][]int{nil, {0, 0, 0}, {1}, {0, 2}, {2, 1, 2}}
	one := replayAll(envs(1), 7, prefixes)
	if diff := cmp.Diff(one, replayAll(envs(3), 7, prefixes)); diff != "" {
		t.Errorf("1 vs 3 environments (-1,+3):\n%s", diff)
	}
	if one[0] <= 0 || one[0] != one[1] {
		t.Errorf("GPU-held hours %v: want the all-heuristic replay (first) positive and equal to the prefix of action 0s (second)", one)
	}
}
