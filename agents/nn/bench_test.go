package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Compare runs with
//
//	go test -run '^$' -bench . -count 10 ./agents/nn/ > new.txt && benchstat old.txt new.txt

// naiveGemmNT computes c = a bᵀ with plain loops (dot products of rows), the
// hand-written alternative to the BLAS product used by Linear.Forward.
func naiveGemmNT(a, b, c Mat) {
	for i := 0; i < a.Rows; i++ {
		ar := a.Row(i)
		cr := c.Row(i)
		for j := 0; j < b.Rows; j++ {
			br := b.Row(j)
			var s0, s1, s2, s3 float32
			k := 0
			for ; k+4 <= len(ar); k += 4 {
				s0 += ar[k] * br[k]
				s1 += ar[k+1] * br[k+1]
				s2 += ar[k+2] * br[k+2]
				s3 += ar[k+3] * br[k+3]
			}
			for ; k < len(ar); k++ {
				s0 += ar[k] * br[k]
			}
			cr[j] = s0 + s1 + s2 + s3
		}
	}
}

func TestNaiveGemmAgrees(t *testing.T) {
	rng := newRNG(12)
	a, b := randMat(rng, 9, 13, 1), randMat(rng, 7, 13, 1)
	c1, c2 := NewMat(9, 7), NewMat(9, 7)
	naiveGemmNT(a, b, c1)
	gemm(false, true, 1, a, b, 0, c2)
	for i := range c1.Data {
		if math.Abs(float64(c1.Data[i]-c2.Data[i])) > 1e-5 {
			t.Fatalf("element %d: naive %v, blas %v", i, c1.Data[i], c2.Data[i])
		}
	}
}

// BenchmarkGemm compares the product x Wᵀ for a batch of 256 rows of 64
// features and a 64x64 weight: hand-written loops against gonum's blas32.
func BenchmarkGemm(b *testing.B) {
	rng := newRNG(13)
	x, w := randMat(rng, 256, 64, 1), randMat(rng, 64, 64, 1)
	c := NewMat(256, 64)
	flops := 2.0 * 256 * 64 * 64
	b.Run("impl=naive/256x64x64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			naiveGemmNT(x, w, c)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("impl=blas32/256x64x64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			gemm(false, true, 1, x, w, 0, c)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkTrainStep times one forward, MSE backward and Adam step: the PPO
// critic shape (8 -> 64 tanh -> 64 tanh -> 1, CleanRL's clip 0.5) and the
// DESIGN.md reference shape (256 -> 128 tanh -> 128 tanh -> 64), batch 256.
func BenchmarkTrainStep(b *testing.B) {
	for _, sizes := range [][]int{{8, 64, 64, 1}, {256, 128, 128, 64}} {
		const batch = 256
		b.Run(fmt.Sprintf("mlp=%v/batch=%d", sizes, batch), func(b *testing.B) {
			m := NewOrthogonalMLP(sizes, NewTanh, math.Sqrt2, 1, rand.NewPCG(1, 1))
			rng := newRNG(2)
			x := randMat(rng, batch, sizes[0], 1)
			y := randMat(rng, batch, sizes[len(sizes)-1], 1)
			opt := NewAdam(m.Params(), 2.5e-4, 1e-5)
			b.ReportAllocs()
			for b.Loop() {
				m.ZeroGrad()
				_, g := MSE(m.Forward(x), y)
				m.Accumulate(g)
				ClipGradNorm(m.Params(), 0.5)
				opt.Step()
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
		})
	}
}

// BenchmarkGradGemm compares gonum's Sgemm with the AVX2 kernels
// (gemm_fast.go) on Linear's two gradient products for a 64-64 layer and
// a minibatch of 128: dx = dy W (128x64x64) and dW += dyᵀ x (64x64x128).
func BenchmarkGradGemm(b *testing.B) {
	rng := newRNG(14)
	dy, w, x := randMat(rng, 128, 64, 1), randMat(rng, 64, 64, 1), randMat(rng, 128, 64, 1)
	dx, dw := NewMat(128, 64), NewMat(64, 64)
	flops := 2.0 * 128 * 64 * 64
	for _, impl := range []string{"gonum", "kernels"} {
		if impl == "kernels" && !haveKernels {
			continue
		}
		run := func(b *testing.B, f func()) {
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run("impl="+impl+"/dx=dyW", func(b *testing.B) {
			run(b, func() {
				if impl == "gonum" {
					gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, 128, 64, 64, 1, dy.Data, 64, w.Data, 64, 0, dx.Data, 64)
				} else {
					clear(dx.Data)
					fastGemm(false, 128, 64, 64, dy.Data, 64, w.Data, 64, dx.Data, 64)
				}
			})
		})
		b.Run("impl="+impl+"/dW+=dyTx", func(b *testing.B) {
			run(b, func() {
				if impl == "gonum" {
					gonum.Implementation{}.Sgemm(blas.Trans, blas.NoTrans, 64, 64, 128, 1, dy.Data, 64, x.Data, 64, 1, dw.Data, 64)
				} else {
					fastGemm(true, 64, 64, 128, dy.Data, 64, x.Data, 64, dw.Data, 64)
				}
			})
		})
	}
}

// BenchmarkKernelWidth times Linear's three products for a 64-64 layer and
// a minibatch of 128 on the AVX2 kernels and, where the CPU has it, the
// AVX-512 ones.
func BenchmarkKernelWidth(b *testing.B) {
	if !haveKernels {
		b.Skip("no gemm kernels on this CPU or platform")
	}
	rng := newRNG(15)
	x, w, dy := randMat(rng, 128, 64, 1), randMat(rng, 64, 64, 1), randMat(rng, 128, 64, 1)
	y, dx, dw := NewMat(128, 64), NewMat(128, 64), NewMat(64, 64)
	flops := 3 * 2.0 * 128 * 64 * 64
	was := haveKernels512
	defer setKernels512(was)
	for _, wide := range []bool{false, true} {
		if wide && !was {
			continue
		}
		name := "avx2"
		if wide {
			name = "avx512"
		}
		b.Run("kernels="+name, func(b *testing.B) {
			setKernels512(wide)
			for b.Loop() {
				gemm(false, true, 1, x, w, 0, y)
				gemm(false, false, 1, dy, w, 0, dx)
				gemm(true, false, 1, dy, x, 1, dw)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
