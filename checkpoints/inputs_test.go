package checkpoints

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/internal/inputfile"
)

// TestDecodeMetaSizes: meta.json is held to train's shape rule
// (nn.CheckHidden, nn.CheckSizes) before anything is allocated, with the
// field named. Before, hidden [1e8, 1e8] passed (each width > 0) and
// Build tried to allocate 10^16 weights.
func TestDecodeMetaSizes(t *testing.T) {
	head := `{"version":1,"activation":"tanh","networks":["actor"],`
	tests := []struct {
		name, meta, want string
	}{
		{"huge hidden", `"obs_dim":4,"actions":2,"hidden":[100000000,100000000]}`, "meta.json: nn: bad network size: hidden[0] is 100000000, want 1 to 4096"},
		{"second width", `"obs_dim":4,"actions":2,"hidden":[64,4097]}`, "hidden[1] is 4097, want 1 to 4096"},
		{"zero width", `"obs_dim":4,"actions":2,"hidden":[0]}`, "hidden[0] is 0, want 1 to 4096"},
		{"huge obs_dim", `"obs_dim":100000000,"actions":2,"hidden":[64]}`, "meta.json: obs_dim 100000000, hidden [64], actions 2: nn: bad network size"},
		{"huge actions", `"obs_dim":4,"actions":100000000,"hidden":[]}`, "obs_dim 4, hidden [], actions 100000000: nn: bad network size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMeta([]byte(head + tt.meta))
			if !errors.Is(err, ErrCorrupt) || !errors.Is(err, nn.ErrSize) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	// The widest network train builds still loads.
	if _, err := DecodeMeta([]byte(head + `"obs_dim":64,"actions":8,"hidden":[4096,4096]}`)); err != nil {
		t.Errorf("hidden [4096, 4096]: %v", err)
	}
}

// TestLoadBOMAndDevices: a meta.json saved with a byte-order mark loads;
// a meta.json or weights file that is a device is refused naming it.
func TestLoadBOMAndDevices(t *testing.T) {
	dir := t.TempDir()
	m, nets := testNets()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append([]byte("\ufeff"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err != nil {
		t.Errorf("meta.json with a BOM: %v", err)
	}
	for _, f := range []string{MetaFile, WeightsFile} {
		d := t.TempDir()
		if err := Save(d, m, nets); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, f)
		os.Remove(p)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(d)
		if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s a device: %v, want not a regular file naming it", f, err)
		}
	}
}
