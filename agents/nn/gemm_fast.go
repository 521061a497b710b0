package nn

import "fmt"

// The products c += a·b and c += aᵀ·b (Linear's input and weight
// gradients) run on AVX2 micro-kernels where the CPU has them and the BLAS
// is gonum's default. They give gonum's Sgemm results bit for bit: gonum
// computes both as a sequence of axpys, c(i,:) += a(i,l)·b(l,:) in
// increasing l, skipped where a(i,l) is 0, so each element of c sees the
// same rounded multiplies and adds in the same order whatever the
// vector width. The kernels keep a 4x16 block of c in registers over the
// whole of l, where gonum loads and stores the row once per l, which is
// most of the speed-up. TestFastGemmMatchesGonum checks the equality on
// random shapes, strides and special values (zeros, -0, Inf, NaN).

// fastGemm computes c += op(a)·b for row-major a, b and c with leading
// dimensions lda, ldb and ldc, where op(a) is m x k (a itself when !transA,
// else aᵀ of a k x m a), b is k x n and c is m x n. It is the alpha = 1,
// beta = 1 case of gonum's Sgemm(op, NoTrans, ...) and needs k >= 1.
func fastGemm(transA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	sai, sal := lda, 1 // a(i,l) is a[i*sai+l*sal]
	if transA {
		sai, sal = 1, lda
	}
	// The kernels do not check bounds: check the last element each slice
	// is read or written at, as gonum's Sgemm does.
	if m == 0 || n == 0 {
		return
	}
	if k < 1 || len(a) <= (m-1)*sai+(k-1)*sal || len(b) <= (k-1)*ldb+n-1 || len(c) <= (m-1)*ldc+n-1 {
		panic(fmt.Sprintf("nn: fastGemm: short operands for %dx%dx%d", m, n, k))
	}
	const f = 4 // bytes per float32
	usal, uldb, uldc := uintptr(sal*f), uintptr(ldb*f), uintptr(ldc*f)
	i := 0
	for ; i+4 <= m; i += 4 {
		a0, a1, a2, a3 := &a[i*sai], &a[(i+1)*sai], &a[(i+2)*sai], &a[(i+3)*sai]
		j := 0
		for ; j+16 <= n; j += 16 {
			tile4x16(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc)
		}
		for ; j+8 <= n; j += 8 {
			tile4x8(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc)
		}
		if j < n {
			for r := i; r < i+4; r++ {
				axpyTail(k, a[r*sai:], sal, b[j:], ldb, c[r*ldc+j:r*ldc+n])
			}
		}
	}
	for ; i < m; i++ {
		j := 0
		for ; j+8 <= n; j += 8 {
			tile1x8(k, &a[i*sai], usal, &b[j], uldb, &c[i*ldc+j])
		}
		if j < n {
			axpyTail(k, a[i*sai:], sal, b[j:], ldb, c[i*ldc+j:i*ldc+n])
		}
	}
}

// axpyTail is the scalar form of the kernels for the last columns of one
// row: c[j] += a[l*sal]·b[l*ldb+j] for l in [0, k), skipping zero a. The
// conversion keeps the compiler from fusing the multiply and the add.
func axpyTail(k int, a []float32, sal int, b []float32, ldb int, c []float32) {
	for l := range k {
		v := a[l*sal]
		if v == 0 {
			continue
		}
		row := b[l*ldb : l*ldb+len(c)]
		for j, x := range row {
			c[j] += float32(v * x)
		}
	}
}
