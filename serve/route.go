package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/pdrl"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/routelog"
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
	// Converged is the learned router's training verdict (its
	// checkpoint's meta.json converged: set by train/pdrl's Judge against
	// HACK on held-out trace windows). It decides who answers in
	// SwitchConverged mode only.
	Converged bool
	// Mode is how the learned router is promoted, as for placement's
	// view-level policies (SwitchConfig.Mode): SwitchGate, the default
	// with a Replay deployment, runs it in shadow until the gate passes on
	// a replay of the routed requests; SwitchShadow only runs it in
	// shadow; SwitchConverged, the default without a Replay deployment,
	// lets it answer when Converged. The gate's margin, confidence,
	// resamples, back margin, seed, arrivals (Every, MinArrivals, Window)
	// and episodes (Seeds) are the core's SwitchConfig's (WithSwitch).
	Mode string
	// Deployment names the deployment the clients route over (logged
	// with every route, e.g. "pd-rl"), and Replay is that deployment as
	// env/infer simulates it, which the gate replays the routed requests
	// on (nil: no gate).
	Deployment string
	Replay     *infer.Config
}

// routeState is the core's router: deciders are not safe for concurrent
// use, so decisions are made one at a time under mu.
type routeState struct {
	mu         sync.Mutex
	heuristic  pdrl.Decider
	learned    *pdrl.Policy
	newLearned func() *pdrl.Policy
	version    string
	converged  bool
	mode       string
	deployment string
	enc        infergym.Config
	replay     *infer.Config
	state      infergym.State
	ids        []string
	gate       routeGate
}

// WithRouter has the core answer Route calls (HACK's router, and the
// learned one of cfg once it has passed the gate).
func WithRouter(cfg RouteConfig) Option {
	return func(k *Core) error {
		if _, err := infergym.NewEncoder(cfg.Encoder); err != nil {
			return err
		}
		mode := cfg.Mode
		if mode == "" {
			mode = SwitchConverged
			if cfg.Replay != nil {
				mode = SwitchGate
			}
		}
		switch {
		case mode != SwitchGate && mode != SwitchShadow && mode != SwitchConverged:
			return fmt.Errorf("serve: route switch mode %q, want %s, %s or %s", mode, SwitchGate, SwitchShadow, SwitchConverged)
		case mode != SwitchConverged && cfg.Replay == nil:
			return fmt.Errorf("serve: route switch mode %s needs the deployment to replay (RouteConfig.Replay)", mode)
		}
		if cfg.Replay != nil {
			if _, err := infer.New(*cfg.Replay, nil); err != nil {
				return fmt.Errorf("serve: route deployment: %w", err)
			}
		}
		rs := &routeState{heuristic: pdrl.NewHACK(cfg.Encoder.Arch), newLearned: cfg.Learned, version: cfg.Version,
			converged: cfg.Converged, mode: mode, deployment: cfg.Deployment, enc: cfg.Encoder, replay: cfg.Replay}
		if cfg.Learned != nil {
			rs.learned = cfg.Learned()
		}
		rs.gate.reason = "no learned router"
		if rs.learned != nil {
			rs.gate.reason = map[string]string{SwitchGate: "in shadow until the gate passes", SwitchShadow: "shadow only (switch mode shadow)",
				SwitchConverged: fmt.Sprintf("the checkpoint says converged %v (switch mode converged)", cfg.Converged)}[mode]
		}
		k.router = rs
		return nil
	}
}

// learnedAnswers reports whether the learned router answers now (under
// rs.mu).
func (rs *routeState) learnedAnswers() bool {
	switch rs.mode {
	case SwitchConverged:
		return rs.converged
	case SwitchGate:
		return rs.gate.on
	}
	return false
}

// RouteRecord describes one Route decision, for the decision log and the
// route log (serve/routelog): enough to re-score it offline.
type RouteRecord struct {
	// ID is the decision id; At when it was made (the request's
	// unix_nanos when given).
	ID string
	At time.Time
	// RequestID, Prompt and Output describe the request.
	RequestID      string
	Prompt, Output int
	// Instances is the number of instances the request listed, and
	// InstanceIDs and States the instances as it listed them.
	Instances   int
	InstanceIDs []string
	States      []infer.InstanceState
	// Deployment names the deployment (RouteConfig.Deployment), Model the
	// served model's architecture and LinkBytesPerSec the link the
	// routers assume.
	Deployment      string
	Model           string
	LinkBytesPerSec float64
	// Prefill and Decode are the chosen instances' ids, PrefillIndex and
	// DecodeIndex their indices, Format the KV format's name.
	Prefill, Decode           string
	PrefillIndex, DecodeIndex int
	Format                    string
	// Source is "heuristic" or "learned", Policy the policy that answered,
	// ModelVersion the learned version ("" when none), Fallback why the
	// heuristic answered ("" when the learned one did).
	Source, Policy, ModelVersion, Fallback string
	// Shadow names the router that decided beside the one that answered
	// ("" when none did), ShadowPrefill, ShadowDecode and ShadowFormat its
	// decision, ShadowFailure why it gave none ("" when it decided).
	Shadow                      string
	ShadowPrefill, ShadowDecode int
	ShadowFormat, ShadowFailure string
	// Latency is the decision's time on the server's clock.
	Latency time.Duration
}

// Time implements Record.
func (r *RouteRecord) Time() time.Time { return r.At }
func (*RouteRecord) isRecord()         {}

