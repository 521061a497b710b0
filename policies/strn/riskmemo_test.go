package strn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRiskMemo checks risk's remembered answers against Risk, bit for
// bit, through repeated and fresh utilisations (more than the memo's 256
// slots, so they collide), settings changed between calls, and NaN.
func TestRiskMemo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	s := &STRN{}
	s.defaults()
	us := []float64{0, 0.1, 0.35, 0.8, 0.95, 1.2, math.Inf(1)}
	for i := range 20000 {
		if i%1000 == 0 {
			s.Uncertainty = 0.01 + r.Float64()*0.2
			s.Overload = 0.5 + r.Float64()*0.4
		}
		u := us[r.IntN(len(us))]
		if r.IntN(3) == 0 {
			u = r.Float64() * 1.5
		}
		if got, want := s.risk(u), Risk(s.Overload, s.Uncertainty, u); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("call %d: risk(%v) = %v, want %v", i, u, got, want)
		}
	}
	if got := s.risk(math.NaN()); !math.IsNaN(got) {
		t.Errorf("risk(NaN) = %v", got)
	}
}
