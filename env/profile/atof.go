package profile

import "strconv"

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat is strconv.ParseFloat(s, 64) with a fast path for plain
// decimals ([-]digits[.digits]) whose digits, as an integer m, are below
// 2^53 with at most 22 after the point: m and the power of ten are then
// exact float64s, and one IEEE division rounds their quotient correctly,
// so the result is strconv's to the bit (Clinger's fast path, which
// strconv also takes, after a slower scan). Every other input, and every
// error, goes to strconv. The profiles' CSV files are mostly such
// decimals. FuzzParseFloat checks it against strconv.
func parseFloat(s string) (float64, error) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits == 19 { // m could overflow
				return strconv.ParseFloat(s, 64)
			}
			m = 10*m + uint64(c-'0')
			if m > 0 {
				digits++
			}
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return strconv.ParseFloat(s, 64)
		}
	}
	start := 0
	if neg {
		start = 1
	}
	if n := len(s) - start; n == 0 || n == 1 && point || m >= 1<<53 || frac >= len(pow10) {
		return strconv.ParseFloat(s, 64)
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, nil
}
