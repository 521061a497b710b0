package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits by kind of input, in bytes. Each is far above the real inputs of
// its kind and far below what a machine that runs Drover can hold.
const (
	// Trace bounds a workload trace or node list read whole (CSV or
	// Parquet, before and after gzip decompression): a 1M-job workload
	// in Drover's job CSV is about 60 MB, the whole Alibaba PAI v2020 job
	// table about 100 MB.
	Trace int64 = 2 << 30
	// Log bounds one sealed decision or telemetry log segment (Parquet);
	// a writer seals a segment every minute or few MB.
	Log int64 = 1 << 30
	// Weights bounds a checkpoint's weights file: the widest networks
	// agents/nn builds hold 2^25 float32 parameters (128 MiB) each.
	Weights int64 = 2 << 30
	// Document bounds a JSON or CSV document a user writes or a command
	// writes for a user: a config, a PlaceRequest, a checkpoint's
	// meta.json, a forecast model, a benchmark file.
	Document int64 = 64 << 20
	// Secret bounds a token file or a PEM certificate bundle.
	Secret int64 = 1 << 20
)

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file (a device, a FIFO, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for an input larger than its
// limit.
var ErrTooLarge = errors.New("larger than the limit")

// SizeError is the error for an input larger than its limit: "PATH:
// larger than 2 GiB (the limit for this input; 3221225472 bytes)". It
// wraps ErrTooLarge.
type SizeError struct {
	Name  string // the path, or what NewLimitReader was told to call the stream
	Limit int64  // the limit, in bytes
	Size  int64  // the size found, or -1 when the read stopped at Limit+1 bytes
}

func (e *SizeError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Size)
	if e.Size < 0 {
		size = "more than that" // the read stopped past the limit
	}
	return fmt.Sprintf("%s: larger than %s, the limit for this input (%s)", e.Name, human(e.Limit), size)
}

// Unwrap returns ErrTooLarge.
func (e *SizeError) Unwrap() error { return ErrTooLarge }

// human spells a limit: "2 GiB", "64 MiB", "1000 bytes".
func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kind names a file mode's type for the not-a-regular-file error.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.Type().String()
}

// check refuses a file that is not regular or is larger than limit.
func check(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return &SizeError{Name: path, Limit: limit, Size: fi.Size()}
	}
	return nil
}

// Open opens the regular file at path for reading, at most limit bytes:
// a path that is not a regular file, or a file larger than limit, is an
// error naming the path, and reading past limit bytes (a file that
// grew) fails with a *SizeError. The type is checked before the file is
// opened, so a FIFO is refused without waiting for a writer (so is a pipe
// such as /dev/stdin: give a file). Errors of os.Stat and os.Open are
// returned as they are (*fs.PathError). A negative limit is a programmer
// error: Open panics.
func Open(path string, limit int64) (*File, error) {
	if limit < 0 {
		panic("inputfile: negative limit")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, fi, limit); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The path may have been replaced between Stat and Open: check what
	// was opened.
	if fi, err = f.Stat(); err == nil {
		err = check(path, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, r: NewLimitReader(f, limit, path), size: fi.Size()}, nil
}

// File is an input file opened by Open: an io.ReadCloser that fails
// rather than reads past its limit.
type File struct {
	f    *os.File
	r    io.Reader
	size int64
}

// Read reads from the file; past the limit it returns a *SizeError.
func (f *File) Read(p []byte) (int, error) { return f.r.Read(p) }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// ReadFile reads the whole regular file at path, at most limit bytes,
// with Open's rules.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One allocation for a file that does not change while it is read:
	// bytes.Buffer.ReadFrom grows its buffer (to twice the size, a copy)
	// whenever less than bytes.MinRead is free, so that much more is room
	// to see EOF without growing.
	buf := bytes.NewBuffer(make([]byte, 0, f.size+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		var se *SizeError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return buf.Bytes(), nil
}

// ReadText is ReadFile without a leading UTF-8 byte-order mark: for the
// text inputs (JSON, CSV) of decoders that do not trim it themselves.
func ReadText(path string, limit int64) ([]byte, error) {
	b, err := ReadFile(path, limit)
	return TrimBOM(b), err
}

// bom is the UTF-8 encoding of U+FEFF.
var bom = []byte{0xef, 0xbb, 0xbf}

// TrimBOM returns b without a leading UTF-8 byte-order mark.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, bom) }

// NewLimitReader returns a reader of r that returns a *SizeError naming
// name once r has more than limit bytes, instead of io.LimitReader's
// silent EOF: for streams within a file, such as a gzip member's
// decompressed bytes.
func NewLimitReader(r io.Reader, limit int64, name string) io.Reader {
	return &limitReader{r: r, left: limit, limit: limit, name: name}
}

type limitReader struct {
	r           io.Reader
	left, limit int64
	name        string
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &SizeError{Name: l.name, Limit: l.limit, Size: -1}
	}
	// Read up to one byte past the limit, to tell a stream of exactly
	// limit bytes from a longer one.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &SizeError{Name: l.name, Limit: l.limit, Size: -1}
	}
	return n, err
}
