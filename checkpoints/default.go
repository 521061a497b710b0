package checkpoints

import (
	_ "embed"

	"github.com/drover-sched/drover/agents/nn"
)

// The pretrained default: the placement policy that `drover train` with no
// flags trains (PPO, 100,000 steps, seed 1, the built-in workload on 16 x
// 4 GPUs with the per-worker model). Reproduce it, bit for bit on one
// machine, with
//
//	go run ./cmd/drover train --quiet --out /tmp/default
//	cmp /tmp/default/weights.safetensors checkpoints/default/weights.safetensors
//
// Its gate verdict is recorded in its metadata: not converged (it does not
// beat first-fit by the 2% margin), so a server loading it answers with
// the heuristic.
var (
	//go:embed default/meta.json
	defaultMeta []byte
	//go:embed default/weights.safetensors
	defaultWeights []byte
)

// Default returns the embedded pretrained placement policy, checked like
// any checkpoint (its probe outputs must match).
func Default() (Meta, map[string]*nn.MLP, error) {
	return Decode(defaultMeta, defaultWeights)
}

// DefaultFiles returns the embedded default's two files (meta.json and
// weights.safetensors), for writing it out as a checkpoint directory.
func DefaultFiles() (metaJSON, weights []byte) {
	return append([]byte(nil), defaultMeta...), append([]byte(nil), defaultWeights...)
}
