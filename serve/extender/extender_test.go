package extender_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	pb "github.com/drover-sched/drover/serve/proto"
)

// filterOutcome is what a filter answer says about each node, with
// failure reasons cut to a substring the test expects.
type filterOutcome struct {
	Kept         []string
	Failed       map[string]string
	Unresolvable map[string]string
	Error        string
}

// outcome summarises res, keeping of each reason only the part that
// contains the wanted substring (so that decision ids do not matter).
func outcome(res *extender.ExtenderFilterResult, want filterOutcome) filterOutcome {
	cut := func(got, want map[string]string) map[string]string {
		out := map[string]string{}
		for n, r := range got {
			if w, ok := want[n]; ok && strings.Contains(r, w) {
				r = w
			}
			out[n] = r
		}
		return out
	}
	o := filterOutcome{Kept: kept(res), Failed: cut(res.FailedNodes, want.Failed), Unresolvable: cut(res.FailedAndUnresolvableNodes, want.Unresolvable), Error: res.Error}
	if want.Error != "" && strings.Contains(o.Error, want.Error) {
		o.Error = want.Error
	}
	if o.Kept == nil {
		o.Kept = []string{}
	}
	return o
}

// The expected answers follow from the free GPUs: each cluster has just
// enough room for the job in one way.
func TestFilterNodes(t *testing.T) {
	noGPU := makeNode("cpu-0").Obj()
	tests := []struct {
		name  string
		pod   *extender.Pod
		nodes []*extender.Node
		want  filterOutcome
	}{{
		name:  "the one node with room",
		pod:   makePod("ml", "w-0").GPUs(1).Job("j", 4).Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(8).Free(0).Obj(), makeNode("b").GPUs(8).Obj(), noGPU},
		want: filterOutcome{Kept: []string{"b"}, Failed: map[string]string{"a": "no worker of job ml/j placed here"},
			Unresolvable: map[string]string{"cpu-0": "no allocatable nvidia.com/gpu"}},
	}, {
		name:  "split over the nodes with room",
		pod:   makePod("ml", "w-0").GPUs(1).Job("j", 6).Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(4).Obj(), makeNode("b").GPUs(4).Free(0).Obj(), makeNode("c").GPUs(4).Free(2).Obj()},
		want:  filterOutcome{Kept: []string{"a", "c"}, Failed: map[string]string{"b": "no worker of job ml/j placed here"}, Unresolvable: map[string]string{}},
	}, {
		name:  "no room",
		pod:   makePod("ml", "w-0").GPUs(1).Job("j", 4).Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(4).Free(1).Obj(), makeNode("b").GPUs(4).Free(1).Obj()},
		want: filterOutcome{Kept: []string{}, Unresolvable: map[string]string{}, Failed: map[string]string{
			"a": "job ml/j not placed: no room: 2 free GPUs for 4 workers", "b": "job ml/j not placed: no room: 2 free GPUs for 4 workers"}},
	}, {
		name:  "no node with a GPU",
		pod:   makePod("ml", "w-0").GPUs(1).Obj(),
		nodes: []*extender.Node{noGPU},
		want:  filterOutcome{Kept: []string{}, Failed: map[string]string{}, Unresolvable: map[string]string{"cpu-0": "no allocatable nvidia.com/gpu"}},
	}, {
		name:  "a pod that is not Drover's keeps every node",
		pod:   makePod("web", "nginx").Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(4).Free(0).Obj(), noGPU},
		want:  filterOutcome{Kept: []string{"a", "cpu-0"}, Failed: map[string]string{}, Unresolvable: map[string]string{}},
	}, {
		name:  "a GPU pod without annotations is a job of its own",
		pod:   makePod("ml", "notebook").GPUs(2).Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(4).Free(1).Obj(), makeNode("b").GPUs(4).Free(2).Obj()},
		want:  filterOutcome{Kept: []string{"b"}, Failed: map[string]string{"a": "no worker of job ml/notebook placed here"}, Unresolvable: map[string]string{}},
	}, {
		name: "a malformed node fails alone",
		pod:  makePod("ml", "w-0").GPUs(1).Job("j", 2).Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(8).Annotate(extender.AnnotationFreeGPUs, "lots").Obj(), makeNode("b").GPUs(8).Obj(),
			makeNode("c").GPUs(4).Free(9).Obj(), makeNode("d").GPUs(4).Annotate(extender.AnnotationCPUUtil, "11").Obj()},
		want: filterOutcome{Kept: []string{"b"}, Failed: map[string]string{}, Unresolvable: map[string]string{
			"a": `annotation drover.io/free-gpus: "lots" is not a 32-bit integer`,
			"c": "free_gpus: more than the node's gpus (9 > 4)",
			"d": "cpu_util: too high (11 > 10)",
		}},
	}, {
		name: "a parameter-server pod follows the PS placement",
		pod: makePod("ml", "ps-0").Job("j", 2).Annotate(extender.AnnotationArch, "ps").Annotate(extender.AnnotationPSShards, "1").
			Annotate(extender.AnnotationRole, "ps").Obj(),
		nodes: []*extender.Node{makeNode("a").GPUs(8).Free(0).Obj(), makeNode("b").GPUs(8).Obj()},
		want:  filterOutcome{Kept: []string{"b"}, Failed: map[string]string{"a": "no parameter server of job ml/j placed here"}, Unresolvable: map[string]string{}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := startExtender(t, newCore(t), extender.Config{})
			res := s.filter(t, &extender.ExtenderArgs{Pod: tt.pod, Nodes: nodeList(tt.nodes...)})
			if res.NodeNames != nil {
				t.Errorf("answer has NodeNames for a Nodes request")
			}
			if diff := cmp.Diff(tt.want, outcome(res, tt.want)); diff != "" {
				t.Errorf("filter (-want,+got):\n%s", diff)
			}
		})
	}
}

