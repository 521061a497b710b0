//go:build !amd64 || purego || netlib

package nn

// haveKernels is false where there are no assembly micro-kernels (or with
// the purego tag): gemm uses gonum's Sgemm throughout.
const haveKernels = false

func tile4x16(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func tile4x8(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func tile1x8(k int, a0 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func dotTile8(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int, cstride uintptr) {
	panic("nn: no gemm kernels on this platform")
}

func tile4x4(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func anyZero(p *float32, n int) bool {
	panic("nn: no gemm kernels on this platform")
}

func colTile8(k int, a *float32, sal uintptr, b *float32, ldb uintptr, c *[8]float32, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func adamKernel(val, grad, m, v *float32, n int, k *[8]float32) {
	panic("nn: no Adam kernel on this platform")
}

const haveKernels512 = false

func tile4x32(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int) {
	panic("nn: no gemm kernels on this platform")
}

func dotTile16(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int) {
	panic("nn: no gemm kernels on this platform")
}

func setKernels512(bool) {}
