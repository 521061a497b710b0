package serve_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Issue 18: a client's bearer token went in plaintext to any address.
// BearerToken with AllowInsecure sends it over plaintext to loopback
// only: to a server addressed by another name (here the same loopback
// listener, reached with another authority) the call fails before the
// token leaves.
func TestBearerTokenPlaintextLoopbackOnly(t *testing.T) {
	leakcheck.Check(t)
	creds := grpc.WithPerRPCCredentials(serve.BearerToken{Token: "s3cret", AllowInsecure: true})
	h := startTCP(t, serve.ServerConfig{Token: "s3cret"}, []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), creds})
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if _, err := h.client.Status(ctx, &pb.StatusRequest{}); err != nil {
		t.Fatalf("loopback: %v", err)
	}
	for _, authority := range []string{"sched.example.com:50051", "10.0.0.7:50051"} {
		conn, err := grpc.NewClient(h.conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()), creds, grpc.WithAuthority(authority))
		if err != nil {
			t.Fatal(err)
		}
		_, err = pb.NewSchedulerClient(conn).Status(ctx, &pb.StatusRequest{})
		conn.Close()
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "plaintext") {
			t.Errorf("%s: %v, want Unauthenticated: plaintext", authority, err)
		}
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "[::1]": true, "localhost": true, "": true, "127.1.2.3": true,
		"0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.example.com": false} {
		if got := serve.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:50051": true, "localhost:50051": true, "LOCALHOST:1": true, "[::1]:50051": true, ":50051": true,
		"127.8.9.1:1": true, "dns:///localhost:50051": true, "passthrough:///127.0.0.1:1": true, "localhost": true,
		"0.0.0.0:50051": false, "[::]:1": false, "10.0.0.1:50051": false, "sched.example.com:443": false,
		"dns:///sched.example.com:443": false, "localhost.example.com:1": false,
	} {
		if got := serve.LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
