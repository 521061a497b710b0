package state

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/internal/inputfile"
)

// TestLoadNotRegular: a state.json that is a device or a FIFO is refused
// at once, naming it (before: /dev/zero was read until memory ran out, a
// FIFO blocked drover serve's start).
func TestLoadNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "state.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo} {
		if _, err := Load(p, Config{}); !errors.Is(err, inputfile.ErrNotRegular) {
			t.Errorf("Load(%s): %v, want not a regular file", p, err)
		}
	}
}
