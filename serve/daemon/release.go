package daemon

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Memory given back when the server falls quiet.
//
// The Go runtime keeps the pages a burst of work freed (the stacks of a
// thousand connections' goroutines, the buffers of their frames, the
// garbage of their requests) and returns them to the system slowly, only
// down to about its heap goal: after a slowloris or a reconnect storm
// ends, an idle drover serve sat 10 MiB (17%) above its resident size
// before the burst for as long as we watched (drover bench soak, one
// minute after the clients left, heap in use back to 13 MiB). A server
// that holds memory nobody uses after every attack looks like a leak to
// its operator and to the memory limit of its container. So once the
// server has been quiet for one IdleRelease period (under
// quietAllocBytes allocated), and the memory the runtime holds beyond the
// live heap is at least releaseMinBytes, Run calls debug.FreeOSMemory
// once: a collection and a scavenge, a few milliseconds on a quiet core.
// It does not run again until the server has been busy and fallen quiet
// again, so a quiet server pays for it once, and a busy one never.
const (
	// defaultIdleRelease is how often the allocation rate is sampled.
	defaultIdleRelease = 10 * time.Second
	// quietAllocBytes is the most a quiet period allocates: an idle
	// server with a few agents allocates well under it (their telemetry
	// is a few KB a second); a well-behaved client's 100 Place/s (about
	// 5 KB each) is over it.
	quietAllocBytes = 1 << 20
	// releaseMinBytes is the least retained memory worth a release.
	releaseMinBytes = 8 << 20
)

// releaseSamples are the runtime metrics the releaser reads, in this
// order.
var releaseSamples = []string{
	"/gc/heap/allocs:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/gc/heap/live:bytes",
}

// memState is one reading of releaseSamples.
type memState struct {
	allocs   uint64 // bytes allocated since the process started
	retained uint64 // memory the runtime holds, less what it released
	live     uint64 // the heap marked live by the last collection
}

// releaser decides when a quiet server gives memory back.
type releaser struct {
	last  memState
	armed bool // busy since the last release (or since start)
}

// decide takes a new reading and says whether to release now: the
// server allocated under quietAllocBytes since the last reading, was busy
// since the last release, and holds at least releaseMinBytes beyond its
// live heap.
func (r *releaser) decide(now memState) bool {
	quiet := now.allocs-r.last.allocs < quietAllocBytes
	r.last = now
	if !quiet {
		r.armed = true
		return false
	}
	if !r.armed || now.retained < now.live+releaseMinBytes {
		return false
	}
	r.armed = false
	return true
}

// readMem reads the runtime's metrics into a memState.
func readMem(s []metrics.Sample) memState {
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return memState{allocs: u(0), retained: u(1) - u(2), live: u(3)}
}

// startReleaser samples the runtime every c.IdleRelease (negative: off)
// and gives memory back when the server falls quiet (see releaser).
func (r *runner) startReleaser(ctx context.Context) {
	d := r.c.IdleRelease
	if d < 0 {
		return
	}
	if d == 0 {
		d = defaultIdleRelease
	}
	s := make([]metrics.Sample, len(releaseSamples))
	for i, name := range releaseSamples {
		s[i].Name = name
	}
	rel := &releaser{last: readMem(s)}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(rctx, d, func() {
			if rel.decide(readMem(s)) {
				debug.FreeOSMemory()
			}
		})
	}()
	r.defer1(func() { stop(); <-done })
}
