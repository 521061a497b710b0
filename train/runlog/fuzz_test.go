package runlog

import (
	"errors"
	"testing"

	"github.com/drover-sched/drover/agents/ppo"
)

// FuzzDecodeCSV checks that no input makes DecodeCSV panic and that the
// rows it returns encode back to a file it decodes alike.
func FuzzDecodeCSV(f *testing.F) {
	f.Add([]byte(CSVHeader + "\n1,charts/SPS,3000,1700000000.5\n"))
	f.Add([]byte(CSVHeader + "\n1,\"a,\"\"b\",NaN,-Inf\n2,c"))
	f.Add([]byte("step,tag\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := DecodeCSV(b)
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v wraps neither ErrTruncated nor ErrCorrupt", err)
		}
		re := []byte(CSVHeader + "\n")
		for _, r := range rows {
			if containsNewline(r.Tag) {
				return // a quoted newline cannot be in a row we decoded line by line
			}
			re = AppendCSVRow(re, r)
		}
		again, err := DecodeCSV(re)
		if err != nil || len(again) != len(rows) {
			t.Fatalf("re-encoded rows: %d, %v; want %d", len(again), err, len(rows))
		}
	})
}

func containsNewline(s string) bool {
	for _, c := range s {
		if c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

// FuzzOverlayConfig checks that no YAML makes OverlayConfig panic and that
// a failed overlay leaves the config as it was.
func FuzzOverlayConfig(f *testing.F) {
	f.Add([]byte("ppo:\n  lr: 1e-3\n  hidden: [64, 64]\n"))
	f.Add([]byte("ppo:\n  lr: &a 1\n  max_grad_norm: *a\n"))
	f.Add([]byte("ppo: {num_envs: 2.5}\n"))
	f.Add([]byte("- [a, b]\n---\nx: 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := ppo.DefaultConfig()
		if err := OverlayConfig("fuzz.yaml", b, Section{"ppo", &cfg}); err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			def := ppo.DefaultConfig()
			if cfg.LR != def.LR || cfg.NumEnvs != def.NumEnvs || len(cfg.Hidden) != len(def.Hidden) {
				t.Fatalf("a failed overlay changed the config")
			}
		}
	})
}
