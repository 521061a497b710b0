package bc

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
)

// greedy is the most probable valid action of net's output, the first on
// a tie (as the learned policies run their actors).
func greedy(net *nn.MLP) Actor {
	f, err := nn.NewInfer(net)
	if err != nil {
		panic(err)
	}
	return func(obs []float64, mask []bool) int { return nn.MaskedArgmax(f.Forward(obs), mask) }
}

// teacherSamples are n decisions of a teacher that takes the valid action
// with the largest observed score (obs[a]), with a random half of the
// actions masked (one valid at least).
func teacherSamples(n, actions int, rng *rand.Rand) []Sample {
	out := make([]Sample, n)
	for i := range out {
		s := Sample{Obs: make([]float64, actions), Mask: make([]bool, actions), Action: -1}
		for a := range actions {
			s.Obs[a] = rng.Float64()
			s.Mask[a] = rng.IntN(2) == 0
		}
		s.Mask[rng.IntN(actions)] = true
		for a, ok := range s.Mask {
			if ok && (s.Action < 0 || s.Obs[a] > s.Obs[s.Action]) {
				s.Action = a
			}
		}
		out[i] = s
	}
	return out
}

func params(net *nn.MLP) []float32 {
	var out []float32
	for _, p := range net.Params() {
		out = append(out, p.Value...)
	}
	return out
}

// TestCloneLearnsTheTeacher: an actor cloned on a teacher's masked
// argmax decisions takes the teacher's action on at least 95% of the
// held-back tenth (it starts near uniform: about 1 in 3 of the valid
// actions), the same seed gives the same network bit for bit, and the
// cross-entropy is logged every LogEvery epochs and at the last.
func TestCloneLearnsTheTeacher(t *testing.T) {
	const actions = 6
	run := func(seed uint64, log io.Writer) (*nn.MLP, float64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		samples := teacherSamples(3000, actions, rng)
		actor := nn.NewOrthogonalMLP([]int{actions, 64, actions}, nn.NewTanh, math.Sqrt2, 0.01, rng)
		cfg := Config{Epochs: 30, Batch: 64, LR: 3e-3, LogEvery: 7, Log: log}
		return actor, Clone(actor, samples, cfg, rng, greedy)
	}
	var log bytes.Buffer
	a, agree := run(1, &log)
	if agree < 0.95 {
		t.Errorf("agreement %.3f on held-back decisions, want at least 0.95", agree)
	}
	b, again := run(1, nil)
	if again != agree || !slices.Equal(params(a), params(b)) {
		t.Errorf("two runs of one seed differ (agreement %v, %v)", agree, again)
	}
	var epochs []string
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		epochs = append(epochs, strings.Fields(line)[2])
	}
	if want := []string{"7", "14", "21", "28", "30"}; !slices.Equal(epochs, want) {
		t.Errorf("logged epochs %v, want %v", epochs, want)
	}
}

// TestCloneHoldsBackEveryTenth: with fewer than ten samples none is held
// back and the agreement is NaN.
func TestCloneHoldsBackEveryTenth(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	samples := teacherSamples(9, 3, rng)
	actor := nn.NewOrthogonalMLP([]int{3, 8, 3}, nn.NewTanh, math.Sqrt2, 0.01, rng)
	if got := Clone(actor, samples, Config{Epochs: 1, Batch: 4, LR: 1e-3}, rng, greedy); !math.IsNaN(got) {
		t.Errorf("agreement %v with nothing held back, want NaN", got)
	}
}
