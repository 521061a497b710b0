package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/policies"
)

// Learned is a learned policy as the server uses it: it picks an action
// among the valid ones (mask[a] true) for an observation of the placement
// or sync environment (env/placement). It must be safe for concurrent use.
// An implementation should return early when ctx is done; the server
// stops waiting for it at the deadline either way.
type Learned interface {
	// Act returns the chosen action.
	Act(ctx context.Context, obs []float64, mask []bool) (int, error)
}

// Version is one loaded learned policy.
type Version struct {
	// Seq is the version number (the directory 0003 is 3) and Name its
	// spelling in answers ("v3").
	Seq  int
	Name string
	// Dir is the checkpoint directory it was loaded from.
	Dir string
	// Meta is the checkpoint's metadata: environment, shapes and the
	// convergence gate's verdict (Meta.Converged).
	Meta checkpoints.Meta
	// Policy answers for an observation-level checkpoint (env placement
	// or sync); nil for a view-level one.
	Policy Learned
	// NewPolicy builds a fresh instance of a view-level learned policy
	// (env strn-rl or sas-rl: a whole policies.Policy that acts on the
	// cluster view, like a heuristic); nil for an observation-level one.
	// The server builds one instance per decision, as it does the
	// heuristic, so decisions do not depend on which instance answers.
	NewPolicy func() policies.Policy

	decided atomic.Int64 // learned answers given, for canary promotion
}

// Sync reports whether the policy chooses sync strategies (the sync
// environment) rather than placements.
func (v *Version) Sync() bool { return v.Meta.Env == "sync" }

// ViewLevel reports whether the version is a view-level policy (NewPolicy
// set), which the server runs in shadow and switches on by evidence
// (SwitchConfig), rather than an observation-level one.
func (v *Version) ViewLevel() bool { return v.NewPolicy != nil }

// PolicyLoader reads the checkpoint directory of a learned policy that
// acts on the cluster view (checkpoints.Meta.Env "strn-rl" or "sas-rl"),
// returning its metadata and a constructor of fresh policy instances (an
// instance need not be safe for concurrent use). policies/direct's Load
// is one.
type PolicyLoader func(dir string) (checkpoints.Meta, func() policies.Policy, error)

// ViewLevelEnv reports whether a checkpoint of env holds a view-level
// policy (strn-rl, sas-rl), which a PolicyLoader reads, rather than an
// observation-level network (placement, sync), which LoadVersion reads.
func ViewLevelEnv(env string) bool { return env == "strn-rl" || env == "sas-rl" }

// NewPolicyVersion makes a view-level learned policy version seq: meta
// must name a view-level environment and newPolicy must build a policy.
func NewPolicyVersion(dir string, seq int, meta checkpoints.Meta, newPolicy func() policies.Policy) (*Version, error) {
	if !ViewLevelEnv(meta.Env) {
		return nil, fmt.Errorf("serve: checkpoint %s: env %q is not a view-level policy (want strn-rl or sas-rl)", dir, meta.Env)
	}
	if newPolicy == nil {
		return nil, fmt.Errorf("serve: checkpoint %s: no policy constructor", dir)
	}
	if p := newPolicy(); p == nil {
		return nil, fmt.Errorf("serve: checkpoint %s: the policy constructor returned nil", dir)
	}
	return &Version{Seq: seq, Name: VersionName(seq), Dir: dir, Meta: meta, NewPolicy: newPolicy}, nil
}

// LoadVersion loads the checkpoint in dir as version seq, choosing by the
// environment its meta.json names: a view-level one (strn-rl, sas-rl)
// through the core's PolicyLoader (WithPolicyLoader; without one it is an
// error that says so), any other through the package's LoadVersion. The
// Watcher loads every version this way.
func (k *Core) LoadVersion(dir string, seq int) (*Version, error) {
	b, err := inputfile.ReadFile(filepath.Join(dir, checkpoints.MetaFile), inputfile.Document)
	if err != nil {
		return LoadVersion(dir, seq) // its error says what is missing
	}
	var head struct {
		Env string `json:"env"`
	}
	if json.Unmarshal(b, &head) != nil || !ViewLevelEnv(head.Env) {
		return LoadVersion(dir, seq)
	}
	if k.loader == nil {
		return nil, fmt.Errorf("serve: checkpoint %s: env %q is a view-level policy and needs a policy loader (WithPolicyLoader)", dir, head.Env)
	}
	meta, mk, err := k.loader(dir)
	if err != nil {
		return nil, fmt.Errorf("serve: checkpoint %s: %w", dir, err)
	}
	return NewPolicyVersion(dir, seq, meta, mk)
}

// VersionName spells version seq as answers do: "v3".
func VersionName(seq int) string { return "v" + strconv.Itoa(seq) }

// MLPPolicy is a Learned policy over a checkpoint's network: the action of
// the largest output among the valid ones (the greedy action of PPO's
// actor, or of DQN's Q-network), lowest index on ties, as
// nn.Categorical.Mode. It runs the network of the checkpoint (nn.MLP's
// forward pass, bit for bit) on copies kept in a pool, since an nn.MLP
// caches its activations.
type MLPPolicy struct {
	obsDim, actions int
	pool            sync.Pool
}

var _ Learned = (*MLPPolicy)(nil)

