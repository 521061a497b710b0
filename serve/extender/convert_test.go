package extender_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	pb "github.com/drover-sched/drover/serve/proto"
)

func TestJobFromPod(t *testing.T) {
	initGPUs := makePod("ml", "w-0").GPUs(1).Obj()
	initGPUs.Spec.InitContainers = []extender.Container{{Name: "warm", Resources: extender.ResourceRequirements{
		Requests: extender.ResourceList{extender.ResourceGPU: resource.MustParse("3")}}}}
	twoContainers := makePod("ml", "w-0").GPUs(2).Obj()
	twoContainers.Spec.Containers = append(twoContainers.Spec.Containers, extender.Container{Name: "side", Resources: extender.ResourceRequirements{
		Requests: extender.ResourceList{extender.ResourceGPU: resource.MustParse("1")}}})
	noNamespace := makePod("", "w-0").GPUs(1).Obj()
	tests := []struct {
		name   string
		pod    *extender.Pod
		want   extender.PodJob
		wantOK bool
	}{
		{"not Drover's", makePod("web", "nginx").Obj(), extender.PodJob{}, false},
		{"a GPU pod is its own job", makePod("ml", "nb").GPUs(2).Obj(),
			extender.PodJob{Job: &pb.Job{Id: "ml/nb", Workers: 2}, GPUs: 2}, true},
		{"default namespace", noNamespace, extender.PodJob{Job: &pb.Job{Id: "default/w-0", Workers: 1}, GPUs: 1}, true},
		{"containers add up", twoContainers, extender.PodJob{Job: &pb.Job{Id: "ml/w-0", Workers: 3}, GPUs: 3}, true},
		{"a larger init container counts", initGPUs, extender.PodJob{Job: &pb.Job{Id: "ml/w-0", Workers: 3}, GPUs: 3}, true},
		{"every annotation", makePod("ml", "w-3").GPUs(1).Job("bert-7", 16).Annotate(extender.AnnotationModel, "bert").
			Annotate(extender.AnnotationArch, "PS").Annotate(extender.AnnotationPSShards, " 2 ").Annotate(extender.AnnotationBatchSize, "256").
			Annotate(extender.AnnotationExpectedDuration, "1h30m").Obj(),
			extender.PodJob{Job: &pb.Job{Id: "ml/bert-7", Model: "bert", Workers: 16, Arch: pb.Arch_ARCH_PS, PsShards: 2, BatchSize: 256,
				ExpectedDurationS: 5400}, GPUs: 1}, true},
		{"a parameter server without GPUs", makePod("ml", "ps-0").Job("j", 4).Annotate(extender.AnnotationRole, "ps").Obj(),
			extender.PodJob{Job: &pb.Job{Id: "ml/j", Workers: 4}, Role: pb.Role_ROLE_PS}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := extender.JobFromPod(tt.pod)
			if err != nil || ok != tt.wantOK {
				t.Fatalf("ok %v, err %v; want ok %v", ok, err, tt.wantOK)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestClusterFromNodes(t *testing.T) {
	nodes := []*extender.Node{
		makeNode("a").GPUs(8).Zone("us-east-1b").Annotate(extender.AnnotationCPUUtil, "0.5").Annotate(extender.AnnotationMemBWUtil, "0.25").
			Annotate(extender.AnnotationNetUtil, "0.125").Annotate(extender.AnnotationGPUSpeed, "1.5").Annotate(extender.AnnotationNICGbps, "100").Obj(),
		makeNode("b").GPUs(8).Free(3).Zone("us-east-1a").Obj(),
		makeNode("c").GPUs(4).Zone("us-east-1b").Rack("r0").Obj(), // the rack label wins over the zone
		makeNode("cpu").Obj(),
		makeNode("d").GPUs(4).Annotate(extender.AnnotationGPUSpeed, "fast").Obj(),
		makeNode("e").GPUs(4).Annotate(extender.AnnotationNetUtil, "-0.1").Obj(),
		makeNode("f").GPUs(100).Obj(),
	}
	nodes[0].Labels[extender.LabelGPUProduct] = "NVIDIA-A100-SXM4-80GB"
	cluster, bad := extender.ClusterFromNodes(nodes, serve.DefaultLimits, 100, 25)
	// Racks by sorted name: "r0" 0, "us-east-1a" 1, "us-east-1b" 2.
	want := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25, Nodes: []*pb.Node{
		{Id: "a", Gpus: 8, FreeGpus: 8, GpuType: "NVIDIA-A100-SXM4-80GB", Speed: 1.5, Cpus: 32, MemoryGib: 256, NicGbps: 100, Rack: 2,
			CpuUtil: 0.5, MemBwUtil: 0.25, NetUtil: 0.125},
		{Id: "b", Gpus: 8, FreeGpus: 3, Speed: 1, Cpus: 32, MemoryGib: 256, Rack: 1},
		{Id: "c", Gpus: 4, FreeGpus: 4, Speed: 1, Cpus: 32, MemoryGib: 256, Rack: 0},
	}}
	if diff := cmp.Diff(want, cluster, protocmp.Transform()); diff != "" {
		t.Errorf("cluster (-want,+got):\n%s", diff)
	}
	wantBad := map[string]string{
		"cpu": "drover: no allocatable nvidia.com/gpu",
		"d":   `drover: annotation drover.io/gpu-speed: "fast" is not a number`,
		"e":   "drover: net_util: negative (-0.1)",
		"f":   "drover: gpus: too many (100 > 64)",
	}
	if diff := cmp.Diff(wantBad, bad); diff != "" {
		t.Errorf("bad (-want,+got):\n%s", diff)
	}
	if err := serve.ValidatePlace(&pb.PlaceRequest{Cluster: cluster, Job: &pb.Job{Id: "j", Workers: 1}}, serve.DefaultLimits); err != nil {
		t.Errorf("the Core refuses the cluster: %v", err)
	}
}
