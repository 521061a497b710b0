package infergym

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// ErrBadConfig is returned for an encoding or environment that cannot be
// built.
var ErrBadConfig = errors.New("infergym: bad config")

// DefaultSlots is the candidates per pool the encoding shows by default.
const DefaultSlots = 4

// DefaultFormats are the KV formats a decision chooses among by default:
// the dense 16-bit cache, the KVQuant-like and CacheGen-like 2-bit
// baselines and HACK with Pi = 64 (package kv).
func DefaultFormats() []kv.Format {
	return []kv.Format{kv.FP16(), kv.KVQuant2(), kv.CacheGenCodec(), kv.HACKPi(64)}
}

// Config is an encoding of routing decisions: how many candidate
// instances of each pool the observation shows and the KV formats the
// action chooses among.
type Config struct {
	// Slots is the candidates per pool (default DefaultSlots): the Slots
	// instances of the pool with the fewest pending tokens, fewest first
	// (the lower index on ties).
	Slots int
	// Formats are the KV formats (default DefaultFormats).
	Formats []kv.Format
	// Arch is the served model's architecture, which sizes the formats
	// (infer.Model.Arch).
	Arch kv.Arch
	// LinkBytesPerSec is the KV link's bandwidth, for the observation's
	// transfer times (infer.LinkConfig.BytesPerSec).
	LinkBytesPerSec float64
}

// State is what a routing decision is made on: the instances as the
// simulator's View shows them (or as a server's client reports them).
type State struct {
	Instances []infer.InstanceState
}

// StateOf reads v's instances into dst (reusing its slice) and returns it.
func StateOf(v *infer.View, dst State) State {
	dst.Instances = dst.Instances[:0]
	for i := range v.NumInstances() {
		dst.Instances = append(dst.Instances, v.Instance(i))
	}
	return dst
}

// Per-slot and per-request features of the observation.
const (
	prefillFeatures = 8
	decodeFeatures  = 9
	requestFeatures = 2
	formatFeatures  = 2
)

// Encoder turns a State and an arriving request into an observation, a
// mask and back from an action to a Decision. The observation's size
// depends on Slots and the formats only, never on the cluster's size. The
// action is (prefill slot x format x decode slot): a = (p*F + f)*Slots + d.
// An Encoder is not safe for concurrent use.
type Encoder struct {
	cfg     Config
	pre     []int // candidate instances of the prefill pool, by slot
	dec     []int
	scratch []int
	slow    []float64 // the slots' slowTokens, prefill then decode
}

// NewEncoder validates cfg, fills its defaults and returns its encoder.
func NewEncoder(cfg Config) (*Encoder, error) {
	if cfg.Slots == 0 {
		cfg.Slots = DefaultSlots
	}
	if cfg.Formats == nil {
		cfg.Formats = DefaultFormats()
	}
	switch {
	case cfg.Slots < 1 || cfg.Slots > 64:
		return nil, fmt.Errorf("%w: %d slots, want 1..64", ErrBadConfig, cfg.Slots)
	case len(cfg.Formats) == 0 || len(cfg.Formats) > 16:
		return nil, fmt.Errorf("%w: %d formats, want 1..16", ErrBadConfig, len(cfg.Formats))
	case !(cfg.LinkBytesPerSec > 0) || math.IsInf(cfg.LinkBytesPerSec, 0):
		return nil, fmt.Errorf("%w: link bandwidth %v", ErrBadConfig, cfg.LinkBytesPerSec)
	}
	for _, f := range cfg.Formats {
		if f == (kv.Format{}) {
			continue
		}
		if err := f.Check(cfg.Arch); err != nil {
			return nil, fmt.Errorf("%w: format %s on %q: %v", ErrBadConfig, f.Name(), cfg.Arch.Name, err)
		}
	}
	cfg.Formats = slices.Clone(cfg.Formats)
	return &Encoder{cfg: cfg}, nil
}

// Config returns the encoder's configuration, defaults filled in.
func (e *Encoder) Config() Config { return e.cfg }

// ObsDim is the observation's length.
func (e *Encoder) ObsDim() int {
	return e.cfg.Slots*(prefillFeatures+decodeFeatures) + requestFeatures + formatFeatures*len(e.cfg.Formats)
}

// Actions is the number of joint actions, Slots x formats x Slots.
func (e *Encoder) Actions() int { return e.cfg.Slots * len(e.cfg.Formats) * e.cfg.Slots }

// FormatIndex returns f's index among the formats, -1 when absent.
func (e *Encoder) FormatIndex(f kv.Format) int { return slices.Index(e.cfg.Formats, f) }

