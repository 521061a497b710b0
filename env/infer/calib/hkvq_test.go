package calib

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/drover-sched/drover/env/infer/kv"
)

var compareOnce struct {
	sync.Once
	rows   []Row
	params map[string]Params
	err    error
}

// compared is Compare's result, computed once for the package's tests.
func compared(t *testing.T) []Row {
	t.Helper()
	compareOnce.Do(func() { compareOnce.rows, compareOnce.params, compareOnce.err = Compare() })
	if compareOnce.err != nil {
		t.Fatal(compareOnce.err)
	}
	return compareOnce.rows
}

func fitted(t *testing.T) map[string]Params {
	compared(t)
	return compareOnce.params
}

var firstOnce struct {
	sync.Once
	long Params
	err  error
}

// firstFit is the first calibration's fit (FitWith(e, Structure{})) of
// the long experiment, computed once for TestLinkFit and
// TestStructureMatters.
func firstFit(t *testing.T) Params {
	t.Helper()
	firstOnce.Do(func() {
		e, err := Experiment("long")
		if err != nil {
			firstOnce.err = err
			return
		}
		firstOnce.long, firstOnce.err = FitWith(e, Structure{})
	})
	if firstOnce.err != nil {
		t.Fatal(firstOnce.err)
	}
	return firstOnce.long
}

// firstLink is the link FitWith starts from for experiment name: the line
// through its lowest rate's two rows' transfer times (linkLine), as
// overhead (s) and bandwidth (bytes/s).
func firstLink(t *testing.T, name string) (overhead, bw float64) {
	t.Helper()
	e, err := Experiment(name)
	if err != nil {
		t.Fatal(err)
	}
	rate := slices.Min(e.Rates)
	base, hack, err := runsAt(e, rate)
	if err != nil {
		t.Fatal(err)
	}
	_, _, overhead, bw = linkLine(e, rate, base, hack)
	return overhead, bw
}

// TestLinkFit: the link fitted from the lowest rates' two rows, as a line
// through their transfer times (the first calibration's structure), is the
// one worked by hand from the same rows (issue 34's notes): 45 ms + bytes /
// 7.7 Gbps for the RTX A6000 runs, 44 ms + bytes / 9.2 Gbps for the RTX
// 4000 Ada runs; the first calibration's fit keeps it (checked on the long
// experiment, whose fit TestStructureMatters needs too). (The Artifact
// structure moves it until the simulated transfers, which overlap, take the
// measured times: TestAgainstArtifact.)
func TestLinkFit(t *testing.T) {
	tests := []struct {
		name           string
		overhead, gbps float64
	}{
		{"long", 0.045, 7.7},
		{"short", 0.044, 9.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			overhead, bw := firstLink(t, tt.name)
			if got := overhead; math.Abs(got-tt.overhead) > 0.001 {
				t.Errorf("overhead %.4f s, want %.3f", got, tt.overhead)
			}
			if got := bw * 8 / 1e9; math.Abs(got-tt.gbps) > 0.05 {
				t.Errorf("bandwidth %.3f Gbps, want %.1f", got, tt.gbps)
			}
		})
	}
	overhead, bw := firstLink(t, "long")
	if p := firstFit(t); p.LinkOverhead != overhead || p.LinkBytesPerSec != bw {
		t.Errorf("the first calibration's fit of long: link %.4f s + bytes / %.4g bytes/s, want the line's %.4f s + bytes / %.4g", p.LinkOverhead, p.LinkBytesPerSec, overhead, bw)
	}
}

// TestMicrobenchBandwidth: the least-squares bandwidth of the BF16 kernel
// is within 2% of the slope through the table's 16K and 128K rows, worked
// by hand: (760.5 - 100.4) us over 7 x 67,108,864 bytes = 711 GB/s on the
// RTX A6000, (1610.3 - 206.8) us = 335 GB/s on the RTX 4000 Ada.
func TestMicrobenchBandwidth(t *testing.T) {
	for gpu, want := range map[string]float64{"RTX A6000 48GB": 7 * 67108864 / 660.1e-6, "RTX 4000 Ada 20GB": 7 * 67108864 / 1403.5e-6} {
		got, ok := MicrobenchBandwidth(gpu)
		if !ok || math.Abs(got/want-1) > 0.02 {
			t.Errorf("%s: %.4g bytes/s (%v), want %.4g within 2%%", gpu, got, ok, want)
		}
	}
	if _, ok := MicrobenchBandwidth("H100"); ok {
		t.Error("a GPU the microbenchmark lacks has a bandwidth")
	}
}

// TestVLLMKVCapacity: vLLM's budget summed by hand: 0.92 x 20 GiB =
// 19,756,849,561 bytes, less Qwen3-8B's 16,381,470,720 bytes of weights,
// 8,192 x 102,400 bytes of activations and 512 MiB: 1,999,647,129 bytes;
// on the A6000 0.92 x 48 GiB less the weights, 20,480 x 102,400 and 512
// MiB: 28,400,945,315.
func TestVLLMKVCapacity(t *testing.T) {
	if got := VLLMActivationBytesPerToken(kv.Qwen3_8B); got != 102400 {
		t.Errorf("activation %d bytes a token, want 102400", got)
	}
	for name, want := range map[string]int64{"short": 1_999_647_129, "long": 28_400_945_315} {
		e, _ := Experiment(name)
		g, _ := specOf(e.GPU)
		if got := VLLMKVCapacity(e, g); got != want {
			t.Errorf("%s: %d bytes, want %d", name, got, want)
		}
	}
}

