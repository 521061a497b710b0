//go:build amd64 && !purego && !netlib

package nn

// haveTanh512 (gemm512_amd64.go) says whether tanhKernel512 can run here.

// tanhKernel512 is tanhKernel for pairs of groups of 4 (8 values) at a
// time, with the same results (see tanh512_amd64.s).
//
//go:noescape
func tanhKernel512(dst, src *float32, pairs int, flags *uint8, k *[tanhConstRows][4]uint64) (any uint8)
