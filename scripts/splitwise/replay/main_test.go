package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/policies/splitwise"
)

const perfPath = "../../../../shared/traces/llm/calibration/splitwise_perf_model.csv"

// TestUsedRows checks that the rows infer.ParsePerfTableFor parses give
// each deployment the same replay as the whole table, byte for byte
// (SplitwiseSim's latency table; a synthetic trace that mixes prompt and
// decode batches, preemptions and both instance types). Which tables it
// reads whole, env/infer's TestParsePerfTableFor checks.
func TestUsedRows(t *testing.T) {
	data, err := os.ReadFile(perfPath)
	if err != nil {
		t.Skipf("no latency table: %v", err)
	}
	var reqs []infer.Request
	for i := range 600 {
		reqs = append(reqs, infer.Request{ID: i, Arrival: 1 + float64(i)*0.03, Prompt: 64 + i*37%3000, Output: 2 + i*53%700})
	}
	for _, tt := range []struct {
		name   string
		cfg    infer.Config
		router func() infer.Router
	}{
		{"baseline_h100", infer.SplitwiseBaseline(nil, 2), func() infer.Router { return splitwise.NewTokenJSQ() }},
		{"splitwise_ha", infer.SplitwiseHA(nil, 1, 1), func() infer.Router { return splitwise.NewMixedPool(splitwise.MixedPoolConfig{}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out [2][]byte
			for i, parse := range []func([]byte) (*infer.PerfTable, error){
				infer.ParsePerfTable,
				func(b []byte) (*infer.PerfTable, error) { return infer.ParsePerfTableFor(b, tt.cfg) },
			} {
				cfg := tt.cfg
				if cfg.Perf, err = parse(clone(data)); err != nil {
					t.Fatal(err)
				}
				s, err := infer.New(cfg, reqs)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Run(tt.router()); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(t.TempDir(), "out.csv")
				if err := writeResults(p, s.Results(), nil); err != nil {
					t.Fatal(err)
				}
				if out[i], err = os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("the replay on the used rows differs from the replay on the whole table")
			}
		})
	}
}

// clone copies b, so that no run sees another's table.
func clone(b []byte) []byte { return append([]byte(nil), b...) }
