package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// Retries and pause of Wait: goroutines end asynchronously, so the count
// is taken again for up to two seconds.
const (
	retries = 100
	pause   = 20 * time.Millisecond
)

// Check counts the goroutines running now and registers a cleanup that
// fails tb (Wait) unless, once the test and its later cleanups have run,
// no more run.
func Check(tb testing.TB) {
	tb.Helper()
	before := runtime.NumGoroutine()
	tb.Cleanup(func() { Wait(tb, before) })
}

// Wait fails tb, with every goroutine's stack, unless within about two
// seconds at most before goroutines run.
func Wait(tb testing.TB, before int) {
	tb.Helper()
	var n int
	for range retries {
		if n = runtime.NumGoroutine(); n <= before {
			return
		}
		time.Sleep(pause)
	}
	buf := make([]byte, 1<<16)
	tb.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
}
