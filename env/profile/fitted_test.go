package profile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/longtest"
)

var update = flag.Bool("update", false, "rewrite builtin.json from ../shared/traces")

func fitAll(t *testing.T) map[string]Params {
	ps := make(map[string]Params)
	for name, m := range loadAll(t) {
		ps[name] = Fit(m)
	}
	return ps
}

// TestBuiltinRegenerates checks that fitting the traces reproduces the
// embedded builtin.json byte for byte (go test -update rewrites it). It is
// a long test (make test-long: six fits, 90 s under -race); make test fits
// one model in TestBuiltinRefitOne.
func TestBuiltinRegenerates(t *testing.T) {
	if !*update {
		longtest.Skip(t, "fits all six models")
	}
	var buf bytes.Buffer
	if err := WriteBuiltinJSON(&buf, fitAll(t)); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("builtin.json", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(buf.Bytes(), builtinJSON) {
		t.Errorf("builtin.json is stale; run go test ./env/profile -run TestBuiltinRegenerates -update")
	}
}

// TestBuiltinRefitOne is TestBuiltinRegenerates' cheap version: fitting
// the model whose fit is quickest (yolov3, about a thirtieth of the six)
// gives its embedded parameters exactly.
func TestBuiltinRefitOne(t *testing.T) {
	const name = "yolov3"
	m, ok := loadAll(t)[name]
	if !ok {
		t.Fatalf("no measurements of %s", name)
	}
	if d := cmp.Diff(builtinParams()[name], Fit(m)); d != "" {
		t.Errorf("%s: refit differs from builtin.json (-embedded,+refit):\n%s", name, d)
	}
}

// TestFittedAccuracy compares each builtin fitted profile with its
// measurements: throughput on the placements.csv rows, and total
// iterations to completion at every validated batch size.
func TestFittedAccuracy(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			m := loadAll(t)[name]
			f, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			var sum, worst float64
			for _, r := range m.placements {
				pl := make([]int, len(r.Placement))
				for i, c := range r.Placement {
					pl[i] = int(c - '0')
				}
				got, _ := f.Throughput(pl, r.LocalBsz)
				e := math.Abs(got-r.StepTime) / r.StepTime
				sum += e
				worst = max(worst, e)
			}
			mean := sum / float64(len(m.placements))
			var itWorst float64
			for _, b := range m.valBsz {
				want := m.Iteration(b, m.CompletionEpoch(b))
				got := f.Iteration(b, f.CompletionEpoch(b))
				itWorst = max(itWorst, math.Abs(got-want)/want)
			}
			var prWorst float64
			for e := 1; e <= m.MaxEpochs(); e++ {
				prWorst = max(prWorst, math.Abs(f.Progress(e)-m.Progress(e))/m.Progress(e))
			}
			// Gradient statistics: relative error of each validation row's
			// grad_sqr and grad_var up to the completion epoch (rows with a
			// recorded 0 are skipped), averaged over batch sizes per epoch;
			// the mean and worst of those per-epoch means, and the worst row.
			var gSum, gWorstEpoch, gWorstRow float64
			for e := range m.MaxEpochs() {
				var es float64
				var n int
				for i, b := range m.valBsz {
					s, v := f.GradStats(b, e)
					r := m.val[i][e]
					for _, pr := range [][2]float64{{s, r.GradSqr}, {v, r.GradVar}} {
						if pr[1] > 0 {
							d := math.Abs(pr[0]-pr[1]) / pr[1]
							es += d
							n++
							gWorstRow = max(gWorstRow, d)
						}
					}
				}
				es /= float64(n)
				gSum += es
				gWorstEpoch = max(gWorstEpoch, es)
			}
			gMean := gSum / float64(m.MaxEpochs())
			t.Logf("%s: step time mean rel err %.3f max %.3f; total iterations max rel err %.2g; progress max rel err %.3f; grad stats rel err per epoch mean %.3f worst %.3f, worst row %.3g",
				name, mean, worst, itWorst, prWorst, gMean, gWorstEpoch, gWorstRow)
			if mean > 0.15 {
				t.Errorf("mean relative step-time error %.3f > 0.15", mean)
			}
			if itWorst > 0.10 {
				t.Errorf("total-iterations error %.3f > 0.10", itWorst)
			}
		})
	}
}

func TestBuiltinUnknown(t *testing.T) {
	if _, err := Builtin("nope"); err == nil || !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("Builtin(nope) = %v, want ErrUnknownModel", err)
	}
	_ = fmt.Sprint()
}

// TestFittedSane sweeps every builtin profile over all epochs, several
// batch sizes from InitBatchSize to MaxBatchSize and every placement of 1-16
// nodes with 1-8 GPUs each at several local batch sizes, and checks that
// the values are usable by the simulator: finite positive gradient
// statistics and gain, 0 <= sync < step, and strictly increasing progress.
func TestFittedSane(t *testing.T) {
	for _, name := range BuiltinNames() {
		f, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		finitePos := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
		lo, hi := f.InitBatchSize(), f.MaxBatchSize()
		bszs := []int{lo, hi}
		for i := 1; i < 8; i++ {
			bszs = append(bszs, lo+(hi-lo)*i/8)
		}
		bszs = append(bszs, f.Params().BatchSizes...)
		for e := range f.MaxEpochs() {
			for _, b := range bszs {
				sqr, v := f.GradStats(b, e)
				if !finitePos(sqr) || !finitePos(v) {
					t.Fatalf("%s: GradStats(%d, %d) = %v, %v", name, b, e, sqr, v)
				}
				scale := float64(b) / float64(f.InitBatchSize())
				if gain := (v + sqr) / (v/scale + sqr); !finitePos(gain) {
					t.Fatalf("%s: gain at batch %d, epoch %d = %v", name, b, e, gain)
				}
			}
		}
		for e := range f.MaxEpochs() + 1 {
			if e > 0 && !(f.Progress(e) > f.Progress(e-1)) {
				t.Fatalf("%s: Progress(%d) = %v, not above Progress(%d) = %v", name, e, f.Progress(e), e-1, f.Progress(e-1))
			}
		}
		lmin, lmax := f.MinLocalBsz(), f.MaxLocalBsz()
		locals := []int{lmin, lmax, (lmin + lmax) / 2, lmin + (lmax-lmin)/4, lmin + 3*(lmax-lmin)/4}
		for nodes := 1; nodes <= 16; nodes++ {
			// Every GPU count from 1 per node to 8 per node, spread as
			// evenly as possible (the model depends on nodes and GPUs only).
			for r := nodes; r <= 8*nodes; r++ {
				pl := make([]int, nodes)
				for i := range pl {
					pl[i] = r / nodes
					if i < r%nodes {
						pl[i]++
					}
				}
				for _, l := range locals {
					step, sync := f.Throughput(pl, l)
					if !finitePos(step) || !(sync >= 0) || !(sync < step) {
						t.Fatalf("%s: Throughput(%v, %d) = %v, %v", name, pl, l, step, sync)
					}
				}
			}
		}
	}
}
