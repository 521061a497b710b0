//go:build !amd64 || purego || netlib

package nn

// haveTanhKernel is false where there is no vector tanh: tanhSlice calls
// tanh32 for each element.
const haveTanhKernel = false

const tanhConstRows = 1

var tanhConsts [tanhConstRows][4]uint64

func tanhKernel(dst, src *float32, groups int, flags *uint8, k *[tanhConstRows][4]uint64) uint8 {
	panic("nn: no tanh kernel on this platform")
}

func tanhGrad(dx, dy, y *float32, n int) {
	panic("nn: no tanh kernel on this platform")
}

const haveTanh512 = false

func tanhKernel512(dst, src *float32, pairs int, flags *uint8, k *[tanhConstRows][4]uint64) uint8 {
	panic("nn: no tanh kernel on this platform")
}
