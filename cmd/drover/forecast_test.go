package main

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

func TestForecastUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"no subcommand", []string{"forecast"}, 2, "usage: drover forecast eval"},
		{"unknown subcommand", []string{"forecast", "plot"}, 2, "usage: drover forecast eval"},
		{"help", []string{"forecast", "-h"}, 0, "usage: drover forecast eval"},
		{"bad split", []string{"forecast", "eval", "--split", "1.5"}, 1, "--split 1.5"},
		{"stray argument", []string{"forecast", "fit", "x"}, 2, "usage: drover forecast eval"},
		{"refit and model", []string{"forecast", "eval", "--refit", "--model", "m.json", "--trace", "/nonexistent.csv"}, 1, "/nonexistent.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := drover(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q or is:\n%s", code, tt.code, tt.want, errOut)
			}
		})
	}
}

// TestForecastEval runs the acceptance on the v2018 trace: the embedded
// model beats the window on held-out time (PASS, exit 0).
func TestForecastEval(t *testing.T) {
	path := sharedtraces.Path(t, "alibaba_v2018", "machine_usage.csv.gz")
	code, out, errOut := drover(t, "forecast", "eval", "--trace", path, "--simulated=false")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"16 machines", "Held-out time: the last 30%", "window 64", "PASS: learned mean pinball loss"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