// randomCluster is n GPU nodes over 4 zones with seeded free GPUs and
// CPU loads.
func randomCluster(rng *rand.Rand, n int) []*extender.Node {
	var nodes []*extender.Node
	for i := range n {
		gpus := []int{4, 8}[rng.IntN(2)]
		nodes = append(nodes, makeNode(fmt.Sprintf("gpu-%02d", i)).GPUs(gpus).Free(rng.IntN(gpus+1)).Zone(fmt.Sprintf("zone-%d", i%4)).
			Annotate(extender.AnnotationCPUUtil, strconv.FormatFloat(rng.Float64(), 'f', 3, 64)).Obj())
	}
	return nodes
}

// Filter and prioritize say what the Core's placement says: the
// reference is the Core asked directly with the converted cluster.
func TestAnswersMatchCore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := range 20 {
		nodes := randomCluster(rng, 16)
		workers := 1 + rng.IntN(24)
		pod := makePod("ml", "w-0").GPUs(1).Job(fmt.Sprintf("job-%d", trial), workers).Annotate(extender.AnnotationModel, "imagenet").Obj()
		pj, _, err := extender.JobFromPod(pod)
		if err != nil {
			t.Fatal(err)
		}
		cluster, _ := extender.ClusterFromNodes(nodes, serve.DefaultLimits, 0, 0)
		ref, err := newCore(t).Place(context.Background(), &pb.PlaceRequest{Job: pj.Job, Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		most := 0
		for _, a := range ref.Assignments {
			count[a.NodeId]++
			most = max(most, count[a.NodeId])
		}
		wantKept := []string{}
		wantScores := map[string]int64{}
		for _, n := range nodes {
			if count[n.Name] > 0 {
				wantKept = append(wantKept, n.Name)
				wantScores[n.Name] = max(1, int64(float64(10*count[n.Name])/float64(most)+0.5))
			} else {
				wantScores[n.Name] = 0
			}
		}

		s, _ := startExtender(t, newCore(t), extender.Config{})
		args := &extender.ExtenderArgs{Pod: pod, Nodes: nodeList(nodes...)}
		res := s.filter(t, args)
		if got := kept(res); !slices.Equal(got, wantKept) {
			t.Errorf("trial %d (%d workers, placed %v): kept %v, want %v", trial, workers, ref.Placed, got, wantKept)
		}
		if len(res.FailedNodes)+len(kept(res)) != len(nodes) {
			t.Errorf("trial %d: %d kept + %d failed != %d nodes", trial, len(kept(res)), len(res.FailedNodes), len(nodes))
		}
		gotScores := map[string]int64{}
		for _, hp := range s.prioritize(t, args) {
			gotScores[hp.Host] = hp.Score
		}
		if diff := cmp.Diff(wantScores, gotScores); diff != "" {
			t.Errorf("trial %d: scores (-want,+got):\n%s", trial, diff)
		}
	}
}

func TestFilterNodeNames(t *testing.T) {
	store := &extender.NodeStore{}
	for _, n := range []*extender.Node{makeNode("a").GPUs(8).Free(0).Obj(), makeNode("b").GPUs(8).Obj(), makeNode("cpu-0").Obj(), makeNode("gone").GPUs(8).Obj()} {
		store.Set(n)
	}
	store.Delete("gone")
	names := []string{"a", "b", "cpu-0", "gone"}
	s, _ := startExtender(t, newCore(t), extender.Config{Nodes: store})
	pod := makePod("ml", "w-0").GPUs(1).Job("j", 4).Obj()
	res := s.filter(t, &extender.ExtenderArgs{Pod: pod, NodeNames: &names})
	want := filterOutcome{Kept: []string{"b"}, Failed: map[string]string{"a": "no worker of job ml/j placed here"},
		Unresolvable: map[string]string{"cpu-0": "no allocatable nvidia.com/gpu", "gone": "node not in the extender's node cache"}}
	if res.Nodes != nil {
		t.Errorf("answer has Nodes for a NodeNames request")
	}
	if diff := cmp.Diff(want, outcome(res, want)); diff != "" {
		t.Errorf("filter (-want,+got):\n%s", diff)
	}
	scores := s.prioritize(t, &extender.ExtenderArgs{Pod: pod, NodeNames: &names})
	wantScores := extender.HostPriorityList{{Host: "a"}, {Host: "b", Score: 10}, {Host: "cpu-0"}, {Host: "gone"}}
	if diff := cmp.Diff(wantScores, scores); diff != "" {
		t.Errorf("prioritize (-want,+got):\n%s", diff)
	}

	// Without a node cache, names alone cannot be placed; a pod that is
	// not Drover's still passes.
	s, _ = startExtender(t, newCore(t), extender.Config{})
	res = s.filter(t, &extender.ExtenderArgs{Pod: pod, NodeNames: &names})
	if !strings.Contains(res.Error, "nodeCacheCapable: false") {
		t.Errorf("no node cache: error %q", res.Error)
	}
	res = s.filter(t, &extender.ExtenderArgs{Pod: makePod("web", "nginx").Obj(), NodeNames: &names})
	if res.Error != "" || !slices.Equal(kept(res), names) {
		t.Errorf("not Drover's pod: kept %v, error %q", kept(res), res.Error)
	}
}

func TestPrioritizeScores(t *testing.T) {
	// 6 workers, 4 + 2 free: the placement is a:4, c:2.
	nodes := nodeList(makeNode("a").GPUs(4).Obj(), makeNode("b").GPUs(4).Free(0).Obj(), makeNode("c").GPUs(4).Free(2).Obj(), makeNode("cpu-0").Obj())
	tests := []struct {
		name string
		pod  *extender.Pod
		want extender.HostPriorityList
	}{
		{"most workers scores 10", makePod("ml", "w-0").GPUs(1).Job("j", 6).Obj(),
			extender.HostPriorityList{{Host: "a", Score: 10}, {Host: "b"}, {Host: "c", Score: 5}, {Host: "cpu-0"}}},
		{"not Drover's pod scores 0", makePod("web", "nginx").Obj(),
			extender.HostPriorityList{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "cpu-0"}}},
		{"a Core error scores 0", makePod("ml", "w-0").GPUs(1).Job("k", -1).Obj(),
			extender.HostPriorityList{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "cpu-0"}}},
		{"no room scores 0", makePod("ml", "w-0").GPUs(1).Job("big", 7).Obj(),
			extender.HostPriorityList{{Host: "a"}, {Host: "b"}, {Host: "c"}, {Host: "cpu-0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := startExtender(t, newCore(t), extender.Config{})
			got := s.prioritize(t, &extender.ExtenderArgs{Pod: tt.pod, Nodes: nodes})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("prioritize (-want,+got):\n%s", diff)
			}
			for _, hp := range got {
				if hp.Score < extender.MinExtenderPriority || hp.Score > extender.MaxExtenderPriority {
					t.Errorf("%s scores %d, outside 0..10", hp.Host, hp.Score)
				}
			}
		})
	}
}

