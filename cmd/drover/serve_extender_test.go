package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/drover-sched/drover/internal/leakcheck"
)

// TestServeExtender runs drover serve -extender-addr 127.0.0.1:0 and
// calls the extender as kube-scheduler does (JSON POST, non-200 is an
// error): the first pod of a 6-worker job keeps the two nodes with room,
// prioritize scores them 10 and 5, a malformed call is 400, the gRPC
// Status counts the decision (one core behind both front ends), and
// shutdown stops the extender with the rest, leaking no goroutine.
func TestServeExtender(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := testServeConfig()
	cfg.ExtenderAddr = "127.0.0.1:0"
	addrs, out, stop := startServe(t, cfg)
	// Run prints its addresses before it calls Ready.
	m := regexp.MustCompile(`extender on (127\.0\.0\.1:\d+);`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no extender address in:\n%s", out.String())
	}
	client := &http.Client{Timeout: testDeadline}
	call := func(verb, body string, result any) int {
		t.Helper()
		resp, err := client.Post("http://"+m[1]+"/"+verb, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(result); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	node := func(name, free string) string {
		return `{"metadata":{"name":"` + name + `","annotations":{"drover.io/free-gpus":"` + free + `"}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}`
	}
	args := `{"Pod":{"metadata":{"name":"w-0","namespace":"ml","annotations":{"drover.io/job-id":"resnet","drover.io/workers":"6"}},` +
		`"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},` +
		`"Nodes":{"items":[` + node("a", "4") + `,` + node("b", "0") + `,` + node("c", "2") + `]}}`

	var res extenderv1.ExtenderFilterResult
	if code := call("filter", args, &res); code != http.StatusOK || res.Error != "" || res.Nodes == nil || len(res.Nodes.Items) != 2 ||
		res.Nodes.Items[0].Name != "a" || res.Nodes.Items[1].Name != "c" || res.FailedNodes["b"] == "" {
		t.Errorf("filter: status %d, %+v", code, res)
	}
	var scores extenderv1.HostPriorityList
	want := extenderv1.HostPriorityList{{Host: "a", Score: 10}, {Host: "b"}, {Host: "c", Score: 5}}
	if code := call("prioritize", args, &scores); code != http.StatusOK || len(scores) != 3 || scores[0] != want[0] || scores[1] != want[1] || scores[2] != want[2] {
		t.Errorf("prioritize: status %d, %v; want %v", code, scores, want)
	}
	if code := call("filter", `{"Nodes":{"items":[]}}`, nil); code != http.StatusBadRequest {
		t.Errorf("missing pod: status %d, want 400", code)
	}
	code, o, e := drover(t, "place", "-addr", addrs[0], "-status")
	if code != 0 || !strings.Contains(o, "heuristic:1") {
		t.Errorf("place -status: exit %d\n%s%s", code, o, e)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	if _, err := client.Post("http://"+m[1]+"/filter", "application/json", strings.NewReader(args)); err == nil {
		t.Error("the extender still answers after shutdown")
	}
	leakcheck.Wait(t, before)
}
