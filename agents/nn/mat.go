package nn

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Mat is a dense row-major float32 matrix: a batch of Rows samples with Cols
// features each. Element (i, j) is Data[i*Cols+j]; len(Data) is Rows*Cols.
// A Mat is a view: copying it copies the header, not the data.
type Mat struct {
	Rows, Cols int
	Data       []float32
}

// NewMat returns a zeroed rows x cols matrix.
func NewMat(rows, cols int) Mat {
	if rows < 0 || cols < 0 {
		panic("nn: negative matrix dimension")
	}
	return Mat{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// MatFrom wraps data as a rows x cols matrix without copying. It panics if
// len(data) != rows*cols.
func MatFrom(rows, cols int, data []float32) Mat {
	if rows < 0 || cols < 0 || len(data) != rows*cols {
		panic(fmt.Sprintf("nn: MatFrom(%d, %d) with %d values", rows, cols, len(data)))
	}
	return Mat{Rows: rows, Cols: cols, Data: data}
}

// At returns element (i, j).
func (m Mat) At(i, j int) float32 { return m.Data[i*m.Cols+j] }

// Set sets element (i, j) to v.
func (m Mat) Set(i, j int, v float32) { m.Data[i*m.Cols+j] = v }

// Row returns row i as a slice aliasing m.Data.
func (m Mat) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Clone returns a deep copy of m.
func (m Mat) Clone() Mat {
	return Mat{Rows: m.Rows, Cols: m.Cols, Data: append([]float32(nil), m.Data...)}
}

// resize returns m reshaped to rows x cols, reusing its storage when it is
// large enough. The contents are unspecified.
func resize(m Mat, rows, cols int) Mat {
	n := rows * cols
	if cap(m.Data) < n {
		return NewMat(rows, cols)
	}
	return Mat{Rows: rows, Cols: cols, Data: m.Data[:n]}
}

// impl is the BLAS used for matrix products; see SetBLAS. gonumBLAS says
// it is gonum's, whose results the AVX2 kernels reproduce (gemm_fast.go).
var (
	impl      blas.Float32 = gonum.Implementation{}
	gonumBLAS              = true
)

// SetBLAS replaces the float32 BLAS used for the matrix products in Linear
// (the default is gonum's pure-Go implementation, gonum.org/v1/gonum/blas/gonum).
// Building with the netlib tag (netlib.go) sets OpenBLAS through
// gonum.org/v1/netlib; BLAS says which is in use
// (run with OPENBLAS_NUM_THREADS=1 for reproducible timings). SetBLAS is not
// safe for concurrent use with training; call it once at start-up. A nil b
// restores the pure-Go default.
func SetBLAS(b blas.Float32) {
	if b == nil {
		b = gonum.Implementation{}
	}
	impl = b
	_, gonumBLAS = b.(gonum.Implementation)
}

// gemm computes c = alpha*op(a)*op(b) + beta*c for row-major matrices, where
// op transposes when the corresponding flag is set.
func gemm(transA, transB bool, alpha float32, a, b Mat, beta float32, c Mat) {
	m, k := a.Rows, a.Cols
	ta := blas.NoTrans
	if transA {
		m, k = k, m
		ta = blas.Trans
	}
	n, kb := b.Cols, b.Rows
	tb := blas.NoTrans
	if transB {
		n, kb = kb, n
		tb = blas.Trans
	}
	if k != kb || c.Rows != m || c.Cols != n {
		panic(fmt.Sprintf("nn: dimension mismatch in product (%dx%d)·(%dx%d) -> %dx%d", m, k, kb, n, c.Rows, c.Cols))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range c.Data {
			if beta == 0 {
				c.Data[i] = 0
			} else {
				c.Data[i] *= beta
			}
		}
		return
	}
	if haveKernels && gonumBLAS && alpha == 1 && !(transA && transB) {
		// The AVX2 kernels (gemm_fast.go), with gonum's Sgemm's results:
		// it scales c by beta first, then adds the product.
		switch beta {
		case 1:
		case 0:
			clear(c.Data)
		default:
			for i := range c.Data {
				c.Data[i] *= beta
			}
		}
		lda, ldb, ldc := max(a.Cols, 1), max(b.Cols, 1), max(c.Cols, 1)
		if transB {
			fastGemmNT(m, n, k, a.Data, lda, b.Data, ldb, c.Data, ldc)
		} else {
			fastGemm(transA, m, n, k, a.Data, lda, b.Data, ldb, c.Data, ldc)
		}
		return
	}
	impl.Sgemm(ta, tb, m, n, k, alpha, a.Data, max(a.Cols, 1), b.Data, max(b.Cols, 1), beta, c.Data, max(c.Cols, 1))
}
