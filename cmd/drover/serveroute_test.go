package main

import (
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/serve/daemon"
)

// TestSetRoute: -route hack serves HACK alone; -route with the committed
// pd-rl checkpoint serves it behind its gate verdict (not converged);
// an unknown model or a missing checkpoint is an error.
func TestSetRoute(t *testing.T) {
	var c daemon.Config
	if err := setRoute(&c, "", "llama2-70b"); err != nil || c.Route != nil {
		t.Fatalf("no -route: %v, %+v", err, c.Route)
	}
	if err := setRoute(&c, "hack", "llama2-70b"); err != nil || c.Route == nil || c.Route.Learned != nil {
		t.Fatalf("-route hack: %v, %+v", err, c.Route)
	}
	c = daemon.Config{}
	if err := setRoute(&c, filepath.Join("..", "..", "checkpoints", "pd-rl"), "llama2-70b"); err != nil || c.Route == nil || c.Route.Learned == nil || c.Route.Converged {
		t.Fatalf("-route checkpoints/pd-rl: %v, %+v", err, c.Route)
	}
	if c.Route.Encoder.LinkBytesPerSec != 25e9/8 || c.Route.Encoder.Slots != 4 {
		t.Fatalf("encoding %+v, want the checkpoint's 4 slots and 25 Gbps", c.Route.Encoder)
	}
	if err := setRoute(&c, "hack", "gpt-9"); err == nil {
		t.Error("-route-model gpt-9 accepted")
	}
	if err := setRoute(&c, filepath.Join(t.TempDir(), "none"), "llama2-70b"); err == nil {
		t.Error("a missing checkpoint accepted")
	}
}
