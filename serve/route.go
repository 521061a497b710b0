package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/pdrl"
	pb "github.com/drover-sched/drover/serve/proto"
)

// ErrNoRouter is returned by Route when the core has no router
// (WithRouter); the gRPC service answers FailedPrecondition.
var ErrNoRouter = errors.New("serve: no inference router configured")

// RouteConfig configures the answers to Route calls: routing decisions for
// arriving LLM inference requests (prefill instance, decode instance, KV
// format), by HACK's router until a learned pd-rl router has passed the
// gate.
type RouteConfig struct {
	// Encoder is the learned router's encoding: the served model's
	// architecture (Arch), the KV link's bandwidth and the slots and
	// formats it was trained with (infergym.Config).
	Encoder infergym.Config
	// Learned, when set, is the learned router (pdrl.FromCheckpoint or
	// pdrl.Load), Version its name in answers.
	Learned func() *pdrl.Policy
	Version string
	// Converged is the learned router's gate verdict (its checkpoint's
	// meta.json converged: set by train/pdrl's Judge against HACK on
	// held-out trace windows). The learned router answers only when it
	// is true; otherwise HACK answers ("fallback: not converged").
	Converged bool
}

// routeState is the core's router: deciders are not safe for concurrent
// use, so decisions are made one at a time under mu.
type routeState struct {
	mu        sync.Mutex
	heuristic pdrl.Decider
	learned   *pdrl.Policy
	version   string
	converged bool
	state     infergym.State
}

// WithRouter has the core answer Route calls (HACK's router, and the
// learned one of cfg once it has passed the gate).
func WithRouter(cfg RouteConfig) Option {
	return func(k *Core) error {
		if _, err := infergym.NewEncoder(cfg.Encoder); err != nil {
			return err
		}
		rs := &routeState{heuristic: pdrl.NewHACK(cfg.Encoder.Arch), version: cfg.Version, converged: cfg.Converged}
		if cfg.Learned != nil {
			rs.learned = cfg.Learned()
		}
		k.router = rs
		return nil
	}
}

// RouteRecord describes one Route decision, for the decision log.
type RouteRecord struct {
	// ID is the decision id; At when it was made (the request's
	// unix_nanos when given).
	ID string
	At time.Time
	// RequestID, Prompt and Output describe the request.
	RequestID      string
	Prompt, Output int
	// Instances is the number of instances the request listed.
	Instances int
	// Prefill and Decode are the chosen instances' ids, Format the KV
	// format's name.
	Prefill, Decode, Format string
	// Source is "heuristic" or "learned", Policy the policy that answered,
	// ModelVersion the learned version ("" when none), Fallback why the
	// heuristic answered ("" when the learned one did).
	Source, Policy, ModelVersion, Fallback string
	// Latency is the decision's time on the server's clock.
	Latency time.Duration
}

// Time implements Record.
func (r *RouteRecord) Time() time.Time { return r.At }
func (*RouteRecord) isRecord()         {}

// Route decides where an arriving inference request runs. It validates
// the request (a *FieldError names the first bad field), builds the state
// the routers decide on (the instances as the request lists them), asks
// the learned router when it has passed the gate and HACK's otherwise (or
// when the learned one fails), and logs the decision to the sink.
func (k *Core) Route(ctx context.Context, req *pb.RouteRequest) (*pb.RouteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k.life.RLock()
	defer k.life.RUnlock()
	if k.closed {
		return nil, ErrClosed
	}
	rs := k.router
	if rs == nil {
		return nil, ErrNoRouter
	}
	start := k.clock.Now()
	r, err := routeRequest(req)
	if err != nil {
		return nil, err
	}
	rs.mu.Lock()
	rs.state, err = routeStateOf(req, rs.state)
	if err != nil {
		rs.mu.Unlock()
		return nil, err
	}
	var d infer.Decision
	source, policy, fallback := pb.Source_SOURCE_HEURISTIC, "heuristic:"+pdrl.HACKName, ""
	switch {
	case rs.learned == nil:
		fallback = FallbackNoModel
	case !rs.converged:
		fallback = FallbackNotConverged
	default:
		if d, err = rs.learned.Decide(rs.state, r); err == nil {
			source, policy = pb.Source_SOURCE_LEARNED, "learned:"+pdrl.Name+"@"+rs.version
		} else {
			fallback = FallbackError
		}
	}
	if source == pb.Source_SOURCE_HEURISTIC {
		d, err = rs.heuristic.Decide(rs.state, r)
	}
	rs.mu.Unlock()
	if err != nil {
		return nil, &FieldError{Field: "instances", Problem: err.Error()}
	}
	ins := req.GetInstances()
	resp := &pb.RouteResponse{DecisionId: k.nextID(), Prefill: int32(d.Prefill), Decode: int32(d.Decode),
		PrefillId: ins[d.Prefill].GetId(), DecodeId: ins[d.Decode].GetId(), KvFormat: d.Format.Name(),
		Policy: policy, Source: source, ModelVersion: rs.version}
	if fallback != "" {
		resp.Reason = "fallback: " + fallback
	}
	at := start
	if n := req.GetUnixNanos(); n != 0 {
		at = time.Unix(0, n)
	}
	k.record(&RouteRecord{ID: resp.DecisionId, At: at, RequestID: req.GetRequestId(), Prompt: r.Prompt, Output: r.Output,
		Instances: len(ins), Prefill: resp.PrefillId, Decode: resp.DecodeId, Format: resp.KvFormat,
		Source: sourceName(source), Policy: policy, ModelVersion: rs.version, Fallback: fallback, Latency: k.clock.Now().Sub(start)})
	return resp, nil
}

