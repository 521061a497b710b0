package profile

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Params are the fitted numbers of one model: enough to run the simulator
// without the trace files. All times are in seconds.
type Params struct {
	Name          string `json:"name"`
	InitBatchSize int    `json:"init_batch_size"`
	MaxBatchSize  int    `json:"max_batch_size"`
	MinLocalBsz   int    `json:"min_local_bsz"`
	MaxLocalBsz   int    `json:"max_local_bsz"`
	MaxEpochs     int    `json:"max_epochs"`

	// Throughput, after Pollux's performance model (goodput.py): compute
	// time c = AlphaC + BetaC*localBsz; network time, for replicas r > 1,
	// AlphaR + BetaR*(r-2) within one node and AlphaN + BetaN*(r-2) across
	// nodes; step = (c^Gamma + net^Gamma)^(1/Gamma). A single GPU pays
	// Sync1. The sync share is step - c.
	AlphaC float64 `json:"alpha_c"`
	BetaC  float64 `json:"beta_c"`
	AlphaR float64 `json:"alpha_r"`
	BetaR  float64 `json:"beta_r"`
	AlphaN float64 `json:"alpha_n"`
	BetaN  float64 `json:"beta_n"`
	Gamma  float64 `json:"gamma"`
	Sync1  float64 `json:"sync_1"`

	// Progress after e epochs is ProgressA*e + ProgressB*e^2; Fit keeps it
	// strictly increasing for e in [0, MaxEpochs].
	ProgressA float64 `json:"progress_a"`
	ProgressB float64 `json:"progress_b"`

	// BatchSizes are the validated global batch sizes (ascending).
	// TotalIters[i] is the iteration count at the completion epoch at
	// BatchSizes[i]; the count after epoch e is that times the piecewise-
	// linear fraction IterShape over the knot epochs Knots.
	BatchSizes []int     `json:"batch_sizes"`
	TotalIters []float64 `json:"total_iters"`
	// FinalMetric[i] is the validation metric at the completion epoch at
	// BatchSizes[i], as measured (not fitted). Empty in parameters that
	// predate it; FinalMetric is then NaN.
	FinalMetric []float64 `json:"final_metric,omitempty"`
	Knots       []int     `json:"knots"`
	IterShape   []float64 `json:"iter_shape"`

	// Gradient statistics are fitted in log space, so they are positive by
	// construction: the squared norm at BatchSizes[i] during epoch e is
	//
	//	exp(SqrLogScale[i] + SqrLogCurve(e) + x_i*SqrLogSlope(e)),
	//	x_i = ln(BatchSizes[i]/BatchSizes[0]),
	//
	// the curves piecewise linear over Knots (both 0 at the first knot),
	// and the variance likewise with the Var fields. Between batch sizes
	// the values are interpolated linearly, as Pollux does.
	SqrLogScale []float64 `json:"sqr_log_scale"`
	SqrLogCurve []float64 `json:"sqr_log_curve"`
	SqrLogSlope []float64 `json:"sqr_log_slope"`
	VarLogScale []float64 `json:"var_log_scale"`
	VarLogCurve []float64 `json:"var_log_curve"`
	VarLogSlope []float64 `json:"var_log_slope"`
}

// Fitted is a Profile computed from Params alone.
type Fitted struct {
	p Params
}

var _ Profile = (*Fitted)(nil)

// NewFitted returns the Profile described by p.
func NewFitted(p Params) *Fitted { return &Fitted{p: p} }

// Params returns the parameters f was built from.
func (f *Fitted) Params() Params { return f.p }

// Name returns the model name.
func (f *Fitted) Name() string { return f.p.Name }

// InitBatchSize returns the initial global batch size.
func (f *Fitted) InitBatchSize() int { return f.p.InitBatchSize }

// MaxBatchSize returns the largest global batch size.
func (f *Fitted) MaxBatchSize() int { return f.p.MaxBatchSize }

// MinLocalBsz returns the smallest per-GPU batch size.
func (f *Fitted) MinLocalBsz() int { return f.p.MinLocalBsz }

// MaxLocalBsz returns the largest per-GPU batch size.
func (f *Fitted) MaxLocalBsz() int { return f.p.MaxLocalBsz }

// MaxEpochs returns the number of epochs a job trains for.
func (f *Fitted) MaxEpochs() int { return f.p.MaxEpochs }

// Throughput evaluates the fitted performance model. It panics on an empty
// placement or a negative GPU count.
func (f *Fitted) Throughput(placement []int, localBsz int) (step, sync float64) {
	var buf [80]byte
	_, nodes, replicas := canonicalPlacement(buf[:0], placement)
	return f.p.throughput(nodes, replicas, float64(localBsz))
}

