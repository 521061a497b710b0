package gate

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Config tunes the convergence gate.
type Config struct {
	// Margin is the relative improvement the learned policy must show
	// (default 0.02: 2% lower cost).
	Margin float64
	// Confidence is the one-sided confidence level (default 0.95).
	Confidence float64
	// Resamples is the number of bootstrap resamples (default 10,000).
	Resamples int
	// Seed seeds the bootstrap.
	Seed uint64
}

// WithDefaults returns c with its zero Margin, Confidence and Resamples
// set to the defaults (2%, 95%, 10,000), as Judge reads them.
func (c Config) WithDefaults() Config {
	if c.Margin == 0 {
		c.Margin = 0.02
	}
	if c.Confidence == 0 {
		c.Confidence = 0.95
	}
	if c.Resamples == 0 {
		c.Resamples = 10000
	}
	return c
}

// Verdict is the gate's decision and the evidence for it.
type Verdict struct {
	// Converged is true when the learned policy beats the baseline by at
	// least Margin with the given confidence.
	Converged bool
	// MeanGain is the mean relative improvement over the episodes,
	// (baseline - learned) / baseline, and Lower its one-sided lower
	// confidence bound from the paired bootstrap.
	MeanGain, Lower float64
	// Episodes is the number of paired episodes.
	Episodes int
}

// String summarises the verdict in one line.
func (v Verdict) String() string {
	verdict := "not converged"
	if v.Converged {
		verdict = "converged"
	}
	return fmt.Sprintf("%s: mean gain %.1f%%, lower bound %.1f%% over %d paired episodes", verdict, 100*v.MeanGain, 100*v.Lower, v.Episodes)
}

// Judge decides whether a learned policy replaces a heuristic. learned[i]
// and baseline[i] are the two policies' costs (e.g. average JCT, lower is
// better) on the same held-out episode i. The per-episode relative gains
// g_i = (baseline_i - learned_i) / baseline_i are resampled with
// replacement (a paired bootstrap: pairing removes the episodes' own
// variation), and the gate opens when the Confidence-quantile lower bound
// of the mean gain exceeds Margin. With fewer than two episodes it stays
// closed. It panics when the slices' lengths differ.
func Judge(learned, baseline []float64, c Config) Verdict {
	if len(learned) != len(baseline) {
		panic("gate: Judge needs paired episodes")
	}
	c = c.WithDefaults()
	n := len(learned)
	v := Verdict{Episodes: n}
	if n == 0 {
		return v
	}
	gains := make([]float64, n)
	for i := range gains {
		gains[i] = (baseline[i] - learned[i]) / baseline[i]
		v.MeanGain += gains[i] / float64(n)
	}
	if n < 2 {
		v.Lower = v.MeanGain
		return v
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x67617465))
	means := make([]float64, c.Resamples)
	for r := range means {
		s := 0.0
		for range n {
			s += gains[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	slices.Sort(means)
	v.Lower = means[int((1-c.Confidence)*float64(c.Resamples))]
	v.Converged = v.Lower > c.Margin
	return v
}