// RouteLogRecord converts a route record into a line of the route log.
func RouteLogRecord(r *RouteRecord) routelog.Record {
	out := routelog.Record{V: routelog.Version, ID: r.ID, UnixNanos: r.At.UnixNano(), Request: r.RequestID, Prompt: r.Prompt, Output: r.Output,
		Deployment: r.Deployment, Model: r.Model, LinkBytesPerSec: r.LinkBytesPerSec, Instances: routelog.InstancesOf(r.InstanceIDs, r.States),
		Prefill: r.PrefillIndex, Decode: r.DecodeIndex, Format: r.Format, Source: r.Source, Policy: r.Policy, ModelVersion: r.ModelVersion,
		Fallback: r.Fallback, LatencyNanos: int64(r.Latency)}
	if r.Shadow != "" {
		out.Shadow = &routelog.Shadow{Policy: r.Shadow, Failure: r.ShadowFailure}
		if r.ShadowFailure == "" {
			out.Shadow.Prefill, out.Shadow.Decode, out.Shadow.Format = r.ShadowPrefill, r.ShadowDecode, r.ShadowFormat
		}
	}
	return out
}

// enter begins a call that must not outlive the core: it fails with ctx's
// error or ErrClosed, and otherwise holds the core's life read lock, which
// the caller releases (defer k.life.RUnlock()).
func (k *Core) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.life.RLock()
	if k.closed {
		k.life.RUnlock()
		return ErrClosed
	}
	return nil
}

// Route decides where an arriving inference request runs. It validates
// the request (a *FieldError names the first bad field), builds the state
// the routers decide on (the instances as the request lists them), asks
// the learned router when it answers (RouteConfig.Mode) and HACK's
// otherwise (or when the learned one fails), has the other decide beside
// it in shadow, records the request for the gate's replay, and logs the
// decision to the sink.
func (k *Core) Route(ctx context.Context, req *pb.RouteRequest) (*pb.RouteResponse, error) {
	if err := k.enter(ctx); err != nil {
		return nil, err
	}
	defer k.life.RUnlock()
	rs := k.router
	if rs == nil {
		return nil, ErrNoRouter
	}
	start := k.clock.Now()
	r, err := routeRequest(req)
	if err != nil {
		return nil, err
	}
	at := start
	if n := req.GetUnixNanos(); n != 0 {
		at = time.Unix(0, n)
	}
	rs.mu.Lock()
	rs.state, err = routeStateOf(req, rs.state)
	if err != nil {
		rs.mu.Unlock()
		return nil, err
	}
	heurPolicy := "heuristic:" + pdrl.HACKName
	learnedPolicy := "learned:" + pdrl.Name + "@" + rs.version
	var d, shadow infer.Decision
	var lerr error
	source, policy, fallback, shadowName, shadowFailure := pb.Source_SOURCE_HEURISTIC, heurPolicy, "", "", ""
	if rs.learned != nil {
		d, lerr = rs.learned.Decide(rs.state, r)
	}
	answers := rs.learned != nil && rs.learnedAnswers()
	switch {
	case rs.learned == nil:
		fallback = FallbackNoModel
	case answers && lerr == nil:
		source, policy, shadowName = pb.Source_SOURCE_LEARNED, learnedPolicy, heurPolicy
	case answers:
		fallback = FallbackError
	default:
		shadowName, shadow = learnedPolicy, d
		if lerr != nil {
			shadowFailure = FallbackError
		}
		fallback = map[string]string{SwitchConverged: FallbackNotConverged, SwitchGate: FallbackShadow, SwitchShadow: FallbackShadow}[rs.mode]
	}
	if source == pb.Source_SOURCE_HEURISTIC {
		d, err = rs.heuristic.Decide(rs.state, r)
	} else if shadow, err = rs.heuristic.Decide(rs.state, r); err != nil {
		shadowFailure, err = FallbackError, nil
	}
	rec := &RouteRecord{At: at, RequestID: req.GetRequestId(), Prompt: r.Prompt, Output: r.Output, Instances: len(rs.state.Instances),
		Deployment: rs.deployment, Model: rs.enc.Arch.Name, LinkBytesPerSec: rs.enc.LinkBytesPerSec,
		Source: sourceName(source), Policy: policy, ModelVersion: rs.version, Fallback: fallback,
		Shadow: shadowName, ShadowFailure: shadowFailure}
	if k.sink != nil {
		rec.States = slices.Clone(rs.state.Instances) // rs.state is reused
	}
	due := false
	if err == nil {
		due = rs.gate.observe(k.sw.cfg, r, at, rs.state.Instances) && rs.mode != SwitchConverged && rs.learned != nil
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
	rec.ID, rec.Prefill, rec.Decode, rec.PrefillIndex, rec.DecodeIndex, rec.Format = resp.DecisionId, resp.PrefillId, resp.DecodeId, d.Prefill, d.Decode, resp.KvFormat
	if k.sink != nil {
		rec.InstanceIDs = make([]string, len(ins))
		for i, in := range ins {
			rec.InstanceIDs[i] = in.GetId()
		}
	}
	if shadowName != "" && shadowFailure == "" {
		rec.ShadowPrefill, rec.ShadowDecode, rec.ShadowFormat = shadow.Prefill, shadow.Decode, shadow.Format.Name()
	}
	rec.Latency = k.clock.Now().Sub(start)
	k.record(rec)
	if k.metrics != nil {
		k.metrics.routes.WithLabelValues(rec.Source, fallback).Inc()
		k.metrics.routeLearned.Set(map[bool]float64{false: 0, true: 1}[answers])
	}
	if due {
		select {
		case k.sw.kick <- struct{}{}:
		default:
		}
	}
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

// routeStateOf reads the request's instances into dst, validating each.
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
