package trace

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
)

// GPUSpeeds is the relative training throughput of each GPU type in the
// Alibaba PAI v2023 node list (openb_node_list_*.csv, column model), with
// V100 = 1; it becomes env.Node.Speed, which divides a job's compute time.
// "" (no type given) is the reference type, as in env.Node.GPUType.
//
// Sources and reasoning, ResNet-50 v1.5 training on one GPU unless noted:
//
//   - V100M16, V100M32: 1 by definition. NVIDIA DeepLearningExamples,
//     TensorFlow/Classification/ConvNets/resnet50v1.5/README.md (20.06
//     container), measured 1270 img/s on a V100 16GB (DGX-1) and 1300 img/s
//     on a V100 32GB (DGX-2) with mixed precision: within 2.5%, so the
//     memory size does not change speed and both are 1.
//   - T4: 0.35. The same README has no T4 training table, but its
//     mixed-precision inference tables at batch 256 give 993 img/s on a T4
//     against 2742 img/s on a V100 16GB (0.36), and the vendor spec sheets
//     give 65 vs 125 dense FP16 tensor TFLOPS (0.52) and 320 vs 900 GB/s of
//     memory bandwidth (0.36) at a 70 W power cap; training, which is
//     bandwidth- and power-bound on a T4, sits at the low end.
//   - P100: 0.6. No tensor cores, so the ratio depends on the precision.
//     In FP32 (how P100 and V100 are usually compared, e.g. in Gavel,
//     OSDI'20) the vendor spec sheets give 9.3 (PCIe) to 10.6 (SXM2)
//     against 15.7 FP32 TFLOPS, 0.59 to 0.68, and 732 vs 900 GB/s; 0.6 is
//     the PCIe figure, rounded. Against a V100 training in mixed precision
//     (3.1x its FP32 speed in the README above: 1270 vs 412 img/s) a P100
//     would be nearer 0.2; this table assumes the FP32-like comparison.
//   - A10: 0.9. Vendor spec sheet: 125 dense FP16 tensor TFLOPS (equal to
//     the V100's) but 600 vs 900 GB/s of memory bandwidth, so the
//     tensor-bound part of a step runs at about V100 speed and the
//     bandwidth-bound part (normalisation, element-wise ops, optimizer) at
//     two thirds; 0.9 assumes about a third of the step is bandwidth-bound.
//   - G1, G2, G3: 1 (assumed). The trace's README says "G1, G2, G3 are
//     undisclosed internal GPU codes", and no public source consulted
//     (the README, the FGD paper, Weng et al., ATC'23) ranks them. Their nodes (G2: 8 GPUs, 96 cores,
//     384 GiB; G3: 8 GPUs, 128 cores, 768 GiB) look like V100-class or newer
//     8-GPU training servers, so they are taken to be as fast as a V100.
//     To study other assumptions, set their entries before building a
//     cluster.
//
// These numbers are rough: relative speeds vary by model (a
// communication-bound job gains less from a faster GPU), and the
// simulator applies one factor to every model.
var GPUSpeeds = map[string]float64{
	"V100M16": 1,
	"V100M32": 1,
	"T4":      0.35,
	"P100":    0.6,
	"A10":     0.9,
	"G1":      1,
	"G2":      1,
	"G3":      1,
	"":        1,
}

// Defaults of ClusterOptions and of the network of a PAI cluster. The
// node list does not describe the network; 25 Gbit/s per node is the
// common NIC of Alibaba Cloud's GPU instances of that generation (an
// assumption, not a trace value), and cross-rack bandwidth is taken to be
// 2.5x oversubscribed.
const (
	DefaultRackSize      = 16
	DefaultNICGbps       = 25
	DefaultIntraRackGbps = 25
	DefaultCrossRackGbps = 10
)

// PAINodeList is where LoadCluster looks for the PAI v2023 GPU node list,
// relative to the working directory (the shared traces beside the
// repository root when run from the root).
const PAINodeList = "../shared/traces/alibaba_pai_v2023/openb_node_list_gpu_node.csv"

// ClusterOptions configures PAICluster.
type ClusterOptions struct {
	// RackSize is the number of nodes per rack, filled in file order; 0
	// means DefaultRackSize.
	RackSize int
	// NICGbps is every node's NIC bandwidth; 0 means DefaultNICGbps.
	NICGbps float64
	// UnknownSpeed, when positive, is the speed of GPU types missing from
	// GPUSpeeds; 0 makes an unknown type an error.
	UnknownSpeed float64
	// Limit keeps only the first Limit GPU nodes; 0 keeps them all.
	Limit int
}

