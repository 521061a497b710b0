package atomicfile_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/internal/atomicfile"
)

func TestWriteModeAndContent(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "out.csv")
	if err := atomicfile.WriteBytes(p, []byte("a,b\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// os.CreateTemp alone gives 0600 (issue 32: outputs unreadable by others).
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v, want 0644", got)
	}
	if b, _ := os.ReadFile(p); string(b) != "a,b\n" {
		t.Errorf("content %q", b)
	}
}

// A failing writer leaves the old file as it was and no temporary file.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.Write(p, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("old file now %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want only out.csv", len(ents))
	}
}

// An error never names the temporary file.
func TestWriteErrorNamesNoTemp(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "out.csv")
	err := atomicfile.WriteBytes(p, []byte("x"))
	if err == nil || strings.Contains(err.Error(), ".drover-tmp-") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err %v: want ENOENT without the temporary name", err)
	}
}

func ExampleWrite() {
	p := filepath.Join(os.TempDir(), "drover-example.csv")
	defer os.Remove(p)
	err := atomicfile.Write(p, func(w io.Writer) error {
		_, err := io.WriteString(w, "id,jct\n")
		return err
	})
	b, _ := os.ReadFile(p)
	fmt.Printf("%v %q\n", err, b)
	// Output: <nil> "id,jct\n"
}
