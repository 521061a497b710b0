package extender

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// ResourceGPU is the extended resource that counts a node's GPUs and a
// container's GPU request (the NVIDIA device plugin's name).
const ResourceGPU ResourceName = "nvidia.com/gpu"

// Pod annotations: what a pod says about its Drover job. Only the job id
// and the worker count matter for most jobs; see the package doc.
const (
	// AnnotationJobID names the job the pod belongs to; every pod of a
	// distributed job carries the same value. Without it the pod is a job
	// of its own, named after the pod.
	AnnotationJobID = "drover.io/job-id"
	// AnnotationWorkers is the job's total number of GPU workers, over all
	// its pods (default: the pod's own nvidia.com/gpu request).
	AnnotationWorkers = "drover.io/workers"
	// AnnotationModel names the job's model profile (bert, cifar10,
	// imagenet, ...).
	AnnotationModel = "drover.io/model"
	// AnnotationArch is the job's communication architecture: "ring"
	// (all-reduce, the default) or "ps" (parameter servers).
	AnnotationArch = "drover.io/arch"
	// AnnotationPSShards is a PS job's number of parameter servers.
	AnnotationPSShards = "drover.io/ps-shards"
	// AnnotationRole is what the pod runs: "worker" (the default) or "ps".
	AnnotationRole = "drover.io/role"
	// AnnotationBatchSize is the job's global batch size.
	AnnotationBatchSize = "drover.io/batch-size"
	// AnnotationExpectedDuration is the job's expected run time, a Go
	// duration ("90m", "2h").
	AnnotationExpectedDuration = "drover.io/expected-duration"
)

// Node annotations and labels: what Drover reads of a node beyond its
// allocatable resources.
const (
	// AnnotationFreeGPUs is the node's GPUs not allocated to any pod, kept
	// current by a node agent or controller (default: all allocatable
	// GPUs).
	AnnotationFreeGPUs = "drover.io/free-gpus"
	// AnnotationCPUUtil, AnnotationMemBWUtil and AnnotationNetUtil are
	// the node's current CPU, memory-bandwidth and network utilisation
	// from its monitoring: shares, 0 idle, 1 saturated (default 0).
	AnnotationCPUUtil   = "drover.io/cpu-util"
	AnnotationMemBWUtil = "drover.io/mem-bw-util"
	AnnotationNetUtil   = "drover.io/net-util"
	// AnnotationGPUSpeed is the GPU speed relative to the reference GPU
	// (default 1).
	AnnotationGPUSpeed = "drover.io/gpu-speed"
	// AnnotationNICGbps is the node's NIC bandwidth in Gbit/s.
	AnnotationNICGbps = "drover.io/nic-gbps"
	// LabelRack names the node's rack; without it the node's
	// topology.kubernetes.io/zone label is its rack.
	LabelRack = "drover.io/rack"
	// LabelGPUProduct is the GPU model, as NVIDIA's GPU feature discovery
	// labels it.
	LabelGPUProduct = "nvidia.com/gpu.product"
)

// PodJob is what a pod says about its job: the job to place and which of
// the job's tasks the pod runs.
type PodJob struct {
	// Job is the job as the Core sees it. Its id is "<namespace>/<job-id>"
	// so that jobs of different namespaces never share a placement.
	Job *pb.Job
	// Role is ROLE_WORKER or ROLE_PS.
	Role pb.Role
	// GPUs is the pod's own nvidia.com/gpu request.
	GPUs int64
}

// annotationErr is a bad annotation, named as a field of the request.
func annotationErr(key, format string, args ...any) error {
	return &serve.FieldError{Field: "Pod.metadata.annotations[" + key + "]", Problem: fmt.Sprintf(format, args...)}
}

// JobFromPod reads the pod's Drover job from its annotations and GPU
// request. ok is false for a pod that is not Drover's: one with no
// drover.io/ annotation and no nvidia.com/gpu request. A malformed
// annotation is a *serve.FieldError naming it. Values are not range
// checked here: the Core validates the job.
func JobFromPod(pod *Pod) (pj PodJob, ok bool, err error) {
	pj.GPUs = podGPUs(&pod.Spec)
	a := pod.Annotations
	drover := false
	for k := range a {
		if strings.HasPrefix(k, "drover.io/") {
			drover = true
			break
		}
	}
	if !drover && pj.GPUs == 0 {
		return pj, false, nil
	}
	ns := cmp.Or(pod.Namespace, namespaceDefault)
	job := &pb.Job{Id: ns + "/" + cmp.Or(a[AnnotationJobID], pod.Name), Model: a[AnnotationModel], Workers: clampInt32(pj.GPUs)}
	ints := []struct {
		key string
		dst *int32
	}{{AnnotationWorkers, &job.Workers}, {AnnotationPSShards, &job.PsShards}, {AnnotationBatchSize, &job.BatchSize}}
	for _, f := range ints {
		s, set := a[f.key]
		if !set {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return pj, true, annotationErr(f.key, "%q is not a 32-bit integer", s)
		}
		*f.dst = int32(v)
	}
	switch s := strings.ToLower(strings.TrimSpace(a[AnnotationArch])); s {
	case "", "ring", "allreduce", "all-reduce":
	case "ps":
		job.Arch = pb.Arch_ARCH_PS
	default:
		return pj, true, annotationErr(AnnotationArch, "%q, want ring or ps", a[AnnotationArch])
	}
	switch s := strings.ToLower(strings.TrimSpace(a[AnnotationRole])); s {
	case "", "worker":
	case "ps":
		pj.Role = pb.Role_ROLE_PS
	default:
		return pj, true, annotationErr(AnnotationRole, "%q, want worker or ps", a[AnnotationRole])
	}
	if s, set := a[AnnotationExpectedDuration]; set {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return pj, true, annotationErr(AnnotationExpectedDuration, "%q is not a duration (e.g. 90m)", s)
		}
		job.ExpectedDurationS = d.Seconds()
	}
	pj.Job = job
	return pj, true, nil
}

