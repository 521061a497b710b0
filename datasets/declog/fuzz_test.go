package declog

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the reader: it must return records
// or an error, never panic. Seeds: a valid file, the same file truncated
// and with flipped bytes (from the fuzz seed), files written before the
// shadow columns, before the job columns and before the submission column,
// and non-Parquet input.
func FuzzDecode(f *testing.F) {
	valid, err := Encode(makeRecords(9))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid, uint64(0))
	f.Add(valid[:len(valid)/2], uint64(1))
	f.Add(valid, uint64(2))
	old, err := os.ReadFile(filepath.Join("testdata", "v1-before-shadow.parquet"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old, uint64(6))
	f.Add(old, uint64(8))
	beforeJob, err := os.ReadFile(filepath.Join("testdata", "v1-before-job.parquet"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(beforeJob, uint64(9))
	f.Add(beforeJob, uint64(11))
	beforeSubmitted, err := os.ReadFile(filepath.Join("testdata", "v1-before-submitted.parquet"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(beforeSubmitted, uint64(12))
	f.Add(beforeSubmitted, uint64(14))
	f.Add([]byte("PAR1"), uint64(3))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"), uint64(4))
	f.Add([]byte{}, uint64(5))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		if seed%3 == 2 && len(data) > 0 {
			// Flip a few bytes chosen by the seed, so the fuzzer explores
			// corruptions of well-formed files too.
			data = append([]byte(nil), data...)
			r := rand.New(rand.NewPCG(seed, 1))
			for range 1 + r.IntN(4) {
				data[r.IntN(len(data))] ^= byte(1 + r.IntN(255))
			}
		}
		recs, err := Decode(data, "fuzz")
		if err != nil {
			return
		}
		// Whatever decodes is valid and encodes again.
		if _, err := Encode(recs); err != nil {
			t.Errorf("decoded records do not encode: %v", err)
		}
	})
}
