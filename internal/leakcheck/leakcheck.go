package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// patience is how long Wait takes the count again, every pause:
// goroutines end asynchronously, and a loaded machine under -race can take
// seconds to run them to their end. A test without a leak waits no longer
// than that; only a leaking one waits the minute. (Its own test shortens
// it.)
var patience = time.Minute

const pause = 20 * time.Millisecond

// Check counts the goroutines running now and registers a cleanup that
// fails tb (Wait) unless, once the test and its later cleanups have run,
// no more run.
func Check(tb testing.TB) {
	tb.Helper()
	before := runtime.NumGoroutine()
	tb.Cleanup(func() { Wait(tb, before) })
}

// Wait fails tb, with every goroutine's stack, unless within about a
// minute at most before goroutines run.
func Wait(tb testing.TB, before int) {
	tb.Helper()
	var n int
	for deadline := time.Now().Add(patience); ; time.Sleep(pause) {
		if n = runtime.NumGoroutine(); n <= before {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	buf := make([]byte, 1<<16)
	tb.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
}
