package fastexp

import "math"

const (
	tableBits = 8
	n         = 1 << tableBits
	// shift rounds x*n/ln2 to an integer in its low mantissa bits:
	// adding 1.5 x 2^52 leaves the rounded value there for |value| < 2^51.
	shift = 0x1.8p52
	// Limit is the largest |x| Exp computes itself.
	Limit = 700
)

var (
	table  [n]float64 // 2^(j/n)
	invLn2 = n / math.Ln2
)

// ln2/n as a sum: ln2Hi has its low 32 bits zero, so k*ln2Hi is exact for
// the |k| < 2^20 Exp meets, and ln2Lo carries the rest of ln2 to about
// 1e-27 (fdlibm's split, divided by n, a power of two).
const (
	ln2Hi = 6.93147180369123816490e-01 / n
	ln2Lo = 1.90821492927058770002e-10 / n
)

func init() {
	for j := range n {
		table[j] = math.Exp2(float64(j) / n)
	}
}

// Exp returns e^x. For |x| <= Limit it computes it from the table (within a
// few ulp of math.Exp); otherwise, and for NaN, it returns math.Exp(x).
func Exp(x float64) float64 {
	if !(x >= -Limit && x <= Limit) {
		return math.Exp(x)
	}
	kd := x*invLn2 + shift
	k := int64(math.Float64bits(kd)&(1<<52-1)) - 1<<51 // round(x*n/ln2)
	kf := kd - shift
	r := (x - kf*ln2Hi) - kf*ln2Lo
	// e^r - 1 to degree 4, in Estrin's form (a shorter dependency chain
	// than Horner's: the loops calling Exp are latency-bound).
	r2 := r * r
	p := r + r2*(1.0/2+r*(1.0/6)) + r2*r2*(1.0/24)
	t := table[uint64(k)&(n-1)]
	scale := math.Float64frombits(uint64(k>>tableBits+1023) << 52)
	return (t + t*p) * scale
}
