package bc

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
)

// Sample is one decision of a teacher: the observation it was made on,
// the valid actions (Mask[a] true) and the action taken.
type Sample struct {
	Obs    []float64
	Mask   []bool
	Action int
}

// Config shapes a cloning run.
type Config struct {
	// Epochs is the passes over the training samples.
	Epochs int
	// Batch is the minibatch size (at most the training samples).
	Batch int
	// LR is Adam's learning rate.
	LR float64
	// LogEvery is how often, in epochs, the epoch's mean cross-entropy is
	// written to Log; the last epoch's always is.
	LogEvery int
	// Log gets the progress lines (nil: none).
	Log io.Writer
}

// Actor picks an action for an observation among the valid ones.
type Actor = func(obs []float64, mask []bool) int

// Clone fits actor to samples by minimising the masked cross-entropy of
// the teacher's actions, holding back every tenth sample, and returns the
// share of held-back samples on which greedy(actor), the actor as its
// policy runs it, takes the teacher's action (NaN when none is held
// back). Minibatches are drawn by shuffling with rng; the same inputs
// give the same network, bit for bit. samples must not be empty.
func Clone(actor *nn.MLP, samples []Sample, cfg Config, rng *rand.Rand, greedy func(*nn.MLP) Actor) float64 {
	var train, held []Sample
	for i, s := range samples {
		if i%10 == 9 {
			held = append(held, s)
		} else {
			train = append(train, s)
		}
	}
	if len(train) == 0 {
		train = samples
	}
	obsDim, nA := len(samples[0].Obs), len(samples[0].Mask)
	opt := nn.NewAdam(actor.Params(), cfg.LR, 1e-5)
	B := min(cfg.Batch, len(train))
	x := nn.NewMat(B, obsDim)
	mask := make([]bool, B*nA)
	acts := make([]int, B)
	dOut := make([]float32, B)
	idx := make([]int, len(train))
	for i := range idx {
		idx[i] = i
	}
	for ep := range cfg.Epochs {
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		loss, n := 0.0, 0
		for lo := 0; lo+B <= len(idx); lo += B {
			for k, id := range idx[lo : lo+B] {
				s := train[id]
				for i, v := range s.Obs {
					x.Data[k*obsDim+i] = float32(v)
				}
				copy(mask[k*nA:(k+1)*nA], s.Mask)
				acts[k] = s.Action
				dOut[k] = -1 / float32(B) // d(-mean log p)
			}
			actor.ZeroGrad()
			dist := nn.NewCategorical(actor.Forward(x), mask)
			for _, lp := range dist.LogProb(acts) {
				loss -= float64(lp)
			}
			n += B
			actor.Accumulate(dist.LogProbGrad(acts, dOut))
			nn.ClipGradNorm(actor.Params(), 1)
			opt.Step()
		}
		if cfg.Log != nil && ((cfg.LogEvery > 0 && (ep+1)%cfg.LogEvery == 0) || ep == cfg.Epochs-1) {
			fmt.Fprintf(cfg.Log, "bc: epoch %d cross-entropy %.4f\n", ep+1, loss/float64(max(n, 1)))
		}
	}
	if len(held) == 0 {
		return math.NaN()
	}
	act := greedy(actor)
	agree := 0
	for _, s := range held {
		if act(s.Obs, s.Mask) == s.Action {
			agree++
		}
	}
	return float64(agree) / float64(len(held))
}
