package serve

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	pb "github.com/drover-sched/drover/serve/proto"
)

// RemoteRouter is an env/infer router that asks a policy server: at each
// arrival it sends Route the request and the simulated instances' states
// (RouteInstances: ids "0", "1", ...) with unix_nanos = Epoch + the
// simulation's time, and applies the answer. A simulated deployment routed
// through it records a served run in the server's route log (`drover infer
// sim --remote ADDR`), which `drover eval --log` re-scores. It is not safe
// for concurrent use.
type RemoteRouter struct {
	// Client is the server's Scheduler client; Timeout bounds each call
	// (0: none).
	Client  pb.SchedulerClient
	Timeout time.Duration
	// Epoch is the wall-clock time simulation time 0 stands for (zero:
	// remote.DefaultEpoch's date, 2026-01-01 UTC).
	Epoch time.Time
	// Sources counts the answers by policy ("heuristic:hack", ...).
	Sources map[string]int

	st infergym.State
}

var _ infer.Router = (*RemoteRouter)(nil)

// routeEpoch is RemoteRouter's default epoch (serve/remote's).
var routeEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Route implements infer.Router.
func (r *RemoteRouter) Route(v *infer.View, q infer.Request) (infer.Decision, error) {
	epoch := r.Epoch
	if epoch.IsZero() {
		epoch = routeEpoch
	}
	r.st = infergym.StateOf(v, r.st)
	ctx := context.Background()
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	resp, err := r.Client.Route(ctx, &pb.RouteRequest{RequestId: fmt.Sprint(q.ID), PromptTokens: int32(q.Prompt), OutputTokens: int32(q.Output),
		Instances: RouteInstances(r.st), UnixNanos: epoch.Add(time.Duration(q.Arrival * 1e9)).UnixNano()})
	if err != nil {
		return infer.Decision{}, fmt.Errorf("serve: route request %d: %w", q.ID, err)
	}
	f, err := kv.Parse(resp.GetKvFormat())
	if err != nil {
		return infer.Decision{}, fmt.Errorf("serve: route request %d: the server's format: %w", q.ID, err)
	}
	if r.Sources == nil {
		r.Sources = map[string]int{}
	}
	r.Sources[resp.GetPolicy()]++
	return infer.Decision{Prefill: int(resp.GetPrefill()), Decode: int(resp.GetDecode()), Format: f}, nil
}
