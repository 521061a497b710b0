package main

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// gcSettings reads the runtime's current GOGC and memory limit.
func gcSettings() (gogc, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// TestDeferGC checks that deferGC turns collection off under a memory
// limit, and that the first collection restores the previous settings;
// and that GOGC in the environment leaves them alone.
func TestDeferGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	// An earlier test's drover sim deferred collection: wait for the
	// restore, then allow another deferral.
	waitGC(t, func(gogc, _ int64) bool { return gogc != -1 })
	gcDeferred.Store(false)
	gogc0, limit0 := gcSettings()
	deferGC(1 << 40)
	// /gc/gogc:percent reads all ones (-1 here) when collection is off.
	if gogc, limit := gcSettings(); gogc != -1 || limit != 1<<40 {
		t.Fatalf("after deferGC: GOGC %d, limit %d; want off, %d", gogc, limit, int64(1<<40))
	}
	deferGC(1 << 30) // a second deferral is ignored
	waitGC(t, func(gogc, limit int64) bool { return gogc == gogc0 && limit == limit0 })
	gcDeferred.Store(false)
	t.Setenv("GOGC", "100")
	deferGC(1 << 40)
	if gogc, limit := gcSettings(); gogc != gogc0 || limit != limit0 {
		t.Errorf("with GOGC set: GOGC %d, limit %d; want %d, %d untouched", gogc, limit, gogc0, limit0)
	}
}

// waitGC collects until done holds for the GC settings, failing the test
// after testDeadline (the settings are restored by a finalizer, on its own
// goroutine, after a collection).
func waitGC(t *testing.T, done func(gogc, limit int64) bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for {
		runtime.GC()
		gogc, limit := gcSettings()
		if done(gogc, limit) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after collections: GOGC %d, memory limit %d", gogc, limit)
		}
		time.Sleep(time.Millisecond)
	}
}