func (p *Params) throughput(nodes, replicas int, bsz float64) (step, sync float64) {
	c := p.AlphaC + p.BetaC*bsz
	if replicas <= 1 {
		return c + p.Sync1, p.Sync1
	}
	net := p.AlphaR + p.BetaR*float64(replicas-2)
	if nodes > 1 {
		net = p.AlphaN + p.BetaN*float64(replicas-2)
	}
	step = math.Pow(math.Pow(c, p.Gamma)+math.Pow(net, p.Gamma), 1/p.Gamma)
	// step >= max(c, net) mathematically; pow can round it just below c.
	step = math.Max(step, c)
	return step, step - c
}

// bracket is Measured.bracket over the fitted batch sizes.
func (f *Fitted) bracket(batchSize int) (lo, hi int) { return bracket(f.p.BatchSizes, batchSize) }

// knotValue evaluates the piecewise-linear curve ys over knots at epoch e
// (constant beyond the ends).
func knotValue(knots []int, ys []float64, e int) float64 {
	if e <= knots[0] {
		return ys[0]
	}
	for i := 1; i < len(knots); i++ {
		if e <= knots[i] {
			t := float64(e-knots[i-1]) / float64(knots[i]-knots[i-1])
			return ys[i-1] + t*(ys[i]-ys[i-1])
		}
	}
	return ys[len(ys)-1]
}

// GradStats returns the fitted gradient statistics, interpolated between
// batch sizes as Pollux does. It panics outside the validated batch sizes.
func (f *Fitted) GradStats(batchSize int, epoch int) (sqr, variance float64) {
	lo, hi := f.bracket(batchSize)
	ls, us := f.p.gradStat(lo, epoch)
	if lo == hi {
		return ls, us
	}
	hs, hv := f.p.gradStat(hi, epoch)
	bl, bh := f.p.BatchSizes[lo], f.p.BatchSizes[hi]
	return lerp(batchSize, bl, bh, ls, hs), lerp(batchSize, bl, bh, us, hv)
}

// gradStat evaluates the log-space model at validated batch size i.
func (p *Params) gradStat(i, epoch int) (sqr, variance float64) {
	x := math.Log(float64(p.BatchSizes[i]) / float64(p.BatchSizes[0]))
	sqr = math.Exp(p.SqrLogScale[i] + knotValue(p.Knots, p.SqrLogCurve, epoch) + x*knotValue(p.Knots, p.SqrLogSlope, epoch))
	variance = math.Exp(p.VarLogScale[i] + knotValue(p.Knots, p.VarLogCurve, epoch) + x*knotValue(p.Knots, p.VarLogSlope, epoch))
	return sqr, variance
}

// Iteration returns the fitted iterations after completing epoch.
func (f *Fitted) Iteration(batchSize int, epoch int) float64 {
	lo, hi := f.bracket(batchSize)
	shape := knotValue(f.p.Knots, f.p.IterShape, epoch)
	if lo == hi {
		return f.p.TotalIters[lo] * shape
	}
	return lerp(batchSize, f.p.BatchSizes[lo], f.p.BatchSizes[hi], f.p.TotalIters[lo], f.p.TotalIters[hi]) * shape
}

// Progress returns the fitted progress after epoch epochs.
func (f *Fitted) Progress(epoch int) float64 {
	e := float64(epoch)
	return f.p.ProgressA*e + f.p.ProgressB*e*e
}

// FinalMetric returns the measured validation metric at the completion
// epoch, interpolated between batch sizes and clamped to their range as
// Measured.FinalMetric does, or NaN when the parameters have none. It
// implements env.Accuracy.
func (f *Fitted) FinalMetric(batchSize int) float64 {
	bs := f.p.BatchSizes
	if len(f.p.FinalMetric) != len(bs) || len(bs) == 0 {
		return math.NaN()
	}
	batchSize = min(max(batchSize, bs[0]), bs[len(bs)-1])
	lo, hi := f.bracket(batchSize)
	if lo == hi {
		return f.p.FinalMetric[lo]
	}
	return lerp(batchSize, bs[lo], bs[hi], f.p.FinalMetric[lo], f.p.FinalMetric[hi])
}

// CompletionEpoch returns MaxEpochs()-1, as Measured does.
func (f *Fitted) CompletionEpoch(batchSize int) int { return f.p.MaxEpochs - 1 }

