package sas

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// TestResourcesMatchForecast: the predictor passes its Resource to the
// forecaster as is.
func TestResourcesMatchForecast(t *testing.T) {
	for _, r := range []Resource{CPU, MemBW, Net} {
		if got := forecast.Resource(r).String(); got != r.String() {
			t.Errorf("resource %d: forecast calls it %q, sas %q", r, got, r.String())
		}
	}
	if int(numResources) != int(forecast.NumResources) {
		t.Errorf("%d resources here, %d in forecast", numResources, forecast.NumResources)
	}
}

// featureModel returns a model at 300 s steps, forecasting from minHist
// samples, whose quantile at each of levels is the matching entry of
// bias plus coef times feature k (see forecast's feature list: 1 is the
// latest sample, 2 the mean of the last three).
func featureModel(t *testing.T, levels, bias []float64, k int, coef float64, minHist int) *forecast.Model {
	t.Helper()
	m := &forecast.Model{Step: 300, Horizon: 12, Window: 64, MinHistory: minHist, Levels: levels}
	for r := range m.Coef {
		for l := range levels {
			row := make([]float64, 7)
			row[0] = bias[l]
			row[k] += coef
			m.Coef[r] = append(m.Coef[r], row)
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPredictorLearned works the learned path by hand. The model forecasts
// P25 = 0.2 and P75 = 0.6 whatever the history: a slope of 0.8 per level,
// so uniform on [0, 0.8]. P10 = 0.08, P50 = 0.4, P90 = 0.6 + 0.2 x
// 0.15/0.25 = 0.72 (the last segment continued to 0.8 at level 1);
// P(X + 0.1 > 0.8) = P(X > 0.7) = 0.1/0.8 = 0.125. Before MinHistory (3)
// samples, with another sample period than the model's step, or with a
// NaN in the history, the window answers instead: the samples 0.5 0.1
// have median 0.3 and, Beta(1,1)-smoothed, overload probability (0+1)/(2+2)
// = 1/4; with 0.3 added, (0+1)/(3+2) = 1/5.
func TestPredictorLearned(t *testing.T) {
	m := featureModel(t, []float64{0.25, 0.75}, []float64{0.2, 0.6}, 1, 0, 3)
	tests := []struct {
		name    string
		period  float64
		samples []float64
		learned bool
		p50, p  float64 // Quantile(0.5), OverloadProb(+0.1 over 0.8)
	}{
		{"two samples: the window", 300, []float64{0.5, 0.1}, false, 0.3, 1.0 / 4},
		{"three samples: the model", 300, []float64{0.5, 0.1, 0.3}, true, 0.4, 0.125},
		{"another period: the window", 60, []float64{0.5, 0.1, 0.3}, false, 0.3, 1.0 / 5},
		{"a NaN (sorted first: NaN 0.3 0.5): the window", 300, []float64{0.5, math.NaN(), 0.3}, false, 0.3, 1.0 / 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPredictor(1, 64, tt.period)
			p.Model = m
			for i, x := range tt.samples {
				p.Observe(float64(i)*300, []env.Usage{{CPU: x, MemBW: x, Net: x}})
			}
			if got := p.Learned(0, CPU); got != tt.learned {
				t.Errorf("Learned = %v, want %v", got, tt.learned)
			}
			if got := p.Quantile(0, CPU, 0.5); math.Abs(got-tt.p50) > tol {
				t.Errorf("Quantile(0.5) = %v, want %v", got, tt.p50)
			}
			if got := p.OverloadProb(0, MemBW, 0.1, 0.8); math.Abs(got-tt.p) > tol {
				t.Errorf("OverloadProb = %v, want %v", got, tt.p)
			}
			if !tt.learned {
				return
			}
			f := p.Forecast(0)
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"P10", f.P10.Net, 0.08}, {"P50", f.P50.Net, 0.4}, {"P90", f.P90.Net, 0.72}} {
				if math.Abs(c.got-c.want) > tol {
					t.Errorf("Forecast %s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestPredictorLearnedRingOrder: the model reads the history oldest first
// also after the ring wraps. With capacity 3 and samples 0.1 ... 0.5 the
// ring holds 0.3 0.4 0.5: the latest is 0.5 and the mean of the last three
// 0.4. Each sample replaces the cached forecast.
func TestPredictorLearnedRingOrder(t *testing.T) {
	levels, zero := []float64{0.25, 0.75}, []float64{0, 0}
	tests := []struct {
		name    string
		feature int
		want    []float64 // median after each sample from the third
	}{
		{"latest", 1, []float64{0.3, 0.4, 0.5}},
		{"mean of the last three", 2, []float64{0.2, 0.3, 0.4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPredictor(1, 3, 300)
			p.Model = featureModel(t, levels, zero, tt.feature, 1, 1)
			var got []float64
			for i, x := range []float64{0.1, 0.2, 0.3, 0.4, 0.5} {
				p.Observe(float64(i)*300, []env.Usage{{CPU: x}})
				if i >= 2 {
					got = append(got, p.Quantile(0, CPU, 0.5))
				}
			}
			for i := range tt.want {
				if math.Abs(got[i]-tt.want[i]) > tol {
					t.Fatalf("medians %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// SAS forecasts with the embedded model by default.
func TestSASDefaultForecaster(t *testing.T) {
	if s := newSAS(t); s.Forecaster != forecast.Default() || s.Forecaster == nil {
		t.Errorf("Forecaster = %p, want forecast.Default() %p", s.Forecaster, forecast.Default())
	}
}
