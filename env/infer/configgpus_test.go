package infer

import (
	"errors"
	"testing"
)

// TestConfigGPUs: a deployment's own GPU types are found before the
// catalogue's. An H100 with half its memory bandwidth keeps the H100's
// measured curve, so only the decode's KV reads (DecodeReadsKV) take
// longer; an unknown name is still refused, and so is a type without
// throughputs.
func TestConfigGPUs(t *testing.T) {
	reqs := []Request{{ID: 0, Arrival: 0, Prompt: 100, Output: 3}}
	run := func(c Config) (Result, error) {
		s, err := New(c, reqs)
		if err != nil {
			return Result{}, err
		}
		if _, err := s.Run(fixed{Prefill: 0, Decode: 0}); err != nil {
			return Result{}, err
		}
		return s.Results()[0], nil
	}
	c := handConfig(t, Colocated)
	c.DecodeReadsKV = true
	base, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := LookupGPU("h100-80gb")
	slow := h100
	slow.HBMBytesPerSec /= 2
	c.GPUs = []GPU{slow}
	got, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	// Two decode iterations read 101 and 102 tokens of 1,000 bytes from
	// 8 GPUs: at half the bandwidth each read takes twice as long.
	extra := (101 + 102) * 1000 / (8 * h100.HBMBytesPerSec)
	if d := got.E2E() - base.E2E() - extra; d > 1e-12 || d < -1e-12 {
		t.Errorf("E2E %v with the slower type, %v with the catalogue's, want %v more", got.E2E(), base.E2E(), extra)
	}
	c.Instances[0].GPU = "no-such-gpu"
	if _, err := run(c); !errors.Is(err, ErrBadConfig) {
		t.Errorf("unknown GPU type: %v, want ErrBadConfig", err)
	}
	c.Instances[0].GPU = "h100-80gb"
	c.GPUs = []GPU{{Name: "h100-80gb", MemoryBytes: 80 << 30}}
	if _, err := run(c); !errors.Is(err, ErrBadConfig) {
		t.Errorf("GPU type without throughputs: %v, want ErrBadConfig", err)
	}
}
