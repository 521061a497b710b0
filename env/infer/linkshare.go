package infer

// A fair-share link (LinkConfig.FairShare): every transfer whose KV cache
// fits its destination starts at once and the transfers under way split
// the bandwidth equally (processor sharing), as TCP connections paced by
// one sender-side rate limiter in small chunks do. The HKVQ artifact's
// transport is such a link (hack/vllm_plugin/transport.py: the prefill
// instance serves each pull on its own connection and sends it in 8 MiB
// chunks through one RateLimiter shared by all its connections, so
// concurrent pulls interleave chunk by chunk). Each transfer pays the
// link's Overhead on its own before its bytes (connection set-up, not
// bandwidth), and its format's decoding on arrival after them.
//
// Transfers wait for the destination's memory in arrival order, as on the
// shared FIFO link (vLLM allocates a pulled request's blocks before the
// pull starts and admits requests first come, first served): the head
// waits, and those behind it wait for it.

// fairLink is the state of a fair-share link.
type fairLink struct {
	// active are the transfers whose bytes are on the link, in the order
	// they joined it; left their bytes still to send.
	active []int32
	left   []float64
	// stamp is when left was last brought up to date.
	stamp float64
	// ev is the pending completion event, -1 for none.
	ev int32
}

// admitFair starts, in arrival order, every waiting transfer whose KV
// cache fits its destination, up to the first that does not (which looks
// again after the retry delay).
func (s *Sim) admitFair() {
	for len(s.linkQueue) > 0 {
		r := int(s.linkQueue[0])
		if !s.fits(r) {
			if !s.linkRetry {
				s.linkRetry = true
				s.schedule(s.retryDelay(), evLinkRetry, 0)
			}
			return
		}
		s.linkQueue = s.linkQueue[1:]
		s.runFlow(r)
	}
}

// startFair is runFlow's timing on a fair-share link: the transfer's
// bytes join the link after its overhead.
func (s *Sim) startFair(r int) {
	if s.cfg.Link.Overhead > 0 {
		s.push(s.now+s.cfg.Link.Overhead, evShareJoin, int32(r))
		return
	}
	s.joinFair(r)
}

// advanceFair charges the time since the last update to the transfers
// under way, each at its share of the bandwidth.
func (s *Sim) advanceFair() {
	l := &s.fair
	if n := len(l.active); n > 0 {
		sent := (s.now - l.stamp) * s.cfg.Link.BytesPerSec / float64(n)
		for i := range l.left {
			l.left[i] -= sent
		}
	}
	l.stamp = s.now
}

// rescheduleFair replaces the pending completion event by the next one:
// the transfer with the fewest bytes left, at the current share.
func (s *Sim) rescheduleFair() {
	l := &s.fair
	if l.ev >= 0 {
		s.kill(l.ev)
		l.ev = -1
	}
	if len(l.active) == 0 {
		return
	}
	least := l.left[0]
	for _, b := range l.left[1:] {
		least = min(least, b)
	}
	dt := max(least, 0) * float64(len(l.active)) / s.cfg.Link.BytesPerSec
	l.ev = s.push(s.now+dt, evShareDone, 0)
}

// joinFair puts request r's bytes on the link.
func (s *Sim) joinFair(r int) {
	s.advanceFair()
	s.fair.active = append(s.fair.active, int32(r))
	s.fair.left = append(s.fair.left, float64(s.xferBytes[r]))
	s.rescheduleFair()
}

// fairDone ends the transfer with the fewest bytes left (the first to
// have joined among equals); its format's decoding on arrival, if any,
// follows, then flowDone.
func (s *Sim) fairDone() {
	l := &s.fair
	l.ev = -1
	s.advanceFair()
	i := 0
	for j, b := range l.left {
		if b < l.left[i] {
			i = j
		}
	}
	r := int(l.active[i])
	l.active = append(l.active[:i], l.active[i+1:]...)
	l.left = append(l.left[:i], l.left[i+1:]...)
	s.rescheduleFair()
	if fs := s.formats[int32(r)]; fs != nil && fs.receive > 0 {
		s.res[r].FormatTime += fs.receive
		s.push(s.now+fs.receive, evFlowDone, int32(r))
		return
	}
	s.flowDone(r)
}

// stageTime is the time the prompts of in's batch spend staging their KV
// caches for their transfers (LinkConfig.StageBytesPerSec): those sent to
// another instance, at their transfers' sizes.
func (s *Sim) stageTime(in *instance) float64 {
	var b int64
	for _, t := range in.batch {
		if r := t >> 1; isPrompt(t) && s.res[r].Decode != s.res[r].Prefill {
			b += s.xferBytes[r]
		}
	}
	return float64(b) / s.cfg.Link.StageBytesPerSec
}
