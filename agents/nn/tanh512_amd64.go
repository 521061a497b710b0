//go:build amd64 && !purego && !netlib

package nn

import "golang.org/x/sys/cpu"

// haveTanh512 reports whether tanhKernel512 (AVX-512 F and DQ) can run
// here.
var haveTanh512 = haveTanhKernel && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// tanhKernel512 is tanhKernel for pairs of groups of 4 (8 values) at a
// time, with the same results (see tanh512_amd64.s).
//
//go:noescape
func tanhKernel512(dst, src *float32, pairs int, flags *uint8, k *[tanhConstRows][4]uint64) (any uint8)
