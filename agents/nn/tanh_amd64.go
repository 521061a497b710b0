//go:build amd64 && !purego && !netlib

package nn

import (
	"math"

	"golang.org/x/sys/cpu"
)

// haveTanhKernel reports whether tanhKernel (tanh_amd64.s: AVX2 and FMA)
// can run here.
var haveTanhKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// tanhConstRows is the number of rows of tanhConsts.
const tanhConstRows = 27

// tanhGuard is how close, in float64 ulps, tanhKernel's float64 result may
// come to a float32 rounding midpoint before the lane is recomputed with
// math.Tanh. Its error against math.Tanh is about 2¹² ulps at most, at
// the low end of its range (2⁻¹², where tanh's ulp, 2⁻⁶⁴, is smallest
// against the absolute error of 1 - 2/(e+1), about 2⁻⁵²), and far less
// elsewhere, so outside the
// guard both round to the same float32; TestTanhSliceExhaustive checks
// every input.
const tanhGuard = 1 << 14

// tanhConsts are tanhKernel's constants, each repeated over 4 lanes, in
// the order of the K_ offsets of tanh_amd64.s.
var tanhConsts = func() (k [tanhConstRows][4]uint64) {
	rows := []uint64{
		1<<63 - 1,                 // |x| mask
		1 << 63,                   // sign mask
		math.Float64bits(0x1p-12), // below it tanh rounds to x
		math.Float64bits(9.5),
		math.Float64bits(math.Log2E),
		math.Float64bits(6.93147180369123816490e-01), // ln 2, high part (math/exp.go's Ln2Hi)
		math.Float64bits(1.90821492927058770002e-10), // and low part
	}
	// Taylor coefficients of e^r, 1/13! down to 1/0!.
	fact := [14]float64{1}
	for i := 1; i < len(fact); i++ {
		fact[i] = fact[i-1] * float64(i)
	}
	for i := 13; i >= 0; i-- {
		rows = append(rows, math.Float64bits(1/fact[i]))
	}
	rows = append(rows,
		math.Float64bits(1),
		math.Float64bits(2),
		1<<29-1, // the mantissa bits float32 rounding drops
		1<<28,   // their midpoint
		tanhGuard,
		^uint64(tanhGuard-1), // -tanhGuard in two's complement
	)
	if len(rows) != tanhConstRows {
		panic("nn: tanhConsts has the wrong number of rows")
	}
	for i, v := range rows {
		k[i] = [4]uint64{v, v, v, v}
	}
	return k
}()

// tanhKernel writes candidates for float32(math.Tanh(x)) for groups of 4
// of src to dst, and in flags, per group, a mask of the lanes whose
// candidate must be replaced (see tanh_amd64.s); it returns the OR of the
// masks.
//
//go:noescape
func tanhKernel(dst, src *float32, groups int, flags *uint8, k *[tanhConstRows][4]uint64) (any uint8)

// tanhGrad sets dx[i] = dy[i] * (1 - y[i]*y[i]) for i < n, n a multiple
// of 8 (AVX2; see tanh_amd64.s).
//
//go:noescape
func tanhGrad(dx, dy, y *float32, n int)