// Two pods of one job get one placement: the second pod's view (after
// the first took a GPU on a) would not fit the job any more, yet it gets
// the same answers, from the cache, without asking the Core again. A job
// of the same name in another namespace is another job.
func TestPodsOfOneJobGetOnePlacement(t *testing.T) {
	p := &countingPlacer{core: newCore(t)}
	s, _ := startExtender(t, p, extender.Config{})
	before := nodeList(makeNode("a").GPUs(4).Obj(), makeNode("b").GPUs(4).Free(0).Obj(), makeNode("c").GPUs(4).Free(2).Obj())
	after := nodeList(makeNode("a").GPUs(4).Free(3).Obj(), makeNode("b").GPUs(4).Free(0).Obj(), makeNode("c").GPUs(4).Free(2).Obj())

	w0 := &extender.ExtenderArgs{Pod: makePod("ml", "w-0").GPUs(1).Job("j", 6).Obj(), Nodes: before}
	w1 := &extender.ExtenderArgs{Pod: makePod("ml", "w-1").GPUs(1).Job("j", 6).Obj(), Nodes: after}
	f0, p0 := s.filter(t, w0), s.prioritize(t, w0)
	f1, p1 := s.filter(t, w1), s.prioritize(t, w1)
	if !slices.Equal(kept(f0), []string{"a", "c"}) || !slices.Equal(kept(f0), kept(f1)) {
		t.Errorf("kept %v for w-0, %v for w-1; want [a c] twice", kept(f0), kept(f1))
	}
	if diff := cmp.Diff(p0, p1); diff != "" {
		t.Errorf("scores differ (-w0,+w1):\n%s", diff)
	}
	if diff := cmp.Diff(f0.FailedNodes, f1.FailedNodes); diff != "" {
		t.Errorf("failure reasons differ (-w0,+w1):\n%s", diff)
	}
	if n := p.calls.Load(); n != 1 {
		t.Errorf("%d Place calls for one job, want 1", n)
	}
	other := &extender.ExtenderArgs{Pod: makePod("other", "w-0").GPUs(1).Job("j", 6).Obj(), Nodes: after}
	if res := s.filter(t, other); len(kept(res)) != 0 || p.calls.Load() != 2 {
		t.Errorf("job j of namespace other: kept %v after %d calls; want [] (5 free GPUs for 6) after 2", kept(res), p.calls.Load())
	}
}

