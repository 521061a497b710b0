package forecast_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

var (
	traceOnce sync.Once
	traces    []forecast.Trace
	traceErr  error
)

// traceFixture returns the v2018 machine-usage head resampled to 300 s,
// skipping tb when the shared traces are absent.
func traceFixture(tb testing.TB) []forecast.Trace {
	tb.Helper()
	path := sharedtraces.Path(tb, "alibaba_v2018", "machine_usage.csv.gz")
	traceOnce.Do(func() {
		ms, err := datasets.ReadMachineUsage(path)
		if err != nil {
			traceErr = err
			return
		}
		series := make([]background.Series, len(ms))
		names := make([]string, len(ms))
		for i, m := range ms {
			series[i] = background.FromTraffic(m.Time, m.CPU, m.MemBW, m.NetIn, m.NetOut)
			names[i] = m.Machine
		}
		traces, traceErr = forecast.FromSeries(series, names, forecast.DefaultStep)
	})
	if traceErr != nil {
		tb.Fatal(traceErr)
	}
	return traces
}

// table formats rep's mean pinball losses and coverages for the log.
func table(rep forecast.Report) string {
	var b strings.Builder
	for r := range forecast.NumResources {
		for k := range forecast.NumMethods {
			s := rep.Scores[k][r]
			fmt.Fprintf(&b, "%-6s %-12s P10 %.4g P50 %.4g P90 %.4g mean %.4g coverage %.3f\n",
				r, k, s.Pinball(0), s.Pinball(1), s.Pinball(2), s.MeanPinball(), s.Coverage())
		}
	}
	return b.String()
}

// TestDefaultBeatsWindow is the acceptance of the SAS predictor, measured
// on the trace: on the held-out last 30% of every machine's time, the
// embedded model (fitted on the first 70%) has a lower mean pinball loss
// at P10, P50 and P90 than today's window of 64 samples, on every
// resource; and its P10-P90 band covers 70-90% of the future samples
// (target 80%).
func TestDefaultBeatsWindow(t *testing.T) {
	trs := traceFixture(t)
	_, from := forecast.TimeSplit(trs, 0.7)
	rep := forecast.Evaluate(forecast.Default(), trs, from, forecast.DefaultWindow)
	t.Logf("held-out time, %d origins:\n%s", rep.Origins, table(rep))
	if !rep.Beats() {
		t.Error("the learned model's mean pinball loss is not below the window's on every resource")
	}
	for r := range forecast.NumResources {
		if c := rep.Scores[forecast.Learned][r].Coverage(); !(c >= 0.7 && c <= 0.9) {
			t.Errorf("%s: P10-P90 coverage %.3f, want 0.7-0.9", r, c)
		}
	}
}

// TestFitReproducesDefault refits the model on the first 70% of the trace
// and compares it with the embedded model.json byte for byte (drover
// forecast fit -o policies/sas/forecast/model.json rewrites it). It is a
// long test (make test-long; 406 s under -race, issue 31). Even its two
// lowest levels, which a partial refit reproduces exactly, took 70 s under
// -race, so make test has no refit here: TestDefaultBeatsWindow checks the
// embedded model on the trace, TestFitRecoversLinearForecaster the fitter.
func TestFitReproducesDefault(t *testing.T) {
	longtest.Skip(t, "refits all 19 levels on the whole trace")
	trs := traceFixture(t)
	train, _ := forecast.TimeSplit(trs, 0.7)
	m, err := forecast.Fit(train, forecast.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err := forecast.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := forecast.Encode(forecast.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("refit differs from model.json (-embedded,+refit):\n%s", cmp.Diff(string(want), string(got)))
	}
}