// sig6 rounds to 6 significant digits, so that the fitted numbers (and
// builtin.json) do not depend on last-bit differences between platforms.
func sig6(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

func sig6s(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = sig6(x)
	}
	return out
}

// Fit fits Params to a Measured profile: least squares on the placements
// and scalability measurements for throughput, and on the validation
// curves (up to the completion epoch) for convergence. It is
// deterministic.
func Fit(m *Measured) Params {
	p := Params{
		Name: m.name, InitBatchSize: m.initBatchSize, MaxBatchSize: m.maxBatchSize,
		MinLocalBsz: m.minLocalBsz, MaxLocalBsz: m.maxLocalBsz, MaxEpochs: m.maxEpochs,
	}
	fitThroughput(m, &p)
	fitConvergence(m, &p)
	return p
}

type perfRow struct {
	nodes, replicas int
	bsz, step, sync float64
}

func perfRows(m *Measured) []perfRow {
	var rows []perfRow
	for r := range m.filePlacements() {
		rows = append(rows, perfRow{len(r.Placement), digitSum(r.Placement), float64(r.LocalBsz), r.StepTime, r.SyncTime})
	}
	for _, r := range m.scalability {
		rows = append(rows, perfRow{r.NumNodes, r.NumReplicas, float64(r.LocalBsz), r.StepTime, r.SyncTime})
	}
	return rows
}

func fitThroughput(m *Measured, p *Params) {
	rows := perfRows(m)
	// Compute time: minimise the relative error of AlphaC + BetaC*bsz
	// against step - sync (closed-form weighted least squares).
	a := mat.NewDense(len(rows), 2, nil)
	y := mat.NewVecDense(len(rows), nil)
	var s1, n1 float64
	for i, r := range rows {
		c := math.Max(r.step-r.sync, 1e-9)
		a.Set(i, 0, 1/c)
		a.Set(i, 1, r.bsz/c)
		y.SetVec(i, 1)
		if r.replicas == 1 {
			s1 += r.sync
			n1++
		}
	}
	var ab mat.VecDense
	if err := ab.SolveVec(a, y); err != nil {
		panic("profile: compute-time fit failed: " + err.Error())
	}
	p.AlphaC, p.BetaC = math.Max(ab.AtVec(0), 1e-6), math.Max(ab.AtVec(1), 0)
	if n1 > 0 {
		p.Sync1 = s1 / n1
	}
	// Network time and overlap: minimise the squared log error of the step
	// time over multi-GPU rows. Parameters are optimised in log space
	// (gamma = 1 + 9*sigmoid(u), Pollux's [1, 10] range).
	unpack := func(x []float64) (q Params) {
		q = *p
		q.AlphaR, q.BetaR = math.Exp(x[0]), math.Exp(x[1])
		q.AlphaN, q.BetaN = math.Exp(x[2]), math.Exp(x[3])
		q.Gamma = 1 + 9/(1+math.Exp(-x[4]))
		return q
	}
	obj := func(x []float64) float64 {
		q := unpack(x)
		sum := 0.0
		for _, r := range rows {
			if r.replicas <= 1 {
				continue
			}
			st, _ := q.throughput(r.nodes, r.replicas, r.bsz)
			d := math.Log(st) - math.Log(r.step)
			sum += d * d
		}
		return sum
	}
	x0 := []float64{math.Log(0.1), math.Log(0.01), math.Log(0.1), math.Log(0.01), -2}
	x := nelderMead(obj, x0, 4000)
	q := unpack(x)
	p.AlphaR, p.BetaR, p.AlphaN, p.BetaN, p.Gamma = q.AlphaR, q.BetaR, q.AlphaN, q.BetaN, q.Gamma
	p.AlphaC, p.BetaC, p.Sync1 = sig6(p.AlphaC), sig6(p.BetaC), sig6(p.Sync1)
	p.AlphaR, p.BetaR, p.AlphaN, p.BetaN, p.Gamma = sig6(p.AlphaR), sig6(p.BetaR), sig6(p.AlphaN), sig6(p.BetaN), sig6(p.Gamma)
}

// hatBasis returns the piecewise-linear basis weights of epoch e over knots.
func hatBasis(knots []int, e int) []float64 {
	w := make([]float64, len(knots))
	switch {
	case e <= knots[0]:
		w[0] = 1
	case e >= knots[len(knots)-1]:
		w[len(w)-1] = 1
	default:
		for i := 1; i < len(knots); i++ {
			if e <= knots[i] {
				t := float64(e-knots[i-1]) / float64(knots[i]-knots[i-1])
				w[i-1], w[i] = 1-t, t
				break
			}
		}
	}
	return w
}

