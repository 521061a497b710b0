package pdrl

import (
	"errors"
	"fmt"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/hack"
)

// Names of the policies.
const (
	// Name is the learned router.
	Name = "pd-rl"
	// HACKName is HACK's router, the learned one's teacher and baseline.
	HACKName = "hack"
)

// ErrNoInstances is returned when a pool has no instance to route to.
var ErrNoInstances = errors.New("pdrl: no instances available")

// Decider decides where one arriving request runs, on a State: the
// simulator's View (Router adapts) or a client's report (the policy
// server's Route call). Deciders see nothing else, so a decision made
// remotely on the same state is the same decision.
type Decider interface {
	Decide(s infergym.State, r infer.Request) (infer.Decision, error)
}

// Router adapts d to infer.Router: each arrival's View is read into a
// State (infergym.StateOf) and decided on.
func Router(d Decider) infer.Router { return &router{d: d} }

type router struct {
	d Decider
	s infergym.State
}

func (r *router) Route(v *infer.View, req infer.Request) (infer.Decision, error) {
	r.s = infergym.StateOf(v, r.s)
	return r.d.Decide(r.s, req)
}

// HACK is HACK's router (arXiv 2502.03589; the HKVQ artifact's proxy) as
// a Decider: policies/hack's rule (hack.Place) on a State (TestHACKIsHACK
// checks it decides as hack.Router does in the simulator): the prompt
// goes to the prefill instance with the fewest pending tokens, the decode
// to the decode instance with the fewest among those whose memory can
// still take the request's whole KV cache in Format (all of them if none
// can), the first on a tie; without prefill or decode instances both
// phases run on the instance with the fewest pending tokens.
type HACK struct {
	// Format is the requests' KV format (NewHACK: HACK with Pi = 64).
	Format kv.Format
	// Arch is the served model's architecture, which sizes the format.
	Arch kv.Arch
}

var _ Decider = (*HACK)(nil)

// NewHACK returns HACK's router for a model of architecture a, with
// Pi = 64, the artifact's default partition.
func NewHACK(a kv.Arch) *HACK { return &HACK{Format: kv.HACKPi(64), Arch: a} }

// kvNeed is the bytes r's whole KV cache takes in format f for a model of
// architecture a (the dense cache for the zero format), -1 when f cannot
// size it (no architecture, or one f cannot store).
func kvNeed(f kv.Format, a kv.Arch, r infer.Request) int64 {
	if f == (kv.Format{}) {
		return int64(r.Prompt+r.Output) * a.KVBytesPerToken()
	}
	if a != (kv.Arch{}) && f.Check(a) == nil {
		return f.StoredBytes(a, r.Prompt+r.Output)
	}
	return -1
}

// Decide implements Decider.
func (h *HACK) Decide(s infergym.State, r infer.Request) (infer.Decision, error) {
	need := kvNeed(h.Format, h.Arch, r)
	pre, dec, ok := hack.Place(stateInstances(s.Instances), need)
	if !ok {
		return infer.Decision{}, ErrNoInstances
	}
	return infer.Decision{Prefill: pre, Decode: dec, Format: h.Format}, nil
}

// stateInstances are a State's instances as hack.Place reads them.
type stateInstances []infer.InstanceState

func (s stateInstances) NumInstances() int                  { return len(s) }
func (s stateInstances) Instance(i int) infer.InstanceState { return s[i] }

// Actor picks a joint action (infergym.Encoder's) for an observation among
// the valid ones (mask[a] true).
type Actor func(obs []float64, mask []bool) int

// Policy is the learned router pd-rl: for each request it encodes the
// State (the candidate slots of each pool, infergym.Encoder) and takes the
// Actor's action, the first valid one when the Actor's is not valid. A
// Policy is not safe for concurrent use.
type Policy struct {
	enc  *infergym.Encoder
	act  Actor
	obs  []float64
	mask []bool

	decided, invalid int
}

var _ Decider = (*Policy)(nil)

// New returns the policy deciding with act over encoding cfg.
func New(cfg infergym.Config, act Actor) (*Policy, error) {
	enc, err := infergym.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("pdrl: %w", err)
	}
	return &Policy{enc: enc, act: act}, nil
}

// Encoder returns the policy's encoder.
func (p *Policy) Encoder() *infergym.Encoder { return p.enc }

// Counts returns the decisions made and how many of the Actor's actions
// fell outside the mask.
func (p *Policy) Counts() (decided, invalid int) { return p.decided, p.invalid }

// Decide implements Decider.
func (p *Policy) Decide(s infergym.State, r infer.Request) (infer.Decision, error) {
	p.enc.Begin(s)
	p.obs = p.enc.Observe(p.obs[:0], s, r)
	p.mask = p.enc.Mask(p.mask, s, r)
	a := p.act(p.obs, p.mask)
	if a < 0 || a >= len(p.mask) || !p.mask[a] {
		p.invalid++
		a = -1
		for i, ok := range p.mask {
			if ok {
				a = i
				break
			}
		}
	}
	d, ok := p.enc.Decode(a)
	if !ok {
		return infer.Decision{}, ErrNoInstances
	}
	p.decided++
	return d, nil
}

// Sample is one labelled decision for behaviour cloning.
type Sample struct {
	Obs    []float64
	Mask   []bool
	Action int
}

// Teacher returns the Decider that decides as t does and hands record a
// Sample of each decision the encoding can express (both instances among
// the candidates shown, the format among its formats, the action valid
// under the mask). The runs follow t's decisions exactly.
func Teacher(cfg infergym.Config, t Decider, record func(Sample)) (Decider, error) {
	enc, err := infergym.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("pdrl: %w", err)
	}
	return &teacher{enc: enc, t: t, record: record}, nil
}

type teacher struct {
	enc    *infergym.Encoder
	t      Decider
	record func(Sample)
}

func (t *teacher) Decide(s infergym.State, r infer.Request) (infer.Decision, error) {
	d, err := t.t.Decide(s, r)
	if err != nil {
		return d, err
	}
	t.enc.Begin(s)
	ps, ds := t.enc.Slot(d.Prefill, d.Decode)
	f := t.enc.FormatIndex(d.Format)
	if ps < 0 || ds < 0 || f < 0 {
		return d, nil
	}
	a := t.enc.Action(ps, f, ds)
	mask := t.enc.Mask(nil, s, r)
	if mask[a] {
		t.record(Sample{Obs: t.enc.Observe(nil, s, r), Mask: mask, Action: a})
	}
	return d, nil
}