func TestPlacementCache(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	p := &countingPlacer{core: newCore(t)}
	s, _ := startExtender(t, p, extender.Config{TTL: time.Minute, MaxJobs: 2, Clock: clock})
	nodes := nodeList(makeNode("a").GPUs(8).Obj(), makeNode("b").GPUs(8).Obj())
	ask := func(job string) {
		t.Helper()
		if res := s.filter(t, &extender.ExtenderArgs{Pod: makePod("ml", job+"-0").GPUs(1).Job(job, 2).Obj(), Nodes: nodes}); len(kept(res)) == 0 {
			t.Fatalf("job %s not placed: %+v", job, res)
		}
	}
	steps := []struct {
		name      string
		advance   time.Duration
		job       string
		wantCalls int64
	}{
		{"first pod of x asks the Core", 0, "x", 1},
		{"x is cached", 59 * time.Second, "x", 1},
		{"x expires after the TTL", time.Second, "x", 2},
		{"y", 0, "y", 3},
		{"z drops the oldest, x", 0, "z", 4},
		{"y is still cached", 0, "y", 4},
		{"x is asked again, dropping y", 0, "x", 5},
		{"z is still cached", 0, "z", 5},
		{"y was dropped", 0, "y", 6},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		ask(st.job)
		if got := p.calls.Load(); got != st.wantCalls {
			t.Fatalf("%s: %d Place calls, want %d", st.name, got, st.wantCalls)
		}
	}
}

