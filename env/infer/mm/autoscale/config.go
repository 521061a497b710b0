package autoscale

import (
	"errors"
	"fmt"
	"math"
)

// Sizes is a deployment's pool sizes: Image and Text instances for a
// decoupled deployment (ModServe), Mono instances for a monolithic one.
// The other fields are zero.
type Sizes struct {
	Image, Text, Mono int
}

// Profile is the offline profile of one instance of each kind: the most
// load it sustains while meeting the SLO (ModServe's MC, the "maximum
// capacity each stage can handle without violating SLOs", section 4.2),
// and the median latency of encoding one image.
type Profile struct {
	// ImageTokensPerSec is the image tokens a second one Image Instance
	// encodes within the SLO.
	ImageTokensPerSec float64
	// TextTokensPerSec is the prompt tokens a second one Text Instance
	// serves within the SLO: text tokens for a cross-attention model,
	// text and image tokens for a decoder-only one (Window.TextLoad).
	TextTokensPerSec float64
	// MonoRequestsPerSec is the requests a second one monolithic instance
	// serves within the SLO (the vLLM baseline is scaled by request rate).
	MonoRequestsPerSec float64
	// EncodeSeconds is the median time one Image Instance takes to encode
	// one image (the initial sizing's "median image encoding latency").
	EncodeSeconds float64
}

// Validate reports a profile with a non-positive or non-finite capacity.
func (p Profile) Validate() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"image tokens/s", p.ImageTokensPerSec}, {"text tokens/s", p.TextTokensPerSec}, {"monolith requests/s", p.MonoRequestsPerSec}, {"encode seconds", p.EncodeSeconds}} {
		if !(v.x > 0) || math.IsInf(v.x, 0) {
			return fmt.Errorf("%w: %s %v, want a finite value > 0", ErrBadConfig, v.name, v.x)
		}
	}
	return nil
}

// Window is what a scaler observes over a stretch of time: the load that
// arrived, the requests that finished and how many met the SLO, and the
// work still pending when it ended.
type Window struct {
	// Seconds is the window's length.
	Seconds float64
	// Requests is the requests that arrived in the window.
	Requests int
	// ImageTokens is the image tokens that arrived (each image's tokens,
	// mm.Result.ImageTokens).
	ImageTokens float64
	// TextLoad is the Text Instances' load that arrived, in tokens: the
	// prompts' text tokens for a cross-attention model, text and image
	// tokens for a decoder-only one (ModServe routes and scales Text
	// Instances on these).
	TextLoad float64
	// Finished is the requests that finished their first token in the
	// window, Met how many of them met the SLO.
	Finished, Met int
	// PendingImageTokens and PendingTextLoad are the image tokens not yet
	// encoded and the text load not yet prefilled at the window's end;
	// PendingRequests the requests not yet past their first token (all
	// pools, for the monolith).
	PendingImageTokens, PendingTextLoad float64
	PendingRequests                     int
	// ImageWait and TextWait are, summed over the window's requests that
	// missed their objective, the time from arrival until the request was
	// ready for prefill (its images preprocessed, encoded and moved) and
	// from then to its first token: which pool the misses waited on.
	ImageWait, TextWait float64
	// Peak is, for a period made of monitoring windows, its busiest
	// window's load in the same units, each a second: Requests,
	// ImageTokens and TextLoad over Seconds (zero for a single window).
	Peak Rates
}

// Rates are loads a second.
type Rates struct {
	Requests, ImageTokens, TextLoad float64
}

// Rates returns w's loads a second: its Peak when it has one, else its
// own over Seconds.
func (w Window) Rates() Rates {
	if w.Peak != (Rates{}) || w.Seconds <= 0 {
		return w.Peak
	}
	return Rates{float64(w.Requests) / w.Seconds, w.ImageTokens / w.Seconds, w.TextLoad / w.Seconds}
}

// Attainment is the share of the window's finished requests that met the
// SLO, 1 when none finished.
func (w Window) Attainment() float64 {
	if w.Finished == 0 {
		return 1
	}
	return float64(w.Met) / float64(w.Finished)
}

// Scaler decides a deployment's pool sizes. The driver calls Initial once,
// then, every Monitor seconds, Decide with the last monitoring window and
// with the last Period when one has just ended (the window's length says
// which); the sizes Decide returns are the targets, which the simulator
// reaches by starting instances (after their start-up time) or draining
// them.
type Scaler interface {
	// Initial returns the sizes to start with.
	Initial() Sizes
	// Decide returns the target sizes after window w, given the current
	// targets cur; tick says whether w closes a scaling period (otherwise
	// it is a monitoring window, in which only an SLO miss acts).
	Decide(w Window, cur Sizes, tick bool) Sizes
}

