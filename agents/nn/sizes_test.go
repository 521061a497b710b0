package nn

import (
	"errors"
	"testing"
)

// TestCheckSizes covers the shapes issue 18 found panicking or running out
// of memory when they reached NewStack from a config: hidden [0] and [-5]
// (NewLinear's panic) and [100000, 100000] (10^10 parameters).
func TestCheckSizes(t *testing.T) {
	tests := []struct {
		name   string
		sizes  []int
		hidden bool // CheckHidden instead of CheckSizes
		ok     bool
	}{
		{name: "cleanrl ppo", sizes: []int{4, 64, 64, 2}, ok: true},
		{name: "linear", sizes: []int{4, 2}, ok: true},
		{name: "one size", sizes: []int{4}},
		{name: "zero width", sizes: []int{4, 0, 2}},
		{name: "negative width", sizes: []int{4, -5, 2}},
		{name: "too many parameters", sizes: []int{4, 100000, 100000, 2}},
		{name: "overflowing widths", sizes: []int{1 << 40, 1 << 40}},
		{name: "wide inputs are the space's", sizes: []int{10000, 64, 2}, ok: true},
		{name: "hidden empty", hidden: true, ok: true},
		{name: "hidden two of max width", sizes: []int{MaxWidth, MaxWidth}, hidden: true, ok: true},
		{name: "hidden zero", sizes: []int{0}, hidden: true},
		{name: "hidden negative", sizes: []int{-5}, hidden: true},
		{name: "hidden past max width", sizes: []int{MaxWidth + 1}, hidden: true},
		{name: "hidden 100000 x 100000", sizes: []int{100000, 100000}, hidden: true},
		{name: "hidden three of max width", sizes: []int{MaxWidth, MaxWidth, MaxWidth}, hidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := CheckSizes
			if tt.hidden {
				check = CheckHidden
			}
			err := check(tt.sizes)
			if (err == nil) != tt.ok {
				t.Fatalf("check(%v) = %v, want ok %v", tt.sizes, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrSize) {
				t.Fatalf("error %v does not wrap ErrSize", err)
			}
			if err == nil && !tt.hidden {
				NewStack(tt.sizes, NewTanh) // what passes builds
			}
		})
	}
}
