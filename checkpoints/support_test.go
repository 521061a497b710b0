package checkpoints

import (
	"encoding/json"
	"math"
	"testing"
)

// The box is the per-dimension range of the contexts added, over the
// first dims values; Gate answers 0 outside it without asking act.
func TestSupport(t *testing.T) {
	s := NewSupport(2)
	if s.Contains([]float64{0, 0, 0}) {
		t.Error("the empty support contains a context")
	}
	s.Add([]float32{0.5, -1, 99})
	s.Add([]float32{0.25, 2, -99})
	s.Add([]float32{float32(math.NaN()), 0, 0}) // NaN widens nothing
	if s.Added() != 3 {
		t.Errorf("Added() = %d, want 3", s.Added())
	}
	if want := []float64{0.25, -1}; s.Lo[0] != want[0] || s.Lo[1] != want[1] {
		t.Errorf("Lo = %v, want %v", s.Lo, want)
	}
	if want := []float64{0.5, 2}; s.Hi[0] != want[0] || s.Hi[1] != want[1] {
		t.Errorf("Hi = %v, want %v", s.Hi, want)
	}
	calls := 0
	act := s.Gate(func([]float64, []bool) int { calls++; return 2 })
	for _, c := range []struct {
		obs  []float64
		want int
	}{
		{[]float64{0.25, -1, 1e9}, 2}, // the corners count; the third value is outside the box's dimensions
		{[]float64{0.5, 2, -1e9}, 2},
		{[]float64{0.3, 0}, 2},
		{[]float64{0.51, 0}, 0},
		{[]float64{0.3, -1.01}, 0},
		{[]float64{math.NaN(), 0}, 0},
		{[]float64{0.3}, 0}, // too short
	} {
		if got := act(c.obs, nil); got != c.want {
			t.Errorf("gated act(%v) = %d, want %d", c.obs, got, c.want)
		}
	}
	if calls != 3 {
		t.Errorf("act called %d times, want 3 (inside the box only)", calls)
	}
}

// A support survives JSON (the checkpoint's meta.json), and Validate
// refuses what a corrupt one could hold.
func TestSupportValidate(t *testing.T) {
	s := NewSupport(2)
	s.Add([]float32{1, 2})
	s.Add([]float32{3, 2})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Support
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(5); err != nil {
		t.Errorf("%s: %v", b, err)
	}
	if !back.Contains([]float64{2, 2}) || back.Contains([]float64{2, 2.5}) {
		t.Errorf("decoded %s contains the wrong contexts", b)
	}
	for name, bad := range map[string]Support{
		"lengths":   {Lo: []float64{0}, Hi: []float64{1, 2}},
		"empty":     {},
		"too wide":  {Lo: make([]float64, 6), Hi: make([]float64, 6)},
		"inverted":  {Lo: []float64{1}, Hi: []float64{0}},
		"infinite":  {Lo: []float64{math.Inf(-1)}, Hi: []float64{0}},
		"NaN bound": {Lo: []float64{0}, Hi: []float64{math.NaN()}},
	} {
		if err := bad.Validate(5); err == nil {
			t.Errorf("%s: %+v accepted", name, bad)
		}
	}
}