// routeRequest validates the request's lengths.
func routeRequest(req *pb.RouteRequest) (infer.Request, error) {
	r := infer.Request{Prompt: int(req.GetPromptTokens()), Output: int(req.GetOutputTokens())}
	switch {
	case r.Prompt < 1 || r.Prompt > infer.MaxTokens:
		return r, &FieldError{Field: "prompt_tokens", Problem: fmt.Sprintf("%d, want 1..%d", r.Prompt, infer.MaxTokens)}
	case r.Output < 1 || r.Output > infer.MaxTokens:
		return r, &FieldError{Field: "output_tokens", Problem: fmt.Sprintf("%d, want 1..%d", r.Output, infer.MaxTokens)}
	case len(req.GetInstances()) == 0 || len(req.GetInstances()) > infer.MaxInstances:
		return r, &FieldError{Field: "instances", Problem: fmt.Sprintf("%d instances, want 1..%d", len(req.GetInstances()), infer.MaxInstances)}
	}
	return r, nil
}

// routeState_ reads the request's instances into dst, validating each.
func routeStateOf(req *pb.RouteRequest, dst infergym.State) (infergym.State, error) {
	dst.Instances = dst.Instances[:0]
	for i, in := range req.GetInstances() {
		field := func(name string) string { return fmt.Sprintf("instances[%d].%s", i, name) }
		if _, err := infer.LookupGPU(in.GetGpu()); err != nil {
			return dst, &FieldError{Field: field("gpu"), Problem: fmt.Sprintf("unknown GPU type %q", in.GetGpu())}
		}
		switch {
		case in.GetRole() < pb.InstanceRole_INSTANCE_COLOCATED || in.GetRole() > pb.InstanceRole_INSTANCE_DECODE:
			return dst, &FieldError{Field: field("role"), Problem: fmt.Sprintf("unknown role %d", in.GetRole())}
		case in.GetTp() < 1 || in.GetTp() > 64:
			return dst, &FieldError{Field: field("tp"), Problem: fmt.Sprintf("%d, want 1..64", in.GetTp())}
		case in.GetPendingTokens() < 0:
			return dst, &FieldError{Field: field("pending_tokens"), Problem: fmt.Sprintf("negative (%d)", in.GetPendingTokens())}
		case in.GetMaxBytes() <= 0 || in.GetReservedBytes() < 0 || in.GetUsedBytes() < 0:
			return dst, &FieldError{Field: field("max_bytes"), Problem: fmt.Sprintf("max %d, reserved %d, used %d bytes", in.GetMaxBytes(), in.GetReservedBytes(), in.GetUsedBytes())}
		case in.GetQueued() < 0 || in.GetRunning() < 0:
			return dst, &FieldError{Field: field("queued"), Problem: fmt.Sprintf("queued %d, running %d", in.GetQueued(), in.GetRunning())}
		}
		dst.Instances = append(dst.Instances, infer.InstanceState{Role: infer.Role(in.GetRole()), GPU: in.GetGpu(), TP: int(in.GetTp()),
			PendingTokens: in.GetPendingTokens(), ReservedBytes: in.GetReservedBytes(), UsedBytes: in.GetUsedBytes(), MaxBytes: in.GetMaxBytes(),
			Queued: int(in.GetQueued()), Running: int(in.GetRunning())})
	}
	return dst, nil
}

// RouteInstances is the inverse of what Route reads: the Route request's
// instances for the states of a simulated deployment (ids "0", "1", ...),
// for clients that replay a trace through the server.
func RouteInstances(s infergym.State) []*pb.Instance {
	out := make([]*pb.Instance, len(s.Instances))
	for i, st := range s.Instances {
		out[i] = &pb.Instance{Id: fmt.Sprint(i), Role: pb.InstanceRole(st.Role), Gpu: st.GPU, Tp: int32(st.TP),
			PendingTokens: st.PendingTokens, ReservedBytes: st.ReservedBytes, UsedBytes: st.UsedBytes, MaxBytes: st.MaxBytes,
			Queued: int32(st.Queued), Running: int32(st.Running)}
	}
	return out
}
