package soak

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve/daemon"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
)

// TestRunSmoke runs a two-second soak of every client against an
// in-process server and checks what it returns is whole: samples of
// every phase in order, the run's windows, each client's counts and a
// verdict per acceptance point. It judges nothing of the server (the
// numbers depend on the machine): the verdicts' logic is TestJudge's.
func TestRunSmoke(t *testing.T) {
	leakcheck.Check(t)
	c := daemon.Defaults()
	c.Addr, c.MetricsAddr, c.PlaceAddr, c.ExtenderAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	addrs, _, stop := daemontest.Start(t, c)
	defer stop()

	cfg := Defaults()
	cfg.Addrs = Addrs{GRPC: addrs.GRPC, Fast: addrs.Fast, Extender: addrs.Extender, Metrics: addrs.Metrics}
	cfg.Duration, cfg.Warmup, cfg.Window, cfg.SampleEvery, cfg.Settle = 2*time.Second, time.Second, time.Second, 500*time.Millisecond, 0
	cfg.Jobs, cfg.SlowConns, cfg.AgentRate, cfg.AgentLife = 8, 2, 4, 200*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	order := map[string]int{PhaseWarmup: 0, PhaseBaseline: 1, PhaseRun: 2, PhaseLeave: 3}
	seen, last := map[string]bool{}, 0
	for _, s := range res.Samples {
		if order[s.Phase] < last {
			t.Errorf("sample at %v in %s after one in a later phase", s.At, s.Phase)
		}
		last, seen[s.Phase] = order[s.Phase], true
		if s.Goroutines <= 0 || s.RSS <= 0 {
			t.Errorf("sample %+v: no goroutines or no RSS", s)
		}
	}
	if len(seen) != 4 {
		t.Errorf("samples of phases %v, want all four", seen)
	}
	if len(res.Windows) == 0 || res.Overall.OK+res.Overall.Errors == 0 || res.RunStart <= 0 {
		t.Errorf("windows %+v, overall %+v, run start %v: want the run's Place calls", res.Windows, res.Overall, res.RunStart)
	}
	if l := res.Load; l.AgentsAsked == 0 || l.JobsAsked != 8 || len(l.Slow) != 4 || len(l.Probes) != 4 {
		t.Errorf("load %+v: want agents asked, 8 jobs, 4 listeners' slowloris and probes", l)
	}
	var names []string
	for _, ch := range res.Checks {
		names = append(names, ch.Name)
	}
	if len(names) != 5 {
		t.Errorf("checks %v, want goroutines, rss, place-p99, lockout, load", names)
	}
}

func TestServeHostileRefusesABadSpec(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not JSON", "{", "soak: hostile spec"},
		{"an invalid config", `{"Config":{"Duration":0}}`, "Duration 0s: want > 0"},
	}
	for _, tt := range tests {
		err := ServeHostile(context.Background(), strings.NewReader(tt.in), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one holding %q", tt.name, err, tt.want)
		}
	}
}
