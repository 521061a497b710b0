package restore

import (
	"fmt"
	"path/filepath"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/train"
)

// Policy is the contender for a checkpoint directory of drover train
// --env sas-rl or strn-rl: a direct policy (policies/direct; --algo bc,
// ppo or dqn), or a candidate re-ranker (--algo bandit or rerank-ppo): the
// heuristic's candidates, chosen greedily by the checkpoint's actor
// (placement.Learned). Each run gets its own copy of the network. A direct
// policy's Teacher is the heuristic it was cloned from
// (direct.TeacherOf).
func Policy(dir string) (compare.Policy, error) {
	mb, wb, err := checkpoints.ReadFiles(dir)
	if err != nil {
		return compare.Policy{}, err
	}
	m, nets, err := checkpoints.Decode(mb, wb)
	if err != nil {
		return compare.Policy{}, fmt.Errorf("%s: %w", dir, err)
	}
	if direct.IsDirect(m) { // a direct policy: no heuristic in the loop
		mk, err := direct.FromCheckpoint(m, nets)
		if err != nil {
			return compare.Policy{}, fmt.Errorf("%s: %w", dir, err)
		}
		name := fmt.Sprintf("%s@%s", m.Env, filepath.Base(filepath.Clean(dir)))
		return compare.Policy{Name: name, Teacher: direct.TeacherOf(m.Env), New: func(uint64) (policies.Policy, error) { return mk(), nil }}, nil
	}
	heuristic, ok := train.VariantHeuristics()[m.Env]
	if !ok || m.Actions != placement.DefaultCandidates {
		return compare.Policy{}, fmt.Errorf("%s: a checkpoint of env %q with %d actions cannot be replayed over the simulator (want sas-rl or strn-rl, %d actions; the placement and sync envs' policies are served by drover serve)",
			dir, m.Env, m.Actions, placement.DefaultCandidates)
	}
	name := fmt.Sprintf("%s@%s", m.Env, filepath.Base(filepath.Clean(dir)))
	return compare.Policy{Name: name, New: func(uint64) (policies.Policy, error) {
		_, nets, err := checkpoints.Decode(mb, wb)
		if err != nil {
			return nil, err
		}
		newProp, err := train.Proposer(heuristic)
		if err != nil {
			return nil, err
		}
		var act func([]float64, []bool) int
		if _, ok := nets["q0"]; ok {
			act = ensembleAct(m, nets)
		} else {
			net := nets["actor"] // PPO; a contextual bandit's values are "q"
			if net == nil {
				net = nets["q"]
			}
			act = train.Greedy(net)
		}
		if m.Support != nil { // train.support: the heuristic's choice outside it
			act = m.Support.Gate(act)
		}
		return placement.Learned(newProp, placement.DefaultCandidates, act), nil
	}}, nil
}

// ensembleAct is the decision rule of a bootstrapped bandit ensemble's
// checkpoint (train.heads > 1): networks q0, q1, ... and the margin and z
// of bandit.Ensemble.ActLower in the hyperparameters.
func ensembleAct(m checkpoints.Meta, nets map[string]*nn.MLP) func([]float64, []bool) int {
	var qs []*nn.MLP
	for h := 0; nets[fmt.Sprintf("q%d", h)] != nil; h++ {
		qs = append(qs, nets[fmt.Sprintf("q%d", h)])
	}
	e := bandit.EnsembleOf(qs, m.ObsDim)
	margin, z := m.Hyperparams["margin"], m.Hyperparams["lower_z"]
	return func(obs []float64, mask []bool) int { return e.ActLower(obs, mask, margin, z) }
}
