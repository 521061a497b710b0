package remote_test

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
)

// Simulate 20 jobs of the built-in workload with every placement decided
// by a policy server (here in process, over bufconn).
func Example() {
	sink := &serve.MemorySink{}
	core, err := serve.NewCore(serve.WithHeuristic("strn"), serve.WithSink(sink))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := serve.NewServer(core, serve.ServerConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lis := bufconn.Listen(1 << 20)
	go srv.Serve(lis)
	defer srv.Shutdown(context.Background())
	conn, err := grpc.NewClient("passthrough:///bufnet", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	r, err := remote.New(remote.Config{Client: pb.NewSchedulerClient(conn)})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := datasets.Builtin()
	w.Jobs = w.Jobs[:20]
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: r,
		Nodes: 4, GPUsPerNode: 4, Interval: -1, RestartDelay: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Flush(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d jobs finished; the server decided %d and heard %d outcomes\n",
		res.Summary.Finished, len(sink.Decisions()), len(sink.Outcomes()))
	// Output:
	// 20 jobs finished; the server decided 20 and heard 40 outcomes
}