// Config is the scaling rule's settings.
type Config struct {
	// Period is the seconds between scaling decisions (ModServe: 300,
	// "every five minutes to match the autoscaling overhead").
	Period float64
	// Monitor is the seconds of a monitoring window, after each of which
	// the SLO attainment is checked (ModServe "continuously" monitors; 60
	// here).
	Monitor float64
	// Threshold is the SLO attainment below which a monitoring window
	// triggers a rescale (ModServe's default 0.99).
	Threshold float64
	// Min is the fewest instances a pool keeps (1: a pool never empties,
	// so pending work always has an instance).
	Min int
	// Max bounds a pool's instances (0: no bound). ModServe's cluster held
	// 16 servers: 128 GPUs.
	Max int
	// SLO is the TTFT objective each request is held to.
	SLO Objective
	// Target is the share of an instance's profiled capacity the pools
	// are sized for (0 < Target <= MaxTarget). ModServe sizes to the
	// capacity itself (Target 1: MC, measured on steady load at the SLO's
	// edge). A profile's edge is not equally tight for every kind of
	// instance: on the synthetic week, whose minutes are burstier than a
	// steady load, a pool sized at its edge may miss for minutes after
	// every burst, another have room to spare; drover infer mmscale
	// compares the systems at the cheapest target each meets the SLO
	// with.
	Target float64
	// Stabilize is the periods a scale-in waits for (Kubernetes' scale-
	// down stabilization window): at a tick each pool gets the most
	// instances any of the last Stabilize ticks asked for, so it shrinks
	// only when the load has stayed lower that long (1: at once, the
	// paper's rule, which leaves hysteresis out).
	Stabilize int
}

// Objective is a request's TTFT objective: Factor times the larger of its
// own TTFT alone on an idle monolithic instance (Sim.IsolatedTTFT) and its
// modality's reference, ModServe's isolated TTFT of a text-only or a
// one-image request (Sim.Objectives at SLO factor 1). ModServe holds every
// request of a modality to Factor times the reference; on the synthetic
// week's production-like tails (prompts up to 10^5 tokens, 16 images)
// more than 1% of requests cannot meet that even alone, so no deployment
// could reach 0.99 attainment; the larger of the two keeps the paper's
// objective for requests up to the reference's size and scales it for
// larger ones. With zero references the objective is per request.
type Objective struct {
	// Factor scales the isolated TTFT (ModServe's "SLO scale").
	Factor float64
	// Text and Image are the references (s) of text-only requests and of
	// requests with images.
	Text, Image float64
}

// Of returns the objective of a request with the given isolated TTFT and
// images.
func (o Objective) Of(isolated float64, images int) float64 {
	ref := o.Text
	if images > 0 {
		ref = o.Image
	}
	return o.Factor * max(isolated, ref)
}

// Validate checks o.
func (o Objective) Validate() error {
	if !(o.Factor >= 1) || math.IsInf(o.Factor, 0) || !(o.Text >= 0) || !(o.Image >= 0) || math.IsInf(o.Text+o.Image, 0) {
		return fmt.Errorf("%w: objective %+v, want a factor >= 1 and finite references >= 0", ErrBadConfig, o)
	}
	return nil
}

// DefaultConfig is ModServe's rule: rescale every 5 minutes, check the SLO
// attainment every minute against 0.99, keep at least one instance a
// pool; each request's TTFT objective is 5 times its isolated TTFT (set
// SLO.Text and SLO.Image for ModServe's references).
func DefaultConfig() Config {
	return Config{Period: 300, Monitor: 60, Threshold: 0.99, Min: 1, SLO: Objective{Factor: 5}, Target: 1, Stabilize: 1}
}

// MaxTarget bounds Config.Target: pools sized for twice the profiled
// capacity are past any use.
const MaxTarget = 2

// ErrBadConfig is returned for a scaler's invalid settings or profile.
var ErrBadConfig = errors.New("autoscale: bad config")

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case !(c.Period > 0) || math.IsInf(c.Period, 0):
		return fmt.Errorf("%w: period %v s, want > 0", ErrBadConfig, c.Period)
	case !(c.Monitor > 0) || c.Monitor > c.Period:
		return fmt.Errorf("%w: monitor window %v s, want 0 < monitor <= period %v", ErrBadConfig, c.Monitor, c.Period)
	case !(c.Threshold >= 0 && c.Threshold <= 1):
		return fmt.Errorf("%w: threshold %v, want 0..1", ErrBadConfig, c.Threshold)
	case c.Min < 1:
		return fmt.Errorf("%w: min %d instances, want >= 1 (a pool with pending work needs an instance)", ErrBadConfig, c.Min)
	case c.Max != 0 && c.Max < c.Min:
		return fmt.Errorf("%w: max %d < min %d", ErrBadConfig, c.Max, c.Min)
	case c.Stabilize < 1 || c.Stabilize > 1<<10:
		return fmt.Errorf("%w: stabilization %d periods, want 1 to %d", ErrBadConfig, c.Stabilize, 1<<10)
	case !(c.Target > 0 && c.Target <= MaxTarget):
		return fmt.Errorf("%w: target %v of capacity, want (0, %v]", ErrBadConfig, c.Target, MaxTarget)
	}
	return c.SLO.Validate()
}

// Clamp bounds n to the config's [Min, Max].
func (c Config) Clamp(n int) int {
	n = max(n, c.Min)
	if c.Max > 0 {
		n = min(n, c.Max)
	}
	return n
}
