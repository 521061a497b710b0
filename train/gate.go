package train

import "github.com/drover-sched/drover/policies/gate"

// GateConfig tunes the convergence gate (policies/gate.Config).
type GateConfig = gate.Config

// Verdict is the gate's decision and the evidence for it
// (policies/gate.Verdict).
type Verdict = gate.Verdict

// Gate decides whether a learned policy replaces a heuristic from the two
// policies' costs on the same held-out episodes (learned[i] and
// baseline[i] on episode i, lower is better); it is policies/gate.Judge,
// which the policy server calls too. It panics when the slices' lengths
// differ.
func Gate(learned, baseline []float64, c GateConfig) Verdict {
	return gate.Judge(learned, baseline, c)
}
