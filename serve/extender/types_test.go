package extender_test

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/drover-sched/drover/serve/extender"
)

// TestFilterKeepsNodes: the nodes a filter answer keeps are the nodes
// the request sent, every field included (the extender declares only
// the fields it reads), and the answer decodes into kube-scheduler's own
// ExtenderFilterResult with the Kubernetes Node types.
func TestFilterKeepsNodes(t *testing.T) {
	s, _ := startExtender(t, newCore(t), extender.Config{})
	a := `{"metadata":{"name":"a","uid":"u-a","annotations":{"drover.io/free-gpus":"0"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"32","memory":"256Gi"},"conditions":[{"type":"Ready","status":"True"}]}}`
	b := `{"metadata":{"name":"b","uid":"u-b"},"spec":{"podCIDR":"10.0.1.0/24"},"status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"32","memory":"256Gi"},"nodeInfo":{"kubeletVersion":"v1.37.2"}}}`
	pod := makePod("ml", "w-0").GPUs(1).Job("j", 4).Obj()
	pj, _ := json.Marshal(pod)
	body := []byte(`{"Pod":` + string(pj) + `,"Nodes":{"items":[` + a + `,` + b + `]}}`)
	var res extenderv1.ExtenderFilterResult
	if _, err := s.post("filter", body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Error != "" || res.Nodes == nil || len(res.Nodes.Items) != 1 || res.Nodes.Items[0].Name != "b" {
		t.Fatalf("filter answer %+v, want node b kept", res)
	}
	want := corev1.Node{}
	if err := json.Unmarshal([]byte(b), &want); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Nodes.Items[0])
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("kept node\n%s\nwant the node sent\n%s", got, wantJSON)
	}
	var n extender.Node
	if err := json.Unmarshal([]byte(b), &n); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(n); string(out) != b {
		t.Errorf("Node encodes as\n%s\nwant the JSON it was decoded from\n%s", out, b)
	}
}
