package nn

import (
	"math"
	"testing"
)

// TestCategoricalMaskedSkipExact checks that skipping the exps of masked
// logits changes no bit of the log-probabilities and probabilities: against
// the plain computation over every entry, for ordinary rows, rows whose
// valid logits sit near MaskedLogit (no skipping then), and rows with an
// infinite logit.
func TestCategoricalMaskedSkipExact(t *testing.T) {
	rows := [][]float32{
		{0.3, -1.2, 2.5, 0.1},
		{-1e8 + 100, -1e8 + 3, 5, -1e8},
		{-1e8 + 500, -1e8 + 200, -1e8 + 10, -1e8 + 1},
		{float32(math.Inf(1)), 1, 2, 3},
		{40, -40, 0, 1e-3},
	}
	masks := [][]bool{
		{true, false, true, false},
		{true, true, false, false},
		{true, false, true, false},
		{true, true, false, true},
		{false, false, true, true},
	}
	for r, row := range rows {
		logits := MatFrom(1, len(row), append([]float32(nil), row...))
		c := NewCategorical(logits, masks[r])
		// The plain computation.
		z := append([]float32(nil), row...)
		for j := range z {
			if !masks[r][j] {
				z[j] = MaskedLogit
			}
		}
		mx := math.Inf(-1)
		for _, v := range z {
			mx = max(mx, float64(v))
		}
		var s float64
		for _, v := range z {
			s += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(s)
		for j, v := range z {
			l := float64(v) - lse
			lp, p := float32(l), float32(math.Exp(l))
			if !sameFloat32(c.LogProbs.Data[j], lp) || !sameFloat32(c.Probs.Data[j], p) {
				t.Errorf("row %d, action %d: log p %v, p %v; want %v, %v", r, j, c.LogProbs.Data[j], c.Probs.Data[j], lp, p)
			}
		}
	}
}
