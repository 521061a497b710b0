package nn

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// tanh32 returns float32(math.Tanh(float64(v))), bit for bit, about three
// times faster on typical pre-activations (TestTanh32Exhaustive checks every
// float32 input).
//
// For 0.625 <= |x| math.Tanh computes 1 - 2/(Exp(2|x|)+1), the expression
// used here; below 0.625 it uses a rational approximation behind a branch
// that random pre-activations mispredict half the time. The expression
// here differs from it there by at most a few 2⁻⁵² in absolute terms (the
// cancellation in 1 - 2/(e+1)), far less than 2¹² float64 ulps for
// |x| >= 2⁻⁵, so when the float64 result is more than 2¹² ulps from a
// float32 rounding midpoint both round to the same float32. Nearer a
// midpoint, below 2⁻⁵, at 9.5 and above (where the float32 result is ±1)
// and for NaN it calls math.Tanh.
func tanh32(v float32) float32 {
	x := float64(v)
	a := math.Abs(x)
	if !(a > 0x1p-5 && a < 9.5) {
		return float32(math.Tanh(x))
	}
	r := 1 - 2/(math.Exp(2*a)+1)
	// The 29 low mantissa bits are what float32 rounding drops; 1<<28 is
	// the midpoint between two float32s.
	if d := int64(math.Float64bits(r)&(1<<29-1)) - 1<<28; d > -(1<<12) && d < 1<<12 {
		return float32(math.Tanh(x))
	}
	return float32(math.Copysign(r, x))
}

// tanhSlice sets dst[i] = tanh32(src[i]) (float32(math.Tanh(float64)),
// bit for bit) for every i, using the vector kernel of tanh_amd64.s where
// there is one: it computes 4 lanes at a time and flags those it cannot
// vouch for, which are recomputed here with math.Tanh. flags is scratch
// space, grown as needed and returned for reuse.
func tanhSlice(dst, src []float32, flags []uint8) []uint8 {
	dst = dst[:len(src)]
	n := 0
	if haveTanhKernel && len(src) >= 4 {
		groups := len(src) / 4
		if cap(flags) < groups {
			flags = make([]uint8, groups)
		}
		flags = flags[:groups]
		var flagged uint8
		done := 0 // groups computed
		if haveTanh512 && groups >= 2 {
			done = groups &^ 1
			flagged = tanhKernel512(&dst[0], &src[0], done/2, &flags[0], &tanhConsts)
		}
		if done < groups {
			flagged |= tanhKernel(&dst[4*done], &src[4*done], groups-done, &flags[done], &tanhConsts)
		}
		if flagged != 0 {
			for g := 0; g < groups; g += 8 {
				// Flagged lanes are rare: skip 8 groups at a time.
				if g+8 <= groups && binary.LittleEndian.Uint64(flags[g:]) == 0 {
					continue
				}
				for h := g; h < min(g+8, groups); h++ {
					for f := flags[h]; f != 0; {
						lane := bits.TrailingZeros8(f)
						f &^= 1 << lane
						i := 4*h + lane
						dst[i] = float32(math.Tanh(float64(src[i])))
					}
				}
			}
		}
		n = 4 * groups
	}
	for i := n; i < len(src); i++ {
		dst[i] = tanh32(src[i])
	}
	return flags
}
