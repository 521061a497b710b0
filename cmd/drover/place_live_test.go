package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// TestPlaceRequestInput (issue 32, item 8): -request reads a file, as
// its help says, or standard input for -; an input larger than any
// request is refused without reading it all (it read /dev/zero until the
// machine ran out of memory).
func TestPlaceRequestInput(t *testing.T) {
	const js = `{"job":{"id":"from-json","model":"bert","workers":2},"cluster":{"nodes":[{"id":"a","gpus":4,"freeGpus":4,"speed":1}]}}`
	file := filepath.Join(t.TempDir(), "req.json")
	if err := os.WriteFile(file, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{file, "-"} {
		placeStdin = strings.NewReader(js)
		code, out, e := drover(t, "place", "-addr", "127.0.0.1:1", "-print-request", "-request", src)
		if code != 0 || !strings.Contains(out, `"id":"from-json"`) {
			t.Errorf("-request %s: exit %d: %s%s", src, code, out, e)
		}
	}
	placeStdin = io.MultiReader(strings.NewReader(`{"job":`), zeros{})
	code, _, e := drover(t, "place", "-addr", "127.0.0.1:1", "-print-request", "-request", "-")
	if code != 1 || !strings.Contains(e, "-request (standard input): more than 64 MiB") {
		t.Errorf("endless standard input: exit %d: %s", code, e)
	}
	placeStdin = os.Stdin
	code, _, e = drover(t, "place", "-help")
	if !strings.Contains(e, "from standard input with -") {
		t.Errorf("place -help does not say that - reads standard input:\n%s", e)
	}
}

// zeros is an endless reader of zero bytes, as /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// serveLiveForTest serves a stateful core on a loopback port and returns
// its address and its live store.
func serveLiveForTest(t *testing.T, stateless bool) (string, *state.Store) {
	t.Helper()
	var opts []serve.Option
	var st *state.Store
	if !stateless {
		var err error
		if st, err = state.New(state.Config{}); err != nil {
			t.Fatal(err)
		}
		opts = append(opts, serve.WithState(st, nil))
	}
	core, err := serve.NewCore(opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.NewServer(core, serve.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return lis.Addr().String(), st
}

// TestPlaceLive (issue 32, item 8): drover place always sent its
// synthetic node-0..15, so against a server with agents it never named a
// real node. -live places on the nodes the server knows: three agents'
// nodes, one of them with a running job on 6 of its 8 GPUs, so a 4-worker
// job goes to the others. A server without agents, and a stateless one,
// are refused with a message that says why.
func TestPlaceLive(t *testing.T) {
	addr, st := serveLiveForTest(t, false)
	code, _, e := drover(t, "place", "-addr", addr, "-live")
	if code != 1 || !strings.Contains(e, "knows no nodes yet: no agent has said hello") {
		t.Errorf("-live without agents: exit %d: %s", code, e)
	}
	now := time.Now()
	for i, id := range []string{"gpu-a", "gpu-b", "gpu-c"} {
		if _, err := st.Hello(&pb.AgentHello{NodeId: id, AgentId: id + "-agent", Gpus: 8, Cpus: 64, MemoryGib: 512, NicGbps: 100, Rack: int32(i / 2)}, now); err != nil {
			t.Fatal(err)
		}
	}
	st.JobStarted("running", "bert", []string{"gpu-a", "gpu-a", "gpu-a", "gpu-a", "gpu-a", "gpu-a"}, now, now)

	// A plain Status stays small: the nodes only when asked for.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, ask := range []bool{false, true} {
		resp, err := pb.NewSchedulerClient(conn).Status(context.Background(), &pb.StatusRequest{Nodes: ask})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.GetLive().GetNodeList()); resp.GetLive().GetNodes() != 3 || (n == 3) != ask {
			t.Errorf("Status (nodes %v): %d nodes, %d listed", ask, resp.GetLive().GetNodes(), n)
		}
	}

	code, out, e := drover(t, "place", "-addr", addr, "-live", "-print-request")
	if code != 0 {
		t.Fatalf("-live -print-request: exit %d: %s", code, e)
	}
	var req struct {
		Cluster struct {
			Nodes []struct {
				ID       string `json:"id"`
				GPUs     int    `json:"gpus"`
				FreeGPUs int    `json:"freeGpus"`
				Rack     int    `json:"rack"`
			} `json:"nodes"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(out), &req); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := req.Cluster.Nodes
	if len(got) != 3 || got[0].ID != "gpu-a" || got[0].FreeGPUs != 2 || got[1].FreeGPUs != 8 || got[2].ID != "gpu-c" || got[2].Rack != 1 {
		t.Errorf("-live request's nodes %+v, want gpu-a (2 of 8 free), gpu-b (8), gpu-c (rack 1)", got)
	}

	code, out, e = drover(t, "place", "-addr", addr, "-live", "-workers", "4")
	if code != 0 {
		t.Fatalf("-live: exit %d: %s%s", code, out, e)
	}
	if !strings.Contains(out, "cluster 3 nodes the server at "+addr+" knows (18 of 24 GPUs free)") {
		t.Errorf("-live does not say which nodes it placed on:\n%s", out)
	}
	placed := regexp.MustCompile(`worker +[0-9]+ -> (\S+)`).FindAllStringSubmatch(out, -1)
	if len(placed) != 4 {
		t.Fatalf("want 4 workers placed:\n%s", out)
	}
	for _, m := range placed {
		if m[1] != "gpu-b" && m[1] != "gpu-c" {
			t.Errorf("worker on %s, want a known node with room (gpu-b, gpu-c):\n%s", m[1], out)
		}
	}
	if code, _, e := drover(t, "place", "-addr", addr, "-live", "-request", "x.json"); code != 1 || !strings.Contains(e, "-live and -request") {
		t.Errorf("-live -request: exit %d: %s", code, e)
	}

	stateless, _ := serveLiveForTest(t, true)
	if code, _, e := drover(t, "place", "-addr", stateless, "-live"); code != 1 || !strings.Contains(e, "is stateless") {
		t.Errorf("-live against a stateless server: exit %d: %s", code, e)
	}
}
