package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve/daemon"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
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

// startServe runs daemon.Run with cfg until stop is called
// (daemontest.Start), returning its gRPC and metrics addresses.
func startServe(t *testing.T, cfg daemon.Config) (addrs [2]string, out *bytes.Buffer, stop func() error) {
	t.Helper()
	a, out, stop := daemontest.Start(t, cfg)
	return [2]string{a.GRPC, a.Metrics}, out, stop
}
