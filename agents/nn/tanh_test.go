package nn

import (
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
)

func checkTanh32(t *testing.T, from, to, stride uint64) (n int) {
	t.Helper()
	for u := from; u < to; u += stride {
		v := math.Float32frombits(uint32(u))
		got, want := tanh32(v), float32(math.Tanh(float64(v)))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("tanh32(%v) = %v, want float32(math.Tanh) = %v", v, got, want)
		}
		n++
	}
	return n
}

// tanh32 equals float32(math.Tanh(float64(v))) bit for bit: on special
// values, and on a strided sweep of the positive and negative float32s
// (every 61st through the fast range 2⁻⁵..9.5, every 4099th elsewhere).
// TestTanh32Exhaustive checks all of them.
func TestTanh32(t *testing.T) {
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), 0x1p-5, -0x1p-5, 0.625, 9.5, -9.5, 44, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32} {
		got, want := tanh32(v), float32(math.Tanh(float64(v)))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("tanh32(%v) = %v, want %v", v, got, want)
		}
	}
	lo, hi := uint64(math.Float32bits(0x1p-5)), uint64(math.Float32bits(9.5))
	n := 0
	for _, sign := range []uint64{0, 1 << 31} {
		n += checkTanh32(t, sign+lo, sign+hi, 61)
		n += checkTanh32(t, sign, sign+1<<31, 4099)
	}
	t.Logf("%d inputs agree", n)
}

// Every float32 input (2³² of them; about a minute on two cores), run when
// DROVER_EXHAUSTIVE=1.
func TestTanh32Exhaustive(t *testing.T) {
	if os.Getenv("DROVER_EXHAUSTIVE") != "1" {
		t.Skip("set DROVER_EXHAUSTIVE=1 to check all 2³² inputs")
	}
	workers := uint64(runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w; u < 1<<32; u += workers {
				v := math.Float32frombits(uint32(u))
				if got, want := tanh32(v), float32(math.Tanh(float64(v))); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("tanh32(%v) = %v, want %v", v, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkTanh compares float32(math.Tanh(float64(v))) with tanh32 on
// 128 x 64 pre-activations drawn from N(0, 1.5²).
func BenchmarkTanh(b *testing.B) {
	x := randMat(newRNG(14), 128, 64, 1.5)
	y := NewMat(128, 64)
	b.Run("impl=math.Tanh", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x.Data {
				y.Data[i] = float32(math.Tanh(float64(v)))
			}
		}
	})
	b.Run("impl=tanh32", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x.Data {
				y.Data[i] = tanh32(v)
			}
		}
	})
	b.Run("impl=tanhSlice", func(b *testing.B) {
		var flags []uint8
		for b.Loop() {
			flags = tanhSlice(y.Data, x.Data, flags)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(len(x.Data)), "ns/value")
	})
}

// checkTanhSlice runs tanhSlice over the float32s with bit patterns
// from, from+stride, ... below to (in slices of up to 4096) against
// float32(math.Tanh), stopping at the first difference. It may run on
// any goroutine.
func checkTanhSlice(t *testing.T, from, to, stride uint64) (n int) {
	t.Helper()
	src, dst := make([]float32, 0, 4096), make([]float32, 4096)
	var flags []uint8
	failed := false
	flush := func() {
		flags = tanhSlice(dst, src, flags)
		for i, v := range src {
			if want := float32(math.Tanh(float64(v))); math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Errorf("tanhSlice at %v (%#x) = %v, want float32(math.Tanh) = %v", v, math.Float32bits(v), dst[i], want)
				failed = true
				return
			}
		}
		n += len(src)
		src = src[:0]
	}
	for u := from; u < to; u += stride {
		src = append(src, math.Float32frombits(uint32(u)))
		if len(src) == cap(src) {
			if flush(); failed {
				return n
			}
		}
	}
	flush()
	return n
}

// tanhSlice (the vector kernel where there is one) equals
// float32(math.Tanh(float64(v))) bit for bit: on special values in every
// lane position and on strided sweeps as TestTanh32's.
// TestTanhSliceExhaustive checks every input.
func TestTanhSlice(t *testing.T) { forEachKernelWidth(t, testTanhSlice) }

func testTanhSlice(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 0x1p-5, -0x1p-5, 0.625, 9.5, -9.5, 44, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32, 1, -1, 0.5, 3}
	for shift := range 4 {
		src := append(make([]float32, shift), special...)
		dst := make([]float32, len(src))
		tanhSlice(dst, src, nil)
		for i, v := range src {
			if want := float32(math.Tanh(float64(v))); math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Errorf("tanhSlice at %v (position %d) = %v, want %v", v, i, dst[i], want)
			}
		}
	}
	lo, hi := uint64(math.Float32bits(0x1p-5)), uint64(math.Float32bits(9.5))
	n := 0
	for _, sign := range []uint64{0, 1 << 31} {
		n += checkTanhSlice(t, sign+lo, sign+hi, 61)
		n += checkTanhSlice(t, sign, sign+1<<31, 4099)
	}
	t.Logf("%d inputs agree", n)
}

// Every float32 input through tanhSlice, run when DROVER_EXHAUSTIVE=1.
func TestTanhSliceExhaustive(t *testing.T) {
	if os.Getenv("DROVER_EXHAUSTIVE") != "1" {
		t.Skip("set DROVER_EXHAUSTIVE=1 to check all 2³² inputs")
	}
	forEachKernelWidth(t, testTanhSliceExhaustive)
}

func testTanhSliceExhaustive(t *testing.T) {
	workers := uint64(runtime.GOMAXPROCS(0))
	chunk := uint64(1<<32) / workers
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total uint64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := checkTanhSlice(t, w*chunk, (w+1)*chunk, 1)
			mu.Lock()
			total += uint64(n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 1<<32 {
		t.Errorf("checked %d inputs, want 2³²", total)
	}
}

// TestTanhBackwardExact checks Tanh.Backward (the vector kernel where
// there is one) against dy·(1 - y·y) in float32, bit for bit, for lengths
// that leave a scalar tail, with special values.
func TestTanhBackwardExact(t *testing.T) {
	r := newRNG(31)
	for n := 1; n <= 37; n++ {
		x, dy := NewMat(1, n), NewMat(1, n)
		for i := range n {
			x.Data[i] = float32(r.NormFloat64() * 2)
			dy.Data[i] = []float32{float32(r.NormFloat64()), 0, float32(math.Inf(1)), float32(math.NaN()), 1e-38}[i%5]
		}
		var th Tanh
		y := th.Forward(x)
		dx := th.Backward(dy)
		for i := range n {
			want := dy.Data[i] * float32(1-float32(y.Data[i]*y.Data[i]))
			if math.Float32bits(dx.Data[i]) != math.Float32bits(want) && !(dx.Data[i] != dx.Data[i] && want != want) {
				t.Fatalf("n %d: dx[%d] = %v, want %v", n, i, dx.Data[i], want)
			}
		}
	}
}