// TestFitDeterministic: two fits are equal bit for bit.
func TestFitDeterministic(t *testing.T) {
	e, _ := Experiment("short")
	a := fitted(t)[e.Name]
	b, err := Fit(e)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two fits differ:\n%+v\n%+v", a, b)
	}
}

// knownMisses are the rows Drover does not predict within issue 34's
// bounds, with what is known of why (docs/results/inference.md, HACK).
// The test fails if one of them starts to pass, so that the list stays
// true. With the Artifact structure there are none.
var knownMisses = map[string]string{}

// TestAgainstArtifact is issue 34's acceptance for the HKVQ artifact:
// fitted on each experiment's lowest rate only (Fit), Drover predicts the
// mean JCT of every other row within 15% and HACK's JCT reduction against
// the baseline within 10 points, except knownMisses. The lowest rate's
// TTFT, TPOT and KV transfer times are fitted and must come out as
// measured (1%).
func TestAgainstArtifact(t *testing.T) {
	rows := compared(t)
	type key struct {
		exp  string
		rate float64
	}
	byKey := map[key][2]Row{}
	for _, r := range rows {
		m, d := r.Measured, r.Drover
		t.Logf("%-5s %.2f %-8s JCT %6.2f vs %6.2f (%+5.1f%%)  P99 %6.2f vs %6.2f (%+5.1f%%)  TTFT %5.2f vs %5.2f  TPOT %4.1f vs %4.1f ms%s",
			r.Experiment, r.Rate, r.Method, m.JCT, d.JCT, 100*r.JCTError(), m.P99JCT, d.P99JCT, 100*r.P99Error(),
			m.TTFT, d.TTFT, 1e3*m.TPOT, 1e3*d.TPOT, map[bool]string{true: "  (fitted rate)"}[r.Fitted])
		if d.Finished != d.Requests {
			t.Errorf("%s@%.2f %s: %d of %d requests finished", r.Experiment, r.Rate, r.Method, d.Finished, d.Requests)
		}
		k := key{r.Experiment, r.Rate}
		pair := byKey[k]
		if r.Method == "baseline" {
			pair[0] = r
		} else {
			pair[1] = r
		}
		byKey[k] = pair
		if r.Fitted {
			if r.Method == "baseline" && (math.Abs(d.TPOT/m.TPOT-1) > 0.01 || math.Abs(d.TTFT/m.TTFT-1) > 0.01) ||
				r.Method == "hack" && math.Abs(d.TTFT/m.TTFT-1) > 0.01 || math.Abs(d.KVTransfer/m.KVTransfer-1) > 0.01 {
				t.Errorf("%s@%.2f %s: fitted TTFT %.3f and TPOT %.4f, measured %.3f and %.4f", r.Experiment, r.Rate, r.Method, d.TTFT, d.TPOT, m.TTFT, m.TPOT)
			}
		}
		name := kname(r.Experiment, r.Rate) + " " + r.Method + " JCT"
		miss := math.Abs(r.JCTError()) > 0.15
		check(t, name, miss, r.JCTError())
	}
	for k, pair := range byKey {
		b, h := pair[0], pair[1]
		want := Reduction(b.Measured.JCT, h.Measured.JCT)
		got := Reduction(b.Drover.JCT, h.Drover.JCT)
		t.Logf("%-5s %.2f reduction: artifact %.1f%%, Drover %.1f%%", k.exp, k.rate, 100*want, 100*got)
		check(t, kname(k.exp, k.rate)+" reduction", math.Abs(got-want) > 0.10, got-want)
	}
}

func kname(exp string, rate float64) string { return fmt.Sprintf("%s@%.2f", exp, rate) }

// check fails a miss that is not known and a known miss that passes.
func check(t *testing.T, name string, miss bool, err float64) {
	t.Helper()
	why, known := knownMisses[name]
	switch {
	case miss && !known:
		t.Errorf("%s: off by %+.3f, beyond issue 34's bound", name, err)
	case miss && known:
		t.Logf("%s: known miss, off by %+.3f: %s", name, err, why)
	case !miss && known:
		t.Errorf("%s: listed as a known miss but within the bound (%+.3f): update knownMisses", name, err)
	}
}

// TestStructureMatters: the first calibration's structure (a FIFO link
// that also carries the KV's staging, HACK's per-step work at a fitted
// rate) misses the long prompts' baseline at 0.30 req/s beyond 15% (its
// TTFT grows 0.9 s where the artifact's grows 3.5 s) and so HACK's
// reduction there beyond 10 points; the Artifact structure meets both
// (TestAgainstArtifact). It replays only the two rows it checks, as
// CompareWith(Structure{}) would (the same fit and Replay).
func TestStructureMatters(t *testing.T) {
	e, err := Experiment("long")
	if err != nil {
		t.Fatal(err)
	}
	p := firstFit(t)
	mb, mh, err := runsAt(e, 0.30)
	if err != nil {
		t.Fatal(err)
	}
	replay := func(m kv.MeasuredRun) Row {
		o, err := p.Replay(e, m.Rate, m.Format)
		if err != nil {
			t.Fatal(err)
		}
		return Row{Experiment: m.Experiment, Rate: m.Rate, Method: m.Method, Measured: m, Drover: o}
	}
	base, hack := replay(mb), replay(mh)
	if e := base.JCTError(); !(e < -0.15) {
		t.Errorf("long@0.30 baseline JCT off by %+.3f, want below -0.15", e)
	}
	want, got := Reduction(base.Measured.JCT, hack.Measured.JCT), Reduction(base.Drover.JCT, hack.Drover.JCT)
	if !(math.Abs(got-want) > 0.10) {
		t.Errorf("long@0.30 reduction %.3f against %.3f, want more than 10 points off", got, want)
	}
}
