//go:build amd64 && !purego && !netlib

package nn

// adamKernel is Adam.Step's loop for n parameters, n a multiple of 8, on
// AVX (see adam_amd64.s); k holds b1, 1-b1, b2, 1-b2, the square root of
// the second bias correction, eps and the step size.
//
//go:noescape
func adamKernel(val, grad, m, v *float32, n int, k *[8]float32)
