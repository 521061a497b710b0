// Package daemontest runs a policy server (daemon.Run) in a test: it
// starts the server, waits until it listens and stops it at the test's
// end, for the tests of serve/daemon and of the drover command alike.
//
// # Usage
//
//	addrs, out, stop := daemontest.Start(t, cfg)
//	// dial addrs.GRPC ...
//	if err := stop(); err != nil { // Run's error; stop is also a cleanup
//		t.Error(err)
//	}
//	_ = out.String() // what the server printed
package daemontest

import (
	"bytes"
	"context"
	"testing"

	"github.com/drover-sched/drover/serve/daemon"
)

// Start runs daemon.Run with c until stop is called (or the test ends).
// It returns once the server is ready, with its addresses and what it
// printed by then (Run prints its addresses before it calls Ready); stop
// cancels the server and returns Run's error, and is idempotent. A Run
// that fails before it is ready fails the test.
func Start(t testing.TB, c daemon.Config) (addrs daemon.Addrs, out *bytes.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan daemon.Addrs, 1)
	errc := make(chan error, 1)
	out = new(bytes.Buffer)
	c.Out, c.Ready = out, func(a daemon.Addrs) { ready <- a }
	go func() { errc <- daemon.Run(ctx, c) }()
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
