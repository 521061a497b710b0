package mmscale

import "math"

// need is ceil(rate / capacity), at least 0.
func need(rate, capacity float64) int {
	if !(rate > 0) {
		return 0
	}
	n := math.Ceil(rate / capacity)
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// ModServe is ModServe's token-aware pool autoscaler (section 4.2): every
// Period, each pool is sized to ceil(ML / MC), ML its modality's load
// (image tokens a second for the Image Instances, TextLoad a second for
// the Text Instances) and MC one instance's capacity from the offline
// profile; and whenever a monitoring window's SLO attainment falls below
// the threshold, the pools are rescaled at once.
//
// Two readings of what the paper leaves open. ML is the period's busiest
// monitoring window's load, not its mean: the trace's minutes swing by 3x
// within five minutes, and a pool sized to the mean misses in every busy
// minute (docs/results/multimodal.md). A trigger ("trigger pool
// autoscaling when the rate falls below a predefined threshold") sizes
// each pool to ceil(ML / MC) on the window's load plus its backlog, never
// below the current sizes; if that adds nothing, it adds one instance to
// the pool the window's misses waited on longer (Window.ImageWait,
// TextWait).
type ModServe struct {
	cfg     Config
	prof    Profile
	initial Sizes
	recent  stable
}

// stable keeps the last ticks' asks for the stabilization window.
type stable struct {
	asks []Sizes
}

// ask records a tick's ask and returns the largest of the last n, pool by
// pool.
func (s *stable) ask(a Sizes, n int) Sizes {
	s.asks = append(s.asks, a)
	if len(s.asks) > n {
		s.asks = s.asks[len(s.asks)-n:]
	}
	out := a
	for _, x := range s.asks {
		out = Sizes{Image: max(out.Image, x.Image), Text: max(out.Text, x.Text), Mono: max(out.Mono, x.Mono)}
	}
	return out
}

// NewModServe returns ModServe's autoscaler starting from initial (see
// InitialSizes).
func NewModServe(cfg Config, prof Profile, initial Sizes) (*ModServe, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	initial = Sizes{Image: cfg.Clamp(initial.Image), Text: cfg.Clamp(initial.Text)}
	return &ModServe{cfg: cfg, prof: scaled(prof, cfg.Target), initial: initial}, nil
}

// Initial returns the initial sizes, within the config's bounds.
func (m *ModServe) Initial() Sizes { return m.initial }

// Decide returns the target pool sizes after w.
func (m *ModServe) Decide(w Window, cur Sizes, tick bool) Sizes {
	r := w.Rates()
	if tick {
		return m.recent.ask(Sizes{Image: m.cfg.Clamp(need(r.ImageTokens, m.prof.ImageTokensPerSec)), Text: m.cfg.Clamp(need(r.TextLoad, m.prof.TextTokensPerSec))}, m.cfg.Stabilize)
	}
	if w.Attainment() >= m.cfg.Threshold {
		return cur
	}
	// A trigger: the window's load and what it left pending, never fewer
	// than now.
	img := need(r.ImageTokens+w.PendingImageTokens/w.Seconds, m.prof.ImageTokensPerSec)
	txt := need(r.TextLoad+w.PendingTextLoad/w.Seconds, m.prof.TextTokensPerSec)
	next := Sizes{Image: m.cfg.Clamp(max(img, cur.Image)), Text: m.cfg.Clamp(max(txt, cur.Text))}
	if next == cur {
		if w.ImageWait > w.TextWait {
			next.Image = m.cfg.Clamp(cur.Image + 1)
		} else {
			next.Text = m.cfg.Clamp(cur.Text + 1)
		}
	}
	return next
}

// Monolith is the vLLM baseline's autoscaler, scaled by request rate:
// every Period, ceil(requests a second / MonoRequestsPerSec) monolithic
// instances, at the period's busiest monitoring window's rate as
// ModServe's; on an SLO miss in a monitoring window, the same on the
// window's requests and those pending, never fewer than now, and one more
// if that adds nothing. The paper gives both systems "similar SLO-driven
// autoscaling heuristics based on offline model profiling" (section 5.2).
type Monolith struct {
	cfg     Config
	prof    Profile
	initial int
	recent  stable
}

// NewMonolith returns the monolith's autoscaler starting from initial
// instances (see InitialMono).
func NewMonolith(cfg Config, prof Profile, initial int) (*Monolith, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	return &Monolith{cfg: cfg, prof: scaled(prof, cfg.Target), initial: cfg.Clamp(initial)}, nil
}

// Initial returns the initial instances, within the config's bounds.
func (m *Monolith) Initial() Sizes { return Sizes{Mono: m.initial} }

// Decide returns the target instances after w.
func (m *Monolith) Decide(w Window, cur Sizes, tick bool) Sizes {
	r := w.Rates()
	if tick {
		return m.recent.ask(Sizes{Mono: m.cfg.Clamp(need(r.Requests, m.prof.MonoRequestsPerSec))}, m.cfg.Stabilize)
	}
	if w.Attainment() >= m.cfg.Threshold {
		return cur
	}
	n := need(r.Requests+float64(w.PendingRequests)/w.Seconds, m.prof.MonoRequestsPerSec)
	next := m.cfg.Clamp(max(n, cur.Mono))
	if next == cur.Mono {
		next = m.cfg.Clamp(cur.Mono + 1)
	}
	return Sizes{Mono: next}
}

var (
	_ Scaler = (*ModServe)(nil)
	_ Scaler = (*Monolith)(nil)
)
