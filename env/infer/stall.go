package infer

import "fmt"

// checkStalled ends the run with ErrStalled when only retries are queued
// (s.live == 0: no arrival to come, no iteration running, no transfer
// under way) and no KV transfer waiting for room fits its decode
// instance. Only an iteration's end or a transfer's end frees memory, and
// a retry that finds no room changes nothing, so from such a state every
// retry would fail, forever: the run cannot progress. (A circular wait:
// the decode instance's memory is held by caches already moved there
// whose decodes cannot start, each needing room for its output, while
// the transfers that could follow them wait for that memory.)
//
// The check is exact, not a timeout: it looks at the state the retries
// would look at, and it runs only when nothing but retries is queued, so
// it changes no run that ends (SplitwiseSim's, whose link retries
// forever, would not end here either).
func (s *Sim) checkStalled() {
	if len(s.heap) == 0 {
		return // Next's end reports the requests left
	}
	first, n := -1, 0
	if s.cfg.Link.Shared {
		// Only the link's first transfer looks for room; the others
		// wait behind it.
		if s.linkBusy || len(s.linkQueue) == 0 {
			return
		}
		first, n = int(s.linkQueue[0]), len(s.linkQueue)
		if s.fits(first) {
			return
		}
	} else {
		for r := range s.reqs {
			if s.flowState[r] != 1 {
				continue
			}
			if s.fits(r) {
				return // its next retry starts it
			}
			if first < 0 {
				first = r
			}
			n++
		}
	}
	if first < 0 {
		return
	}
	s.fail(s.stallError(first, n))
}

// stallError describes the stall at request r's transfer, one of n
// waiting: the request, its decode instance, the bytes it needs and
// those free, and what holds the instance's memory.
func (s *Sim) stallError(r, n int) error {
	di := s.res[r].Decode
	d := s.insts[di]
	held, holders := int64(0), 0
	for q := range s.reqs {
		if s.res[q].Decode == di && s.flowState[q] == 3 && s.ts[2*q+1] != taskRunning && s.ts[2*q+1] != taskDone {
			held += s.mem[q]
			holders++
		}
	}
	return fmt.Errorf("%w at t=%.0f s: %d of %d requests never finished: request %d's KV transfer waits for %d bytes on decode instance %d, which has %d free (%d of %d bytes in use, %d of them by %d moved caches whose decodes wait for room); %d transfers wait and nothing else can free memory",
		ErrStalled, s.now, len(s.reqs)-s.done-s.rejected, len(s.reqs), s.reqs[r].ID, s.mem[r], di, d.maxMem-d.memory,
		d.memory, d.maxMem, held, holders, n)
}

// idleStallError describes a run whose events ran out with requests
// unfinished: every instance with tasks waiting is idle, and nothing
// will start it again (an instance looks at its waiting tasks only when
// a task arrives, an iteration ends or a transfer from it ends). It names
// the first unfinished request, the instance its waiting task is queued
// on, the bytes it needs and those free.
func (s *Sim) idleStallError() error {
	for r := range s.reqs {
		if s.res[r].Rejected || s.res[r].End == s.res[r].End {
			continue
		}
		t, ii := 2*r, s.res[r].Prefill
		if s.ts[t] == taskDone {
			t, ii = 2*r+1, s.res[r].Decode
		}
		if ii < 0 {
			break
		}
		in := s.insts[ii]
		what := "waits for"
		need := s.taskMem(t)
		if s.ts[t] == taskBlocked {
			what, need = "was preempted and holds", s.mem[r]
		}
		phase := "prompt"
		if t&1 == 1 {
			phase = "decode"
		}
		held, holders := int64(0), 0
		for q := range s.reqs {
			if s.mem[q] > 0 && s.res[q].Decode == ii && s.ts[2*q] == taskDone && s.ts[2*q+1] != taskRunning {
				held += s.mem[q]
				holders++
			}
		}
		return fmt.Errorf("%w at t=%.0f s: %d of %d requests never finished: request %d's %s task %s %d bytes on instance %d, idle with %d free (%d of %d bytes in use, %d of them by %d caches whose decodes wait)",
			ErrStalled, s.now, len(s.reqs)-s.done-s.rejected, len(s.reqs), s.reqs[r].ID, phase, what, need, ii, in.maxMem-in.memory, in.memory, in.maxMem, held, holders)
	}
	return fmt.Errorf("%w: %d of %d requests never finished", ErrStalled, len(s.reqs)-s.done-s.rejected, len(s.reqs))
}
