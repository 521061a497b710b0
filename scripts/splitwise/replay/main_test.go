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

// TestUsedRows checks that the rows usedRows keeps give each deployment
// the same replay as the whole table, byte for byte (SplitwiseSim's
// latency table; a synthetic trace that mixes prompt and decode batches,
// preemptions and both instance types), and that it keeps the whole table
// when it cannot tell which rows are used.
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
			kept := usedRows(clone(data), tt.cfg)
			if len(kept) >= len(data) {
				t.Fatalf("usedRows kept %d of %d bytes, want fewer", len(kept), len(data))
			}
			var out [2][]byte
			for i, table := range [][]byte{clone(data), kept} {
				cfg := tt.cfg
				if cfg.Perf, err = infer.ParsePerfTable(table); err != nil {
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
				t.Errorf("the replay on usedRows' table differs from the replay on the whole table")
			}
		})
	}
	// Tables whose used rows it cannot tell: returned whole.
	cfg := infer.SplitwiseBaseline(nil, 1)
	noH100 := "model,hardware,tensor_parallel,x\nllama2-70b,a100-80gb,8,1\n"
	quoted := "model,hardware,tensor_parallel,x\n\"llama2-70b\",h100-80gb,8,1\n"
	short := "model,hardware,tensor_parallel,x\nllama2-70b,h100-80gb,8,1\nllama2-70b,h100-80gb\n"
	noTP := "model,hardware,x\nllama2-70b,h100-80gb,1\n"
	for _, table := range []string{noH100, quoted, short, noTP} {
		if got := usedRows([]byte(table), cfg); string(got) != table {
			t.Errorf("usedRows(%q) = %q, want the whole table", table, got)
		}
	}
	want := "model,hardware,tensor_parallel,x\nllama2-70b,h100-80gb,8,1\n"
	if got := usedRows([]byte("model,hardware,tensor_parallel,x\nbloom-176b,h100-80gb,8,2\nllama2-70b,h100-80gb,8,1\nllama2-70b,h100-80gb,4,3\n"), cfg); string(got) != want {
		t.Errorf("usedRows kept %q, want %q", got, want)
	}
}

// clone copies b, so that no run sees another's table.
func clone(b []byte) []byte { return append([]byte(nil), b...) }
