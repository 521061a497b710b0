package inputfile

import (
	"bytes"
	"compress/gzip"
	"io"
)

// IsGzip reports whether data starts with gzip's magic bytes.
func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// Gunzip returns data decompressed when it is gzip (IsGzip), and data
// itself otherwise. At most limit decompressed bytes are read: past them
// it returns a *SizeError naming src + " decompressed", so a small gzip
// bomb fails instead of filling memory. Corrupt gzip is gzip's error.
func Gunzip(data []byte, limit int64, src string) ([]byte, error) {
	if !IsGzip(data) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(NewLimitReader(zr, limit, src+" decompressed"))
}
