package extender_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
)

// Example serves the extender over the heuristic Core and makes the two
// calls kube-scheduler makes for the first pod of a 6-worker job: the
// cluster has room for it only on gpu-a (4 free GPUs) and gpu-c (2).
func Example() {
	core, _ := serve.NewCore()
	defer core.Close()
	ext, _ := extender.New(core, extender.Config{})
	srv := httptest.NewServer(ext) // drover serve -extender-addr 127.0.0.1:8888
	defer srv.Close()

	gpuNode := func(name, free string) extender.Node {
		return extender.Node{
			ObjectMeta: extender.ObjectMeta{Name: name, Annotations: map[string]string{extender.AnnotationFreeGPUs: free}},
			Status:     extender.NodeStatus{Allocatable: extender.ResourceList{extender.ResourceGPU: resource.MustParse("4")}},
		}
	}
	pod := &extender.Pod{
		ObjectMeta: extender.ObjectMeta{Namespace: "ml", Name: "resnet-worker-0", Annotations: map[string]string{
			extender.AnnotationJobID: "resnet", extender.AnnotationWorkers: "6", extender.AnnotationModel: "imagenet"}},
		Spec: extender.PodSpec{Containers: []extender.Container{{Name: "train",
			Resources: extender.ResourceRequirements{Limits: extender.ResourceList{extender.ResourceGPU: resource.MustParse("1")}}}}},
	}
	args := extender.ExtenderArgs{Pod: pod, Nodes: &extender.NodeList{Items: []extender.Node{
		gpuNode("gpu-a", "4"), gpuNode("gpu-b", "0"), gpuNode("gpu-c", "2"), {ObjectMeta: extender.ObjectMeta{Name: "cpu-d"}}}}}
	body, _ := json.Marshal(args)

	var filtered extender.ExtenderFilterResult
	post(srv.URL+"/filter", body, &filtered)
	for _, n := range filtered.Nodes.Items {
		fmt.Println("keep", n.Name)
	}
	fmt.Println("fail gpu-b:", filtered.FailedNodes["gpu-b"] != "")
	fmt.Println("fail cpu-d:", filtered.FailedAndUnresolvableNodes["cpu-d"])

	var scores extender.HostPriorityList
	post(srv.URL+"/prioritize", body, &scores)
	slices.SortStableFunc(scores, func(a, b extender.HostPriority) int { return int(b.Score - a.Score) })
	fmt.Println(scores)
	// Output:
	// keep gpu-a
	// keep gpu-c
	// fail gpu-b: true
	// fail cpu-d: drover: no allocatable nvidia.com/gpu
	// [{gpu-a 10} {gpu-c 5} {gpu-b 0} {cpu-d 0}]
}

// post is kube-scheduler's side of a call: JSON POST, 200 or an error.
func post(url string, body []byte, result any) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		panic(fmt.Sprint(url, resp, err))
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(result)
}
