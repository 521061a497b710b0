// Package fastexp computes e^x for the simulator's hot loops: the
// per-iteration jitter of every worker and the background load's sigmoid
// run it tens of millions of times per trace replay, where math.Exp costs
// about 20 ns on a CPU without FMA (amd64 at GOAMD64=v1, Go's default).
//
// Exp is table-driven: x = (k*N + j)*ln2/N + r with N = 256, so
// e^x = 2^k * 2^(j/N) * e^r, with 2^(j/N) from a table computed at start-up
// by math.Exp2 and e^r from a degree-4 Taylor polynomial on
// |r| <= ln2/512, whose truncation error (r^5/120 < 4e-17) is below a
// float64's resolution; the polynomial is evaluated in Estrin's form, whose
// dependency chain is shorter than Horner's. The result is within a few units in the last
// place of math.Exp (TestExpAccuracy bounds the relative error by 4e-16);
// it is deterministic, being plain float64 arithmetic, but not bit-equal to
// math.Exp, so a model switched to it draws the same law with different
// low-order bits.
//
// # Usage
//
//	s := fastexp.Exp(base + scale*noise) // |x| <= 700; outside, math.Exp
package fastexp
