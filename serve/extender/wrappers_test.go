package extender_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	pb "github.com/drover-sched/drover/serve/proto"
)

// podWrapper builds test pods fluently, like the Kubernetes scheduler's
// st.MakePod().
type podWrapper struct{ corev1.Pod }

func makePod(ns, name string) *podWrapper {
	return &podWrapper{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "train", Image: "trainer"}}}}}
}

// GPUs sets the first container's nvidia.com/gpu limit.
func (p *podWrapper) GPUs(n int) *podWrapper {
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceName(extender.ResourceGPU): *resource.NewQuantity(int64(n), resource.DecimalSI)}
	return p
}

// Job sets the job id and worker-count annotations.
func (p *podWrapper) Job(id string, workers int) *podWrapper {
	return p.Annotate(extender.AnnotationJobID, id).Annotate(extender.AnnotationWorkers, strconv.Itoa(workers))
}

func (p *podWrapper) Annotate(k, v string) *podWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

// Obj is the pod as the extender decodes it from the JSON of the
// Kubernetes Pod (k8s.io/api/core/v1) built here.
func (p *podWrapper) Obj() *extender.Pod { return fromK8s[extender.Pod](&p.Pod) }

// nodeWrapper builds test nodes fluently, like st.MakeNode().
type nodeWrapper struct{ corev1.Node }

func makeNode(name string) *nodeWrapper {
	return &nodeWrapper{corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("32"),
			corev1.ResourceMemory: resource.MustParse("256Gi"),
		}}}}
}

// GPUs sets the allocatable nvidia.com/gpu.
func (n *nodeWrapper) GPUs(g int) *nodeWrapper {
	n.Status.Allocatable[corev1.ResourceName(extender.ResourceGPU)] = *resource.NewQuantity(int64(g), resource.DecimalSI)
	return n
}

// Free sets the drover.io/free-gpus annotation.
func (n *nodeWrapper) Free(g int) *nodeWrapper {
	return n.Annotate(extender.AnnotationFreeGPUs, strconv.Itoa(g))
}

func (n *nodeWrapper) Zone(z string) *nodeWrapper {
	n.Labels[corev1.LabelTopologyZone] = z
	return n
}

func (n *nodeWrapper) Rack(r string) *nodeWrapper {
	n.Labels[extender.LabelRack] = r
	return n
}

func (n *nodeWrapper) Annotate(k, v string) *nodeWrapper {
	n.Annotations[k] = v
	return n
}

// Obj is the node as the extender decodes it from the JSON of the
// Kubernetes Node (k8s.io/api/core/v1) built here.
func (n *nodeWrapper) Obj() *extender.Node { return fromK8s[extender.Node](&n.Node) }

// fromK8s decodes the JSON of a Kubernetes object into the extender's
// type T, as a request carries it.
func fromK8s[T any](obj any) *T {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
	return v
}

// nodeList is the Nodes of an ExtenderArgs.
func nodeList(nodes ...*extender.Node) *extender.NodeList {
	l := &extender.NodeList{}
	for _, n := range nodes {
		l.Items = append(l.Items, *n)
	}
	return l
}

// scheduler calls an extender the way kube-scheduler's HTTPExtender
// does: JSON POST to urlPrefix + "/" + verb, any status but 200 an error.
type scheduler struct {
	urlPrefix string
	client    *http.Client
}

// startExtender serves an extender over core (with cfg) on an httptest
// server; it is closed when the test ends.
func startExtender(tb testing.TB, p extender.Placer, cfg extender.Config) (*scheduler, *extender.Handler) {
	tb.Helper()
	h, err := extender.New(p, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return &scheduler{urlPrefix: srv.URL, client: srv.Client()}, h
}

// send posts args (any value, marshalled) and decodes the answer into
// result; it returns the status and an error for any status but 200.
func (s *scheduler) send(verb string, args, result any) (int, error) {
	out, err := json.Marshal(args)
	if err != nil {
		return 0, err
	}
	return s.post(verb, out, result)
}

func (s *scheduler) post(verb string, body []byte, result any) (int, error) {
	url := strings.TrimRight(s.urlPrefix, "/") + "/" + verb
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var rerr extender.RequestError
		json.NewDecoder(resp.Body).Decode(&rerr)
		return resp.StatusCode, fmt.Errorf("failed %v with extender at URL %v, code %v: %+v", verb, url, resp.StatusCode, rerr)
	}
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(result)
}

func (s *scheduler) filter(tb testing.TB, args *extender.ExtenderArgs) *extender.ExtenderFilterResult {
	tb.Helper()
	var res extender.ExtenderFilterResult
	if _, err := s.send("filter", args, &res); err != nil {
		tb.Fatal(err)
	}
	return &res
}

func (s *scheduler) prioritize(tb testing.TB, args *extender.ExtenderArgs) extender.HostPriorityList {
	tb.Helper()
	var res extender.HostPriorityList
	if _, err := s.send("prioritize", args, &res); err != nil {
		tb.Fatal(err)
	}
	return res
}

// kept is the names of the nodes a filter result keeps.
func kept(res *extender.ExtenderFilterResult) []string {
	if res.NodeNames != nil {
		return *res.NodeNames
	}
	var out []string
	if res.Nodes != nil {
		for _, n := range res.Nodes.Items {
			out = append(out, n.Name)
		}
	}
	return out
}

// countingPlacer counts the Place calls to a Core.
type countingPlacer struct {
	core  *serve.Core
	calls atomic.Int64
}

func (c *countingPlacer) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	c.calls.Add(1)
	return c.core.Place(ctx, req)
}

func newCore(tb testing.TB) *serve.Core {
	tb.Helper()
	core, err := serve.NewCore()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { core.Close() })
	return core
}

// fakeClock is a serve.Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now().Add(d)
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
