package daemon

import (
	"context"
	"math"
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
//
// The same loop keeps the Go runtime's soft memory limit (drover serve
// -memlimit-mib, 48 MiB by default, or GOMEMLIMIT) above what the live
// state needs: never under twice the live heap plus limitSlackBytes (the
// room GOGC=100 gives, plus goroutine stacks and the runtime's own). A
// soft limit under that makes the collector run without pause: in the
// 10-minute drover bench soak the live store grew to 16,400 jobs, the
// live heap to about 30 MiB, and from then on 83% of the server's one
// core went to marking (runtime.gcBgMarkWorker in a CPU profile), the
// server's CPU went from 8% to 97% and the well-behaved client's Place
// p99 from 2 ms to 5-13 ms. The limit comes back down to the configured
// one as the live heap shrinks; no limit set means none is added.
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
	// limitSlackBytes is what the memory limit keeps above twice the live
	// heap: the stacks of a thousand connections' goroutines (8 KiB each)
	// and the runtime's metadata.
	limitSlackBytes = 16 << 20
)

// limitFor is the soft memory limit for a live heap of live bytes when
// the configured limit is base (math.MaxInt64: none): base, or twice the
// live heap plus limitSlackBytes when that is more.
func limitFor(base int64, live uint64) int64 {
	if base == math.MaxInt64 || live > math.MaxInt64/4 {
		return base
	}
	return max(base, 2*int64(live)+limitSlackBytes)
}

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

// startReleaser samples the runtime every c.IdleRelease (10 s when not
// positive), keeps the soft memory limit above the live state's needs
// (limitFor) and gives memory back when the server falls quiet (see
// releaser; not when c.IdleRelease is negative). Each tick also forgets
// the live state's finished jobs and agent-only jobs past their TTLs
// (state.Store.ExpireJobs), and arms the release when it forgot any.
// The limit configured when Run starts is restored when it returns.
func (r *runner) startReleaser(ctx context.Context) {
	d, release := r.c.IdleRelease, r.c.IdleRelease >= 0
	if d <= 0 {
		d = defaultIdleRelease
	}
	base := debug.SetMemoryLimit(-1)
	s := make([]metrics.Sample, len(releaseSamples))
	for i, name := range releaseSamples {
		s[i].Name = name
	}
	rel := &releaser{last: readMem(s)}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		limit := base
		every(rctx, d, func() {
			if r.live != nil && r.live.ExpireJobs(time.Now()) > 0 {
				rel.armed = true // what they held is worth giving back
			}
			m := readMem(s)
			if l := limitFor(base, m.live); l != limit {
				limit = l
				debug.SetMemoryLimit(l)
			}
			if rel.decide(m) && release {
				debug.FreeOSMemory()
			}
		})
	}()
	r.defer1(func() {
		stop()
		<-done
		debug.SetMemoryLimit(base)
	})
}
