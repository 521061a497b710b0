package agent_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/serve/agent"
	pb "github.com/drover-sched/drover/serve/proto"
)

// printer is a Telemetry server that prints what it receives and
// acknowledges it.
type printer struct {
	pb.UnimplementedTelemetryServer
	got chan string
}

func (p printer) Stream(st pb.Telemetry_StreamServer) error {
	for {
		m, err := st.Recv()
		if err != nil {
			return nil
		}
		switch {
		case m.GetHello() != nil:
			h := m.GetHello()
			p.got <- fmt.Sprintf("hello from %s: %d CPUs, %.0f GiB, GPU telemetry %v", h.NodeId, h.Cpus, h.MemoryGib, h.GpuTelemetry)
		case m.GetSample() != nil:
			s := m.GetSample()
			p.got <- fmt.Sprintf("sample %d: memory %.0f%% used, CPU %v (the first sample has no rates)", m.Seq, 100*s.MemUsed, s.CpuUtil)
		}
		if err := st.Send(&pb.AgentAck{AckedSeq: m.Seq}); err != nil {
			return err
		}
	}
}

// An agent sampling the node-a fixture and streaming to a server on
// the loopback interface.
func Example() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	p := printer{got: make(chan string, 10)}
	pb.RegisterTelemetryServer(srv, p)
	go srv.Serve(lis)
	defer srv.Stop()

	a, err := agent.New(agent.Config{
		Server:      lis.Addr().String(),
		DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
		NodeID:      "node-a",
		Root:        filepath.Join("testdata", "node-a", "t0"),
		Interval:    time.Hour, // one sample: the first, taken when Run starts
		Rack:        agent.RackUnknown,
		GPU:         noGPUs{},
		Logger:      slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	fmt.Println(<-p.got)
	fmt.Println(<-p.got)
	cancel()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// hello from node-a: 4 CPUs, 16 GiB, GPU telemetry false
	// sample 1: memory 25% used, CPU NaN (the first sample has no rates)
}
