package serve_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// harness is a Server over bufconn (or a real listener) with a client.
type harness struct {
	core   *serve.Core
	srv    *serve.Server
	conn   *grpc.ClientConn
	client pb.SchedulerClient
	done   chan error
}

// startBufconn serves a fresh core (built with opts) over bufconn; the
// server is shut down when the test ends.
func startBufconn(tb testing.TB, cfg serve.ServerConfig, opts ...serve.Option) *harness {
	tb.Helper()
	lis := bufconn.Listen(1 << 20)
	dial := grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) })
	return start(tb, lis, "passthrough:///bufnet", cfg, opts, dial)
}

// startTCP serves over a real loopback listener.
func startTCP(tb testing.TB, cfg serve.ServerConfig, dialOpts []grpc.DialOption, opts ...serve.Option) *harness {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, lis, lis.Addr().String(), cfg, opts, dialOpts...)
}

func start(tb testing.TB, lis net.Listener, target string, cfg serve.ServerConfig, opts []serve.Option, dialOpts ...grpc.DialOption) *harness {
	tb.Helper()
	core, err := serve.NewCore(append([]serve.Option{serve.WithModelTimeout(testDeadline)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := serve.NewServer(core, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{core: core, srv: srv, done: make(chan error, 1)}
	go func() { h.done <- srv.Serve(lis) }()
	if len(dialOpts) == 0 || cfg.TLS == nil {
		hasCreds := false
		for range dialOpts {
			hasCreds = cfg.TLS != nil
		}
		if !hasCreds {
			dialOpts = append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))
		}
	}
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		tb.Fatal(err)
	}
	h.conn, h.client = conn, pb.NewSchedulerClient(conn)
	tb.Cleanup(func() { h.stop(tb) })
	return h
}

// stop closes the client and shuts the server down (idempotent).
func (h *harness) stop(tb testing.TB) {
	if h.conn == nil {
		return
	}
	h.conn.Close()
	h.conn = nil
	if err := h.srv.Shutdown(context.Background()); err != nil {
		tb.Errorf("shutdown: %v", err)
	}
	if err := <-h.done; err != nil {
		tb.Errorf("serve: %v", err)
	}
}
