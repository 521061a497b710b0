package nn

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/drover-sched/drover/internal/longtest"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// specialFloat32 draws a value that is usually ordinary but often one of
// the cases where a reordered or fused product would show: exact zeros of
// both signs (skipped by gonum's axpy), infinities, NaN, subnormals and
// magnitudes whose products round.
func specialFloat32(r *rand.Rand) float32 {
	switch r.IntN(24) {
	case 0, 1, 2:
		return 0
	case 3:
		return float32(math.Copysign(0, -1))
	case 4:
		return float32(math.Inf(1 - 2*r.IntN(2)))
	case 5:
		return float32(math.NaN())
	case 6:
		return math.Float32frombits(uint32(r.IntN(1 << 23))) // subnormal
	case 7:
		return float32(r.NormFloat64() * 1e30)
	default:
		return float32(r.NormFloat64())
	}
}

// randFloats returns size values: standard normal, or drawn by
// specialFloat32 when special is set.
func randFloats(r *rand.Rand, size int, special bool) []float32 {
	s := make([]float32, size)
	for i := range s {
		if special {
			s[i] = specialFloat32(r)
		} else {
			s[i] = float32(r.NormFloat64())
		}
	}
	return s
}

// sameFloat32 is bit equality, except that any NaN matches any NaN (the
// payload a NaN carries is not part of the result's meaning).
func sameFloat32(x, y float32) bool {
	if x != x && y != y {
		return true
	}
	return math.Float32bits(x) == math.Float32bits(y)
}

// gemmTrials is the number of random cases of the kernels' equivalence
// tests: 600 in make test, whose race detector slows gonum's reference
// about tenfold, 3,000 in make test-long. 600 holds every combination of
// the cases the trial number picks (every 10th the PPO shape, every 3rd
// special values, trial mod 5 and 25 the zero rows: a period of 150).
func gemmTrials() int {
	if longtest.Enabled() {
		return 3000
	}
	return 600
}

// TestFastGemmMatchesGonum checks the AVX2 kernels against gonum's Sgemm,
// bit for bit, for c += a·b and c += aᵀ·b on random shapes (covering the
// 4x16, 4x8, 1x8 and scalar paths), leading dimensions wider than the
// matrices, unaligned starting offsets, and special values.
func TestFastGemmMatchesGonum(t *testing.T) {
	if !haveKernels {
		t.Skip("no gemm kernels on this CPU or platform")
	}
	forEachKernelWidth(t, testFastGemmMatchesGonum)
}

func testFastGemmMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range gemmTrials() {
		m, n, k := 1+r.IntN(37), 1+r.IntN(41), 1+r.IntN(70)
		if trial%10 == 0 { // the 64-64 shapes of the PPO networks
			m, n, k = 128, 64, 64
		}
		transA := r.IntN(2) == 1
		lda := k + r.IntN(3)
		arows := m
		if transA {
			lda, arows = m+r.IntN(3), k
		}
		ldb, ldc := n+r.IntN(3), n+r.IntN(3)
		off := func() int { return r.IntN(4) } // unaligned starts
		mk := func(size int, special bool) []float32 { return randFloats(r, size, special) }
		special := trial%3 == 0
		oa, ob, oc := off(), off(), off()
		a := mk(oa+(arows-1)*lda+max(k, m)+1, special)[oa:]
		// Whole zero rows of a (dropped by compactGemm): some, or all.
		switch trial % 5 {
		case 1:
			for r := range arows {
				if r%3 == 1 {
					clear(a[r*lda : min(r*lda+lda, len(a))])
				}
			}
		case 2:
			if trial%25 == 2 {
				clear(a)
			}
		}
		b := mk(ob+(k-1)*ldb+n, special)[ob:]
		c0 := mk(oc+(m-1)*ldc+n, special)[oc:]
		want := append([]float32(nil), c0...)
		got := append([]float32(nil), c0...)
		ta := blas.NoTrans
		if transA {
			ta = blas.Trans
		}
		gonum.Implementation{}.Sgemm(ta, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 1, want, ldc)
		fastGemm(transA, m, n, k, a, lda, b, ldb, got, ldc)
		for i := range want {
			if !sameFloat32(got[i], want[i]) {
				t.Fatalf("trial %d (m %d n %d k %d transA %v lda %d ldb %d ldc %d): c[%d] = %v (%#x), gonum %v (%#x)",
					trial, m, n, k, transA, lda, ldb, ldc, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestFastGemmShortOperands checks that the kernels' bounds check panics
// rather than reading or writing past a slice.
func TestFastGemmShortOperands(t *testing.T) {
	if !haveKernels {
		t.Skip("no gemm kernels on this CPU or platform")
	}
	defer func() {
		if recover() == nil {
			t.Error("a c one element short did not panic")
		}
	}()
	a, b, c := make([]float32, 8*4), make([]float32, 4*16), make([]float32, 8*16-1)
	fastGemm(false, 8, 16, 4, a, 4, b, 16, c, 16)
}

// TestFastGemmNTMatchesGonum checks Linear's forward product c += a·bᵀ on
// the kernels against gonum's Sgemm, bit for bit: random shapes (including
// ones large enough for gonum to split k into blocks of 64), b starting at
// each alignment within 16 bytes, widths that leave columns to the scalar
// path, and special values.
func TestFastGemmNTMatchesGonum(t *testing.T) {
	if !haveKernels {
		t.Skip("no gemm kernels on this CPU or platform")
	}
	forEachKernelWidth(t, testFastGemmNTMatchesGonum)
}

func testFastGemmNTMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{128, 64, 64}, {128, 84, 120}, {512, 64, 64}, {200, 130, 150}, {1, 1, 1}, {3, 9, 17}, {128, 64, 45}, {128, 64, 21}, {256, 70, 150}}
	for trial := range gemmTrials() {
		var m, n, k int
		if trial < len(shapes) {
			m, n, k = shapes[trial][0], shapes[trial][1], shapes[trial][2]
		} else {
			m, n, k = 1+r.IntN(40), 1+r.IntN(40), 1+r.IntN(80)
		}
		lda := k + r.IntN(3)
		ldb := k + r.IntN(6)
		ldc := n + r.IntN(3)
		special := trial%3 == 0
		mk := func(size int) []float32 { return randFloats(r, size, special) }
		a := mk(r.IntN(4) + (m-1)*lda + k)
		a = a[len(a)-((m-1)*lda+k):]
		b := mk(r.IntN(4) + (n-1)*ldb + k)
		b = b[len(b)-((n-1)*ldb+k):]
		c0 := mk((m-1)*ldc + n)
		want := append([]float32(nil), c0...)
		got := append([]float32(nil), c0...)
		gonum.Implementation{}.Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, lda, b, ldb, 1, want, ldc)
		fastGemmNT(m, n, k, a, lda, b, ldb, got, ldc)
		for i := range want {
			if !sameFloat32(got[i], want[i]) {
				t.Fatalf("trial %d (m %d n %d k %d lda %d ldb %d ldc %d, b at %#x): c[%d] = %v (%#x), gonum %v (%#x)",
					trial, m, n, k, lda, ldb, ldc, uintptr(unsafe.Pointer(&b[0]))&15, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestAnyZero checks the zero scan that lets the kernels skip their zero
// check: a +0 or -0 at every position of every length up to 40 is found,
// and NaN, subnormals and other values are not zeros.
func TestAnyZero(t *testing.T) {
	if !haveKernels {
		t.Skip("no gemm kernels on this CPU or platform")
	}
	for n := 1; n <= 40; n++ {
		s := make([]float32, n)
		for i := range s {
			s[i] = []float32{1, float32(math.NaN()), math.SmallestNonzeroFloat32, -2, float32(math.Inf(-1))}[i%5]
		}
		if anyZero(&s[0], n) {
			t.Fatalf("n %d: zero found in %v", n, s)
		}
		for i := range s {
			for _, z := range []float32{0, float32(math.Copysign(0, -1))} {
				old := s[i]
				s[i] = z
				if !anyZero(&s[0], n) {
					t.Fatalf("n %d: %v at %d not found", n, z, i)
				}
				s[i] = old
			}
		}
	}
}

// TestLinearBiasGradExact checks the bias gradient (a product with ones on
// the kernels where they run) against the plain row-by-row sum, bit for
// bit, with zero rows and special values in dy.
func TestLinearBiasGradExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][2]int{{128, 64}, {7, 3}, {33, 9}, {1, 1}} {
		rows, out := shape[0], shape[1]
		l := NewLinear(5, out)
		x, dy := NewMat(rows, 5), NewMat(rows, out)
		for i := range dy.Data {
			dy.Data[i] = specialFloat32(r)
		}
		for i := 0; i < rows; i += 4 {
			clear(dy.Row(i))
		}
		want := make([]float32, out)
		for i := range l.B.Grad {
			l.B.Grad[i] = float32(r.NormFloat64())
			want[i] = l.B.Grad[i]
		}
		for i := range rows {
			for j, g := range dy.Row(i) {
				want[j] += g
			}
		}
		l.Forward(x)
		l.Backward(dy)
		for j := range want {
			if !sameFloat32(l.B.Grad[j], want[j]) {
				t.Fatalf("%dx%d: db[%d] = %v, want %v", rows, out, j, l.B.Grad[j], want[j])
			}
		}
	}
}

// TestGemmDispatchMatchesGonum checks gemm, whichever path it takes, against
// gonum's Sgemm for every transpose pair and beta 0, 1 and 0.5 (with
// gonum's BLAS; the netlib tag's OpenBLAS rounds differently).
func TestGemmDispatchMatchesGonum(t *testing.T) {
	if !gonumBLAS {
		t.Skipf("gemm runs on %s, which sums in its own order", BLAS)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, beta := range []float32{0, 1, 0.5} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			m, n, k := 19, 23, 29
			ar, ac, br, bc := m, k, k, n
			if tr[0] {
				ar, ac = k, m
			}
			if tr[1] {
				br, bc = n, k
			}
			a, b, c := NewMat(ar, ac), NewMat(br, bc), NewMat(m, n)
			for _, x := range []Mat{a, b, c} {
				for i := range x.Data {
					x.Data[i] = specialFloat32(r)
				}
			}
			want := c.Clone()
			ta, tb := blas.NoTrans, blas.NoTrans
			if tr[0] {
				ta = blas.Trans
			}
			if tr[1] {
				tb = blas.Trans
			}
			gonum.Implementation{}.Sgemm(ta, tb, m, n, k, 1, a.Data, a.Cols, b.Data, b.Cols, beta, want.Data, n)
			gemm(tr[0], tr[1], 1, a, b, beta, c)
			for i := range want.Data {
				if !sameFloat32(c.Data[i], want.Data[i]) {
					t.Fatalf("beta %v trans %v: c[%d] = %v, gonum %v", beta, tr, i, c.Data[i], want.Data[i])
				}
			}
		}
	}
}

// forEachKernelWidth runs check with the AVX2 kernels only and, where the
// CPU has AVX-512, again with the AVX-512 ones.
func forEachKernelWidth(t *testing.T, check func(*testing.T)) {
	was := haveKernels512 || haveTanh512
	defer func() { setKernels512(was) }()
	setKernels512(false)
	t.Run("avx2", check)
	if was {
		setKernels512(true)
		t.Run("avx512", check)
	}
}