// podGPUs is the pod's effective nvidia.com/gpu request: the larger of
// its containers' sum and its largest init container. A container's
// limit counts, else its request (an extended resource's request equals
// its limit).
func podGPUs(spec *PodSpec) int64 {
	one := func(c *Container) int64 {
		if q, ok := c.Resources.Limits[ResourceGPU]; ok {
			return max(0, q.Value())
		}
		q := c.Resources.Requests[ResourceGPU]
		return max(0, q.Value())
	}
	var sum, initMax int64
	for i := range spec.Containers {
		sum = satAdd(sum, one(&spec.Containers[i]))
	}
	for i := range spec.InitContainers {
		initMax = max(initMax, one(&spec.InitContainers[i]))
	}
	return max(sum, initMax)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func clampInt32(v int64) int32 { return int32(min(max(v, math.MinInt32), math.MaxInt32)) }

// ClusterFromNodes builds the Place request's cluster from Kubernetes
// nodes, in their order: the node name as id, allocatable nvidia.com/gpu
// as GPUs, the drover.io/free-gpus annotation (default: all) as free GPUs,
// utilisation, GPU speed and NIC bandwidth from the drover.io/
// annotations, allocatable CPU and memory, and racks numbered by the
// sorted names of the nodes' drover.io/rack (else
// topology.kubernetes.io/zone) labels. A node the Core would refuse (no
// allocatable GPU, a malformed annotation, a value out of l's range) is
// left out and its name mapped to why in bad. intraGbps and crossGbps
// are the cluster's rack bandwidths (0: unknown).
func ClusterFromNodes(nodes []*Node, l serve.Limits, intraGbps, crossGbps float64) (c *pb.Cluster, bad map[string]string) {
	c = &pb.Cluster{Nodes: make([]*pb.Node, 0, len(nodes)), IntraRackGbps: intraGbps, CrossRackGbps: crossGbps}
	bad = map[string]string{}
	racks := make([]string, 0, len(nodes))
	for _, n := range nodes {
		pn, rack, err := nodeFromK8s(n, l)
		if err != nil {
			bad[n.Name] = "drover: " + err.Error()
			continue
		}
		c.Nodes = append(c.Nodes, pn)
		racks = append(racks, rack)
	}
	names := slices.Compact(slices.Sorted(slices.Values(racks)))
	for i, r := range racks {
		k, _ := slices.BinarySearch(names, r)
		c.Nodes[i].Rack = int32(k)
	}
	return c, bad
}

// nodeFromK8s converts one node and checks it as the Core would, with a
// one-node request.
func nodeFromK8s(n *Node, l serve.Limits) (*pb.Node, string, error) {
	alloc := n.Status.Allocatable
	gpus := alloc[ResourceGPU]
	if gpus.Sign() <= 0 {
		return nil, "", fmt.Errorf("no allocatable %s", ResourceGPU)
	}
	pn := &pb.Node{Id: n.Name, Gpus: clampInt32(gpus.Value()), GpuType: n.Labels[LabelGPUProduct], Speed: 1}
	pn.FreeGpus = pn.Gpus
	if cpu, ok := alloc[ResourceCPU]; ok {
		pn.Cpus = clampInt32(cpu.Value())
	}
	if mem, ok := alloc[ResourceMemory]; ok {
		pn.MemoryGib = mem.AsApproximateFloat64() / (1 << 30)
	}
	a := n.Annotations
	if s, ok := a[AnnotationFreeGPUs]; ok {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return nil, "", fmt.Errorf("annotation %s: %q is not a 32-bit integer", AnnotationFreeGPUs, s)
		}
		pn.FreeGpus = int32(v)
	}
	floats := []struct {
		key string
		dst *float64
	}{{AnnotationCPUUtil, &pn.CpuUtil}, {AnnotationMemBWUtil, &pn.MemBwUtil}, {AnnotationNetUtil, &pn.NetUtil},
		{AnnotationGPUSpeed, &pn.Speed}, {AnnotationNICGbps, &pn.NicGbps}}
	for _, f := range floats {
		s, ok := a[f.key]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, "", fmt.Errorf("annotation %s: %q is not a number", f.key, s)
		}
		*f.dst = v
	}
	// The Core's own checks, on this node alone: a bad node fails by
	// itself instead of failing every pod's request.
	probe := &pb.PlaceRequest{Cluster: &pb.Cluster{Nodes: []*pb.Node{pn}}, Job: &pb.Job{Id: "probe", Workers: 1}}
	if err := serve.ValidatePlace(probe, l); err != nil {
		if fe, ok := err.(*serve.FieldError); ok {
			return nil, "", fmt.Errorf("%s: %s", strings.TrimPrefix(fe.Field, "cluster.nodes[0]."), fe.Problem)
		}
		return nil, "", err
	}
	rack := n.Labels[LabelRack]
	if rack == "" {
		rack = n.Labels[LabelTopologyZone]
	}
	return pn, rack, nil
}
