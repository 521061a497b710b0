package strn

import (
	"math/rand/v2"
	"testing"
)

// TestRiskMemo checks risk's remembered answers against riskOf through
// repeated and fresh utilisations and settings changed between calls.
func TestRiskMemo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	s := &STRN{}
	s.defaults()
	us := []float64{0, 0.1, 0.35, 0.8, 0.95, 1.2}
	for i := range 20000 {
		if i%1000 == 0 {
			s.Uncertainty = 0.01 + r.Float64()*0.2
			s.Overload = 0.5 + r.Float64()*0.4
		}
		u := us[r.IntN(len(us))]
		if r.IntN(3) == 0 {
			u = r.Float64() * 1.5
		}
		if got, want := s.risk(u), s.riskOf(u); got != want {
			t.Fatalf("call %d: risk(%v) = %v, want %v", i, u, got, want)
		}
	}
}