// PAICluster builds a simulated cluster from PAI node-list rows. Nodes
// without GPUs are skipped. Each kept node's Speed comes from GPUSpeeds,
// its CPUs are cpu_milli/1000 (rounded down), its MemoryGiB memory_mib/1024,
// and its rack is its position among the kept nodes divided by RackSize.
// It returns an error naming the node for negative resources or an
// unknown GPU type (unless o.UnknownSpeed > 0), an error naming both
// entries for two nodes of one name, and an error for invalid options or
// when no GPU node is left.
func PAICluster(nodes []datasets.Node, o ClusterOptions) (env.Cluster, error) {
	if o.RackSize == 0 {
		o.RackSize = DefaultRackSize
	}
	if o.NICGbps == 0 {
		o.NICGbps = DefaultNICGbps
	}
	switch {
	case o.RackSize < 0:
		return env.Cluster{}, fmt.Errorf("trace: rack size %d, want >= 0", o.RackSize)
	case !(o.NICGbps > 0) || math.IsInf(o.NICGbps, 0):
		return env.Cluster{}, fmt.Errorf("trace: NIC bandwidth %v Gbit/s, want > 0", o.NICGbps)
	case !(o.UnknownSpeed >= 0) || math.IsInf(o.UnknownSpeed, 0):
		return env.Cluster{}, fmt.Errorf("trace: unknown-type speed %v, want >= 0", o.UnknownSpeed)
	case o.Limit < 0:
		return env.Cluster{}, fmt.Errorf("trace: node limit %d, want >= 0", o.Limit)
	}
	c := env.Cluster{IntraRackGbps: DefaultIntraRackGbps, CrossRackGbps: DefaultCrossRackGbps}
	seen := make(map[string]int, len(nodes)) // name -> index+1
	for i, n := range nodes {
		if o.Limit > 0 && len(c.Nodes) == o.Limit {
			break
		}
		if n.Name != "" {
			if j := seen[n.Name]; j > 0 {
				return env.Cluster{}, fmt.Errorf("trace: nodes %d and %d are both named %q", j-1, i, n.Name)
			}
			seen[n.Name] = i + 1
		}
		switch {
		case n.GPUs < 0:
			return env.Cluster{}, fmt.Errorf("trace: node %d (%s): %d GPUs", i, n.Name, n.GPUs)
		case n.CPUMilli < 0:
			return env.Cluster{}, fmt.Errorf("trace: node %d (%s): %d milli-CPUs", i, n.Name, n.CPUMilli)
		case n.MemoryMiB < 0:
			return env.Cluster{}, fmt.Errorf("trace: node %d (%s): %d MiB of memory", i, n.Name, n.MemoryMiB)
		case n.GPUs == 0:
			continue
		}
		speed, ok := GPUSpeeds[n.GPUModel]
		if !ok {
			if o.UnknownSpeed <= 0 {
				return env.Cluster{}, fmt.Errorf("trace: node %d (%s): unknown GPU type %q (not in GPUSpeeds)", i, n.Name, n.GPUModel)
			}
			speed = o.UnknownSpeed
		}
		if !(speed > 0) || math.IsInf(speed, 0) {
			return env.Cluster{}, fmt.Errorf("trace: node %d (%s): GPU type %q has speed %v, want > 0", i, n.Name, n.GPUModel, speed)
		}
		c.Nodes = append(c.Nodes, env.Node{
			Name:      n.Name,
			GPUs:      n.GPUs,
			GPUType:   n.GPUModel,
			Speed:     speed,
			CPUs:      int(n.CPUMilli / 1000),
			MemoryGiB: float64(n.MemoryMiB) / 1024,
			NICGbps:   o.NICGbps,
			Rack:      len(c.Nodes) / o.RackSize,
		})
	}
	if len(c.Nodes) == 0 {
		return env.Cluster{}, errors.New("trace: no GPU nodes in the node list")
	}
	return c, nil
}

// SynthPrefix opens LoadCluster's synthetic cluster spec, "synth:N".
const SynthPrefix = "synth:"

// MaxSynthNodes bounds N in LoadCluster's "synth:N".
const MaxSynthNodes = env.MaxNodes

