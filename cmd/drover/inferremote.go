package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// simRouter is drover infer sim's router: the contender's, or with
// --remote ADDR the policy server's (serve.RemoteRouter, plaintext).
// Router is the router itself, not wrapped, so that the simulator finds
// its optional abilities (mixed_pool's infer.IdleObserver).
type simRouter struct {
	Router infer.Router
	name   string
	remote *serve.RemoteRouter
	conn   *grpc.ClientConn
}

// newSimRouter returns c's router, or the server's at remote when it is
// not empty (a connection that cannot be made fails the first Route).
func newSimRouter(c inferContender, remote string) *simRouter {
	if remote == "" {
		return &simRouter{Router: c.newRouter(), name: c.name}
	}
	conn, err := grpc.NewClient(remote, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return &simRouter{Router: failingRouter{fmt.Errorf("--remote %s: %w", remote, err)}, name: "remote " + remote}
	}
	r := &serve.RemoteRouter{Client: pb.NewSchedulerClient(conn), Timeout: 10 * time.Second}
	return &simRouter{Router: r, name: "remote " + remote, remote: r, conn: conn}
}

// finish closes the connection and returns the router's name for the
// summary: with --remote, the policies that answered and how often.
func (s *simRouter) finish() string {
	if s.remote == nil {
		return s.name
	}
	s.conn.Close()
	var parts []string
	for p, n := range s.remote.Sources {
		parts = append(parts, fmt.Sprintf("%s %d", p, n))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%s (%s)", s.name, strings.Join(parts, ", "))
}

// failingRouter answers every request with its error.
type failingRouter struct{ err error }

func (f failingRouter) Route(*infer.View, infer.Request) (infer.Decision, error) {
	return infer.Decision{}, f.err
}
