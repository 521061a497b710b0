package trace_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/google/go-cmp/cmp"
)

// SynthNodes cycles the GPU nodes of tinyNodes (V100M32 x8, T4 x2; the
// CPU-only node is skipped): five nodes are V100M32, T4, V100M32, T4,
// V100M32, 8+2+8+2+8 = 28 GPUs, in racks of two 0, 0, 1, 1, 2.
func TestSynthNodes(t *testing.T) {
	rows, err := trace.SynthNodes(decodeNodes(t, tinyNodes), 5)
	if err != nil {
		t.Fatal(err)
	}
	c, err := trace.PAICluster(rows, trace.ClusterOptions{RackSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Name, Type string
		GPUs, Rack int
	}
	want := []node{
		{"synth-0-openb-node-0000", "V100M32", 8, 0},
		{"synth-1-openb-node-0001", "T4", 2, 0},
		{"synth-2-openb-node-0000", "V100M32", 8, 1},
		{"synth-3-openb-node-0001", "T4", 2, 1},
		{"synth-4-openb-node-0000", "V100M32", 8, 2},
	}
	var got []node
	for _, n := range c.Nodes {
		got = append(got, node{n.Name, n.GPUType, n.GPUs, n.Rack})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if c.TotalGPUs() != 28 {
		t.Errorf("%d GPUs, want 28", c.TotalGPUs())
	}

	for _, tt := range []struct {
		name string
		csv  string
		n    int
	}{
		{"no nodes", tinyNodes, 0},
		{"no GPU nodes", "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0002,32000,262144,0,\n", 3},
	} {
		if _, err := trace.SynthNodes(decodeNodes(t, tt.csv), tt.n); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// synth:10000 is the 1,213-node PAI list (6,212 GPUs) cycled: 8 whole
// copies (9,704 nodes, 49,696 GPUs) and its first 296 GPU nodes (1,599
// GPUs: 142 G2, 68 T4, 50 P100, 18 V100M16, 11 G3, 7 V100M32, counted in
// the CSV), so 10,000 nodes and 51,295 GPUs; G2 nodes 8x549+142 = 4,534.
// At 16 nodes a rack the last node is in rack 9999/16 = 624.
func TestLoadSynthCluster(t *testing.T) {
	tr := sharedtraces.Dir(t)
	t.Chdir(filepath.Dir(tr)) // ../shared/traces from here is tr
	c, desc, err := trace.LoadCluster("synth:10000", 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	g2 := 0
	for _, n := range c.Nodes {
		if n.GPUType == "G2" {
			g2++
		}
	}
	type shape struct{ Nodes, GPUs, G2, LastRack int }
	if diff := cmp.Diff(shape{10000, 51295, 4534, 624}, shape{len(c.Nodes), c.TotalGPUs(), g2, c.Nodes[len(c.Nodes)-1].Rack}); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if want := "synthetic (synth:10000, the PAI v2023 GPU node list cycled): 10000 nodes, 51295 GPUs; nodes by GPU type: G2 4534, T4 3300,"; !strings.HasPrefix(desc, want) {
		t.Errorf("description %q, want prefix %q", desc, want)
	}
	// The same as cycling the list by hand.
	pai, _, err := trace.LoadCluster("pai", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes {
		p := pai.Nodes[i%len(pai.Nodes)]
		if n.GPUs != p.GPUs || n.GPUType != p.GPUType || n.Speed != p.Speed || n.CPUs != p.CPUs || n.Rack != i/trace.DefaultRackSize {
			t.Fatalf("node %d: %+v, want a copy of %+v in rack %d", i, n, p, i/trace.DefaultRackSize)
		}
	}
	// --nodes keeps the first N, as for the PAI list: four 2-GPU P100s.
	if c, _, err := trace.LoadCluster("synth:10000", 4, 8); err != nil || len(c.Nodes) != 4 || c.TotalGPUs() != 8 {
		t.Errorf("synth:10000 capped at 4: %d nodes, %d GPUs, %v; want 4, 8", len(c.Nodes), c.TotalGPUs(), err)
	}
}

func TestLoadSynthClusterErrors(t *testing.T) {
	t.Chdir(t.TempDir()) // no node list here
	tests := []struct{ spec, want string }{
		{"synth:", "want synth:N"},
		{"synth:x", "want synth:N"},
		{"synth:0", "want synth:N"},
		{"synth:-3", "want synth:N"},
		{"synth:2000000", "want synth:N"},
		{"synth:10", trace.PAINodeList},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, _, err := trace.LoadCluster(tt.spec, 0, 8)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
