package main

import (
	"strings"
	"testing"
)

// TestPSShareFlag: --ps-share reaches the workload (the built-in one has
// 29 multi-GPU jobs, 10 of them PS at the default share; see
// datasets.TestLoadBuiltinPS) and bad shares are refused.
func TestPSShareFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout, or stderr when code != 0
	}{
		{"inspect, default share", []string{"trace", "inspect", "builtin"}, 0, "10 of 29 multi-GPU (34.5%)"},
		{"inspect, all PS", []string{"trace", "inspect", "-ps-share", "1", "builtin"}, 0, "29 of 29 multi-GPU (100.0%)"},
		{"inspect, none", []string{"trace", "inspect", "-ps-share", "0", "builtin"}, 0, "0 of 29 multi-GPU (0.0%)"},
		{"synth, all PS", []string{"trace", "synth", "-ps-share", "1"}, 0, ",ps,"},
		{"synth, share above 1", []string{"trace", "synth", "-ps-share", "1.5"}, 1, "-ps-share 1.5"},
		{"sim, share above 1", []string{"sim", "--quiet", "--ps-share", "2"}, 1, "--ps-share 2: want"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := drover(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if got := map[bool]string{true: out, false: errOut}[code == 0]; !strings.Contains(got, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, got)
			}
		})
	}
	// Every row of the synthesised table names its architecture, 29 of
	// them ps at share 1.
	_, out, _ := drover(t, "trace", "synth", "-ps-share", "1")
	if n := strings.Count(out, ",ps,"); n != 29 {
		t.Errorf("%d ps rows, want 29", n)
	}
}
