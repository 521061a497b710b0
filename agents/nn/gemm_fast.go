package nn

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/gonum"
)

// The products c += a·b and c += aᵀ·b (Linear's input and weight
// gradients) run on AVX2 micro-kernels where the CPU has them and the BLAS
// is gonum's default. They give gonum's Sgemm results bit for bit: gonum
// computes both as a sequence of axpys, c(i,:) += a(i,l)·b(l,:) in
// increasing l, skipped where a(i,l) is 0, so each element of c sees the
// same rounded multiplies and adds in the same order whatever the
// vector width. The kernels keep a 4x16 block of c in registers over the
// whole of l (4x32 with AVX-512), where gonum loads and stores the row once
// per l, which is most of the speed-up; they mask the update only when a
// has zeros, and whole zero rows of a are dropped first (compactGemm).
// TestFastGemmMatchesGonum checks the equality on random shapes, strides
// and special values (zeros, -0, Inf, NaN), at both vector widths.

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
	// The kernels skip their zero check when a has no zeros (the usual
	// case for tanh networks); the span scanned may include elements
	// outside op(a) when lda is wider than it, which only costs speed.
	blend := 0
	if span := (m-1)*sai + (k-1)*sal + 1; anyZero(&a[0], span) {
		if compactGemm(transA, m, n, k, a, lda, b, ldb, c, ldc) {
			return
		}
		blend = 1
	}
	const f = 4 // bytes per float32
	usal, uldb, uldc := uintptr(sal*f), uintptr(ldb*f), uintptr(ldc*f)
	// With aᵀ (rows of op(a) adjacent) the last n%4 columns go 8 rows at
	// a time down the column; the row tiles below then stop short of them.
	nTiles := n
	if sai == 1 && n%4 != 0 && m >= 8 {
		nTiles = n &^ 3
		var col [8]float32
		for j := nTiles; j < n; j++ {
			i := 0
			for ; i+8 <= m; i += 8 {
				for r := range col {
					col[r] = c[(i+r)*ldc+j]
				}
				colTile8(k, &a[i], usal, &b[j], uldb, &col, blend)
				for r, v := range col {
					c[(i+r)*ldc+j] = v
				}
			}
			for ; i < m; i++ {
				axpyTail(k, a[i:], sal, b[j:], ldb, c[i*ldc+j:i*ldc+j+1])
			}
		}
	}
	i := 0
	for ; i+4 <= m; i += 4 {
		a0, a1, a2, a3 := &a[i*sai], &a[(i+1)*sai], &a[(i+2)*sai], &a[(i+3)*sai]
		j := 0
		if haveKernels512 {
			for ; j+32 <= nTiles; j += 32 {
				tile4x32(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc, blend)
			}
		}
		for ; j+16 <= nTiles; j += 16 {
			tile4x16(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc, blend)
		}
		for ; j+8 <= nTiles; j += 8 {
			tile4x8(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc, blend)
		}
		for ; j+4 <= nTiles; j += 4 {
			tile4x4(k, a0, a1, a2, a3, usal, &b[j], uldb, &c[i*ldc+j], uldc, blend)
		}
		if j < nTiles {
			for r := i; r < i+4; r++ {
				axpyTail(k, a[r*sai:], sal, b[j:], ldb, c[r*ldc+j:r*ldc+nTiles])
			}
		}
	}
	for ; i < m; i++ {
		j := 0
		for ; j+8 <= nTiles; j += 8 {
			tile1x8(k, &a[i*sai], usal, &b[j], uldb, &c[i*ldc+j], blend)
		}
		if j < nTiles {
			axpyTail(k, a[i*sai:], sal, b[j:], ldb, c[i*ldc+j:i*ldc+nTiles])
		}
	}
}

// compactScratch is compactGemm's working memory, pooled.
type compactScratch struct {
	keep []int
	buf  []float32
}

var compactPool = sync.Pool{New: func() any { return new(compactScratch) }}