// When none of the cached placement's nodes is a candidate any more, the
// job is placed afresh, and later pods follow the new placement.
func TestReplaceWhenPlacementGone(t *testing.T) {
	p := &countingPlacer{core: newCore(t)}
	s, _ := startExtender(t, p, extender.Config{})
	pod := makePod("ml", "w-0").GPUs(1).Job("j", 2).Obj()
	first := s.filter(t, &extender.ExtenderArgs{Pod: pod, Nodes: nodeList(makeNode("a").GPUs(8).Free(0).Obj(), makeNode("b").GPUs(8).Obj())})
	if !slices.Equal(kept(first), []string{"b"}) {
		t.Fatalf("first: kept %v, want [b]", kept(first))
	}
	again := nodeList(makeNode("a").GPUs(8).Obj(), makeNode("c").GPUs(8).Free(0).Obj())
	second := s.filter(t, &extender.ExtenderArgs{Pod: pod, Nodes: again})
	third := s.filter(t, &extender.ExtenderArgs{Pod: pod, Nodes: again})
	if !slices.Equal(kept(second), []string{"a"}) || !slices.Equal(kept(third), []string{"a"}) || p.calls.Load() != 2 {
		t.Errorf("after b left: kept %v then %v after %d calls; want [a] twice after 2", kept(second), kept(third), p.calls.Load())
	}
}

