package daemon

import (
	"math"
	"runtime/metrics"
	"testing"
)

// TestReleaserDecides walks the releaser through a start, a burst, the
// quiet after it, a second quiet period and a second burst, with
// readings worked by hand (MiB).
func TestReleaserDecides(t *testing.T) {
	const mib = 1 << 20
	r := &releaser{last: memState{allocs: 100 * mib, retained: 30 * mib, live: 10 * mib}}
	steps := []struct {
		what string
		now  memState
		want bool
	}{
		// Quiet since start: nothing was freed by this server's work yet.
		{"quiet at start", memState{allocs: 100*mib + 1000, retained: 30 * mib, live: 10 * mib}, false},
		{"burst", memState{allocs: 400 * mib, retained: 70 * mib, live: 20 * mib}, false},
		// 0.5 MiB in a period is quiet; 60 MiB held beyond a 12 MiB live heap.
		{"quiet after the burst", memState{allocs: 400*mib + mib/2, retained: 72 * mib, live: 12 * mib}, true},
		{"still quiet: once is enough", memState{allocs: 400*mib + mib, retained: 40 * mib, live: 12 * mib}, false},
		{"busy again", memState{allocs: 410 * mib, retained: 40 * mib, live: 12 * mib}, false},
		// Quiet, but only 7 MiB beyond the live heap: not worth it.
		{"quiet, little to give", memState{allocs: 410 * mib, retained: 19 * mib, live: 12 * mib}, false},
		// Still armed: the next quiet period that holds enough releases.
		{"quiet, more held", memState{allocs: 410*mib + 10, retained: 20 * mib, live: 12 * mib}, true},
		// Exactly quietAllocBytes is not quiet.
		{"at the quiet bound", memState{allocs: 411 * mib, retained: 40 * mib, live: 12 * mib}, false},
	}
	for _, s := range steps {
		if got := r.decide(s.now); got != s.want {
			t.Fatalf("%s: decide = %v, want %v", s.what, got, s.want)
		}
	}
}

// TestReadMem reads the runtime's own metrics: every name exists in this
// Go and is a byte count, and the retained memory covers the live heap.
func TestReadMem(t *testing.T) {
	s := make([]metrics.Sample, len(releaseSamples))
	for i, name := range releaseSamples {
		s[i].Name = name
	}
	m := readMem(s)
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			t.Fatalf("%s: kind %v, want a uint64 (renamed in this Go?)", s[i].Name, s[i].Value.Kind())
		}
	}
	if m.allocs == 0 || m.retained == 0 || m.retained < m.live {
		t.Fatalf("readMem = %+v: want allocations, and retained memory at least the live heap", m)
	}
}

// TestLimitFor: the soft memory limit stays at its configured value for a
// small live heap and follows twice the live heap plus the slack for a
// large one (worked by hand in MiB); no limit stays no limit.
func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base int64
		live uint64
		want int64
	}{
		{48 * mib, 10 * mib, 48 * mib}, // 2*10+16 = 36 < 48
		{48 * mib, 16 * mib, 48 * mib}, // 2*16+16 = 48
		{48 * mib, 30 * mib, 76 * mib}, // the soak's 16,400 jobs: 2*30+16
		{48 * mib, 0, 48 * mib},
		{math.MaxInt64, 30 * mib, math.MaxInt64},
		{48 * mib, math.MaxUint64, 48 * mib},
	} {
		if got := limitFor(c.base, c.live); got != c.want {
			t.Errorf("limitFor(%d MiB, %d MiB) = %d MiB, want %d MiB", c.base/mib, c.live/mib, got/mib, c.want/mib)
		}
	}
}