// NewMLPPolicy returns the policy of net, which maps obsDim inputs to
// actions outputs. The network is copied; net may change afterwards.
func NewMLPPolicy(net *nn.MLP, hidden []int, activation string) (*MLPPolicy, error) {
	ls := net.Linears()
	if len(ls) == 0 {
		return nil, fmt.Errorf("serve: network has no layers")
	}
	p := &MLPPolicy{obsDim: ls[0].In, actions: ls[len(ls)-1].Out}
	src := make([][]float32, 0, len(net.Params()))
	for _, q := range net.Params() {
		src = append(src, append([]float32(nil), q.Value...))
	}
	p.pool.New = func() any {
		c := checkpoints.Build(p.obsDim, hidden, p.actions, activation)
		for i, q := range c.Params() {
			copy(q.Value, src[i])
		}
		return c
	}
	c := p.pool.New().(*nn.MLP)
	if len(c.Params()) != len(src) {
		return nil, fmt.Errorf("serve: network shape does not match hidden %v", hidden)
	}
	for i, q := range c.Params() {
		if len(q.Value) != len(src[i]) {
			return nil, fmt.Errorf("serve: network shape does not match hidden %v", hidden)
		}
	}
	p.pool.Put(c)
	return p, nil
}

// Forward returns the network's outputs for one observation.
func (p *MLPPolicy) Forward(obs []float32) []float32 {
	if len(obs) != p.obsDim {
		panic("serve: observation length mismatch")
	}
	net := p.pool.Get().(*nn.MLP)
	defer p.pool.Put(net)
	x := nn.NewMat(1, p.obsDim)
	copy(x.Data, obs)
	return append([]float32(nil), net.Forward(x).Data...)
}

// Act implements Learned.
func (p *MLPPolicy) Act(ctx context.Context, obs []float64, mask []bool) (int, error) {
	if len(obs) != p.obsDim || len(mask) != p.actions {
		return -1, fmt.Errorf("serve: observation %d / mask %d, the network takes %d / %d", len(obs), len(mask), p.obsDim, p.actions)
	}
	x := make([]float32, len(obs))
	for i, v := range obs {
		x[i] = float32(v)
	}
	y := p.Forward(x)
	best := -1
	for a, z := range y {
		if mask[a] && (best < 0 || z > y[best]) {
			best = a
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("serve: no valid action")
	}
	return best, ctx.Err()
}

// LoadVersion loads and validates the checkpoint in dir as version seq: the
// checkpoint must load (checkpoints.Load checks the weights against the
// probe), be trained on the placement or sync environment, and the
// serving forward pass must reproduce the probe outputs to 1e-5 and give a
// valid action on every probe input. It does not judge convergence.
func LoadVersion(dir string, seq int) (*Version, error) {
	meta, nets, err := checkpoints.Load(dir)
	if err != nil {
		return nil, err
	}
	return newVersion(dir, seq, meta, nets)
}

// DefaultDir is the Dir of the version DefaultVersion returns.
const DefaultDir = "embedded:default"

// DefaultVersion returns the pretrained default policy embedded in the
// binary (checkpoints.Default) as version 0, validated as LoadVersion
// validates a directory. It is not converged, so a Core holding it
// answers with the heuristic and says so (not-converged).
func DefaultVersion() (*Version, error) {
	meta, nets, err := checkpoints.Default()
	if err != nil {
		return nil, err
	}
	return newVersion(DefaultDir, 0, meta, nets)
}

// newVersion validates a loaded checkpoint and makes it version seq.
func newVersion(dir string, seq int, meta checkpoints.Meta, nets map[string]*nn.MLP) (*Version, error) {
	if meta.Env != "placement" && meta.Env != "sync" {
		return nil, fmt.Errorf("serve: checkpoint %s: trained on env %q, want placement or sync", dir, meta.Env)
	}
	name := "actor"
	if _, ok := nets[name]; !ok {
		name = "q"
	}
	net, ok := nets[name]
	if !ok {
		return nil, fmt.Errorf("serve: checkpoint %s: no actor or q network (have %v)", dir, meta.Networks)
	}
	p, err := NewMLPPolicy(net, meta.Hidden, meta.Activation)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := probe(p, meta, name); err != nil {
		return nil, fmt.Errorf("serve: checkpoint %s: %w", dir, err)
	}
	return &Version{Seq: seq, Name: VersionName(seq), Dir: dir, Meta: meta, Policy: p}, nil
}

// probe runs p on the checkpoint's probe inputs.
func probe(p *MLPPolicy, meta checkpoints.Meta, name string) error {
	if len(meta.Probe.Inputs) == 0 {
		return fmt.Errorf("no probe inputs")
	}
	want := meta.Probe.Outputs[name]
	mask := make([]bool, p.actions)
	for i := range mask {
		mask[i] = true
	}
	for i, in := range meta.Probe.Inputs {
		y := p.Forward(in)
		if i >= len(want) || len(want[i]) != len(y) {
			return fmt.Errorf("probe row %d: %d outputs, the checkpoint has %d rows", i, len(y), len(want))
		}
		for j, v := range y {
			if d := math.Abs(float64(v - want[i][j])); !(d <= 1e-5) {
				return fmt.Errorf("probe row %d output %d: serving gives %v, the checkpoint %v", i, j, v, want[i][j])
			}
		}
		obs := make([]float64, len(in))
		for k, v := range in {
			obs[k] = float64(v)
		}
		if a, err := p.Act(context.Background(), obs, mask); err != nil || a < 0 || a >= p.actions {
			return fmt.Errorf("probe row %d: action %d, %v", i, a, err)
		}
	}
	return nil
}
