//go:build amd64 && !purego && !netlib

package nn

import "golang.org/x/sys/cpu"

// haveKernels reports whether the AVX2 micro-kernels of gemm_amd64.s can
// run here.
var haveKernels = cpu.X86.HasAVX2

// tile4x16 updates the 4x16 block of c at c (rows ldc bytes apart) with
// a(i,l)*b(l,j) for l in [0, k): row i of a starts at a0..a3 and steps sal
// bytes per l; row l of b starts at b + l*ldb bytes. k >= 1. blend must be
// non-zero unless none of the a values read is zero (anyZero), as then
// the zero check is skipped.
//
//go:noescape
func tile4x16(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)

// tile4x8 is tile4x16 for a 4x8 block.
//
//go:noescape
func tile4x8(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)

// tile4x4 is tile4x16 for a 4x4 block.
//
//go:noescape
func tile4x4(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)

// tile1x8 is tile4x16 for a 1x8 block.
//
//go:noescape
func tile1x8(k int, a0 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, blend int)

// dotTile8 adds to 8 columns of m rows of c the dot products of the rows
// of x with 8 columns of wt, each summed in gonum DotUnitary's order for
// the given split of k into t leading products, chunks of 16, groups of 4
// and single products (see gemm_amd64.s); the 8 columns of c are cstride
// bytes apart.
//
//go:noescape
func dotTile8(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int, cstride uintptr)

// anyZero reports whether any of the n float32s from p on is +0 or -0.
//
//go:noescape
func anyZero(p *float32, n int) bool

// colTile8 updates 8 rows of one column of c (gathered into c) with
// a(r,l)·b(l) for l in [0, k), where a(r,l) is at a + l*sal + 4r bytes
// and b(l) at b + l*ldb (see gemm_amd64.s).
//
//go:noescape
func colTile8(k int, a *float32, sal uintptr, b *float32, ldb uintptr, c *[8]float32, blend int)
