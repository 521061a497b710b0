package daemon_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/routelog"
)

// TestRunRouteLog: a server with a router and a log directory writes
// every Route decision to DIR/routes.jsonl, and says who answered routes
// when it stops.
func TestRunRouteLog(t *testing.T) {
	c := testConfig()
	c.LogDir = t.TempDir()
	c.Route = &serve.RouteConfig{Encoder: infergym.Config{Arch: kv.Llama2_70B, LinkBytesPerSec: 1}, Deployment: "test"}
	addrs, out, stop := daemontest.Start(t, c)
	conn, err := grpc.NewClient(addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := pb.NewSchedulerClient(conn)
	for i, id := range []string{"a", "b", "c"} {
		_, err := client.Route(context.Background(), &pb.RouteRequest{RequestId: id, PromptTokens: 100, OutputTokens: 10, UnixNanos: int64(i+1) * 1e9,
			Instances: []*pb.Instance{{Id: "p", Role: pb.InstanceRole_INSTANCE_PREFILL, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40},
				{Id: "d", Role: pb.InstanceRole_INSTANCE_DECODE, Gpu: "h100-80gb", Tp: 8, MaxBytes: 1 << 40}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	recs, partial, err := routelog.ReadFile(filepath.Join(c.LogDir, routelog.FileName))
	if err != nil || partial != 0 || len(recs) != 3 {
		t.Fatalf("%d records, partial %d: %v", len(recs), partial, err)
	}
	for i, r := range recs {
		if r.Request != []string{"a", "b", "c"}[i] || r.UnixNanos != int64(i+1)*1e9 || r.Deployment != "test" || r.Policy != "heuristic:hack" ||
			r.Instances[r.Decode].ID != "d" || r.Fallback != serve.FallbackNoModel {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	if !strings.Contains(out.String(), "routes: 3 routed, heuristic:hack answering, mode converged") {
		t.Errorf("no route summary on shutdown:\n%s", out)
	}
}