// convKnots returns the knot epochs of the convergence curves for a model
// trained for E epochs: every one of the first few epochs, where the
// gradient statistics fall by up to several decades, then evenly spaced
// ones up to the last epoch, n in all (fewer when E is small).
func convKnots(E, n int) []int {
	var ks []int
	add := func(k int) {
		if k >= 0 && k < E && (len(ks) == 0 || k > ks[len(ks)-1]) {
			ks = append(ks, k)
		}
	}
	const dense = 3 // epochs 0, 1, 2
	for k := range dense {
		add(k)
	}
	if rest := n - dense; rest > 0 && E-1 > dense-1 {
		for i := 1; i <= rest; i++ {
			add(dense - 1 + int(math.Round(float64(i*(E-dense))/float64(rest))))
		}
	}
	return ks
}

// convKnotCount is the number of convergence knots Fit uses.
const convKnotCount = 9

// fitLogCurve fits ln ys[b][e] ~ scale[b] + curve(e) + x[b]*slope(e), with
// x[b] = ln(bsz[b]/bsz[0]) and curve and slope piecewise linear over knots
// and zero at the first knot, by linear least squares. Values that are not
// positive (deepspeech2 records exact zeros) are raised to the smallest
// positive value in ys.
func fitLogCurve(ys [][]float64, bsz []int, knots []int) (scale, curve, slope []float64) {
	nb, ne, nk := len(ys), len(ys[0]), len(knots)
	floor := math.Inf(1)
	for _, row := range ys {
		for _, v := range row {
			if v > 0 {
				floor = math.Min(floor, v)
			}
		}
	}
	if math.IsInf(floor, 1) {
		floor = 1e-300
	}
	x := make([]float64, nb)
	for b := range nb {
		x[b] = math.Log(float64(bsz[b]) / float64(bsz[0]))
	}
	// Columns: nb offsets, nk-1 curve values, nk-1 slope values (the
	// slope only when the batch sizes differ).
	useSlope := nb > 1
	cols := nb + (nk - 1)
	if useSlope {
		cols += nk - 1
	}
	a := mat.NewDense(nb*ne, cols, nil)
	y := mat.NewVecDense(nb*ne, nil)
	for b := range nb {
		for e := range ne {
			r := b*ne + e
			a.Set(r, b, 1)
			w := hatBasis(knots, e)
			for k := 1; k < nk; k++ {
				a.Set(r, nb+k-1, w[k])
				if useSlope {
					a.Set(r, nb+nk-1+k-1, x[b]*w[k])
				}
			}
			y.SetVec(r, math.Log(math.Max(ys[b][e], floor)))
		}
	}
	var c mat.VecDense
	if err := c.SolveVec(a, y); err != nil {
		panic("profile: gradient-statistics fit failed: " + err.Error())
	}
	scale = make([]float64, nb)
	curve = make([]float64, nk)
	slope = make([]float64, nk)
	for b := range nb {
		scale[b] = c.AtVec(b)
	}
	for k := 1; k < nk; k++ {
		curve[k] = c.AtVec(nb + k - 1)
		if useSlope {
			slope[k] = c.AtVec(nb + nk - 1 + k - 1)
		}
	}
	return scale, curve, slope
}

func fitConvergence(m *Measured, p *Params) {
	E := m.maxEpochs
	p.Knots = convKnots(E, convKnotCount)
	// Progress: least squares of a*e + b*e^2 through Pollux's Progress(e),
	// falling back to a*e alone when the quadratic is not strictly
	// increasing on [0, E].
	a := mat.NewDense(E, 2, nil)
	y := mat.NewVecDense(E, nil)
	var sxy, sxx float64
	for e := 1; e <= E; e++ {
		a.Set(e-1, 0, float64(e))
		a.Set(e-1, 1, float64(e*e))
		y.SetVec(e-1, m.Progress(e))
		sxy += float64(e) * m.Progress(e)
		sxx += float64(e * e)
	}
	var pr mat.VecDense
	if err := pr.SolveVec(a, y); err == nil {
		p.ProgressA, p.ProgressB = sig6(pr.AtVec(0)), sig6(pr.AtVec(1))
	}
	if !progressIncreasing(p.ProgressA, p.ProgressB, E) {
		p.ProgressA, p.ProgressB = sig6(sxy/sxx), 0
	}
	p.BatchSizes = slices.Clone(m.valBsz)
	last := E - 1
	shape := make([]float64, len(p.Knots))
	sqr := make([][]float64, len(m.val))
	vr := make([][]float64, len(m.val))
	for i, rows := range m.val {
		total := rows[last].Iteration
		p.TotalIters = append(p.TotalIters, sig6(total))
		p.FinalMetric = append(p.FinalMetric, sig6(rows[last].Metric))
		for j, kn := range p.Knots {
			shape[j] += rows[kn].Iteration / total / float64(len(m.val))
		}
		for e := range E {
			sqr[i] = append(sqr[i], rows[e].GradSqr)
			vr[i] = append(vr[i], rows[e].GradVar)
		}
	}
	shape[len(shape)-1] = 1
	p.IterShape = sig6s(shape)
	sc, cv, sl := fitLogCurve(sqr, p.BatchSizes, p.Knots)
	p.SqrLogScale, p.SqrLogCurve, p.SqrLogSlope = sig6s(sc), sig6s(cv), sig6s(sl)
	sc, cv, sl = fitLogCurve(vr, p.BatchSizes, p.Knots)
	p.VarLogScale, p.VarLogCurve, p.VarLogSlope = sig6s(sc), sig6s(cv), sig6s(sl)
}

