package inputfile

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/internal/testpki"
)

// TestReadFileRefuses: what is not a regular file is refused before it is
// read, naming the path and what it is; on the code before this package
// every input read /dev/zero until memory ran out and blocked on a FIFO
// without a writer. Neither case here could end without the check (the
// FIFO has no writer: os.Open alone would block forever).
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"dev zero", "/dev/zero", "/dev/zero: not a regular file (a character device)"},
		{"fifo", fifo, fifo + ": not a regular file (a FIFO)"},
		{"symlink to a device", link, link + ": not a regular file (a character device)"},
		{"directory", dir, dir + ": not a regular file (a directory)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, read := range []func(string, int64) ([]byte, error){ReadFile, ReadText} {
				b, err := read(tt.path, Trace)
				if !errors.Is(err, ErrNotRegular) || err.Error() != tt.want {
					t.Fatalf("got %d bytes, error %v; want %q", len(b), err, tt.want)
				}
			}
			if f, err := Open(tt.path, Trace); !errors.Is(err, ErrNotRegular) {
				f.Close()
				t.Fatalf("Open: %v, want ErrNotRegular", err)
			}
		})
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), Trace); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestReadFileLimit: a file of exactly the limit is read whole; one byte
// more is refused with both sizes in the message.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	data := bytes.Repeat([]byte("x"), 2048)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(p, 2048)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("at the limit: %d bytes, %v; want 2048", len(got), err)
	}
	_, err = ReadFile(p, 2047)
	want := p + ": larger than 2047 bytes, the limit for this input (2048 bytes)"
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Fatalf("over the limit: %v, want %q", err, want)
	}
	_, err = ReadFile(p, 1024)
	if want := p + ": larger than 1 KiB, the limit for this input (2048 bytes)"; err == nil || err.Error() != want {
		t.Fatalf("over the limit: %v, want %q", err, want)
	}
}

// TestReadFileAllocates: reading a file allocates its size once, not
// twice over; before the buffer had room for bytes.Buffer.ReadFrom's
// last read, a 1 MiB file cost 3 MiB (the buffer, then one of twice
// its size and a copy).
func TestReadFileAllocates(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	const size = 1 << 20
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), size), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := ReadFile(p, Trace)
	runtime.ReadMemStats(&after)
	if err != nil || len(b) != size {
		t.Fatalf("read %d bytes, %v; want %d", len(b), err, size)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/8 {
		t.Errorf("reading %d bytes allocated %d, want at most %d", size, got, size+size/8)
	}
}

// TestOpenGrows: a file that grows past the limit after Open fails at
// limit+1 bytes instead of returning a truncated prefix.
func TestOpenGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, bytes.Repeat([]byte("y"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	var se *SizeError
	if !errors.As(err, &se) || se.Limit != 16 || len(b) != 16 {
		t.Fatalf("read %d bytes, %v; want 16 and a SizeError", len(b), err)
	}
	if want := p + ": larger than 16 bytes, the limit for this input (more than that)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestNewLimitReader(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		limit   int64
		wantErr bool
	}{
		{"empty", 0, 0, false},
		{"under", 5, 10, false},
		{"exact", 10, 10, false},
		{"one over", 11, 10, true},
		{"far over", 1 << 20, 10, true},
		{"zero limit", 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// iotest-style one-byte reads and large reads both.
			for _, chunk := range []int{1, 3, 1 << 16} {
				r := NewLimitReader(strings.NewReader(strings.Repeat("z", tt.n)), tt.limit, "stream")
				var got int
				var err error
				buf := make([]byte, chunk)
				for {
					var n int
					n, err = r.Read(buf)
					got += n
					if err != nil {
						break
					}
				}
				if tt.wantErr {
					if !errors.Is(err, ErrTooLarge) || int64(got) != tt.limit {
						t.Fatalf("chunk %d: read %d, %v; want %d and ErrTooLarge", chunk, got, err, tt.limit)
					}
				} else if err != io.EOF || got != tt.n {
					t.Fatalf("chunk %d: read %d, %v; want %d and EOF", chunk, got, err, tt.n)
				}
			}
		})
	}
}

func TestTrimBOM(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"\ufeff", ""},
		{"\ufeff{}", "{}"},
		{"\ufeff\ufeff{}", "\ufeff{}"}, // one mark only: a second is content
		{"{}", "{}"},
		{"\xef\xbb", "\xef\xbb"},
	}
	for _, tt := range tests {
		if got := string(TrimBOM([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimBOM(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, []byte("\ufeff{\"a\":1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadText(p, Document); err != nil || string(b) != `{"a":1}` {
		t.Errorf("ReadText = %q, %v", b, err)
	}
}

// TestLoadX509KeyPair: the pair loads as tls.LoadX509KeyPair loads it,
// and a device in either place is refused naming it.
func TestLoadX509KeyPair(t *testing.T) {
	p, err := testpki.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil || !bytes.Equal(got.Certificate[0], want.Certificate[0]) {
		t.Fatalf("got %v, want the server certificate", err)
	}
	for _, args := range [][2]string{{"/dev/zero", p.ServerKey}, {p.ServerCert, "/dev/zero"}} {
		if _, err := LoadX509KeyPair(args[0], args[1]); !errors.Is(err, ErrNotRegular) {
			t.Errorf("LoadX509KeyPair(%s, %s): %v, want ErrNotRegular", args[0], args[1], err)
		}
	}
}
