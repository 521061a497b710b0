package infer

import (
	"errors"
	"fmt"
)

// ErrRejected is returned by Next (and so Run) at the end of a run in
// which Apply rejected requests whose KV cache could never fit their
// instances (Config.RetryUnfit unset); the other requests ran to the end.
var ErrRejected = errors.New("infer: requests rejected")

// kvRoom is the KV cache instance in can ever hold: its memory less the
// model's weights.
func (s *Sim) kvRoom(in *instance) int64 { return in.maxMem - s.cfg.Model.WeightBytes }

// rejectUnfit rejects request r, placed as d, when its KV cache can never
// fit: its prompt's beyond its prefill instance's KV room, or its whole
// cache (prompt and output) beyond its decode instance's. Such a request
// would otherwise wait forever, its transfer retrying forever (as
// SplitwiseSim's link does) or its prompt or decode never admitted,
// blocking the requests behind it. With Config.RetryUnfit it is kept, as
// SplitwiseSim keeps it.
func (s *Sim) rejectUnfit(r int, d Decision) bool {
	if s.cfg.RetryUnfit {
		return false
	}
	dec := d.Decode
	if s.reqs[r].Output == 1 {
		dec = d.Prefill
	}
	p, q := s.insts[d.Prefill], s.insts[dec]
	pm, whole := s.promptMem[r], s.promptMem[r]+s.decodeMem[r]
	if pm <= s.kvRoom(p) && whole <= s.kvRoom(q) {
		return false
	}
	s.res[r].Prefill, s.res[r].Decode = d.Prefill, dec
	s.res[r].Rejected = true
	s.rejected++
	if s.rejectMsg == "" {
		s.rejectMsg = fmt.Sprintf("request %d's KV cache (%d bytes, %d of its prompt) never fits: prefill instance %d holds %d bytes of KV, decode instance %d %d",
			s.reqs[r].ID, whole, pm, d.Prefill, s.kvRoom(p), dec, s.kvRoom(q))
	}
	return true
}

// rejectedErr is the error Next returns at the end of a run with
// rejected requests.
func (s *Sim) rejectedErr() error {
	return fmt.Errorf("%w: %d of %d requests; the first: %s", ErrRejected, s.rejected, len(s.reqs), s.rejectMsg)
}