// progressIncreasing reports whether a*e + b*e^2 is strictly increasing on
// the integers 0..E: its increments a + b*(2e+1), linear in e, are positive
// at both ends.
func progressIncreasing(a, b float64, E int) bool {
	return a+b > 0 && a+b*float64(2*E-1) > 0
}

// WriteBuiltinJSON writes ps as the indented JSON object (keyed by model
// name, keys sorted) that builtin.json holds.
func WriteBuiltinJSON(w io.Writer, ps map[string]Params) error {
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// builtinParams is builtin.json's parameters, built at first use from
// builtin_params.go, which go generate writes from builtin.json (decoding
// the JSON took half a millisecond of every drover sim's start-up;
// TestBuiltinParamsGo checks the two agree).
var builtinParams = sync.OnceValue(builtinParamsGo)

//go:generate go test -run ^TestBuiltinParamsGo$ -update .

// Builtin returns the fitted profile of a model from the embedded
// builtin.json, or ErrUnknownModel.
func Builtin(name string) (*Fitted, error) {
	p, ok := builtinParams()[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownModel, name)
	}
	return NewFitted(p), nil
}

// BuiltinNames returns the models with embedded parameters, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtinParams()))
	for n := range builtinParams() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// nelderMead minimises f from x0 with the standard Nelder-Mead simplex
// method (reflection 1, expansion 2, contraction 0.5, shrink 0.5) for at
// most iters iterations. It is deterministic. (gonum's optimize package
// would pull in golang.org/x/tools, which the module does not require.)
func nelderMead(f func([]float64) float64, x0 []float64, iters int) []float64 {
	n := len(x0)
	pts := make([][]float64, n+1)
	vals := make([]float64, n+1)
	for i := range pts {
		pts[i] = slices.Clone(x0)
		if i > 0 {
			pts[i][i-1] += 0.5
		}
		vals[i] = f(pts[i])
	}
	order := make([]int, n+1)
	at := func(c []float64, t float64, w []float64) []float64 {
		out := make([]float64, n)
		for k := range out {
			out[k] = c[k] + t*(w[k]-c[k])
		}
		return out
	}
	for range iters {
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(vals[a], vals[b]) })
		best, worst, second := order[0], order[n], order[n-1]
		if vals[worst]-vals[best] <= 1e-14*(1+math.Abs(vals[best])) {
			break
		}
		c := make([]float64, n)
		for _, i := range order[:n] {
			for k := range c {
				c[k] += pts[i][k] / float64(n)
			}
		}
		xr := at(c, -1, pts[worst])
		fr := f(xr)
		switch {
		case fr < vals[best]:
			xe := at(c, -2, pts[worst])
			if fe := f(xe); fe < fr {
				pts[worst], vals[worst] = xe, fe
			} else {
				pts[worst], vals[worst] = xr, fr
			}
		case fr < vals[second]:
			pts[worst], vals[worst] = xr, fr
		default:
			xc := at(c, 0.5, pts[worst])
			if fc := f(xc); fc < vals[worst] {
				pts[worst], vals[worst] = xc, fc
				continue
			}
			for _, i := range order[1:] {
				pts[i] = at(pts[best], 0.5, pts[i])
				vals[i] = f(pts[i])
			}
		}
	}
	best := 0
	for i := range vals {
		if vals[i] < vals[best] {
			best = i
		}
	}
	return pts[best]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