// A request that is not an extender call is answered 4xx with a JSON
// error naming the field; kube-scheduler sees a failed call.
func TestMalformedRequests(t *testing.T) {
	pod := `{"metadata":{"name":"w-0","namespace":"ml"}}`
	nodes := `{"items":[{"metadata":{"name":"a"}}]}`
	tests := []struct {
		name      string
		body      string
		wantField string
		wantText  string
		wantCode  int
	}{
		{"not JSON", `{"Pod": `, "body", "unexpected EOF", http.StatusBadRequest},
		{"empty body", ``, "body", "empty", http.StatusBadRequest},
		{"not an object", `[1, 2]`, "body", "array", http.StatusBadRequest},
		{"two values", `{"Pod":` + pod + `,"Nodes":` + nodes + `} {}`, "body", "more than one JSON value", http.StatusBadRequest},
		{"wrong type", `{"Pod": 3, "Nodes":` + nodes + `}`, "Pod", "number", http.StatusBadRequest},
		{"wrong nested type", `{"Pod": {"metadata": {"name": 3}}, "Nodes":` + nodes + `}`, "Pod.metadata.name", "number", http.StatusBadRequest},
		{"bad quantity", `{"Pod": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "lots"}}}]}}, "Nodes":` + nodes + `}`, "Pod", "quantit", http.StatusBadRequest},
		{"missing pod", `{"Nodes":` + nodes + `}`, "Pod", "missing", http.StatusBadRequest},
		{"null pod", `{"Pod": null, "Nodes":` + nodes + `}`, "Pod", "missing", http.StatusBadRequest},
		{"no nodes", `{"Pod":` + pod + `}`, "Nodes", "missing", http.StatusBadRequest},
		{"oversized", `{"Pod":` + pod + `,"Nodes":` + nodes + `,"pad":"` + strings.Repeat("x", 1024) + `"}`, "body", "larger than 1024 bytes", http.StatusRequestEntityTooLarge},
	}
	s, _ := startExtender(t, newCore(t), extender.Config{MaxBodyBytes: 1024})
	for _, tt := range tests {
		for _, verb := range []string{"filter", "prioritize"} {
			t.Run(tt.name+"/"+verb, func(t *testing.T) {
				var res json.RawMessage
				code, err := s.post(verb, []byte(tt.body), &res)
				want := tt.wantCode
				if err == nil || code != want {
					t.Fatalf("status %d, err %v; want %d", code, err, want)
				}
				got := rawError(t, s, verb, tt.body)
				if got.Field != tt.wantField || !strings.Contains(got.Problem, tt.wantText) {
					t.Errorf("error %+v, want field %q with %q", got, tt.wantField, tt.wantText)
				}
			})
		}
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{{http.MethodGet, "/filter", http.StatusMethodNotAllowed}, {http.MethodPost, "/bind", http.StatusNotFound}, {http.MethodPost, "/", http.StatusNotFound}} {
		req, _ := http.NewRequest(tt.method, s.urlPrefix+tt.path, strings.NewReader("{}"))
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
}

// rawError posts body and decodes the 4xx answer's RequestError.
func rawError(t *testing.T, s *scheduler, verb, body string) extender.RequestError {
	t.Helper()
	resp, err := s.client.Post(s.urlPrefix+"/"+verb, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var e extender.RequestError
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

// A well-formed call that Drover cannot answer is 200 with the reason in
// Error, naming the annotation or the Core's field.
func TestSchedulingErrors(t *testing.T) {
	tests := []struct {
		name string
		pod  *extender.Pod
		want string
	}{
		{"no workers", makePod("ml", "w-0").Job("j", 0).Obj(), "drover: pod ml/w-0: job.workers: want > 0 (got 0)"},
		{"negative workers", makePod("ml", "w-0").GPUs(1).Job("j", -3).Obj(), "job.workers: want > 0 (got -3)"},
		{"workers not a number", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationWorkers, "four").Obj(),
			`Pod.metadata.annotations[drover.io/workers]: "four" is not a 32-bit integer`},
		{"unknown arch", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationArch, "mesh").Obj(),
			`Pod.metadata.annotations[drover.io/arch]: "mesh", want ring or ps`},
		{"unknown role", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationRole, "chief").Obj(),
			`Pod.metadata.annotations[drover.io/role]: "chief", want worker or ps`},
		{"bad duration", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationExpectedDuration, "soon").Obj(),
			`Pod.metadata.annotations[drover.io/expected-duration]: "soon" is not a duration`},
		{"PS shards on a ring job", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationPSShards, "2").Obj(),
			"job.ps_shards: 2 for a ring job, want 0"},
		{"negative duration", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationExpectedDuration, "-1h").Obj(),
			"job.expected_duration_s: negative (-3600)"},
		{"job id too long", makePod("ml", "w-0").GPUs(1).Annotate(extender.AnnotationJobID, strings.Repeat("j", 260)).Obj(),
			"job.id: too long (263 > 253 bytes)"},
	}
	nodes := nodeList(makeNode("a").GPUs(8).Obj())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := startExtender(t, newCore(t), extender.Config{})
			args := &extender.ExtenderArgs{Pod: tt.pod, Nodes: nodes}
			res := s.filter(t, args)
			if !strings.Contains(res.Error, tt.want) {
				t.Errorf("error %q, want it to contain %q", res.Error, tt.want)
			}
			if len(kept(res)) != 0 {
				t.Errorf("kept %v with an error", kept(res))
			}
			if diff := cmp.Diff(extender.HostPriorityList{{Host: "a"}}, s.prioritize(t, args)); diff != "" {
				t.Errorf("prioritize (-want,+got):\n%s", diff)
			}
		})
	}
	// A closed Core is a scheduling-level failure too.
	core := newCore(t)
	s, _ := startExtender(t, core, extender.Config{})
	core.Close()
	if res := s.filter(t, &extender.ExtenderArgs{Pod: makePod("ml", "w-0").GPUs(1).Obj(), Nodes: nodes}); !strings.Contains(res.Error, "serve: closed") {
		t.Errorf("closed core: error %q", res.Error)
	}
}