// Action is the joint action of prefill slot p, format index f and decode
// slot d.
func (e *Encoder) Action(p, f, d int) int { return (p*len(e.cfg.Formats)+f)*e.cfg.Slots + d }

// Split returns the prefill slot, format index and decode slot of a.
func (e *Encoder) Split(a int) (p, f, d int) {
	k, nf := e.cfg.Slots, len(e.cfg.Formats)
	return a / (nf * k), (a / k) % nf, a % k
}

// inPrefillPool: prefill and colocated instances run prompts; decode and
// colocated ones generate tokens.
func inPrefillPool(r infer.Role) bool { return r != infer.Decode }
func inDecodePool(r infer.Role) bool  { return r != infer.Prefill }

// Begin chooses the candidate slots of s, which Observe, Mask and Decode
// then use: the Slots instances of each pool with the fewest pending
// tokens, fewest first, the lower index on ties.
func (e *Encoder) Begin(s State) {
	e.pre = e.candidates(e.pre[:0], s, inPrefillPool)
	e.dec = e.candidates(e.dec[:0], s, inDecodePool)
}

func (e *Encoder) candidates(dst []int, s State, in func(infer.Role) bool) []int {
	e.scratch = e.scratch[:0]
	for i, st := range s.Instances {
		if in(st.Role) {
			e.scratch = append(e.scratch, i)
		}
	}
	slices.SortStableFunc(e.scratch, func(a, b int) int {
		pa, pb := s.Instances[a].PendingTokens, s.Instances[b].PendingTokens
		if pa != pb {
			if pa < pb {
				return -1
			}
			return 1
		}
		return a - b
	})
	return append(dst, e.scratch[:min(len(e.scratch), e.cfg.Slots)]...)
}

// Candidates returns the instances of the prefill and decode slots chosen
// by the last Begin (scratch, valid until the next Begin).
func (e *Encoder) Candidates() (prefill, decode []int) { return e.pre, e.dec }

// Slot returns the prefill and decode slots of instances p and d among
// the last Begin's candidates, -1 for an instance not shown.
func (e *Encoder) Slot(p, d int) (ps, ds int) { return slices.Index(e.pre, p), slices.Index(e.dec, d) }

// stored is format f's cache of tokens tokens, -1 when it does not apply.
func (e *Encoder) stored(f kv.Format, tokens int) int64 {
	if f == (kv.Format{}) {
		return int64(tokens) * e.cfg.Arch.KVBytesPerToken()
	}
	return f.StoredBytes(e.cfg.Arch, tokens)
}

func (e *Encoder) sent(f kv.Format, tokens int) int64 {
	if f == (kv.Format{}) {
		return int64(tokens) * e.cfg.Arch.KVBytesPerToken()
	}
	return f.TransferBytes(e.cfg.Arch, tokens)
}

// Reference scales of the features.
const (
	refFLOPS = 8 * 312e12   // an A100 x 8 instance's FP16 throughput
	refHBM   = 8 * 2.039e12 // and its memory bandwidth
)

func logTokens(x int64) float64 { return math.Log1p(float64(max(x, 0))) / 10 }

// slowTokens is logTokens of x tokens on an instance of relative speed
// speed (against the reference A100 x 8): the log of the tokens an A100 x
// 8 would do in the same time, the instance's expected time for its work
// on a log scale.
func slowTokens(x int64, speed float64) float64 {
	if !(speed > 0) {
		return 0
	}
	return math.Log1p(float64(max(x, 0))/speed) / 10
}

func frac(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return min(max(float64(a)/float64(b), 0), 2)
}