// SynthNodes returns n node-list rows made by cycling the GPU nodes of
// nodes in order (rows without GPUs are skipped): row i is a copy of the
// (i mod k)-th of the k GPU nodes, named "synth-<i>-<its name>". It scales
// a real cluster's mix of node types to another size; PAICluster turns
// the rows into a cluster (racks of ClusterOptions.RackSize in row
// order). It returns an error for n < 1 or a list without GPU nodes.
func SynthNodes(nodes []datasets.Node, n int) ([]datasets.Node, error) {
	var gpu []datasets.Node
	for _, x := range nodes {
		if x.GPUs > 0 {
			gpu = append(gpu, x)
		}
	}
	switch {
	case n < 1:
		return nil, fmt.Errorf("trace: synthetic cluster of %d nodes, want >= 1", n)
	case len(gpu) == 0:
		return nil, errors.New("trace: synthetic cluster: no GPU nodes to cycle")
	}
	out := make([]datasets.Node, n)
	for i := range out {
		out[i] = gpu[i%len(gpu)]
		out[i].Name = fmt.Sprintf("synth-%d-%s", i, out[i].Name)
	}
	return out, nil
}

// LoadCluster builds the cluster named by spec and describes it for
// printing. spec "" or "homogeneous" is env.Homogeneous(nodes,
// gpusPerNode) (racks of 8 nodes); "pai" is the PAI v2023 GPU node list
// at PAINodeList; "synth:N" is a synthetic cluster of N nodes with the
// PAI list's mix of node types, its GPU nodes cycled in file order
// (SynthNodes) and racked like a PAI cluster (DefaultRackSize nodes a
// rack): e.g. synth:10000 is 10,000 nodes and 8 copies of the list plus
// its first 296 nodes; it needs the list at PAINodeList (for a synthetic
// cluster without it, use homogeneous). Any other spec is the path of a
// PAI node-list CSV. For the PAI lists and synth:N, nodes > 0 keeps the
// first nodes GPU nodes and gpusPerNode is ignored.
func LoadCluster(spec string, nodes, gpusPerNode int) (env.Cluster, string, error) {
	switch spec {
	case "", "homogeneous":
		if nodes <= 0 || nodes > env.MaxNodes || gpusPerNode <= 0 || gpusPerNode > env.MaxGPUsPerNode {
			return env.Cluster{}, "", fmt.Errorf("trace: homogeneous cluster of %d nodes x %d GPUs, want 1 to %d nodes of 1 to %d GPUs",
				nodes, gpusPerNode, env.MaxNodes, env.MaxGPUsPerNode)
		}
		c := env.Homogeneous(nodes, gpusPerNode)
		return c, fmt.Sprintf("homogeneous: %d nodes x %d GPUs", nodes, gpusPerNode), nil
	}
	synth := 0
	if rest, ok := strings.CutPrefix(spec, SynthPrefix); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > MaxSynthNodes {
			return env.Cluster{}, "", fmt.Errorf("trace: cluster %s: want %sN with N a node count in [1, %d]", spec, SynthPrefix, MaxSynthNodes)
		}
		synth = n
	}
	path, label := spec, "PAI node list "+spec
	if spec == "pai" || synth > 0 {
		path, label = PAINodeList, "PAI v2023 GPU nodes"
		if synth > 0 {
			label = fmt.Sprintf("synthetic (%s, the PAI v2023 GPU node list cycled)", spec)
		}
		if _, err := os.Stat(path); err != nil {
			return env.Cluster{}, "", fmt.Errorf("trace: cluster %s: node list %s not found (run from the repository root, beside ../shared/traces): %w", spec, path, err)
		}
	}
	ns, err := datasets.ReadPAINodes(path)
	if err != nil {
		return env.Cluster{}, "", err
	}
	if synth > 0 {
		if ns, err = SynthNodes(ns, synth); err != nil {
			return env.Cluster{}, "", fmt.Errorf("cluster %s: %w", spec, err)
		}
	}
	c, err := PAICluster(ns, ClusterOptions{Limit: max(nodes, 0)})
	if err != nil {
		return env.Cluster{}, "", fmt.Errorf("cluster %s: %w", path, err)
	}
	return c, describe(label, c), nil
}

// describe summarises a cluster: its node and GPU counts and its nodes by
// GPU type, most common first, e.g. "PAI v2023 GPU nodes: 1213 nodes, 6212
// GPUs; G2 549, T4 404, ...".
func describe(label string, c env.Cluster) string {
	count := map[string]int{}
	for _, n := range c.Nodes {
		count[n.GPUType]++
	}
	types := make([]string, 0, len(count))
	for t := range count {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), strings.Compare(a, b))
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d nodes, %d GPUs; nodes by GPU type:", label, len(c.Nodes), c.TotalGPUs())
	for i, t := range types {
		if i > 0 {
			b.WriteString(",")
		}
		name := t
		if name == "" {
			name = "untyped"
		}
		fmt.Fprintf(&b, " %s %d", name, count[t])
	}
	return b.String()
}
