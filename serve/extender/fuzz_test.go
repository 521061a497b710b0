package extender_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
)

// FuzzExtenderFilter posts arbitrary bodies to /filter and /prioritize:
// the handler must never panic, must answer 200, 400 or 413 (more nodes
// than the cap, or a body over MaxBodyBytes), and a 200 filter
// answer keeps only nodes of the request, none of them also failed, with
// prioritize scores in 0..10.
func FuzzExtenderFilter(f *testing.F) {
	for _, args := range []*extender.ExtenderArgs{
		{Pod: makePod("ml", "w-0").GPUs(1).Job("j", 6).Obj(),
			Nodes: nodeList(makeNode("a").GPUs(4).Zone("z1").Obj(), makeNode("b").GPUs(4).Free(0).Obj(), makeNode("c").GPUs(4).Free(2).Obj(), makeNode("cpu").Obj())},
		{Pod: makePod("ml", "ps-0").Job("j", 2).Annotate("drover.io/arch", "ps").Annotate("drover.io/role", "ps").Obj(),
			Nodes: nodeList(makeNode("a").GPUs(8).Annotate("drover.io/cpu-util", "0.9").Obj())},
		{Pod: makePod("web", "nginx").Obj(), NodeNames: &[]string{"a", "b"}},
		{Pod: makePod("ml", "w-0").GPUs(2).Obj(), NodeNames: &[]string{"a", "b", "ghost"}},
	} {
		b, err := json.Marshal(args)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{``, `{}`, `null`, `{"Pod":null}`, `{"Pod":{},"Nodes":{"items":[{}]}}`, `{"Pod":{},"NodeNames":[]}`,
		`{"Pod":{"metadata":{"annotations":{"drover.io/workers":"99999999999"}}},"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"1e3"}}}]}}`,
		`{"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"-2"}}}]}},"Nodes":{"items":[{"metadata":{"name":"a","annotations":{"drover.io/free-gpus":"-1"}},"status":{"allocatable":{"nvidia.com/gpu":"9223372036854775807"}}}]}}`,
		`{"Pod":{},"Nodes":{"items":[` + strings.Repeat(`{},`, 4096) + `{}]}}`, // over the node cap: 413
	} {
		f.Add([]byte(s))
	}
	store := &extender.NodeStore{}
	store.Set(makeNode("a").GPUs(8).Obj())
	store.Set(makeNode("b").GPUs(4).Free(1).Obj())
	core, err := serve.NewCore()
	if err != nil {
		f.Fatal(err)
	}
	h, err := extender.New(core, extender.Config{MaxBodyBytes: 64 << 10, Nodes: store})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, extender.FilterPath, strings.NewReader(string(body))))
		if rec.Code == http.StatusBadRequest || rec.Code == http.StatusRequestEntityTooLarge {
			var e extender.RequestError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Field == "" {
				t.Fatalf("%d without a field: %s", rec.Code, rec.Body)
			}
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var args extender.ExtenderArgs
		if err := json.Unmarshal(body, &args); err != nil {
			t.Fatalf("200 for a body that does not decode: %v", err)
		}
		var res extender.ExtenderFilterResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatalf("answer does not decode: %v\n%s", err, rec.Body)
		}
		in := map[string]bool{}
		if args.Nodes != nil {
			for _, n := range args.Nodes.Items {
				in[n.Name] = true
			}
		} else if args.NodeNames != nil {
			for _, n := range *args.NodeNames {
				in[n] = true
			}
		}
		for _, n := range kept(&res) {
			if !in[n] {
				t.Fatalf("kept node %q not in the request", n)
			}
			if _, failed := res.FailedNodes[n]; failed && res.Error == "" {
				t.Fatalf("node %q kept and failed", n)
			}
		}

		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, extender.PrioritizePath, strings.NewReader(string(body))))
		var scores extender.HostPriorityList
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &scores) != nil {
			t.Fatalf("prioritize: status %d: %s", rec.Code, rec.Body)
		}
		for _, hp := range scores {
			if hp.Score < extender.MinExtenderPriority || hp.Score > extender.MaxExtenderPriority {
				t.Fatalf("%s scores %d", hp.Host, hp.Score)
			}
		}
	})
}
