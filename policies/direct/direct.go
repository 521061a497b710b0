package direct

import (
	"fmt"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/policies"
)

// Actor picks an action of the sched.Encoder's joint action space for an
// observation, among the valid ones (mask[a] true).
type Actor func(obs []float64, mask []bool) int

// Network is the forward pass a direct policy's network offers: its
// outputs (logits, or Q-values) over the joint actions for one
// observation. The policy owns this interface and needs nothing else of a
// network; agents/nn's Infer implements it, and Greedy and FromCheckpoint
// wire a checkpoint's network to it. The result may be scratch space,
// valid until the next call.
type Network interface {
	Forward(obs []float64) []float32
}

// GreedyNet is the Actor that takes the valid action of largest output of
// net (the mode of an actor's logits, or the greedy action of a
// Q-network), the lowest index on ties; -1 when no action is valid. It is
// as safe for concurrent use as net is.
func GreedyNet(net Network) Actor {
	return func(obs []float64, mask []bool) int { return nn.MaskedArgmax(net.Forward(obs), mask) }
}

// Policy is a direct scheduling policy: at each decision point, pending
// jobs are taken in arrival order with backfilling, as the heuristics
// take them, and for each that fits in the GPUs left the Actor picks a
// node group (or the whole cluster) and a sync strategy, or holds the job
// for this round, from the Encoder's observation. No heuristic runs. An
// action outside the mask falls back to the first valid one. It sees each
// decision point as sched.Env, which the direct checkpoints train on,
// sees it: the encoder reads telemetry at every decision point, and a job
// started earlier at the same decision point counts as running in the
// later jobs' observations and hold masks (the Encoder's Commit), so a
// Greedy actor gets the observations and masks it would get in training.
// A Policy is not safe for concurrent use.
type Policy struct {
	cfg     sched.Config
	act     Actor
	enc     *sched.Encoder
	cluster *env.Cluster
	obs     []float64
	mask    []bool

	decided, held, invalid int
}

var _ policies.Policy = (*Policy)(nil)

// New returns the policy that decides with act over the encoding cfg
// describes. The encoder is built on the first decision point's cluster
// (and again if the cluster changes), so a policy runs on any cluster.
func New(cfg sched.Config, act Actor) *Policy { return &Policy{cfg: cfg, act: act} }

// Counts returns the decisions made (jobs started), the holds, and the
// actions that fell outside the mask so far.
func (p *Policy) Counts() (decided, held, invalid int) { return p.decided, p.held, p.invalid }

// Encoder returns the encoder in use (nil before the first decision
// point).
func (p *Policy) Encoder() *sched.Encoder { return p.enc }

// begin builds the encoder for v's cluster when needed and readies it.
func (p *Policy) begin(v *env.View) error {
	if p.enc == nil || p.cluster != v.Cluster {
		enc, err := sched.NewEncoder(p.cfg, v.Cluster)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		p.enc, p.cluster = enc, v.Cluster
	}
	p.enc.Begin(v)
	return nil
}

// Schedule implements policies.Policy.
func (p *Policy) Schedule(v *env.View) ([]env.Decision, error) {
	// The encoder reads telemetry at every decision point, as sched.Env's
	// does (its moving P90 and round-robin reads follow the decision
	// points), even where nothing fits.
	if err := p.begin(v); err != nil {
		return nil, err
	}
	left := 0
	for _, f := range v.Free {
		left += f
	}
	var ds []env.Decision
	for _, j := range v.Active {
		if left == 0 {
			break
		}
		if j.State != env.Pending || j.Spec.GPUs > left {
			continue
		}
		p.obs = p.enc.Observe(p.obs[:0], v, j)
		p.mask = p.enc.Mask(p.mask, v, j)
		a := p.act(p.obs, p.mask)
		if a < 0 || a >= len(p.mask) || !p.mask[a] {
			p.invalid++
			a = firstValid(p.mask)
			if a < 0 {
				continue
			}
		}
		d, hold := p.enc.Decode(v, j, a)
		if hold {
			p.held++
			continue
		}
		p.enc.Commit(d)
		ds = append(ds, d)
		left -= j.Spec.GPUs
		p.decided++
	}
	return ds, nil
}

func firstValid(mask []bool) int {
	for a, ok := range mask {
		if ok {
			return a
		}
	}
	return -1
}

// Sample is one labelled decision for behaviour cloning: the observation,
// the mask and the teacher's action.
type Sample struct {
	Obs    []float64
	Mask   []bool
	Action int
}

// Teacher returns the policy that runs heuristic t (with its sync rule r
// when r is not nil, as "<t>+<r>" would) and hands record every decision
// it makes as a Sample of the Encoder's observation and the action
// nearest the decision (sched.Encoder.Action). Decisions no template can
// express are made anyway and not recorded. The runs follow the teacher's
// own decisions exactly, so the samples are its state distribution.
func Teacher(cfg sched.Config, t env.Proposer, r policies.SyncRule, record func(Sample)) policies.Policy {
	return &teacher{cfg: cfg, t: t, r: r, record: record}
}

type teacher struct {
	cfg     sched.Config
	t       env.Proposer
	r       policies.SyncRule
	record  func(Sample)
	enc     *sched.Encoder
	cluster *env.Cluster
	one     [1]env.Decision
}

func (t *teacher) Schedule(v *env.View) ([]env.Decision, error) {
	if t.enc == nil || t.cluster != v.Cluster {
		enc, err := sched.NewEncoder(t.cfg, v.Cluster)
		if err != nil {
			return nil, fmt.Errorf("direct: %w", err)
		}
		t.enc, t.cluster = enc, v.Cluster
	}
	t.enc.Begin(v)
	var err error
	ds, derr := env.Delegate(t.t, v, func(v *env.View, j *env.Job, cands []env.Candidate) int {
		d := &cands[0].Decision
		if t.r != nil && err == nil {
			t.one[0] = *d
			err = t.r.Assign(v, t.one[:])
			d.Sync = t.one[0].Sync
		}
		if a := t.enc.Action(v, j, *d); a >= 0 {
			t.record(Sample{Obs: t.enc.Observe(nil, v, j), Mask: t.enc.Mask(nil, v, j), Action: a})
		}
		t.enc.Commit(*d)
		return 0
	})
	if derr != nil {
		return ds, derr
	}
	return ds, err
}
