package trace_test

import (
	"math"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/trace"
)

// TestStragglersRefuseBadKnobs: a negative background load multiplier was
// taken as "as fitted" and a negative straggler threshold was used as is
// (issue 18's --load -1 and --straggler-threshold -5, at the library).
func TestStragglersRefuseBadKnobs(t *testing.T) {
	tests := []struct {
		name string
		st   trace.Stragglers
		want string
	}{
		{"load -1", trace.Stragglers{Background: "none", Load: -1}, "load multiplier -1"},
		{"load NaN", trace.Stragglers{Background: "none", Load: math.NaN()}, "load multiplier NaN"},
		{"load +Inf", trace.Stragglers{Background: "none", Load: math.Inf(1)}, "load multiplier +Inf"},
		{"threshold -5", trace.Stragglers{Background: "none", Threshold: -5}, "threshold -5"},
		{"threshold NaN", trace.Stragglers{Background: "none", Threshold: math.NaN()}, "threshold NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.st.Workers(4); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Workers = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	// The zero values are the defaults.
	if _, err := (trace.Stragglers{Background: "none"}).Workers(4); err != nil {
		t.Errorf("zero values: %v", err)
	}
}
