//go:build amd64 && !purego && !netlib

package nn

import "golang.org/x/sys/cpu"

// haveKernels512 reports whether the AVX-512 kernels of gemm512_amd64.s can
// run here (they need only AVX-512F), and haveTanh512 whether tanhKernel512
// can (AVX-512 F and DQ). setKernels512 sets both.
var haveKernels512, haveTanh512 bool

func init() { setKernels512(true) }

// tile4x32 is tile4x16 (gemm_amd64.go) for a 4x32 block, on AVX-512.
//
//go:noescape
func tile4x32(k int, a0, a1, a2, a3 *float32, sal uintptr, b *float32, ldb uintptr, c *float32, ldc uintptr, blend int)

// dotTile16 is dotTile8 for 16 adjacent columns of c, on AVX-512.
//
//go:noescape
func dotTile16(m int, x *float32, ldx uintptr, wt *float32, ldwt uintptr, c *float32, ldc uintptr, t, chunks, tail4, tail1 int)

// setKernels512 turns the AVX-512 kernels (products and tanh) on or off,
// where the CPU has them; tests run both widths.
func setKernels512(on bool) {
	haveKernels512 = on && haveKernels && cpu.X86.HasAVX512F
	haveTanh512 = on && haveTanhKernel && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ
}
