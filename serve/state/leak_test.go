package state_test

import (
	"runtime"
	"testing"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve/state"
)

// TestServiceDisconnectNoLeak: agents that go away without closing their
// stream (killed, their connection cut: the stream's context ends) leave
// no goroutine of the server's behind. Issue 32: the receive goroutine
// could leave on the context's end without handing over its error, and
// the handler, waiting for the next message with no context case, stayed
// until the server shut down (2,000 streams: 21 -> 1,003 goroutines).
func TestServiceDisconnectNoLeak(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	clock := &fakeClock{t: at(0)}
	c := startTelemetry(t, st, clock)
	// One stream first, so that the connection's own goroutines are in
	// the baseline.
	a := openStream(t, c)
	a.send(helloMsg(hello("warm", "a")))
	a.close()
	before := runtime.NumGoroutine()
	// Each stream leaked with probability about 1/2 before the fix (the
	// receive goroutine's select picked the context or the handoff at
	// random): 64 streams all clean by chance is 2^-64.
	const streams = 64
	for i := range streams {
		s := openStream(t, c)
		s.send(helloMsg(hello("n", "agent")))
		s.send(sampleMsg(uint64(i+1), at(1), 0.5, 0))
		s.cancel()
	}
	leakcheck.Wait(t, before)
}
