package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// simGCFloor is the heap size below which drover sim does not collect
// garbage: a Pollux workload's whole run allocates about 5 MB, almost all
// of it live to the end (the profiles, the workload, the simulator), so
// the default pacing's first collections (at 4 and 5 MB) cost a fifth of
// its CPU time and free nothing. Bigger runs collect once at this size and
// are paced as usual from then on.
const simGCFloor = 64 << 20

// gcDeferred is set by the first deferGC of the process: a second one
// before the first collection would take the first's settings for the
// ones to restore.
var gcDeferred atomic.Bool

// deferGC turns garbage collection off until the Go runtime's memory
// reaches floor bytes (a soft memory limit), and back to the previous
// settings (by default GOGC=100, no limit) after that first collection.
// It acts once per process, and not at all when GOGC or GOMEMLIMIT is set
// in the environment: the user's setting stands.
func deferGC(floor int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" || !gcDeferred.CompareAndSwap(false, true) {
		return
	}
	gogc := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(floor)
	// The finalizer of an object that is garbage at once runs after the
	// first collection. (Not a tiny allocation: those can share a block
	// with live objects and never be finalized.)
	sentinel := &struct {
		_ *byte
		_ [2]int
	}{}
	runtime.SetFinalizer(sentinel, func(any) {
		debug.SetGCPercent(gogc)
		debug.SetMemoryLimit(limit)
	})
}
