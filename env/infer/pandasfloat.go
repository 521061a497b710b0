package infer

import "math"

// pow10 holds 1e0 .. 1e308 as float64 literals, the table pandas' parser
// scales by.
var pow10 = func() [309]float64 {
	var e [309]float64
	for i := range e {
		e[i] = math.Pow10(i)
	}
	return e
}()

// ParseFloatPandas reads a decimal number the way pandas' C CSV reader does
// by default (float_precision None or "high": precise_xstrtod in
// pandas/_libs/src/parser/tokenizer.c, pandas 1.x): up to 17 significant
// digits accumulated as number = number*10 + digit in float64, the rest
// only counted, then one multiplication or division by the float64 power
// of ten. That is not always the correctly rounded value strconv gives
// (97 of the 2,520 times in SplitwiseSim's performance table differ by an
// ulp), and SplitwiseSim reads its inputs with pandas: reading them alike
// makes the faithful mode agree bit for bit (read SplitwiseSim-format
// traces with it too). It accepts what precise_xstrtod
// accepts with nothing left over: an optional sign, digits, an optional
// '.' and digits, an optional exponent.
func ParseFloatPandas(s string) (float64, bool) {
	p := 0
	neg := false
	if p < len(s) && (s[p] == '-' || s[p] == '+') {
		neg = s[p] == '-'
		p++
	}
	const maxDigits = 17
	number := 0.0
	exp, digits, decimals := 0, 0, 0
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		if digits < maxDigits {
			number = float64(number*10) + float64(s[p]-'0') // rounded apart: no fused multiply-add
			digits++
		} else {
			exp++
		}
		p++
	}
	if p < len(s) && s[p] == '.' {
		p++
		for digits < maxDigits && p < len(s) && s[p] >= '0' && s[p] <= '9' {
			number = float64(number*10) + float64(s[p]-'0') // rounded apart: no fused multiply-add
			p++
			digits++
			decimals++
		}
		if digits >= maxDigits {
			for p < len(s) && s[p] >= '0' && s[p] <= '9' {
				p++
			}
		}
		exp -= decimals
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		number = -number
	}
	if p < len(s) && (s[p] == 'e' || s[p] == 'E') {
		q := p + 1
		eneg := false
		if q < len(s) && (s[q] == '-' || s[q] == '+') {
			eneg = s[q] == '-'
			q++
		}
		n, nd := 0, 0
		for nd < maxDigits && q < len(s) && s[q] >= '0' && s[q] <= '9' {
			n = n*10 + int(s[q]-'0')
			nd++
			q++
		}
		if nd > 0 {
			if eneg {
				exp -= n
			} else {
				exp += n
			}
			p = q
		}
	}
	if p != len(s) {
		return 0, false
	}
	switch {
	case exp > 308:
		return 0, false
	case exp > 0:
		number *= pow10[exp]
	case exp < -616:
		number = 0
	case exp < -308:
		number /= pow10[-308-exp]
		number /= pow10[308]
	default:
		number /= pow10[-exp]
	}
	if math.IsInf(number, 0) {
		return 0, false
	}
	return number, true
}
