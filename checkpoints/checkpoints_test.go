package checkpoints

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
)

func testNets() (Meta, map[string]*nn.MLP) {
	src := rand.NewPCG(1, 2)
	m := Meta{Env: "cartpole", Algo: "ppo", ObsDim: 4, Actions: 2, Hidden: []int{8, 8}, Activation: "tanh", Networks: []string{"actor", "critic"}, Seed: 1}
	return m, map[string]*nn.MLP{
		"actor":  nn.NewOrthogonalMLP([]int{4, 8, 8, 2}, nn.NewTanh, math.Sqrt2, 0.01, src),
		"critic": nn.NewOrthogonalMLP([]int{4, 8, 8, 1}, nn.NewTanh, math.Sqrt2, 1, src),
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, nets := testNets()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	got, loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Env != "cartpole" || got.Version != Version || len(got.Probe.Inputs) == 0 {
		t.Errorf("meta %+v", got)
	}
	// The loaded networks are the saved ones: equal outputs, bit for bit.
	x := nn.MatFrom(1, 4, []float32{0.1, -0.2, 0.3, -0.4})
	for name, net := range nets {
		a := net.Forward(x).Clone()
		b := loaded[name].Forward(x)
		for i := range a.Data {
			if a.Data[i] != b.Data[i] {
				t.Fatalf("%s: output %v vs %v", name, a.Data, b.Data)
			}
		}
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want 2", len(entries))
	}
}

func TestCorruptCheckpoints(t *testing.T) {
	dir := t.TempDir()
	m, nets := testNets()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	weights, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	flip := append([]byte(nil), weights...)
	flip[len(flip)-3] ^= 0x40 // change a weight: the probe no longer matches
	tests := []struct {
		name          string
		meta, weights []byte
		want          string
	}{
		{"truncated weights", meta, weights[:len(weights)/2], "weights"},
		{"changed weight", meta, flip, "probe"},
		{"bad json", []byte("{"), weights, "meta.json"},
		{"wrong version", []byte(strings.Replace(string(meta), `"version": 1`, `"version": 9`, 1)), weights, "version"},
		{"bad activation", []byte(strings.Replace(string(meta), `"tanh"`, `"gelu"`, 1)), weights, "activation"},
		{"wider hidden", []byte(strings.Replace(string(meta), `"hidden": [
    8,`, `"hidden": [
    9,`, 1)), weights, "network actor"},
		{"inverted support", []byte(strings.Replace(string(meta), `"converged"`, `"support": {"lo": [1, 0], "hi": [0, 1]}, "converged"`, 1)), weights, "support"},
		{"support wider than obs", []byte(strings.Replace(string(meta), `"converged"`, `"support": {"lo": [0, 0, 0, 0, 0], "hi": [1, 1, 1, 1, 1]}, "converged"`, 1)), weights, "support"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(tt.meta, tt.weights)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrCorrupt mentioning %q", err, tt.want)
			}
		})
	}
}

// The checkpoint loads in Python with numpy alone and gives the same
// outputs to 1e-5 (scripts/check_checkpoint.py). Skipped where python3 or
// numpy is missing.
func TestLoadsInNumpy(t *testing.T) {
	// Debian's system Python first (python3-numpy), then whatever python3 is.
	py := ""
	for _, c := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(c, "-c", "import numpy").Run() == nil {
			py = c
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with numpy (Debian: apt-get install python3-numpy)")
	}
	dir := t.TempDir()
	m, nets := testNets()
	if err := Save(dir, m, nets); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "../scripts/check_checkpoint.py", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		t.Fatalf("%v: %s", err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
}

// torchPython returns Debian's system Python when it can import torch
// (python3-torch), else "" and the reason.
func torchPython() (string, string) {
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		return "", fmt.Sprintf("%s cannot import torch (Debian: apt-get install python3-torch): %v: %s", py, err, strings.TrimSpace(string(out)))
	}
	return py, ""
}

