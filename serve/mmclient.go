package serve

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/mmscale"
	pb "github.com/drover-sched/drover/serve/proto"
)

// RemoteMMRouter is an env/infer/mm router that asks a policy server: at
// each arrival it sends RouteMM the request (arrival_seconds the
// simulation's time) and the simulated instances that are not gone
// (MMLiveInstances: ids and numbers their indexes in the simulation,
// deployed every instance it has started), and applies the answer, its
// positions in that list mapped back to the simulation's indexes. A long
// autoscaled run starts thousands of instances while its pools hold tens:
// the request grows with the live ones, and the server's routers find
// what they would find given every instance (ties to the lowest index,
// the round robin counting gone instances by number). The server's
// MMConfig.Base must be the simulated configuration (model, GPU, TP,
// image limit) for the answers to be the ones a local router gives. It
// is not safe for concurrent use.
type RemoteMMRouter struct {
	// Client is the server's Scheduler client; Timeout bounds each call
	// (0: none).
	Client  pb.SchedulerClient
	Timeout time.Duration
	// Sources counts the answers by policy ("heuristic:modserve", ...).
	Sources map[string]int
}

var _ mm.Router = (*RemoteMMRouter)(nil)

func callCtx(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(context.Background(), timeout)
	}
	return context.Background(), func() {}
}

// Route implements mm.Router.
func (r *RemoteMMRouter) Route(v *mm.View, q *mm.Request, d *mm.Decision) error {
	ctx, cancel := callCtx(r.Timeout)
	defer cancel()
	ins, deployed := MMLiveInstances(v)
	resp, err := r.Client.RouteMM(ctx, &pb.RouteMMRequest{RequestId: fmt.Sprint(q.ID), Images: int32(q.Images), PromptTokens: int32(q.Prompt),
		OutputTokens: int32(q.Output), ArrivalSeconds: q.Arrival, Instances: ins, Deployed: deployed})
	if err != nil {
		return fmt.Errorf("serve: route multimodal request %d: %w", q.ID, err)
	}
	if len(resp.GetImages()) != len(d.Images) {
		return fmt.Errorf("serve: route multimodal request %d: the server placed %d images, the simulation runs %d (is its configuration the server's?)", q.ID, len(resp.GetImages()), len(d.Images))
	}
	live := v.Live()
	index := func(k int32) (int, error) {
		if k < 0 || int(k) >= len(live) {
			return 0, fmt.Errorf("serve: route multimodal request %d: the server answered instance %d of the %d sent", q.ID, k, len(live))
		}
		return live[k], nil
	}
	if d.Instance, err = index(resp.GetInstance()); err != nil {
		return err
	}
	d.Priority = resp.GetPriority()
	for j, k := range resp.GetImages() {
		if d.Images[j], err = index(k); err != nil {
			return err
		}
	}
	if r.Sources == nil {
		r.Sources = map[string]int{}
	}
	r.Sources[resp.GetPolicy()]++
	return nil
}

// RemoteScaler is a policies/mmscale autoscaler that asks a policy
// server: Initial and Decide send Scale the window and the current sizes
// and return the answer. A call that fails keeps the current sizes (the
// initial call: Fallback's) and records the first error in Err. It is not
// safe for concurrent use.
type RemoteScaler struct {
	// Client is the server's Scheduler client; Timeout bounds each call
	// (0: none).
	Client  pb.SchedulerClient
	Timeout time.Duration
	// Deployment names the deployment in the server's log.
	Deployment string
	// Fallback is the sizes to start with when the initial call fails.
	Fallback mmscale.Sizes
	// Sources counts the answers by policy ("heuristic:modserve", ...).
	Sources map[string]int

	period int64
	err    error
}

var _ mmscale.Scaler = (*RemoteScaler)(nil)

// Err returns the first failed call's error.
func (r *RemoteScaler) Err() error { return r.err }

func (r *RemoteScaler) call(req *pb.ScaleRequest, keep mmscale.Sizes) mmscale.Sizes {
	req.Deployment, req.Period = r.Deployment, r.period
	ctx, cancel := callCtx(r.Timeout)
	defer cancel()
	resp, err := r.Client.Scale(ctx, req)
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("serve: scale period %d: %w", r.period, err)
		}
		return keep
	}
	if r.Sources == nil {
		r.Sources = map[string]int{}
	}
	r.Sources[resp.GetPolicy()]++
	s := resp.GetSizes()
	return mmscale.Sizes{Image: int(s.GetImage()), Text: int(s.GetText()), Mono: int(s.GetMono())}
}

// Initial implements mmscale.Scaler.
func (r *RemoteScaler) Initial() mmscale.Sizes {
	return r.call(&pb.ScaleRequest{Initial: true, Current: &pb.MMSizes{}}, r.Fallback)
}

// Decide implements mmscale.Scaler.
func (r *RemoteScaler) Decide(w mmscale.Window, cur mmscale.Sizes, tick bool) mmscale.Sizes {
	out := r.call(ScaleRequestOf(w, cur, tick), cur)
	if tick {
		r.period++
	}
	return out
}
