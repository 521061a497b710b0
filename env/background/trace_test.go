package background_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

var update = flag.Bool("update", false, "rewrite params.json from the trace")

// fromMachineSeries converts the decoded Alibaba v2018 trace to Series:
// Net is the larger of NetIn and NetOut.
func fromMachineSeries(ms []datasets.MachineSeries) []background.Series {
	out := make([]background.Series, len(ms))
	for i, m := range ms {
		out[i] = background.FromTraffic(m.Time, m.CPU, m.MemBW, m.NetIn, m.NetOut)
	}
	return out
}

var (
	traceOnce   sync.Once
	traceSeries []background.Series
	traceErr    error
)

// traceFixture returns the v2018 machine-usage head as Series, skipping tb
// when the shared traces are absent.
func traceFixture(tb testing.TB) []background.Series {
	tb.Helper()
	path := sharedtraces.Path(tb, "alibaba_v2018", "machine_usage.csv.gz")
	traceOnce.Do(func() {
		ms, err := datasets.ReadMachineUsage(path)
		traceSeries, traceErr = fromMachineSeries(ms), err
	})
	if traceErr != nil {
		tb.Fatal(traceErr)
	}
	return traceSeries
}

// TestFitReproducesDefault refits the trace at DefaultStep and compares with
// the embedded params.json byte for byte; -update rewrites the file.
func TestFitReproducesDefault(t *testing.T) {
	series := traceFixture(t)
	p, err := background.Fit(series, background.DefaultStep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("params.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("params.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("refit differs from params.json (go test -update rewrites it):\n got %s\nwant %s", got, want)
	}
	if p != background.Default() {
		t.Errorf("refit %+v != Default %+v", p, background.Default())
	}
	// Fitting twice gives the same numbers.
	if p2, _ := background.Fit(series, background.DefaultStep); p2 != p {
		t.Errorf("second fit %+v != first %+v", p2, p)
	}
}

// stats are the summary statistics compared between trace and model.
type stats struct {
	mean, std, lag1 [3]float64
}

// summarize returns, per resource, the mean and standard deviation of the
// usage over all steps of all series, and the lag-1 autocorrelation of each
// series' deviation from its own mean, pooled.
func summarize(series [][]background.Usage) stats {
	var st stats
	get := func(u background.Usage, r int) float64 { return [3]float64{u.CPU, u.MemBW, u.Net}[r] }
	for r := range 3 {
		var s, ss, n float64
		var sxy, sxx float64
		for _, u := range series {
			var m float64
			for _, v := range u {
				m += get(v, r)
			}
			m /= float64(len(u))
			for i, v := range u {
				x := get(v, r)
				s += x
				ss += x * x
				n++
				sxx += (x - m) * (x - m)
				if i > 0 {
					sxy += (x - m) * (get(u[i-1], r) - m)
				}
			}
		}
		st.mean[r] = s / n
		st.std[r] = math.Sqrt(ss/n - st.mean[r]*st.mean[r])
		st.lag1[r] = sxy / sxx
	}
	return st
}

// sample returns the first steps steps of each of nodes nodes of src.
func sample(src background.Source, nodes, steps int) [][]background.Usage {
	out := make([][]background.Usage, nodes)
	for n := range out {
		out[n] = make([]background.Usage, steps)
		for k := range steps {
			out[n][k] = src.At(n, float64(k)*src.Step())
		}
	}
	return out
}

// TestStochasticMatchesTrace compares the Default model with the trace it
// was fitted on (resampled by a Replay of one node per machine). The model
// draws levels from a logit-normal fitted to 16 machines, so the pooled mean
// and std in utilisation space match only approximately; the tolerances
// are the measured differences (logged) with some margin.
func TestStochasticMatchesTrace(t *testing.T) {
	series := traceFixture(t)
	rep, err := background.NewReplay(series, len(series), background.DefaultStep)
	if err != nil {
		t.Fatal(err)
	}
	// One full cycle of each machine: the longest machine has 2304 steps.
	var trace [][]background.Usage
	for n := range series {
		steps := int(math.Floor(series[n].Time[len(series[n].Time)-1]/background.DefaultStep)-
			math.Floor(series[n].Time[0]/background.DefaultStep)) + 1
		trace = append(trace, sample(rep, n+1, steps)[n])
	}
	want := summarize(trace)

	src, err := background.NewStochastic(background.Default(), 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(sample(src, 400, 2304))

	names := [3]string{"cpu", "mem_bw", "net"}
	const (
		meanTol = 0.03 // absolute, utilisation fraction
		stdTol  = 0.30 // relative
		lag1Tol = 0.05 // absolute
	)
	for r := range 3 {
		t.Logf("%-6s mean trace %.4f model %.4f | std trace %.4f model %.4f | lag1 trace %.4f model %.4f",
			names[r], want.mean[r], got.mean[r], want.std[r], got.std[r], want.lag1[r], got.lag1[r])
		if d := math.Abs(got.mean[r] - want.mean[r]); d > meanTol {
			t.Errorf("%s: mean %.4f, trace %.4f (|diff| > %v)", names[r], got.mean[r], want.mean[r], meanTol)
		}
		if d := math.Abs(got.std[r]/want.std[r] - 1); d > stdTol {
			t.Errorf("%s: std %.4f, trace %.4f (relative diff > %v)", names[r], got.std[r], want.std[r], stdTol)
		}
		if d := math.Abs(got.lag1[r] - want.lag1[r]); d > lag1Tol {
			t.Errorf("%s: lag-1 autocorrelation %.4f, trace %.4f (|diff| > %v)", names[r], got.lag1[r], want.lag1[r], lag1Tol)
		}
	}
}
