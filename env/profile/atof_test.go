package profile

import (
	"math"
	"strconv"
	"testing"
)

// FuzzParseFloat checks parseFloat against strconv.ParseFloat: the same
// bits and the same error (or none) for every input.
func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0.14740917682647706", "6406.0", "6405", "0.15562", "-0", "-0.0", ".5", "5.", ".", "-", "",
		"-.", "1e5", "1_0", "inf", "NaN", "0x1p-2", "+1", "9007199254740991", "9007199254740992", "0.0000000000000000000001",
		"0.00000000000000000000001", "00000000000000000000000000001.5", "1234567890123456789", "12345678901234567890", "1..2", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := parseFloat(s)
		want, wantErr := strconv.ParseFloat(s, 64)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("parseFloat(%q) = %v (%#x), strconv %v (%#x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("parseFloat(%q) error %v, strconv %v", s, gotErr, wantErr)
		}
	})
}

// BenchmarkParseFloat parses the profiles' typical numbers.
func BenchmarkParseFloat(b *testing.B) {
	in := []string{"0.14740917682647706", "0.0012090879917144776", "6406.0", "6405", "0.15562", "1.1263841568054573", "20", "0.3874239444732666"}
	for _, p := range []struct {
		name  string
		parse func(string) (float64, error)
	}{{"strconv", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }}, {"fast", parseFloat}} {
		b.Run("parse="+p.name, func(b *testing.B) {
			for b.Loop() {
				for _, s := range in {
					p.parse(s)
				}
			}
			b.ReportMetric(float64(len(in)), "numbers/op")
		})
	}
}
