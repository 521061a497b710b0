package profile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"
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
// embedded builtin.json byte for byte (go test -update rewrites it).
func TestBuiltinRegenerates(t *testing.T) {
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
			t.Logf("%s: step time mean rel err %.3f max %.3f; total iterations max rel err %.2g; progress max rel err %.3f", name, mean, worst, itWorst, prWorst)
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
