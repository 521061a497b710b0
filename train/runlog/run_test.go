package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckFreshDir: a new run goes to a directory that does not exist
// or is empty; one holding an earlier run's files is ErrRunDirNotEmpty
// (issue 18: the runs' TensorBoard events and curves mixed), a file is
// refused too.
func TestCheckFreshDir(t *testing.T) {
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	file := filepath.Join(tmp, "file")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(full, "learning-curve.png"), file} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, dir string
		ok        bool
		is        error
	}{
		{name: "new", dir: filepath.Join(tmp, "new"), ok: true},
		{name: "empty", dir: t.TempDir(), ok: true},
		{name: "holds a run", dir: full, is: ErrRunDirNotEmpty},
		{name: "a file", dir: file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckFreshDir(tt.dir)
			if (err == nil) != tt.ok || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("CheckFreshDir(%s) = %v, want ok %v (%v)", tt.dir, err, tt.ok, tt.is)
			}
		})
	}
}
