package forecast

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/env"
)

// EvalLevels are the quantile levels Evaluate scores: P10, P50 and P90,
// the Forecast SAS groups nodes by.
var EvalLevels = [3]float64{0.1, 0.5, 0.9}

// Method names a forecaster that Evaluate scores.
type Method int

// The methods Evaluate compares.
const (
	// Learned is the Model.
	Learned Method = iota
	// Window is today's SAS predictor: the type-7 quantiles of the
	// node's last Report.Window samples stand in for the future.
	Window
	// WindowMean is the window's mean as a point forecast, every
	// quantile equal to it.
	WindowMean
	// NumMethods is the number of methods.
	NumMethods
)

var methodNames = [NumMethods]string{"learned", "window", "window-mean"}

// String returns the method's name as reports print it.
func (m Method) String() string {
	if m >= 0 && m < NumMethods {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Scores accumulates one method's scores on one resource: sums over
// (origin, target) pairs, so scores of disjoint parts add up.
type Scores struct {
	// Loss[i] is the sum of the pinball losses at EvalLevels[i].
	Loss [len(EvalLevels)]float64
	// Covered counts the targets inside the forecast's [P10, P90].
	Covered int
	// N counts the (origin, target) pairs.
	N int
}

// Pinball returns the mean pinball loss at EvalLevels[i] (NaN when N is
// 0).
func (s Scores) Pinball(i int) float64 { return s.Loss[i] / float64(s.N) }

// MeanPinball returns the mean of the pinball losses at EvalLevels.
func (s Scores) MeanPinball() float64 {
	t := 0.0
	for _, l := range s.Loss {
		t += l
	}
	return t / float64(len(s.Loss)*s.N)
}

// Coverage returns the share of targets inside [P10, P90] (0.8 for a
// calibrated forecast).
func (s Scores) Coverage() float64 { return float64(s.Covered) / float64(s.N) }

// add adds o's sums to s.
func (s *Scores) add(o Scores) {
	for i := range s.Loss {
		s.Loss[i] += o.Loss[i]
	}
	s.Covered += o.Covered
	s.N += o.N
}

// score adds the target y against quantiles q (at EvalLevels).
func (s *Scores) score(q [len(EvalLevels)]float64, y float64) {
	for i, tau := range EvalLevels {
		s.Loss[i] += Pinball(tau, q[i], y)
	}
	if y >= q[0] && y <= q[len(q)-1] {
		s.Covered++
	}
	s.N++
}

// Report is the outcome of Evaluate.
type Report struct {
	// Horizon is the model's horizon in steps; Window the baseline's
	// window in samples.
	Horizon, Window int
	// Origins counts the forecast origins scored.
	Origins int
	// Scores[m][r] is method m's scores on resource r.
	Scores [NumMethods][NumResources]Scores
}

// Add adds o's sums to r (origins and scores), for scores over disjoint
// parts of the data; r takes o's Horizon and Window when it has none.
func (r *Report) Add(o Report) {
	if r.Horizon == 0 {
		r.Horizon, r.Window = o.Horizon, o.Window
	}
	r.Origins += o.Origins
	for m := range r.Scores {
		for k := range r.Scores[m] {
			r.Scores[m][k].add(o.Scores[m][k])
		}
	}
}

// Beats reports whether the learned model's mean pinball loss is below the
// window's on every resource: the acceptance of the SAS predictor.
func (r Report) Beats() bool {
	for k := range NumResources {
		if !(r.Scores[Learned][k].MeanPinball() < r.Scores[Window][k].MeanPinball()) {
			return false
		}
	}
	return true
}

// Evaluate scores m against the baseline window of the last window samples
// (SAS's ring: 64) and that window's mean, on the origins of traces whose
// targets all lie at or after from[i] (held-out time; nil: all of it),
// with at least m.MinHistory samples, m.Horizon steps inside the trace and
// a measured target among them. Every measured sample in an origin's
// horizon is one target, scored by each method's P10, P50 and P90 (the
// pinball loss) and [P10, P90] band (coverage). Evaluate panics when from
// is not nil and differs in length from traces, or window < 1.
func Evaluate(m *Model, traces []Trace, from []int, window int) Report {
	if from != nil && len(from) != len(traces) {
		panic(fmt.Sprintf("forecast: %d held-out starts for %d traces", len(from), len(traces)))
	}
	if window < 1 {
		panic(fmt.Sprintf("forecast: window %d", window))
	}
	rep := Report{Horizon: m.Horizon, Window: window}
	os := origins(traces, from, m.MinHistory, m.Horizon)
	rep.Origins = len(os)
	var pred, sorted, wsorted []float64
	for _, o := range os {
		tr := traces[o.trace]
		for r := range NumResources {
			u := tr.U[r]
			hist := u[max(0, o.t+1-m.Window) : o.t+1]
			sorted = append(sorted[:0], hist...)
			sort.Float64s(sorted)
			pred = m.Predict(r, hist, sorted, pred)
			win := u[max(0, o.t+1-window) : o.t+1]
			wsorted = append(wsorted[:0], win...)
			sort.Float64s(wsorted)
			var ql, qw, qm [len(EvalLevels)]float64
			mu := mean(win)
			for i, tau := range EvalLevels {
				ql[i] = QuantileAt(m.Levels, pred, tau)
				qw[i] = env.Quantile(wsorted, tau)
				qm[i] = mu
			}
			for h := 1; h <= m.Horizon; h++ {
				if !tr.measured(o.t + h) {
					continue
				}
				y := u[o.t+h]
				rep.Scores[Learned][r].score(ql, y)
				rep.Scores[Window][r].score(qw, y)
				rep.Scores[WindowMean][r].score(qm, y)
			}
		}
	}
	return rep
}

// TimeSplit cuts each trace at frac of its steps: train holds the first
// part of each trace and from the index of each held-out part's first step
// (for Evaluate on the whole traces).
func TimeSplit(traces []Trace, frac float64) (train []Trace, from []int) {
	train = make([]Trace, len(traces))
	from = make([]int, len(traces))
	for i, tr := range traces {
		n := int(frac * float64(tr.Len()))
		train[i], from[i] = tr.Head(n), n
	}
	return train, from
}

// CrossMachines scores c's models on machines they were not fitted on:
// the traces are dealt into folds by index (trace i in fold i mod folds),
// and each fold is evaluated (all its time) by a model fitted on the other
// folds. The reports add up. It returns Fit's errors.
func CrossMachines(traces []Trace, c Config, folds, window int) (Report, error) {
	if folds < 2 || folds > len(traces) {
		return Report{}, fmt.Errorf("forecast: %d folds for %d traces", folds, len(traces))
	}
	var rep Report
	for f := range folds {
		var train, test []Trace
		for i, tr := range traces {
			if i%folds == f {
				test = append(test, tr)
			} else {
				train = append(train, tr)
			}
		}
		m, err := Fit(train, c)
		if err != nil {
			return Report{}, fmt.Errorf("fold %d: %w", f, err)
		}
		rep.Add(Evaluate(m, test, nil, window))
	}
	return rep, nil
}
