package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MaskedLogit is the logit given to invalid actions, as sb3-contrib's
// MaskableCategorical does (-1e8 in float32): large enough that exp underflows
// to exactly 0 after the max is subtracted, finite so 0·logit stays 0 (no NaN).
const MaskedLogit float32 = -1e8

// Categorical is a batch of categorical distributions, one per row of
// logits, with an optional action mask. It mirrors
// torch.distributions.Categorical(logits=...) and, with a mask, sb3-contrib's
// MaskableCategorical: invalid actions' logits are replaced by MaskedLogit,
// so they get probability 0, contribute 0 to the entropy, and receive zero
// gradient.
type Categorical struct {
	// Logits are the (masked) logits, n x k.
	Logits Mat
	// LogProbs are the normalised log-probabilities log softmax(Logits).
	LogProbs Mat
	// Probs are the probabilities softmax(Logits).
	Probs Mat
	// Mask, if not nil, has one entry per logit; true marks a valid action.
	Mask []bool
}

// NewCategorical builds the distributions for logits (n rows of k actions).
// mask is nil (all actions valid) or has n*k entries, row-major, true for a
// valid action. logits is not modified. It panics if mask has the wrong length
// or if a row has no valid action.
func NewCategorical(logits Mat, mask []bool) *Categorical {
	if mask != nil && len(mask) != len(logits.Data) {
		panic(fmt.Sprintf("nn: mask has %d entries, logits %d", len(mask), len(logits.Data)))
	}
	c := &Categorical{Logits: logits.Clone(), Mask: mask,
		LogProbs: NewMat(logits.Rows, logits.Cols), Probs: NewMat(logits.Rows, logits.Cols)}
	for i := 0; i < logits.Rows; i++ {
		z := c.Logits.Row(i)
		valid := false
		for j := range z {
			if mask != nil && !mask[i*logits.Cols+j] {
				z[j] = MaskedLogit
			} else {
				valid = true
			}
		}
		if !valid {
			panic(fmt.Sprintf("nn: categorical row %d has no valid action", i))
		}
		// log-sum-exp in float64 with the max subtracted.
		mx := math.Inf(-1)
		for _, v := range z {
			mx = max(mx, float64(v))
		}
		// With a finite max, s is in [1, cols] and a masked logit's exp
		// underflows to exactly 0 (math.Exp is 0 below about -745.1) unless
		// the valid ones are near MaskedLogit themselves, so it can be
		// skipped without changing a bit.
		skip := !math.IsInf(mx, 0) && float64(MaskedLogit)-mx < -746
		var s float64
		for _, v := range z {
			if skip && v == MaskedLogit {
				continue // s + 0
			}
			s += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(s)
		lp, p := c.LogProbs.Row(i), c.Probs.Row(i)
		for j, v := range z {
			l := float64(v) - lse
			lp[j] = float32(l)
			if skip && v == MaskedLogit {
				p[j] = 0 // float32(math.Exp(l)), as l < mx - lse - 746 <= -746
				continue
			}
			p[j] = float32(math.Exp(l))
		}
	}
	return c
}

func (c *Categorical) valid(i, j int) bool {
	return c.Mask == nil || c.Mask[i*c.Logits.Cols+j]
}

func (c *Categorical) checkActions(actions []int) {
	if len(actions) != c.Logits.Rows {
		panic(fmt.Sprintf("nn: %d actions for %d distributions", len(actions), c.Logits.Rows))
	}
	for _, a := range actions {
		if a < 0 || a >= c.Logits.Cols {
			panic(fmt.Sprintf("nn: action %d out of range [0, %d)", a, c.Logits.Cols))
		}
	}
}

// LogProb returns log p(actions[i]) for each row i.
func (c *Categorical) LogProb(actions []int) []float32 {
	c.checkActions(actions)
	out := make([]float32, len(actions))
	for i, a := range actions {
		out[i] = c.LogProbs.At(i, a)
	}
	return out
}

// Entropy returns -Σ_j p_j log p_j for each row; masked actions contribute 0.
func (c *Categorical) Entropy() []float32 {
	out := make([]float32, c.Logits.Rows)
	for i := range out {
		var h float64
		for j, p := range c.Probs.Row(i) {
			if c.valid(i, j) {
				h -= float64(p) * float64(c.LogProbs.At(i, j))
			}
		}
		out[i] = float32(h)
	}
	return out
}

// Sample draws one action per row by inverse transform sampling with one
// uniform draw from src per row. Masked actions are never drawn.
func (c *Categorical) Sample(src rand.Source) []int {
	rng := rand.New(src)
	out := make([]int, c.Logits.Rows)
	for i := range out {
		u := rng.Float64()
		last := -1
		var cum float64
		out[i] = -1
		for j, p := range c.Probs.Row(i) {
			if !c.valid(i, j) || p == 0 {
				continue
			}
			last = j
			cum += float64(p)
			if u < cum {
				out[i] = j
				break
			}
		}
		if out[i] < 0 { // rounding left u above the total mass
			out[i] = last
		}
	}
	return out
}

// Mode returns the most probable valid action of each row (lowest index on
// ties), for greedy evaluation.
func (c *Categorical) Mode() []int {
	out := make([]int, c.Logits.Rows)
	for i := range out {
		best := -1
		for j, z := range c.Logits.Row(i) {
			if c.valid(i, j) && (best < 0 || z > c.Logits.At(i, best)) {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// LogProbGrad returns the gradient with respect to the raw logits of
// Σ_i dOut[i]·log p_i(actions[i]): row i is dOut[i]·(onehot(actions[i]) - p_i),
// with 0 for masked actions. Taking an action that is masked panics.
func (c *Categorical) LogProbGrad(actions []int, dOut []float32) Mat {
	c.checkActions(actions)
	if len(dOut) != len(actions) {
		panic("nn: LogProbGrad dOut length mismatch")
	}
	g := NewMat(c.Logits.Rows, c.Logits.Cols)
	for i, a := range actions {
		if !c.valid(i, a) {
			panic(fmt.Sprintf("nn: row %d took masked action %d", i, a))
		}
		row, p := g.Row(i), c.Probs.Row(i)
		for j := range row {
			if c.valid(i, j) {
				row[j] = -dOut[i] * p[j]
			}
		}
		row[a] += dOut[i]
	}
	return g
}

// EntropyGrad returns the gradient with respect to the raw logits of
// Σ_i dOut[i]·H_i: row i is -dOut[i]·p_ij·(log p_ij + H_i), with 0 for masked
// actions.
func (c *Categorical) EntropyGrad(dOut []float32) Mat {
	if len(dOut) != c.Logits.Rows {
		panic("nn: EntropyGrad dOut length mismatch")
	}
	h := c.Entropy()
	g := NewMat(c.Logits.Rows, c.Logits.Cols)
	for i := range dOut {
		row, p, lp := g.Row(i), c.Probs.Row(i), c.LogProbs.Row(i)
		for j := range row {
			if c.valid(i, j) {
				row[j] = -dOut[i] * p[j] * (lp[j] + h[i])
			}
		}
	}
	return g
}