// The checkpoint loads into torch.nn.Sequential modules (Linear + Tanh or
// ReLU) and their forward pass gives the recorded probe outputs and the
// numpy forward pass's to 1e-5 (scripts/torch_checkpoint.py); a changed
// recorded output makes the script fail. Skipped unless /usr/bin/python3 imports
// torch.
func TestLoadsInTorch(t *testing.T) {
	py, why := torchPython()
	if py == "" {
		t.Skip(why)
	}
	src := rand.NewPCG(3, 4)
	tanh, tanhNets := testNets()
	relu := Meta{Env: "cartpole", Algo: "dqn", ObsDim: 4, Actions: 2, Hidden: []int{120, 84}, Activation: "relu", Networks: []string{"q"}, Seed: 1}
	reluNets := map[string]*nn.MLP{"q": nn.NewOrthogonalMLP([]int{4, 120, 84, 2}, nn.NewReLU, math.Sqrt2, 1, src)}
	for _, c := range []struct {
		name string
		m    Meta
		nets map[string]*nn.MLP
	}{{"ppo-tanh", tanh, tanhNets}, {"dqn-relu", relu, reluNets}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, c.m, c.nets); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, "../scripts/torch_checkpoint.py", dir).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "OK") {
				t.Fatalf("%v: %s", err, out)
			}
			t.Log(strings.TrimSpace(string(out)))

			// A recorded output off by 1e-3: torch still agrees with
			// numpy, not with the record, and the script exits 1.
			path := filepath.Join(dir, MetaFile)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := DecodeMeta(data)
			if err != nil {
				t.Fatal(err)
			}
			m.Probe.Outputs[c.m.Networks[0]][0][0] += 1e-3
			if data, err = EncodeMeta(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err = exec.Command(py, "../scripts/torch_checkpoint.py", dir).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "MISMATCH") {
				t.Fatalf("changed record: %v: %s", err, out)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	dir := f.TempDir()
	m, nets := testNets()
	if err := Save(dir, m, nets); err != nil {
		f.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	weights, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	f.Add(meta, weights)
	f.Add([]byte("{}"), []byte{})
	// Past crasher: widths beyond train's cap (10^16 weights) ran out of
	// memory in Build.
	f.Add([]byte(`{"version":1,"obs_dim":4,"actions":2,"hidden":[100000000,100000000],"activation":"tanh","networks":["actor"]}`), weights)
	f.Add(append([]byte("\ufeff"), meta...), weights)
	// An mm-rl checkpoint, whose meta.json carries the mm section.
	mdir := f.TempDir()
	mm, mnets := testMMRL()
	if err := Save(mdir, mm, mnets); err != nil {
		f.Fatal(err)
	}
	mmeta, _ := os.ReadFile(filepath.Join(mdir, MetaFile))
	mweights, _ := os.ReadFile(filepath.Join(mdir, WeightsFile))
	f.Add(mmeta, mweights)
	f.Fuzz(func(t *testing.T, meta, weights []byte) {
		m, nets, err := Decode(meta, weights)
		if err != nil {
			return
		}
		if len(nets) != len(m.Networks) {
			t.Fatalf("%d networks for %d names", len(nets), len(m.Networks))
		}
		if (m.Env == MMRLEnv) != (m.MM != nil) {
			t.Fatalf("env %q with mm %v", m.Env, m.MM != nil)
		}
		// What decodes re-encodes to a meta.json that decodes the same.
		again, err := EncodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := DecodeMeta(again)
		if err != nil {
			t.Fatalf("re-encoded meta.json refused: %v", err)
		}
		if !reflect.DeepEqual(m.MM, m2.MM) {
			t.Fatalf("mm %+v re-decoded as %+v", m.MM, m2.MM)
		}
	})
}

// The embedded default loads, passes its probe, and says what it is.
func TestDefault(t *testing.T) {
	m, nets, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if m.Env != "placement" || m.Algo != "ppo" || m.Seed != 1 || m.Steps != 100000 || nets["actor"] == nil || nets["critic"] == nil {
		t.Errorf("default checkpoint: %+v", m)
	}
	if m.Converged {
		t.Error("the default is recorded as converged, but it did not beat first-fit when trained")
	}
}

// probeClose allows 1e-5 absolutely up to 1 and relatively above, so that
// a large output one float32 step away (another summation order) passes
// and a real change does not.
func TestProbeClose(t *testing.T) {
	up := func(v float32, n int) float32 {
		for range n {
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
		return v
	}
	for _, c := range []struct {
		want, got float32
		ok        bool
	}{
		{0.5, 0.5 + 9e-6, true},
		{0.5, 0.5 + 1.1e-5, false},
		{-1, -1 - 9e-6, true},
		{300, up(300, 1), true}, // one step is 3.05e-5
		{300, up(300, 4), true}, // 1.2e-4 = 4e-7 relative
		{300, 300.004, false},   // 1.3e-5 relative
		{-500, -500.01, false},
		{1, float32(math.NaN()), false},
	} {
		if got := probeClose(c.want, c.got); got != c.ok {
			t.Errorf("probeClose(%v, %v) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}
