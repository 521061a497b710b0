package llm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Process is an arrival process of Synth.
type Process int

// The arrival processes.
const (
	// Poisson arrivals: exponential gaps of mean 1/Rate.
	Poisson Process = iota + 1
	// Gamma arrivals: gamma-distributed gaps of mean 1/Rate and
	// coefficient of variation CV (shape 1/CV², scale CV²/Rate, as
	// Vidur's GammaRequestIntervalGenerator); CV 1 is Poisson, above 1
	// burstier, below 1 more regular.
	Gamma
)

// String returns the process's name.
func (p Process) String() string {
	switch p {
	case Poisson:
		return "poisson"
	case Gamma:
		return "gamma"
	}
	return fmt.Sprintf("Process(%d)", int(p))
}

// ParseProcess returns the process named s ("poisson" or "gamma").
func ParseProcess(s string) (Process, error) {
	switch s {
	case "poisson":
		return Poisson, nil
	case "gamma":
		return Gamma, nil
	}
	return 0, fmt.Errorf("%w: arrival process %q, want poisson or gamma", ErrBadSynth, s)
}

// ErrBadSynth is wrapped by the error for a Synth that cannot generate.
var ErrBadSynth = errors.New("llm: bad synth config")

// Synth gives a table of lengths arrival times: which rows become
// requests, in what order, and when they arrive. Arrivals follow Vidur's
// synthetic request generator: the clock starts at 0 and each request
// arrives one gap after the previous one, so the first arrives one gap
// after 0 (never at 0).
type Synth struct {
	// Process is the arrival process (Poisson or Gamma).
	Process Process
	// Rate is the mean arrival rate, requests per second (> 0).
	Rate float64
	// CV is the coefficient of variation of Gamma's gaps (> 0); Poisson
	// takes 0 or 1.
	CV float64
	// N is the number of requests, at most the rows kept (after
	// MinPrompt); 0 means one per row kept.
	N int
	// Shuffle draws the rows in an order shuffled by the source (Vidur
	// shuffles its trace by its seed); otherwise the table's order.
	Shuffle bool
	// MinPrompt, when > 0, drops the rows with fewer prompt tokens,
	// counted as ReasonShortPrompt (2 drops the arXiv file's one-token
	// prompts).
	MinPrompt int
	// MaxTokens, when > 0, trims each row whose prompt plus output
	// exceeds it by Vidur's rule (TraceRequestLengthGenerator, max_tokens):
	// the excess is taken from both in proportion, each share rounded up,
	// and each kept at 1 or more.
	MaxTokens int
}

// check returns what is wrong with s, or nil.
func (s *Synth) check() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case s.Process != Poisson && s.Process != Gamma:
		return fmt.Errorf("%w: process %v, want Poisson or Gamma", ErrBadSynth, s.Process)
	case !finite(s.Rate) || s.Rate <= 0:
		return fmt.Errorf("%w: rate %v, want a finite rate > 0 requests/s", ErrBadSynth, s.Rate)
	case s.Process == Gamma && (!finite(s.CV) || s.CV <= 0):
		return fmt.Errorf("%w: gamma CV %v, want a finite CV > 0", ErrBadSynth, s.CV)
	case s.Process == Poisson && s.CV != 0 && s.CV != 1:
		return fmt.Errorf("%w: poisson CV %v: a Poisson process's gaps have CV 1 (use Gamma)", ErrBadSynth, s.CV)
	case s.Process == Gamma && s.CV > 1e3:
		return fmt.Errorf("%w: gamma CV %v, want at most 1000", ErrBadSynth, s.CV)
	case s.N < 0 || s.MinPrompt < 0 || s.MaxTokens < 0:
		return fmt.Errorf("%w: N %d, MinPrompt %d, MaxTokens %d: want >= 0", ErrBadSynth, s.N, s.MinPrompt, s.MaxTokens)
	case s.MaxTokens == 1:
		return fmt.Errorf("%w: MaxTokens 1: a request needs a prompt and an output token", ErrBadSynth)
	}
	return nil
}

// Generate returns the requests of ls under s, their randomness (the
// shuffle, then the gaps) drawn from src: the same src state gives the
// same requests, bit for bit. The requests are sorted by arrival and
// valid; the Skips count the rows MinPrompt dropped. A config that cannot
// generate is ErrBadSynth; arrivals past MaxArrival are an error.
func (s Synth) Generate(ls []Length, src rand.Source) ([]Request, Skips, error) {
	var sk Skips
	if err := s.check(); err != nil {
		return nil, sk, err
	}
	rows := make([]Length, 0, len(ls))
	for _, l := range ls {
		if l.Prompt < s.MinPrompt {
			sk.skip(ReasonShortPrompt)
			continue
		}
		if s.MaxTokens > 0 {
			l = trim(l, s.MaxTokens)
		}
		rows = append(rows, l)
	}
	n := s.N
	if n == 0 {
		n = len(rows)
	}
	if n > len(rows) {
		return nil, sk, fmt.Errorf("%w: %d requests asked of %d rows", ErrBadSynth, n, len(rows))
	}
	if n == 0 {
		return nil, sk, ErrEmpty
	}
	if s.Shuffle {
		rand.New(src).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	}
	var gap func() float64
	if s.Process == Poisson {
		gap = distuv.Exponential{Rate: s.Rate, Src: src}.Rand
	} else {
		k := 1 / (s.CV * s.CV)
		gap = distuv.Gamma{Alpha: k, Beta: k * s.Rate, Src: src}.Rand
	}
	reqs := make([]Request, n)
	t := 0.0
	for i := range reqs {
		t += gap()
		if !(t <= MaxArrival) {
			return nil, sk, fmt.Errorf("%w: request %d would arrive at %g s, past MaxArrival (%g s)", ErrBadSynth, i, t, float64(MaxArrival))
		}
		reqs[i] = Request{Arrival: t, Prompt: rows[i].Prompt, Output: rows[i].Output}
	}
	reqs, err := finish(reqs)
	return reqs, sk, err
}

// trim applies Vidur's max_tokens rule to l.
func trim(l Length, limit int) Length {
	total := l.Prompt + l.Output
	diff := total - limit
	if diff <= 0 {
		return l
	}
	// ceil(diff * p / total) in integers.
	dp := (diff*l.Prompt + total - 1) / total
	do := (diff*l.Output + total - 1) / total
	return Length{Prompt: max(l.Prompt-dp, 1), Output: max(l.Output-do, 1)}
}
