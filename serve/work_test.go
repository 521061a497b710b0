package serve_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/state"
)

// TestPlaceRefusesTooMuchWork: a request's nodes times its job's workers
// is bounded (Limits.MaxWork). Issue 32's request, 4,096 nodes x 4,096
// workers (legal before, 1.5-1.7 s of CPU), is refused with both fields
// and the bound named, through the core and over gRPC
// (InvalidArgument); one at the bound is answered.
func TestPlaceRefusesTooMuchWork(t *testing.T) {
	small := serve.DefaultLimits
	small.MaxWork = 100
	tests := []struct {
		name                 string
		limits               *serve.Limits
		nodes, gpus, workers int
		refused              bool
	}{
		{"issue 32's request", nil, 4096, 2, 4096, true},
		{"at the default bound", nil, 4096, 2, serve.DefaultMaxWork / 4096, false},
		{"one worker over the default bound", nil, 4096, 2, serve.DefaultMaxWork/4096 + 1, true},
		{"2,048 x 2,048", nil, 2048, 2, 2048, false},
		{"at a bound of 100", &small, 10, 4, 10, false},
		{"over a bound of 100", &small, 10, 4, 11, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []serve.Option
			bound := serve.DefaultMaxWork
			if tt.limits != nil {
				opts = append(opts, serve.WithLimits(*tt.limits))
				bound = tt.limits.MaxWork
			}
			k := newCore(t, opts...)
			req := makeRequest(tt.nodes, tt.gpus, tt.workers)
			resp, err := k.Place(context.Background(), req)
			if !tt.refused {
				if err != nil || !resp.Placed {
					t.Fatalf("Place: placed %v, %v; want it placed", resp.GetPlaced(), err)
				}
				return
			}
			var fe *serve.FieldError
			if !errors.As(err, &fe) || fe.Field != "cluster.nodes x job.workers" {
				t.Fatalf("Place: placed %v, %v; want a FieldError on cluster.nodes x job.workers", resp.GetPlaced(), err)
			}
			for _, want := range []string{strconv.Itoa(tt.nodes) + " nodes x " + strconv.Itoa(tt.workers) + " workers", "> " + strconv.Itoa(bound), "-max-work"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tt.limits != nil {
				return
			}
			h := startBufconn(t, serve.ServerConfig{})
			_, err = h.client.Place(context.Background(), req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "cluster.nodes x job.workers") {
				t.Errorf("over gRPC: %v; want InvalidArgument naming cluster.nodes x job.workers", err)
			}
		})
	}
}

// TestPlaceStopsWhenCancelled: a request whose context is done stops
// computing and answers the context's error, instead of finishing a
// placement nobody waits for (issue 32: 4,096 x 4,096 went on for 1.5 s
// after the client's 200 ms deadline): STRN's fast path, stateless and
// with a live state, and a heuristic run as a policy (SAS, through the
// view's Done). The job needs many nodes, so STRN runs its greedy
// passes, whose every pick looks at the context. The contexts are done
// before the call: no timer races the machine. The heavy-work budget is
// off (WithHeavyWork(0)): it turns a done context away before any work,
// which would answer for the policies.
func TestPlaceStopsWhenCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	for _, tt := range []struct {
		name string
		live bool
		opts []serve.Option
	}{
		{"strn", false, nil},
		{"strn live", true, nil},
		{"sas", false, []serve.Option{serve.WithHeuristic("sas")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if tt.live {
				st, err := state.New(state.Config{})
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, serve.WithState(st, nil))
			}
			sink := &serve.MemorySink{}
			k := newCore(t, append(opts, serve.WithSink(sink), serve.WithHeavyWork(0))...)
			req := makeRequest(64, 4, 128)
			for _, c := range []struct {
				ctx  context.Context
				want error
			}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
				resp, err := k.Place(c.ctx, req)
				if !errors.Is(err, c.want) {
					t.Errorf("Place: placed %v, %v; want %v", resp.GetPlaced(), err, c.want)
				}
			}
			if n := len(sink.Decisions()); n != 0 {
				t.Errorf("%d decisions recorded for requests that were not answered", n)
			}
			// The same request with a live context is answered.
			if resp, err := k.Place(context.Background(), req); err != nil || !resp.Placed {
				t.Errorf("Place without cancellation: placed %v, %v", resp.GetPlaced(), err)
			}
		})
	}
}
