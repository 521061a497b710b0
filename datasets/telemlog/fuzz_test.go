package telemlog

import (
	"math/rand/v2"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the reader: it must return samples
// or an error, never panic, and whatever decodes encodes again. Seeds: a
// valid file, the same file truncated and with flipped bytes (chosen by
// the fuzz seed), and non-Parquet input.
func FuzzDecode(f *testing.F) {
	valid, err := Encode(makeSamples(9))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid, uint64(0))
	f.Add(valid[:len(valid)/2], uint64(1))
	f.Add(valid, uint64(2))
	f.Add(valid, uint64(5))
	f.Add([]byte("PAR1"), uint64(3))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"), uint64(4))
	f.Add([]byte{}, uint64(6))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		if seed%3 == 2 && len(data) > 0 {
			data = append([]byte(nil), data...)
			r := rand.New(rand.NewPCG(seed, 1))
			for range 1 + r.IntN(4) {
				data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
			}
		}
		samples, err := Decode(data, "fuzz")
		if err != nil {
			return
		}
		if _, err := Encode(samples); err != nil {
			t.Errorf("decoded samples do not encode: %v", err)
		}
	})
}