// The methods work without HTTP too, and refuse what the handler would
// answer 400.
func TestMethodsWithoutHTTP(t *testing.T) {
	h, err := extender.New(newCore(t), extender.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if res := h.Filter(ctx, &extender.ExtenderArgs{}); res.Error != "drover: Pod: missing" {
		t.Errorf("filter without pod: %q", res.Error)
	}
	if _, err := h.Prioritize(ctx, &extender.ExtenderArgs{Pod: &extender.Pod{}}); err == nil || !strings.Contains(err.Error(), "Nodes") {
		t.Errorf("prioritize without nodes: %v", err)
	}
	if _, err := extender.New(nil, extender.Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := extender.New(newCore(t), extender.Config{TTL: -1}); err == nil {
		t.Error("negative TTL accepted")
	}
}

// Concurrent pods of many jobs (run with -race): every job gets one
// placement.
func TestConcurrentPods(t *testing.T) {
	p := &countingPlacer{core: newCore(t)}
	h, err := extender.New(p, extender.Config{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeList(randomCluster(rand.New(rand.NewPCG(2, 2)), 32)...)
	const jobs, pods = 8, 4
	answers := make([][]string, jobs*pods)
	done := make(chan struct{})
	for i := range jobs * pods {
		go func() {
			defer func() { done <- struct{}{} }()
			pod := makePod("ml", fmt.Sprintf("w-%d", i)).GPUs(1).Job(fmt.Sprintf("job-%d", i%jobs), 4).Obj()
			answers[i] = kept(h.Filter(context.Background(), &extender.ExtenderArgs{Pod: pod, Nodes: nodes}))
		}()
	}
	for range jobs * pods {
		<-done
	}
	for i := jobs; i < jobs*pods; i++ {
		if !slices.Equal(answers[i], answers[i%jobs]) {
			t.Errorf("pod %d of job-%d kept %v, pod 0 kept %v", i/jobs, i%jobs, answers[i], answers[i%jobs])
		}
	}
}

// The handler's answers are what kube-scheduler decodes: field names as
// in k8s.io/kube-scheduler/extender/v1.
func TestWireFormat(t *testing.T) {
	h, _ := extender.New(newCore(t), extender.Config{})
	body := `{"Pod":{"metadata":{"name":"w-0","namespace":"ml","annotations":{"drover.io/job-id":"j"}},` +
		`"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},` +
		`"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}},` +
		`{"metadata":{"name":"b","annotations":{"drover.io/free-gpus":"0"}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/filter", strings.NewReader(body)))
	var got map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("status %d, %v: %s", rec.Code, err, rec.Body)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"Error", "FailedAndUnresolvableNodes", "FailedNodes", "NodeNames", "Nodes"}) {
		t.Errorf("filter answer keys %v", keys)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/prioritize", strings.NewReader(body)))
	if s := strings.TrimSpace(rec.Body.String()); s != `[{"Host":"a","Score":10},{"Host":"b","Score":0}]` {
		t.Errorf("prioritize answer %s", s)
	}
}
