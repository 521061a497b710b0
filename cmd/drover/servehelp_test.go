package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve/daemon"
)

// testDeadline is the tests' deadline for what a loaded machine under
// -race must finish but a working one does at once: no test waits it out
// unless something is broken.
const testDeadline = 10 * time.Minute

// testServeConfig is the serve configuration the tests share: gRPC on a
// free loopback port, no metrics listener, the STRN heuristic, no reload
// polling to speak of. The learned policy's time limit is 10 minutes, not
// serve's 50 ms: under -race on a loaded machine the shipped network took
// longer than 50 ms (issue 31), and no test here is about that limit
// (serve's tests are). Tests add listeners, TLS, tokens and logs.
func testServeConfig() daemon.Config {
	return daemon.Config{Addr: "127.0.0.1:0", Heuristic: "strn",
		Margin: 2 * time.Millisecond, ModelTimeout: testDeadline, Poll: time.Hour, MaxRequestBytes: 1 << 20,
		ShedAbove: 64, MaxInFlight: 1024, ShutdownGrace: 5 * time.Second}
}

// startServe runs daemon.Run with cfg until stop is called. It returns
// once the server is ready, with its gRPC and metrics addresses and what
// it printed by then (Run prints its addresses before it calls Ready);
// stop cancels the server and returns Run's error.
func startServe(t *testing.T, cfg daemon.Config) (addrs [2]string, out *bytes.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	errc := make(chan error, 1)
	out = new(bytes.Buffer)
	cfg.Out = out
	cfg.Ready = func(a daemon.Addrs) { ready <- [2]string{a.GRPC, a.Metrics} }
	go func() { errc <- daemon.Run(ctx, cfg) }()
	select {
	case addrs = <-ready:
	case err := <-errc:
		cancel()
		t.Fatal(err)
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-errc
	}
	t.Cleanup(func() { stop() })
	return addrs, out, stop
}
