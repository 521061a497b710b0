package inputfile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGunzip: plain data comes back as it is (the same slice), gzip data
// decompressed; more decompressed bytes than the limit is a *SizeError
// naming the source (ErrTooLarge), at the limit is not; a gzip header
// without a valid member is gzip's error.
func TestGunzip(t *testing.T) {
	plain := []byte("arrival,prompt_tokens,output_tokens\n1,2,3\n")
	if got, err := Gunzip(plain, 1, "x"); err != nil || &got[0] != &plain[0] {
		t.Errorf("plain data: %q, %v; want it back as it is", got, err)
	}
	z := gz(t, plain)
	if got, err := Gunzip(z, int64(len(plain)), "x"); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("gzip at the limit: %q, %v", got, err)
	}
	_, err := Gunzip(z, int64(len(plain)-1), "trace.csv.gz")
	var se *SizeError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &se) || se.Name != "trace.csv.gz decompressed" {
		t.Errorf("past the limit: %v, want a *SizeError naming trace.csv.gz decompressed", err)
	}
	if _, err := Gunzip([]byte{0x1f, 0x8b, 0}, 100, "x"); err == nil {
		t.Error("a truncated gzip header: no error")
	}
}
