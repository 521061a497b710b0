package serve_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/serve"
)

// TestWatcherRestart is issue 18's restart defect: a server restarted
// over a directory whose newest version is valid but unconverged served
// that version (so the heuristic answered) instead of the converged one
// it had been serving. The first poll serves the newest converged
// version, else the newest valid one.
func TestWatcherRestart(t *testing.T) {
	tests := []struct {
		name      string
		versions  []string // per version, from 0001: "converged", "unconverged", "corrupt", "partial" (no meta.json)
		active    string
		refused   []string // the log's refusals, in order
		converged bool
	}{
		{"newest unconverged", []string{"converged", "unconverged"}, "v1", []string{"v2: not converged (the gate's verdict in meta.json); serving v1, the newest converged version"}, true},
		{"newest converged", []string{"unconverged", "converged"}, "v2", nil, true},
		{"two converged, then unconverged", []string{"converged", "converged", "unconverged", "unconverged"}, "v2", []string{"v4: not converged", "v3: not converged"}, true},
		{"corrupt and unconverged above", []string{"converged", "corrupt", "unconverged"}, "v1", []string{"v2: checkpoints: corrupt checkpoint", "v3: not converged"}, true},
		{"none converged", []string{"unconverged", "unconverged"}, "v2", nil, false},
		{"newest corrupt, none converged", []string{"unconverged", "corrupt"}, "v1", []string{"v2: checkpoints: corrupt checkpoint"}, false},
		{"newest still written", []string{"converged", "partial"}, "v1", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for i, kind := range tt.versions {
				d := versionDir(root, i+1)
				switch kind {
				case "converged", "unconverged":
					writeCheckpoint(t, d, kind == "converged", 8, uint64(i+1))
				case "corrupt":
					corrupt(t, d)
				case "partial":
					writeCheckpoint(t, d, true, 8, uint64(i+1))
					removeMeta(t, d)
				}
			}
			k := newCore(t)
			w, err := serve.NewWatcher(root, k, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			w.SetLog(&log)
			for range 3 { // each refusal is logged once
				if err := w.Poll(); err != nil {
					t.Fatal(err)
				}
			}
			if v := k.Active(); v == nil || v.Name != tt.active || v.Meta.Converged != tt.converged {
				t.Fatalf("active %v, want %s (converged %v)", v, tt.active, tt.converged)
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if log.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.refused) {
				t.Fatalf("log:\n%s\nwant %d refusals %q", log.String(), len(tt.refused), tt.refused)
			}
			for i, want := range tt.refused {
				if !strings.HasPrefix(lines[i], "drover serve: checkpoint refused: "+want) {
					t.Errorf("log line %d: %q, want %q", i, lines[i], want)
				}
			}
			if len(tt.refused) > 0 && !strings.HasPrefix(k.Status().LastRefused, tt.refused[len(tt.refused)-1]) {
				t.Errorf("last refused %q, want %q", k.Status().LastRefused, tt.refused[len(tt.refused)-1])
			}
		})
	}
}

// Issue 18: hot-reload refusals were recorded only in Status. Each is
// now logged once, with the version and why; a later good version is
// taken as before.
func TestWatcherLogsRefusals(t *testing.T) {
	root := t.TempDir()
	writeCheckpoint(t, versionDir(root, 1), true, 8, 1)
	k := newCore(t)
	w, _ := serve.NewWatcher(root, k, time.Hour)
	var log bytes.Buffer
	w.SetLog(&log)
	w.Poll()
	corrupt(t, versionDir(root, 2))
	w.Poll()
	writeCheckpoint(t, versionDir(root, 3), false, 8, 3)
	w.Poll()
	w.Poll()
	writeCheckpoint(t, versionDir(root, 4), true, 8, 4)
	w.Poll()
	want := "drover serve: checkpoint refused: v2: checkpoints: corrupt checkpoint"
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], want) || !strings.HasPrefix(lines[1], "drover serve: checkpoint refused: v3: not converged") {
		t.Errorf("log:\n%s\nwant a line for v2 (corrupt) and one for v3 (not converged)", log.String())
	}
	if k.Active().Name != "v4" {
		t.Errorf("active %s, want v4", k.Active().Name)
	}
}

// removeMeta makes dir a version still being written: no meta.json yet.
func removeMeta(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.Remove(filepath.Join(dir, checkpoints.MetaFile)); err != nil {
		tb.Fatal(err)
	}
}
