package trace_test

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/firstfit"
)

// tinyNodes is a three-node PAI node list: an 8-GPU V100M32 server, a
// 2-GPU T4 server and a CPU-only node.
const tinyNodes = `sn,cpu_milli,memory_mib,gpu,model
openb-node-0000,96000,786432,8,V100M32
openb-node-0001,104000,524288,2,T4
openb-node-0002,32000,262144,0,
`

func decodeNodes(t *testing.T, csv string) []datasets.Node {
	t.Helper()
	ns, err := datasets.DecodePAINodes([]byte(csv), datasets.Options{Source: "tiny.csv"})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestPAICluster(t *testing.T) {
	// By hand: 96000 milli-CPUs = 96 cores, 786432 MiB = 768 GiB;
	// 104000 = 104 cores, 524288 MiB = 512 GiB. The CPU-only node is
	// dropped. Racks count kept nodes: with RackSize 1 the two GPU nodes
	// are in racks 0 and 1, with the default (16) both in rack 0.
	v100 := env.Node{Name: "openb-node-0000", GPUs: 8, GPUType: "V100M32", Speed: 1, CPUs: 96, MemoryGiB: 768, NICGbps: 25}
	t4 := env.Node{Name: "openb-node-0001", GPUs: 2, GPUType: "T4", Speed: trace.GPUSpeeds["T4"], CPUs: 104, MemoryGiB: 512, NICGbps: 25}
	rack := func(n env.Node, r int) env.Node { n.Rack = r; return n }
	nic := func(n env.Node, g float64) env.Node { n.NICGbps = g; return n }
	tests := []struct {
		name string
		o    trace.ClusterOptions
		want []env.Node
	}{
		{"defaults", trace.ClusterOptions{}, []env.Node{v100, t4}},
		{"rack size 1", trace.ClusterOptions{RackSize: 1}, []env.Node{v100, rack(t4, 1)}},
		{"limit 1", trace.ClusterOptions{Limit: 1}, []env.Node{v100}},
		{"limit beyond", trace.ClusterOptions{Limit: 5}, []env.Node{v100, t4}},
		{"nic 100", trace.ClusterOptions{NICGbps: 100}, []env.Node{nic(v100, 100), nic(t4, 100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := trace.PAICluster(decodeNodes(t, tinyNodes), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Nodes, tt.want) {
				t.Errorf("nodes (-want,+got):\n-%+v\n+%+v", tt.want, c.Nodes)
			}
			if c.IntraRackGbps != 25 || c.CrossRackGbps != 10 {
				t.Errorf("network %v/%v Gbit/s, want 25/10", c.IntraRackGbps, c.CrossRackGbps)
			}
		})
	}
}

func TestPAIClusterErrors(t *testing.T) {
	unknown := "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0007,8000,1024,1,H800\n"
	tests := []struct {
		name  string
		nodes []datasets.Node
		o     trace.ClusterOptions
		want  string // substring of the error; "" means no error
	}{
		{"unknown type", decodeNodes(t, unknown), trace.ClusterOptions{}, `openb-node-0007): unknown GPU type "H800"`},
		{"unknown type allowed", decodeNodes(t, unknown), trace.ClusterOptions{UnknownSpeed: 0.5}, ""},
		{"negative CPUs", []datasets.Node{{Name: "n-neg", CPUMilli: -1, GPUs: 1, GPUModel: "T4"}}, trace.ClusterOptions{}, "n-neg"},
		{"negative memory", []datasets.Node{{Name: "n-mem", MemoryMiB: -1, GPUs: 1, GPUModel: "T4"}}, trace.ClusterOptions{}, "n-mem"},
		{"negative GPUs", []datasets.Node{{Name: "n-gpu", GPUs: -2}}, trace.ClusterOptions{}, "n-gpu"},
		{"CPU only", []datasets.Node{{Name: "cpu", CPUMilli: 1000}}, trace.ClusterOptions{}, "no GPU nodes"},
		{"NaN NIC", decodeNodes(t, tinyNodes), trace.ClusterOptions{NICGbps: math.NaN()}, "NIC"},
		{"negative NIC", decodeNodes(t, tinyNodes), trace.ClusterOptions{NICGbps: -1}, "NIC"},
		{"NaN unknown speed", decodeNodes(t, tinyNodes), trace.ClusterOptions{UnknownSpeed: math.NaN()}, "unknown-type speed"},
		{"negative rack size", decodeNodes(t, tinyNodes), trace.ClusterOptions{RackSize: -1}, "rack size"},
		{"negative limit", decodeNodes(t, tinyNodes), trace.ClusterOptions{Limit: -1}, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := trace.PAICluster(tt.nodes, tt.o)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want == "":
				if len(c.Nodes) != 1 || c.Nodes[0].Speed != tt.o.UnknownSpeed {
					t.Errorf("nodes %+v, want one node of speed %v", c.Nodes, tt.o.UnknownSpeed)
				}
			case err == nil:
				t.Fatalf("no error, want one containing %q", tt.want)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestPAIClusterFile builds the real PAI v2023 GPU node list: the trace's
// README gives 1,213 GPU nodes holding 6,212 GPUs, and every GPU type in it
// has a speed.
func TestPAIClusterFile(t *testing.T) {
	path := sharedtraces.Path(t, "alibaba_pai_v2023", "openb_node_list_gpu_node.csv")
	ns, err := datasets.ReadPAINodes(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := trace.PAICluster(ns, trace.ClusterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 1213 || c.TotalGPUs() != 6212 {
		t.Errorf("%d nodes, %d GPUs; want 1213, 6212", len(c.Nodes), c.TotalGPUs())
	}
	// 1213 nodes at 16 a rack fill racks 0..75 (75*16 = 1200 < 1213).
	if r := c.Nodes[len(c.Nodes)-1].Rack; r != 75 {
		t.Errorf("last rack %d, want 75", r)
	}
}

// TestLoadCluster checks the three kinds of spec; "pai" is resolved from
// a working directory beside ../shared/traces.
func TestLoadCluster(t *testing.T) {
	tr := sharedtraces.Dir(t)
	t.Chdir(filepath.Dir(tr)) // ../shared/traces from here is tr
	abs := filepath.Join(tr, "alibaba_pai_v2023", "openb_node_list_gpu_node.csv")
	tests := []struct {
		name                string
		spec                string
		nodes, gpus         int
		wantNodes, wantGPUs int
		wantDesc            string // prefix
	}{
		{"default", "", 3, 4, 3, 12, "homogeneous: 3 nodes x 4 GPUs"},
		{"homogeneous", "homogeneous", 2, 8, 2, 16, "homogeneous: 2 nodes x 8 GPUs"},
		{"pai", "pai", 0, 0, 1213, 6212, "PAI v2023 GPU nodes: 1213 nodes, 6212 GPUs; nodes by GPU type: G2 549, T4 404, P100 134, V100M16 55, G3 39, V100M32 30, A10 2"},
		// The file opens with four 2-GPU P100 nodes.
		{"pai limited", "pai", 4, 8, 4, 8, "PAI v2023 GPU nodes: 4 nodes, 8 GPUs; nodes by GPU type: P100 4"},
		{"path", abs, 0, 0, 1213, 6212, "PAI node list " + abs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, desc, err := trace.LoadCluster(tt.spec, tt.nodes, tt.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != tt.wantNodes || c.TotalGPUs() != tt.wantGPUs {
				t.Errorf("%d nodes, %d GPUs; want %d, %d", len(c.Nodes), c.TotalGPUs(), tt.wantNodes, tt.wantGPUs)
			}
			if !strings.HasPrefix(desc, tt.wantDesc) {
				t.Errorf("description %q, want prefix %q", desc, tt.wantDesc)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		t.Chdir(t.TempDir())
		_, _, err := trace.LoadCluster("pai", 0, 0)
		if err == nil || !strings.Contains(err.Error(), trace.PAINodeList) {
			t.Errorf("error %v, want one naming %s", err, trace.PAINodeList)
		}
	})
}

// TestClusterHeterogeneity runs one 2-GPU imagenet job, placed by
// first-fit on node 0, on two 2-node clusters that differ only in node 0's
// GPU type. The drover model slows only the compute part of an iteration
// by 1/speed, so with compute c and all-reduce s per iteration on the
// packed placement (one node, 2 GPUs) the job takes
// D * (c/speed + s) / (c + s) on the T4 node and D on the V100 node.
// The job's global batch is 2 x the profile's minimum per-GPU batch, so
// its per-GPU batch is that minimum with no gradient accumulation, and
// (step, sync) = Throughput([2], MinLocalBsz) gives c = step - sync, s = sync.
func TestClusterHeterogeneity(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	p := profiles["imagenet"]
	const dur = 3600.0
	w := &datasets.Workload{Name: "one", Jobs: []datasets.Job{{
		Name: "j", GPUs: 2, Duration: dur, Model: "imagenet", BatchSize: 2 * p.MinLocalBsz(),
	}}}
	csv := func(first, second string) string {
		return "sn,cpu_milli,memory_mib,gpu,model\n" +
			"a,64000,262144,2," + first + "\n" +
			"b,64000,262144,2," + second + "\n"
	}
	jct := func(nodes string) float64 {
		t.Helper()
		c, err := trace.PAICluster(decodeNodes(t, nodes), trace.ClusterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pol, _ := firstfit.New(policies.Config{Seed: 1})
		res, err := trace.Run(trace.Options{
			Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: pol,
			Cluster: &c, Interval: 0, RestartDelay: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Jobs[0].JCT
	}
	onV100 := jct(csv("V100M16", "T4"))
	onT4 := jct(csv("T4", "V100M16"))

	speed := trace.GPUSpeeds["T4"]
	step, sync := p.Throughput([]int{2}, p.MinLocalBsz())
	c := step - sync
	want := dur * (c/speed + sync) / (c + sync)
	t.Logf("imagenet on 2 GPUs: compute %.4f s, sync %.4f s per iteration; JCT V100 %.1f s, T4 %.1f s (want %.1f)", c, sync, onV100, onT4, want)
	if math.Abs(onV100-dur) > 1e-6*dur {
		t.Errorf("JCT on V100 = %v, want %v", onV100, dur)
	}
	if math.Abs(onT4-want) > 1e-6*want {
		t.Errorf("JCT on T4 = %v, want %v", onT4, want)
	}
	if !(onT4 > onV100 && onT4 <= onV100/speed*(1+1e-9)) {
		t.Errorf("JCT on T4 %v, want in (%v, %v]", onT4, onV100, onV100/speed)
	}
}
