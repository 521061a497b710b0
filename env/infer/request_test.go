package infer

import (
	"errors"
	"math"
	"testing"
)

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		name string
		r    Request
		ok   bool
	}{
		{"fine", Request{Arrival: 1.5, Prompt: 100, Output: 10}, true},
		{"at zero", Request{Prompt: 1, Output: 1}, true},
		{"negative arrival", Request{Arrival: -1, Prompt: 1, Output: 1}, false},
		{"nan arrival", Request{Arrival: math.NaN(), Prompt: 1, Output: 1}, false},
		{"inf arrival", Request{Arrival: math.Inf(1), Prompt: 1, Output: 1}, false},
		{"no prompt", Request{Output: 1}, false},
		{"no output", Request{Prompt: 1}, false},
		{"huge prompt", Request{Prompt: MaxTokens + 1, Output: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrBadRequest) {
				t.Fatalf("Validate = %v, want ErrBadRequest", err)
			}
		})
	}
}