// compactGemm handles fastGemm's product when some stored rows of a are
// entirely zero, as in a minibatch whose clipped samples have no gradient:
// gonum skips every product with a zero a(i,l), so such a row changes
// nothing, and dropping it keeps the rest of the sums (and their order)
// intact while sparing the kernels the masked update they use whenever a
// has a zero. For op(a) = a a zero row i leaves row i of c as it is; for
// op(a) = aᵀ a zero stored row l drops step l (and row l of b). The rows
// left are copied together and the product run on them (with c's rows
// copied out and back for op(a) = a). It reports false, doing nothing,
// when no row, or every row, is zero (then there is nothing to add).
func compactGemm(transA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) bool {
	rows, cols := m, k // a's stored rows and the columns used
	if transA {
		rows, cols = k, m
	}
	zero := func(r int) bool {
		for _, v := range a[r*lda : r*lda+cols] {
			if v != 0 {
				return false
			}
		}
		return true
	}
	first := -1
	for r := range rows {
		if zero(r) {
			first = r
			break
		}
	}
	if first < 0 {
		return false
	}
	sc := compactPool.Get().(*compactScratch)
	defer compactPool.Put(sc)
	keep := sc.keep[:0]
	for r := range rows {
		if r < first || (r > first && !zero(r)) {
			keep = append(keep, r)
		}
	}
	sc.keep = keep
	if len(keep) == 0 {
		return true // every product is skipped: c stays as it is
	}
	buf := &sc.buf
	kr := len(keep)
	if transA {
		// a' = the kept rows of a (kr x m), b' = the same rows of b.
		*buf = slices.Grow((*buf)[:0], kr*(m+n))[:kr*(m+n)]
		ac, bc := (*buf)[:kr*m], (*buf)[kr*m:]
		for q, r := range keep {
			copy(ac[q*m:(q+1)*m], a[r*lda:r*lda+m])
			copy(bc[q*n:(q+1)*n], b[r*ldb:r*ldb+n])
		}
		fastGemm(true, m, n, kr, ac, m, bc, n, c, ldc)
		return true
	}
	// a' = the kept rows of a (kr x k), c' = the same rows of c.
	*buf = slices.Grow((*buf)[:0], kr*(k+n))[:kr*(k+n)]
	ac, cc := (*buf)[:kr*k], (*buf)[kr*k:]
	for q, r := range keep {
		copy(ac[q*k:(q+1)*k], a[r*lda:r*lda+k])
		copy(cc[q*n:(q+1)*n], c[r*ldc:r*ldc+n])
	}
	fastGemm(false, kr, n, k, ac, k, b, ldb, cc, n)
	for q, r := range keep {
		copy(c[r*ldc:r*ldc+n], cc[q*n:(q+1)*n])
	}
	return true
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

// Linear's forward product c += a·bᵀ is, in gonum, one DotUnitary per
// element of c, and DotUnitary's order of summation depends on where its
// second operand (a row of b) sits: it adds products one at a time until
// that row is 16-byte aligned, then in chunks of 16 over two 4-lane
// partial sums, then in groups of 4, then one at a time, and adds the lanes
// pairwise. dotTile8 reproduces that order for 8 rows of b at once, so
// fastGemmNT groups the rows of b by their alignment: one group when ldb
// is a multiple of 4; otherwise, as for a first layer of 21 or 45 inputs,
// rows j ≡ g (mod 2 or 4), whose columns of c dotTile8 then reads and
// writes with that stride. gonum's Sgemm also splits k into blocks of 64,
// each a separate DotUnitary added to c, when it would run in parallel (at
// least minParBlock blocks of 64x64 in c); fastGemmNT does the same.

const (
	gonumBlock       = 64 // gonum/blas/gonum's blockSize
	gonumMinParBlock = 4  // and minParBlock
)

// wtPool holds fastGemmNT's scratch buffers for bᵀ.
var wtPool = sync.Pool{New: func() any { return new([]float32) }}

// fastGemmNT computes c += a·bᵀ for row-major a (m x k), b (n x k) and c
// (m x n) with leading dimensions lda, ldb and ldc, bit for bit as gonum's
// Sgemm(NoTrans, Trans, m, n, k, 1, ..., 1, ...) does.
func fastGemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k < 1 || len(a) < (m-1)*lda+k || len(b) < (n-1)*ldb+k || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("nn: fastGemmNT: short operands for %dx%dx%d", m, n, k))
	}
	// Rows of b whose starts share an alignment within 16 bytes are every
	// period-th: period 1, 2 or 4 as ldb is a multiple of 4, even, or odd.
	period := 4
	switch {
	case ldb%4 == 0:
		period = 1
	case ldb%2 == 0:
		period = 2
	}
	base := uintptr(unsafe.Pointer(&b[0]))
	buf := wtPool.Get().(*[]float32)
	defer wtPool.Put(buf)
	*buf = slices.Grow((*buf)[:0], k*n)[:k*n]
	wt := *buf // bᵀ, its columns grouped: g, g+period, ... for each g
	kb := k
	if blocksOf(m)*blocksOf(n) >= gonumMinParBlock {
		kb = gonumBlock
	}
	const f = 4 // bytes per float32
	p0 := 0     // first column of the group in wt
	for g := range min(period, n) {
		cols := (n - g + period - 1) / period
		for q := range cols {
			row := b[(g+q*period)*ldb:][:k]
			for l, v := range row {
				wt[l*n+p0+q] = v
			}
		}
		// The group's rows all start at this offset within 16 bytes.
		mis0 := int((base + uintptr(g*ldb*f)) & 15)
		for l0 := 0; l0 < k; l0 += kb {
			lk := min(kb, k-l0)
			// DotUnitary's split of this block for these rows.
			t := 0
			if mis := (mis0 + f*l0) & 15; mis != 0 {
				t = min((16-mis)/f, lk)
			}
			rest := lk - t
			chunks, tail4, tail1 := rest/16, rest%16/4, rest%4
			q := 0
			if haveKernels512 && period == 1 {
				for ; q+16 <= cols; q += 16 {
					dotTile16(m, &a[l0], uintptr(lda*f), &wt[l0*n+p0+q], uintptr(n*f), &c[g+q], uintptr(ldc*f), t, chunks, tail4, tail1)
				}
			}
			for ; q+8 <= cols; q += 8 {
				j := g + q*period
				dotTile8(m, &a[l0], uintptr(lda*f), &wt[l0*n+p0+q], uintptr(n*f), &c[j], uintptr(ldc*f), t, chunks, tail4, tail1, uintptr(period*f))
			}
			for ; q < cols; q++ {
				j := g + q*period
				brow := b[j*ldb+l0 : j*ldb+l0+lk]
				for i := range m {
					c[i*ldc+j] += gonum.Implementation{}.Sdot(lk, a[i*lda+l0:], 1, brow, 1)
				}
			}
		}
		p0 += cols
	}
}

// blocksOf is gonum's blocks(dim, blockSize).
func blocksOf(dim int) int { return (dim + gonumBlock - 1) / gonumBlock }
