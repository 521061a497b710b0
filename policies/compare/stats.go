package compare

import (
	"encoding/json"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is a mean over seeds with a confidence interval:
// Mean ± HalfWidth.
type Estimate struct {
	// Mean is the sample mean.
	Mean float64
	// HalfWidth is the half-width of the two-sided t-interval at the
	// level asked for; NaN with fewer than two values.
	HalfWidth float64
	// N is the number of values.
	N int
}

// Lo returns the interval's lower end.
func (e Estimate) Lo() float64 { return e.Mean - e.HalfWidth }

// Hi returns the interval's upper end.
func (e Estimate) Hi() float64 { return e.Mean + e.HalfWidth }

// MeanCI returns the mean of xs and the half-width of the two-sided
// Student-t confidence interval at level (e.g. 0.95):
// t_{(1+level)/2, n-1} * s / sqrt(n), with s the sample standard deviation
// (n-1 in the denominator). With one value the half-width is NaN; with
// none the mean is NaN too.
func MeanCI(xs []float64, level float64) Estimate {
	n := len(xs)
	e := Estimate{N: n, Mean: math.NaN(), HalfWidth: math.NaN()}
	if n == 0 {
		return e
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	e.Mean = sum / float64(n)
	if n < 2 {
		return e
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - e.Mean) * (x - e.Mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	e.HalfWidth = TQuantile((1+level)/2, n-1) * sd / math.Sqrt(float64(n))
	return e
}

// TQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom.
func TQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}

// MarshalJSON writes {"mean": m, "ci95": h, "n": n}, with null for NaN.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean      *float64 `json:"mean"`
		HalfWidth *float64 `json:"ci95"`
		N         int      `json:"n"`
	}{num(e.Mean), num(e.HalfWidth), e.N})
}

// num returns a pointer to x, or nil for NaN and infinities (JSON null).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