// Observe appends the observation of request r arriving in state s (after
// Begin(s)) to dst: per prefill slot (present, log pending tokens, queued
// and running tasks / 64, reserved memory share, FP16 throughput against
// an A100 x 8, and the log of the pending and the request's prompt tokens
// over that speed: the slot's expected prefill time), per decode slot
// (the same, with used memory share, memory bandwidth and the log of the
// pending tokens over it), the request's log prompt and output tokens, and per
// format the log of its transfer time on the link and its cache's size
// against the dense one. Absent slots are zeros.
func (e *Encoder) Observe(dst []float64, s State, r infer.Request) []float64 {
	e.slow = e.slow[:0]
	for _, i := range e.pre {
		st := s.Instances[i]
		g, _ := infer.LookupGPU(st.GPU)
		e.slow = append(e.slow, slowTokens(st.PendingTokens+int64(r.Prompt), g.FP16FLOPS*float64(st.TP)/refFLOPS))
	}
	for _, i := range e.dec {
		st := s.Instances[i]
		g, _ := infer.LookupGPU(st.GPU)
		e.slow = append(e.slow, slowTokens(st.PendingTokens, g.HBMBytesPerSec*float64(st.TP)/refHBM))
	}
	slowPre, slowDec := e.slow[:len(e.pre)], e.slow[len(e.pre):]
	for k := range e.cfg.Slots {
		if k >= len(e.pre) {
			dst = append(dst, make([]float64, prefillFeatures)...)
			continue
		}
		st := s.Instances[e.pre[k]]
		g, _ := infer.LookupGPU(st.GPU)
		speed := g.FP16FLOPS * float64(st.TP) / refFLOPS
		dst = append(dst, 1, logTokens(st.PendingTokens), min(float64(st.Queued)/64, 4), min(float64(st.Running)/64, 8),
			frac(st.ReservedBytes, st.MaxBytes), speed, slowPre[k], min(10*(slowPre[k]-slices.Min(slowPre)), 4))
	}
	for k := range e.cfg.Slots {
		if k >= len(e.dec) {
			dst = append(dst, make([]float64, decodeFeatures)...)
			continue
		}
		st := s.Instances[e.dec[k]]
		g, _ := infer.LookupGPU(st.GPU)
		speed := g.HBMBytesPerSec * float64(st.TP) / refHBM
		dst = append(dst, 1, logTokens(st.PendingTokens), min(float64(st.Queued)/64, 4), min(float64(st.Running)/64, 8),
			frac(st.ReservedBytes, st.MaxBytes), frac(st.UsedBytes, st.MaxBytes), speed, slowDec[k], min(10*(slowDec[k]-slices.Min(slowDec)), 4))
	}
	dst = append(dst, logTokens(int64(r.Prompt)), logTokens(int64(r.Output)))
	dense := float64(e.stored(kv.Format{}, r.Prompt+r.Output))
	for _, f := range e.cfg.Formats {
		t := float64(e.sent(f, r.Prompt+1)) / e.cfg.LinkBytesPerSec
		dst = append(dst, math.Log1p(1000*t)/10, float64(e.stored(f, r.Prompt+r.Output))/dense)
	}
	return dst
}

// fits: the instance has room for bytes more in what its routed requests
// reserve.
func fits(st infer.InstanceState, bytes int64) bool {
	return bytes >= 0 && st.ReservedBytes+bytes <= st.MaxBytes
}

// Mask writes into dst (reused when large enough) which actions are valid
// for r in s (after Begin(s)): both slots shown, and, memory admission, the
// prompt's cache (prompt + 1 tokens) fits what the prefill instance's
// routed requests leave and the whole cache (prompt + output tokens) what
// the decode instance's leave, in the action's format. When nothing fits,
// every shown combination is valid (the request then waits in the
// simulator's queues).
func (e *Encoder) Mask(dst []bool, s State, r infer.Request) []bool {
	n := e.Actions()
	if cap(dst) < n {
		dst = make([]bool, n)
	}
	dst = dst[:n]
	clear(dst)
	nf := len(e.cfg.Formats)
	anyValid := false
	for p := range e.pre {
		sp := s.Instances[e.pre[p]]
		for f, fm := range e.cfg.Formats {
			pb := e.stored(fm, r.Prompt+1)
			if !fits(sp, pb) {
				continue
			}
			db := e.stored(fm, r.Prompt+r.Output)
			for d := range e.dec {
				sd := s.Instances[e.dec[d]]
				b := db
				if e.pre[p] == e.dec[d] {
					b = max(db-pb, 0)
				}
				if fits(sd, b) {
					dst[(p*nf+f)*e.cfg.Slots+d] = true
					anyValid = true
				}
			}
		}
	}
	if !anyValid {
		for p := range e.pre {
			for f := range nf {
				for d := range e.dec {
					dst[(p*nf+f)*e.cfg.Slots+d] = true
				}
			}
		}
	}
	return dst
}

// Decode returns the Decision of action a (after Begin), and false when a
// names a slot not shown.
func (e *Encoder) Decode(a int) (infer.Decision, bool) {
	if a < 0 || a >= e.Actions() {
		return infer.Decision{}, false
	}
	p, f, d := e.Split(a)
	if p >= len(e.pre) || d >= len(e.dec) {
		return infer.Decision{}, false
	}
	return infer.Decision{Prefill: e.pre[p], Decode: e.dec[d], Format: e.cfg.Formats[f]}, true
}
