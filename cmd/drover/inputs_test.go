package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
)

// TestInputsNotRegular: every command that reads a file a user names
// refuses a device or a FIFO at once, naming the path (issue 32, item 7).
// Before, /dev/zero was read until the machine ran out of memory and a
// FIFO without a writer blocked forever; neither case can pass on that
// code.
func TestInputsNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo} {
		cases := [][]string{
			{"sim", "--workload", p},
			{"sim", "--cluster", p},
			{"trace", "inspect", p},
			{"trace", "convert", "-o", filepath.Join(t.TempDir(), "x.csv"), p},
			{"train", "--config", p},
			{"place", "-addr", "127.0.0.1:1", "-request", p},
			{"eval", "--workload", p, "--seeds", "1"},
			{"bench", "plot", "-o", filepath.Join(t.TempDir(), "x.png"), p},
		}
		for _, args := range cases {
			code, _, e := drover(t, args...)
			if code == 0 || !strings.Contains(e, p+": not a regular file") {
				t.Errorf("drover %s: exit %d, stderr %q; want %s: not a regular file", strings.Join(args, " "), code, e, p)
			}
		}
	}
}

// TestInputsBOM: text inputs saved with a UTF-8 byte-order mark read as
// without one: a Helios CSV (before: "field job_id: missing column", the
// mark hiding its first comment line), a request JSON (before: protojson's
// "invalid value") and a train config.
func TestInputsBOM(t *testing.T) {
	dir := t.TempDir()
	bom := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, append([]byte("\ufeff"), data...), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	helios, err := os.ReadFile("../../../shared/traces/helios/helios_venus_2vc_sept.csv")
	if err != nil {
		t.Skip("no shared traces:", err)
	}
	code, out, e := drover(t, "trace", "inspect", bom("helios.csv", helios))
	if code != 0 || !strings.Contains(out, "format         helios") || !strings.Contains(out, "jobs           1867") {
		t.Errorf("trace inspect of a Helios CSV with a BOM: exit %d\n%s%s", code, out, e)
	}
	req, err := placeRequest(bom("req.json", []byte(`{"job":{"id":"j1","workers":2}}`)), 0, 0, 0, 0, 0, "", "", 0, "", 0, 0)
	if err != nil || req.GetJob().GetId() != "j1" || req.GetJob().GetWorkers() != 2 {
		t.Errorf("request JSON with a BOM: %v, %v", req, err)
	}
	code, _, e = drover(t, "train", "--config", bom("c.yaml", []byte("train:\n  steps: 0\n")))
	if code == 0 || !strings.Contains(e, "train.steps: 0") {
		t.Errorf("config with a BOM: exit %d, %s; want its train.steps read (and refused)", code, e)
	}
}

// hugeCheckpoint writes a checkpoint whose meta.json asks for two hidden
// layers of 10^8 units (10^16 weights): the loader lacked train's width
// cap and eval and serve ran out of memory building it.
func hugeCheckpoint(t *testing.T, env string) string {
	dir := t.TempDir()
	meta := `{"version":1,"env":"` + env + `","obs_dim":4,"actions":2,"hidden":[100000000,100000000],"activation":"tanh","networks":["actor"]}`
	if err := os.WriteFile(filepath.Join(dir, checkpoints.MetaFile), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoints.WeightsFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheckpointWidthCap: eval and serve refuse such a checkpoint before
// allocating, naming the field and train's bound.
func TestCheckpointWidthCap(t *testing.T) {
	const want = "meta.json: nn: bad network size: hidden[0] is 100000000, want 1 to 4096"
	code, _, e := drover(t, "eval", "--policies", hugeCheckpoint(t, "sas-rl"), "--seeds", "1")
	if code == 0 || !strings.Contains(e, want) {
		t.Errorf("eval: exit %d, %s; want %q", code, e, want)
	}
	code, o, e := drover(t, "serve", "-addr", "127.0.0.1:0", "-metrics-addr", "", "-checkpoints", hugeCheckpoint(t, "placement"))
	if code == 0 || !strings.Contains(e, want) || strings.Contains(o, "serving") {
		t.Errorf("serve: exit %d, %s%s; want %q", code, o, e, want)
	}
}

// TestServeCheckpointWithoutMeta: a -checkpoints directory that is neither
// a checkpoint (no meta.json) nor a directory of numbered versions is
// refused, naming the missing file (before: watched silently, nothing
// served from it).
func TestServeCheckpointWithoutMeta(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, checkpoints.WeightsFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, o, e := drover(t, "serve", "-addr", "127.0.0.1:0", "-metrics-addr", "", "-checkpoints", dir)
	if want := filepath.Join(dir, checkpoints.MetaFile) + ": no such file or directory"; code == 0 || !strings.Contains(e, want) || strings.Contains(o, "serving") {
		t.Errorf("exit %d, %s%s; want %q", code, o, e, want)
	}
}
