package main

import (
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon"
)

// setRoute parses args as drover serve's -route flags and applies them.
func setRoute(t *testing.T, c *daemon.Config, args ...string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := defineRouteFlags(fs)
	*f.perf = inferPerfFlag(t)[1]
	if err := fs.Parse(args); err != nil {
		return err
	}
	return f.setRoute(c, io.Discard)
}

// TestSetRoute: -route hack serves HACK alone; -route with the committed
// pd-rl checkpoint serves it behind its gate verdict (converged)
// without a deployment, behind the route gate with one; an unknown model,
// deployment or mode, or a missing checkpoint, is an error.
func TestSetRoute(t *testing.T) {
	ckpt := filepath.Join("..", "..", "checkpoints", "pd-rl")
	var c daemon.Config
	if err := setRoute(t, &c); err != nil || c.Route != nil {
		t.Fatalf("no -route: %v, %+v", err, c.Route)
	}
	if err := setRoute(t, &c, "-route", "hack"); err != nil || c.Route == nil || c.Route.Learned != nil {
		t.Fatalf("-route hack: %v, %+v", err, c.Route)
	}
	c = daemon.Config{}
	if err := setRoute(t, &c, "-route", ckpt); err != nil || c.Route == nil || c.Route.Learned == nil || !c.Route.Converged || c.Route.Replay != nil {
		t.Fatalf("-route checkpoints/pd-rl: %v, %+v", err, c.Route)
	}
	if c.Route.Encoder.LinkBytesPerSec != 25e9/8 || c.Route.Encoder.Slots != 4 {
		t.Fatalf("encoding %+v, want the checkpoint's 4 slots and 25 Gbps", c.Route.Encoder)
	}
	c = daemon.Config{}
	if err := setRoute(t, &c, "-route", ckpt, "-route-deployment", "pd-rl"); err != nil || c.Route.Replay == nil || c.Route.Deployment != "pd-rl" ||
		len(c.Route.Replay.Instances) != 5 || c.Route.Replay.Model.KVBytesPerToken != 327680 {
		t.Fatalf("-route-deployment pd-rl: %v, %+v", err, c.Route)
	}
	if _, err := serve.NewCore(serve.WithRouter(*c.Route)); err != nil {
		t.Fatalf("the core refuses -route-deployment pd-rl: %v", err)
	}
	for _, args := range [][]string{
		{"-route", "hack", "-route-model", "gpt-9"},
		{"-route", filepath.Join(t.TempDir(), "none")},
		{"-route", "hack", "-route-deployment", "dgx-9000"},
	} {
		if err := setRoute(t, &c, args...); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	c = daemon.Config{}
	if err := setRoute(t, &c, "-route", ckpt, "-route-switch", "sometimes"); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.NewCore(serve.WithRouter(*c.Route)); err == nil {
		t.Error("-route-switch sometimes accepted")
	}
}
