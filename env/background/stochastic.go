package background

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/drover-sched/drover/internal/fastexp"
	"github.com/drover-sched/drover/internal/mustjson"
)

// Process describes one resource's utilisation u on a node in logit space,
// z = logit(u) with u clamped to [LogitEps, 1-LogitEps]: z is the node's
// level plus a stationary AR(1) deviation (a sampled Ornstein-Uhlenbeck
// process), and u = 1/(1+exp(-z)).
type Process struct {
	// LevelMean is the mean over machines of a machine's mean of z.
	LevelMean float64 `json:"level_mean"`
	// LevelStd is the standard deviation over machines of a machine's mean
	// of z; each node draws its level from Normal(LevelMean, LevelStd).
	LevelStd float64 `json:"level_std"`
	// Std is the standard deviation of z around the machine's own mean
	// (the stationary standard deviation of the AR(1) deviation).
	Std float64 `json:"std"`
	// Phi is the lag-1 autocorrelation of that deviation at one step
	// (the AR(1) coefficient), in (-1, 1).
	Phi float64 `json:"phi"`
}

// Params are the parameters of a Stochastic source, as fitted by Fit.
type Params struct {
	// Step is the step in seconds that the parameters were fitted at and
	// that the Stochastic source steps by.
	Step float64 `json:"step"`
	// CPU, MemBW and Net are the per-resource processes.
	CPU   Process `json:"cpu"`
	MemBW Process `json:"mem_bw"`
	Net   Process `json:"net"`
	// CorrCPUMemBW, CorrCPUNet and CorrMemBWNet are the correlations of
	// the AR(1) innovations (the one-step surprises) between the resources.
	// Node levels are drawn independently per resource.
	CorrCPUMemBW float64 `json:"corr_cpu_mem_bw"`
	CorrCPUNet   float64 `json:"corr_cpu_net"`
	CorrMemBWNet float64 `json:"corr_mem_bw_net"`
}

// LogitEps bounds utilisations away from 0 and 1 before the logit.
const LogitEps = 1e-3

//go:embed params.json
var paramsJSON []byte

// Default returns Fit on the Alibaba cluster-trace-v2018 machine_usage
// head (16 machines, about 8 days) at DefaultStep, embedded from
// params.json; the package doc gives the numbers. The file is decoded on
// the first call, not at package initialisation.
var Default = sync.OnceValue(func() Params { return mustjson.Decode[Params]("background: params.json", paramsJSON) })

// ErrBadParams is wrapped by the errors Params.Validate returns.
var ErrBadParams = errors.New("background: bad params")

// Validate reports whether p can drive a Stochastic source: a positive
// finite Step, finite parameters, non-negative standard deviations,
// |Phi| < 1, and innovation correlations forming a positive semi-definite
// matrix.
func (p Params) Validate() error {
	if !(p.Step > 0) || math.IsInf(p.Step, 0) {
		return fmt.Errorf("%w: step %v", ErrBadParams, p.Step)
	}
	for i, q := range p.processes() {
		for _, v := range []float64{q.LevelMean, q.LevelStd, q.Std, q.Phi} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s: %+v not finite", ErrBadParams, resourceNames[i], q)
			}
		}
		if q.LevelStd < 0 || q.Std < 0 || !(math.Abs(q.Phi) < 1) {
			return fmt.Errorf("%w: %s: %+v", ErrBadParams, resourceNames[i], q)
		}
	}
	c := p.corr()
	for i := range 3 {
		for j := range i {
			if !(math.Abs(c[i][j]) <= 1) {
				return fmt.Errorf("%w: correlation %v", ErrBadParams, c[i][j])
			}
		}
	}
	if _, ok := cholesky(c); !ok {
		return fmt.Errorf("%w: correlations %v are not positive semi-definite", ErrBadParams, c)
	}
	return nil
}

var resourceNames = [3]string{"cpu", "mem_bw", "net"}

func (p Params) processes() [3]Process { return [3]Process{p.CPU, p.MemBW, p.Net} }

func (p Params) corr() [3][3]float64 {
	return [3][3]float64{
		{1, p.CorrCPUMemBW, p.CorrCPUNet},
		{p.CorrCPUMemBW, 1, p.CorrMemBWNet},
		{p.CorrCPUNet, p.CorrMemBWNet, 1},
	}
}

