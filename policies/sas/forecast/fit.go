package forecast

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/drover-sched/drover/env"
)

// Config sets what Fit fits.
type Config struct {
	// Step is the seconds between the traces' samples.
	Step float64
	// Horizon is the number of future steps a forecast covers: the
	// target is any one measured sample among the Horizon after the
	// latest.
	Horizon int
	// Window is the most recent samples the features read.
	Window int
	// MinHistory is the fewest samples a forecast needs; origins with a
	// shorter history are not fitted.
	MinHistory int
	// Levels are the quantile levels to fit, ascending, in (0, 1).
	Levels []float64
}

// Defaults of DefaultConfig.
const (
	// DefaultStep is the sample period of SAS's predictor and of the
	// simulator's background load, in seconds.
	DefaultStep = 300
	// DefaultHorizon is one hour of 300 s steps.
	DefaultHorizon = 12
	// DefaultWindow is SAS's predictor ring, 64 samples.
	DefaultWindow = 64
	// DefaultMinHistory is one hour of 300 s steps.
	DefaultMinHistory = 12
)

// DefaultConfig returns the configuration of the embedded Default: 300 s
// steps, a one-hour horizon, a 64-sample window, forecasts from one hour
// of history on, and the levels 0.05, 0.10, ..., 0.95.
func DefaultConfig() Config {
	levels := make([]float64, 19)
	for i := range levels {
		levels[i] = float64(i+1) / 20
	}
	return Config{
		Step: DefaultStep, Horizon: DefaultHorizon, Window: DefaultWindow,
		MinHistory: DefaultMinHistory, Levels: levels,
	}
}

// ErrNoData is returned by Fit when no trace has a usable origin.
var ErrNoData = errors.New("forecast: no forecast origins to fit")

// origin is one forecast origin of a trace: the step of its latest sample.
type origin struct {
	trace, t int
}

// origins lists the forecast origins of traces with at least minHist
// samples, the full horizon inside the trace, at least one measured target
// among them, and t >= from[i]-1 (all targets at or after from[i]; from
// nil means 0).
func origins(traces []Trace, from []int, minHist, horizon int) []origin {
	var os []origin
	for i, tr := range traces {
		start := minHist - 1
		if from != nil {
			start = max(start, from[i]-1)
		}
		for t := start; t+horizon < tr.Len(); t++ {
			for h := 1; h <= horizon; h++ {
				if tr.measured(t + h) {
					os = append(os, origin{i, t})
					break
				}
			}
		}
	}
	return os
}

