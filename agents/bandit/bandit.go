package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
)

// Config sets up a Learner.
type Config struct {
	// Seed seeds the network's initialisation and the minibatch order.
	Seed uint64
	// Hidden are the widths of the value network's hidden layers (ReLU).
	Hidden []int
	// LR is Adam's learning rate.
	LR float64
	// BatchSize is the minibatch size of Fit.
	BatchSize int
	// Epochs is the number of passes over the buffer per Fit.
	Epochs int
	// Buffer is the most samples kept; the oldest go first.
	Buffer int
	// MaxGradNorm clips the global gradient norm (0: no clipping).
	MaxGradNorm float64
}

// DefaultConfig returns the defaults: a 64-64 ReLU network, Adam at 1e-3,
// minibatches of 256, 2 epochs per Fit, 100k samples, gradient norm 10.
func DefaultConfig() Config {
	return Config{Seed: 1, Hidden: []int{64, 64}, LR: 1e-3, BatchSize: 256, Epochs: 2, Buffer: 100000, MaxGradNorm: 10}
}

// Sample is one logged decision.
type Sample struct {
	// Obs is the context.
	Obs []float32
	// Action is the action taken.
	Action int
	// Reward is the outcome of the decision.
	Reward float32
}

// Learner fits and acts on the action values. It is not safe for
// concurrent use.
type Learner struct {
	cfg     Config
	obsDim  int
	actions int
	// Q maps a context to one value per action.
	Q   *nn.MLP
	opt *nn.Adam
	rng *rand.Rand
	buf []Sample
	x   nn.Mat
}

// New returns an untrained learner for contexts of obsDim values and
// the given number of actions. It panics on a config that cannot work
// (no hidden layer, non-positive sizes).
func New(cfg Config, obsDim, actions int) *Learner {
	if obsDim <= 0 || actions <= 0 || cfg.BatchSize <= 0 || cfg.Epochs <= 0 || cfg.Buffer <= 0 || !(cfg.LR > 0) {
		panic(fmt.Sprintf("bandit: bad config %+v for %d inputs and %d actions", cfg, obsDim, actions))
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x62616e64))
	q := nn.NewStack(append(append([]int{obsDim}, cfg.Hidden...), actions), nn.NewReLU)
	for _, l := range q.Linears() {
		nn.TorchDefaultInit(l, rng)
	}
	return &Learner{cfg: cfg, obsDim: obsDim, actions: actions, Q: q, opt: nn.NewAdam(q.Params(), cfg.LR, 1e-8), rng: rng}
}

// Len returns the number of samples held.
func (l *Learner) Len() int { return len(l.buf) }

// Add appends samples, dropping the oldest beyond Buffer. It panics on a
// sample of the wrong shape.
func (l *Learner) Add(s ...Sample) {
	for _, x := range s {
		if len(x.Obs) != l.obsDim || x.Action < 0 || x.Action >= l.actions {
			panic("bandit: sample shape mismatch")
		}
	}
	l.buf = append(l.buf, s...)
	if over := len(l.buf) - l.cfg.Buffer; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
}

// Fit runs Epochs passes of minibatch regression over the buffer: the
// squared error between the value of the action taken and its reward. It
// returns the last epoch's mean loss (NaN with no samples).
func (l *Learner) Fit() float64 {
	n := len(l.buf)
	if n == 0 {
		return math.NaN()
	}
	bs := min(l.cfg.BatchSize, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	obs := make([]float32, bs*l.obsDim)
	act := make([]int, bs)
	y := make([]float32, bs)
	var loss float64
	for range l.cfg.Epochs {
		l.rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		loss = 0
		batches := 0
		for start := 0; start+bs <= n; start += bs {
			for k := range bs {
				s := l.buf[idx[start+k]]
				copy(obs[k*l.obsDim:], s.Obs)
				act[k], y[k] = s.Action, s.Reward
			}
			l.Q.ZeroGrad()
			pred := nn.Gather(l.Q.Forward(nn.MatFrom(bs, l.obsDim, obs)), act)
			v, d := nn.MSE(pred, nn.MatFrom(bs, 1, y))
			l.Q.Accumulate(nn.GatherGrad(d, act, l.actions))
			if l.cfg.MaxGradNorm > 0 {
				nn.ClipGradNorm(l.Q.Params(), l.cfg.MaxGradNorm)
			}
			l.opt.Step()
			loss += float64(v)
			batches++
		}
		loss /= float64(batches)
	}
	return loss
}

// Values returns the learned value of every action for obs.
func (l *Learner) Values(obs []float64) []float32 {
	if len(obs) != l.obsDim {
		panic("bandit: obs length mismatch")
	}
	if l.x.Cols != l.obsDim {
		l.x = nn.NewMat(1, l.obsDim)
	}
	for i, v := range obs {
		l.x.Data[i] = float32(v)
	}
	return l.Q.Forward(l.x).Data
}

// Act returns the valid action of highest value (the lowest index among
// equals); mask nil means every action is valid. It panics when no
// action is valid.
func (l *Learner) Act(obs []float64, mask []bool) int { return l.ActMargin(obs, mask, 0) }

// ActMargin is Act with a default: it returns action 0 (when valid)
// unless another valid action's value beats action 0's by more than
// margin. With action 0 a trusted default (a heuristic's own choice) and
// noisy values, a margin keeps the argmax from chasing the estimates that
// are high by chance.
func (l *Learner) ActMargin(obs []float64, mask []bool, margin float32) int {
	q := l.Values(obs)
	best := -1
	for a, v := range q {
		if (mask == nil || mask[a]) && (best < 0 || v > q[best]) {
			best = a
		}
	}
	if best < 0 {
		panic("bandit: no valid action")
	}
	if best != 0 && (mask == nil || mask[0]) && q[best]-q[0] <= margin {
		return 0
	}
	return best
}
