package serve_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Example serves the heuristic over an in-memory connection and asks it
// where a 6-worker job goes on a 4-node cluster.
func Example() {
	core, _ := serve.NewCore() // the STRN heuristic, no learned policy yet
	srv, _ := serve.NewServer(core, serve.ServerConfig{})
	lis := bufconn.Listen(1 << 20)
	go srv.Serve(lis)
	defer srv.Shutdown(context.Background())

	conn, _ := grpc.NewClient("passthrough:///drover",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	client := pb.NewSchedulerClient(conn)

	cluster := &pb.Cluster{}
	for i, free := range []int32{4, 2, 4, 1} {
		cluster.Nodes = append(cluster.Nodes, &pb.Node{Id: fmt.Sprintf("node-%d", i), Gpus: 4, FreeGpus: free, Speed: 1, NicGbps: 100})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := client.Place(ctx, &pb.PlaceRequest{Cluster: cluster, Job: &pb.Job{Id: "resnet-1", Model: "imagenet", Workers: 6}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Policy, "|", resp.Reason)
	for _, a := range resp.Assignments {
		fmt.Print(a.NodeId, " ")
	}
	fmt.Println()
	// Output:
	// heuristic:strn | fallback: no-model
	// node-0 node-0 node-0 node-0 node-1 node-1
}