// cholesky returns lower-triangular L with L*L' = a for a symmetric
// positive semi-definite a (a zero pivot gives a zero column); ok is false
// when a is not positive semi-definite.
func cholesky(a [3][3]float64) (l [3][3]float64, ok bool) {
	const tol = 1e-9
	for j := range 3 {
		d := a[j][j]
		for k := range j {
			d -= l[j][k] * l[j][k]
		}
		if d < -tol*max(1, a[j][j]) {
			return l, false
		}
		if d <= tol*a[j][j] {
			continue // degenerate direction: column stays zero
		}
		l[j][j] = math.Sqrt(d)
		for i := j + 1; i < 3; i++ {
			s := a[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			l[i][j] = s / l[j][j]
		}
	}
	// A zero column must not leave a residual: check L*L' = a.
	for i := range 3 {
		for j := range i + 1 {
			var s float64
			for k := range 3 {
				s += l[i][k] * l[j][k]
			}
			if math.Abs(s-a[i][j]) > 1e-6*max(1, math.Abs(a[i][j])) {
				return l, false
			}
		}
	}
	return l, true
}

// chunkLen is the number of steps of a Stochastic node's chunk: its
// generator state is kept at the start of every chunk, and one chunk is
// cached.
const chunkLen = 256

// initialCache is the capacity of a node's cache when it starts, in steps.
const initialCache = 32

// Stochastic is a Source that draws each node's background load from the
// process described by Params: a per-node level per resource plus a
// correlated AR(1) deviation in logit space, advanced once per step.
//
// Each node has its own PCG stream seeded from (seed, node), so a node's
// series depends only on the parameters, the seed and the node, never on
// the number of nodes or the order of queries. Series are generated lazily,
// up to the step asked for, in chunks of 256 steps; the generator state at
// the start of every chunk is kept (40 bytes a chunk) and one chunk per
// node is cached, so queries moving forward in time cost O(1) and a query
// into an earlier chunk regenerates that chunk up to the step asked for.
// At mutates this cache, so a Stochastic must not be shared between
// goroutines without locking; give each its own.
type Stochastic struct {
	p     Params
	seed  uint64
	phi   [3]float64
	innov [3][3]float64 // Cholesky factor of the innovation covariance
	stat  [3][3]float64 // Cholesky factor of the stationary covariance
	node  []stochNode
	// The time of the last query (NaN before the first) and its chunk and
	// step within the chunk: the simulator asks every node at one time.
	lastT        float64
	lastC, lastI int
}

type stochNode struct {
	started bool
	level   [3]float64
	chunk   int          // index of the chunk in cache, -1 for none
	cache   []Usage      // the first len(cache) steps of chunk
	starts  []checkpoint // generator state at the start of chunks 0, 1, ...
	gen     generator    // generator state at step len(cache) of chunk
}

// generator is a node's live generator: its stream and deviation, and the
// Rand drawing from that stream (kept so that resuming allocates nothing).
// It lives in its node's entry of Stochastic.node, which never moves.
type generator struct {
	checkpoint
	r rand.Rand // over &checkpoint.rng
}

type checkpoint struct {
	rng rand.PCG
	x   [3]float64
}

// NewStochastic returns a Stochastic source for nodes nodes, seeded by
// seed. It returns an error wrapping ErrBadParams when p.Validate fails,
// and an error when nodes < 1.
func NewStochastic(p Params, nodes int, seed uint64) (*Stochastic, error) {
	if nodes < 1 {
		return nil, fmt.Errorf("background: stochastic source needs at least 1 node, got %d", nodes)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &Stochastic{p: p, seed: seed, node: make([]stochNode, nodes), lastT: math.NaN()}
	c := p.corr()
	procs := p.processes()
	var innov, stat [3][3]float64
	for i := range 3 {
		s.phi[i] = procs[i].Phi
		for j := range 3 {
			ei := procs[i].Std * math.Sqrt(1-procs[i].Phi*procs[i].Phi)
			ej := procs[j].Std * math.Sqrt(1-procs[j].Phi*procs[j].Phi)
			innov[i][j] = c[i][j] * ei * ej
			// Stationary covariance of x' = diag(phi) x + e.
			stat[i][j] = innov[i][j] / (1 - procs[i].Phi*procs[j].Phi)
		}
	}
	var ok1, ok2 bool
	s.innov, ok1 = cholesky(innov)
	s.stat, ok2 = cholesky(stat)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: covariance not positive semi-definite", ErrBadParams)
	}
	return s, nil
}

// Step returns p.Step.
func (s *Stochastic) Step() float64 { return s.p.Step }

// At returns node's usage in the step holding t.
func (s *Stochastic) At(node int, t float64) Usage {
	checkNode(node, len(s.node))
	if t != s.lastT { // and for NaN, which stepIndex rejects
		k := stepIndex(t, s.p.Step)
		s.lastT, s.lastC, s.lastI = t, k/chunkLen, k%chunkLen
	}
	c, i := s.lastC, s.lastI
	n := &s.node[node]
	if !n.started {
		s.start(n, node)
	}
	if n.chunk == c && i < len(n.cache) {
		return n.cache[i]
	}
	for len(n.starts) <= c {
		s.generate(n, len(n.starts)-1, chunkLen)
	}
	s.generate(n, c, i+1)
	return n.cache[i]
}

// splitmix64 is the SplitMix64 output function, used to derive
// well-separated PCG states from (seed, node).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// start draws node's levels and initial deviation from its own stream.
func (s *Stochastic) start(n *stochNode, node int) {
	src, level, x := s.initial(node)
	n.level = level
	n.starts = []checkpoint{{rng: *src, x: x}}
	// The cache grows as the series is read; short runs (an RL episode of
	// hours) read a few steps of the first chunk.
	n.cache = make([]Usage, 0, initialCache)
	n.gen.r = *rand.New(&n.gen.rng)
	n.chunk = -1
	n.started = true
}

// initial draws node's levels and initial deviation (stationary) from its
// own stream and returns the stream as it is left.
func (s *Stochastic) initial(node int) (src *rand.PCG, level, x [3]float64) {
	src = rand.NewPCG(splitmix64(s.seed), splitmix64(s.seed^splitmix64(uint64(node)+1)))
	r := rand.New(src)
	for i, q := range s.p.processes() {
		level[i] = q.LevelMean + q.LevelStd*r.NormFloat64()
	}
	var e [3]float64
	for i := range e {
		e[i] = r.NormFloat64()
	}
	return src, level, mulLower(&s.stat, e)
}

// Stationary returns node's usage at time 0, At(node, 0), without
// generating or caching the node's series: a draw from the process's
// stationary law (a node's level and a deviation at its stationary
// spread), for callers that want many independent draws of a node's load.
func (s *Stochastic) Stationary(node int) Usage {
	checkNode(node, len(s.node))
	_, level, x := s.initial(node)
	return Usage{CPU: sigmoid(level[0] + x[0]), MemBW: sigmoid(level[1] + x[1]), Net: sigmoid(level[2] + x[2])}
}

// generate extends n.cache to the first upto steps of chunk c, whose start
// must be known, restarting from that start when the cache holds another
// chunk, and records the start of chunk c+1 if it is new once the chunk is
// complete. The draws are those of generating the chunk in one go.
func (s *Stochastic) generate(n *stochNode, c, upto int) {
	g := &n.gen
	if n.chunk != c {
		g.checkpoint = n.starts[c]
		n.cache = n.cache[:0]
		n.chunk = c
	}
	if upto > cap(n.cache) {
		// Past the initial capacity: room for the whole chunk at once.
		n.cache = append(make([]Usage, 0, chunkLen), n.cache...)
	}
	x := g.x
	for len(n.cache) < upto {
		n.cache = append(n.cache, Usage{
			CPU:   sigmoid(n.level[0] + x[0]),
			MemBW: sigmoid(n.level[1] + x[1]),
			Net:   sigmoid(n.level[2] + x[2]),
		})
		var e [3]float64
		for j := range e {
			e[j] = g.r.NormFloat64()
		}
		d := mulLower(&s.innov, e)
		for j := range x {
			x[j] = s.phi[j]*x[j] + d[j]
		}
	}
	g.x = x
	if len(n.cache) == chunkLen && len(n.starts) == c+1 {
		n.starts = append(n.starts, g.checkpoint)
	}
}

// mulLower returns l*e for lower-triangular l.
func mulLower(l *[3][3]float64, e [3]float64) (y [3]float64) {
	for i := range 3 {
		for k := range i + 1 {
			y[i] += l[i][k] * e[k]
		}
	}
	return y
}

func sigmoid(z float64) float64 { return 1 / (1 + fastexp.Exp(-z)) }

func logit(u float64) float64 {
	u = min(1-LogitEps, max(LogitEps, u))
	return math.Log(u / (1 - u))
}

// Coarsened returns the parameters of the same process observed every
// step seconds, a whole multiple k of p.Step: each AR(1) coefficient
// becomes Phi^k (the stationary spread is unchanged) and the innovation
// correlations become those of the k-step sums, rho_ab * S_ab /
// sqrt(S_aa S_bb) with S_ab = sum_{i<k} (Phi_a Phi_b)^i. Sampling the
// coarse process gives the fine process's values at every k-th step in
// distribution, at 1/k of the cost.
func (p Params) Coarsened(step float64) (Params, error) {
	k := step / p.Step
	if !(k >= 1) || k != math.Trunc(k) || math.IsInf(k, 0) {
		return Params{}, fmt.Errorf("%w: step %v is not a whole multiple of %v", ErrBadParams, step, p.Step)
	}
	n := int(k)
	sum := func(a, b float64) float64 {
		s, x := 0.0, 1.0
		for range n {
			s += x
			x *= a * b
		}
		return s
	}
	c := p
	c.Step = step
	procs := [3]*Process{&c.CPU, &c.MemBW, &c.Net}
	phis := [3]float64{p.CPU.Phi, p.MemBW.Phi, p.Net.Phi}
	for i, pr := range procs {
		pr.Phi = math.Pow(phis[i], k)
	}
	corr := func(rho float64, a, b int) float64 {
		return rho * sum(phis[a], phis[b]) / math.Sqrt(sum(phis[a], phis[a])*sum(phis[b], phis[b]))
	}
	c.CorrCPUMemBW = corr(p.CorrCPUMemBW, 0, 1)
	c.CorrCPUNet = corr(p.CorrCPUNet, 0, 2)
	c.CorrMemBWNet = corr(p.CorrMemBWNet, 1, 2)
	return c, c.Validate()
}