// Fit fits a Model on traces: for each resource and level, the linear
// quantile regression (Koenker and Bassett, 1978) of every measured
// sample in the Horizon steps after an origin on the origin's features,
// over every origin with at least MinHistory samples and its horizon
// inside its trace. The pinball loss is minimised by Hunter and Lange's
// (2000) MM algorithm (see quantReg). Coefficients are rounded to 6
// significant digits so a refit reproduces a model file exactly. Fit is
// deterministic. It returns an error for a bad Config, traces of unequal
// resource lengths, or ErrNoData.
func Fit(traces []Trace, c Config) (*Model, error) {
	m := &Model{
		Step: c.Step, Horizon: c.Horizon, Window: c.Window, MinHistory: c.MinHistory,
		Levels: slices.Clone(c.Levels),
	}
	for r := range m.Coef {
		m.Coef[r] = make([][]float64, len(c.Levels))
		for l := range m.Coef[r] {
			m.Coef[r][l] = make([]float64, numFeatures)
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("forecast: fit config: %w", err)
	}
	for i, tr := range traces {
		if err := tr.check(); err != nil {
			return nil, fmt.Errorf("forecast: trace %d (%s): %w", i, tr.Name, err)
		}
	}
	os := origins(traces, nil, c.MinHistory, c.Horizon)
	if len(os) == 0 {
		return nil, ErrNoData
	}
	for r := range NumResources {
		fs := features(m, traces, os, r)
		ys := make([][]float64, len(os))
		for i, o := range os {
			tr := traces[o.trace]
			for h := 1; h <= c.Horizon; h++ {
				if tr.measured(o.t + h) {
					ys[i] = append(ys[i], tr.U[r][o.t+h])
				}
			}
		}
		x := make([][]float64, len(os))
		var prev []float64 // the last level's solution, where the next starts
		for l, tau := range c.Levels {
			for i, f := range fs {
				x[i] = f.row(l)
			}
			beta, err := quantReg(x, ys, tau, prev)
			if err != nil {
				return nil, fmt.Errorf("forecast: fit %s at level %v: %w", r, tau, err)
			}
			prev = beta
			for k, b := range beta {
				m.Coef[r][l][k] = round6(b)
			}
		}
	}
	return m, nil
}

// check reports why t is unusable, or nil.
func (t Trace) check() error {
	n := t.Len()
	for r := range t.U {
		if len(t.U[r]) != n {
			return fmt.Errorf("%s has %d steps, cpu %d", Resource(r), len(t.U[r]), n)
		}
	}
	if t.Measured != nil && len(t.Measured) != n {
		return fmt.Errorf("measured has %d steps, cpu %d", len(t.Measured), n)
	}
	return nil
}

// originFeatures holds one origin's features for one resource: the
// level-independent ones and the window quantile at every level.
type originFeatures struct {
	base []float64 // numFeatures, the level feature unset
	wq   []float64 // per level
}

// row returns the features at level l (a fresh slice).
func (f originFeatures) row(l int) []float64 {
	x := slices.Clone(f.base)
	x[5] = f.wq[l]
	return x
}

// features computes resource r's features at every origin, as Predict
// does.
func features(m *Model, traces []Trace, os []origin, r Resource) []originFeatures {
	out := make([]originFeatures, len(os))
	var buf [7]float64
	var sorted []float64
	for i, o := range os {
		u := traces[o.trace].U[r]
		hist := u[max(0, o.t+1-m.Window) : o.t+1]
		sorted = append(sorted[:0], hist...)
		sort.Float64s(sorted)
		f := originFeatures{base: slices.Clone(baseFeatures(hist, sorted, &buf)), wq: make([]float64, len(m.Levels))}
		for l, tau := range m.Levels {
			f.wq[l] = env.Quantile(sorted, tau)
		}
		out[i] = f
	}
	return out
}

// round6 rounds v to 6 significant digits.
func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// Pinball returns the pinball (quantile) loss of predicting the
// tau-quantile q when y occurs: tau*(y-q) when y >= q, (1-tau)*(q-y)
// otherwise.
func Pinball(tau, q, y float64) float64 {
	if d := y - q; d >= 0 {
		return tau * d
	} else {
		return (tau - 1) * d
	}
}

// MM algorithm settings (Hunter and Lange, 2000).
const (
	// mmEps perturbs the absolute residuals: a residual below it
	// (utilisation units) stops counting as a kink.
	mmEps = 1e-6
	// mmIters bounds the iterations.
	mmIters = 500
	// mmTol is the relative decrease of the pinball loss below which the
	// iterations stop.
	mmTol = 1e-7
)

// quantReg returns the coefficients beta minimising sum_i sum_j
// Pinball(tau, x[i].beta, y[i][j]): the linear tau-quantile regression of
// the targets y[i] (any number, all sharing the features x[i]) on x.
//
// It runs Hunter and Lange's MM algorithm ("Quantile regression via an MM
// algorithm", JCGS 2000): each iteration minimises the quadratic that
// majorises the loss with the absolute residuals perturbed by mmEps,
// sum w r^2 + (4tau-2) r with w = 1/(mmEps+|r_k|) at the last residuals
// r_k, a weighted least-squares solve (X'WX) beta = X'(Wy + (2tau-1)).
// Sharing x across a row's targets makes an iteration cost one rank-one
// update per row, not per target. It stops when the loss falls by less
// than mmTol relative, or after mmIters iterations, and returns the best
// iterate. It starts from ordinary least squares. Deterministic: sums run
// in index order.
func quantReg(x [][]float64, y [][]float64, tau float64, start []float64) ([]float64, error) {
	if len(x) == 0 || len(x) != len(y) {
		return nil, fmt.Errorf("forecast: %d feature rows for %d target rows", len(x), len(y))
	}
	p := len(x[0])
	// The normal equations accumulate in plain slices (upper triangle of
	// ata, row-major) and are copied into a for the solve.
	ata := make([]float64, p*p)
	atb := make([]float64, p)
	a := mat.NewSymDense(p, nil)
	b := mat.NewVecDense(p, atb)
	beta := mat.NewVecDense(p, nil)
	var chol mat.Cholesky
	solve := func() error {
		for k := range p {
			for l := k; l < p; l++ {
				a.SetSym(k, l, ata[k*p+l])
			}
		}
		if ok := chol.Factorize(a); !ok {
			// Nearly collinear features (a resource that barely
			// moves): a ridge a millionth of the largest diagonal.
			d := 0.0
			for k := range p {
				d = max(d, a.At(k, k))
			}
			for k := range p {
				a.SetSym(k, k, a.At(k, k)+1e-6*d+1e-300)
			}
			if ok := chol.Factorize(a); !ok {
				return errors.New("forecast: singular normal equations")
			}
		}
		return chol.SolveVecTo(beta, b)
	}
	accumulate := func(i int, w, rhs float64) {
		xi := x[i]
		for k := range p {
			wk := w * xi[k]
			row := ata[k*p : (k+1)*p]
			for l := k; l < p; l++ {
				row[l] += wk * xi[l]
			}
			atb[k] += rhs * xi[k]
		}
	}
	reset := func() {
		clear(ata)
		clear(atb)
	}
	if start != nil {
		for k := range p {
			beta.SetVec(k, start[k])
		}
	} else {
		// Ordinary least squares.
		reset()
		for i := range x {
			s := 0.0
			for _, yj := range y[i] {
				s += yj
			}
			accumulate(i, float64(len(y[i])), s)
		}
		if err := solve(); err != nil {
			return nil, err
		}
	}
	// Each pass scores the current beta and builds the next one's
	// system.
	best := mat.VecDenseCopyOf(beta)
	bestLoss, prev := math.Inf(1), math.Inf(1)
	for range mmIters + 1 {
		reset()
		l := 0.0
		for i, xi := range x {
			f := dotVec(xi, beta)
			var w, wy float64
			for _, yj := range y[i] {
				r := yj - f
				l += Pinball(tau, f, yj)
				v := 1 / (mmEps + math.Abs(r))
				w += v
				wy += v * yj
			}
			accumulate(i, w, wy+(2*tau-1)*float64(len(y[i])))
		}
		if l < bestLoss {
			best.CopyVec(beta)
			bestLoss = l
		}
		if math.Abs(prev-l) <= mmTol*l {
			break
		}
		prev = l
		if err := solve(); err != nil {
			return nil, err
		}
	}
	return slices.Clone(best.RawVector().Data), nil
}

func dotVec(x []float64, v *mat.VecDense) float64 {
	s := 0.0
	for k, xk := range x {
		s += xk * v.AtVec(k)
	}
	return s
}
