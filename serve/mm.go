package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/internal/llmreq"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve/mmlog"
	pb "github.com/drover-sched/drover/serve/proto"
)

// ErrNoMM is returned by RouteMM when the core has no multimodal router
// and by Scale when it has no autoscaler (WithMM); the gRPC service
// answers FailedPrecondition.
var ErrNoMM = errors.New("serve: no multimodal router or autoscaler configured")

// MMConfig configures the answers to the multimodal calls (issue 35):
// RouteMM (where an arriving request's images and text run, by
// policies/modserve's router) and Scale (a deployment's pool sizes for the
// next period, by policies/mmscale's ModServe rule until a learned
// autoscaler is promoted).
type MMConfig struct {
	// Base is the served deployment as env/infer/mm simulates it: model,
	// GPU, tensor parallelism, image limit, costs, SLO factor (its
	// instance counts are ignored). A RouteMM request is routed as the
	// simulator would route it on this configuration, so a client that
	// simulates the same Base gets the decisions its local router makes.
	Base mm.Config
	// Router names the multimodal router (policies/modserve's Names;
	// "" for modserve.Name, full ModServe, whose deadlines scale a
	// request's isolated TTFT by modserve.DefaultFactor). NoRouter turns
	// RouteMM off (only Scale is answered).
	Router   string
	NoRouter bool
	// Scaler, when set, returns the heuristic autoscaler (ModServe's rule:
	// mmscale.NewModServe; or mmscale.NewMonolith for monolithic pools)
	// and ScalerName names it in answers ("modserve"). Nil: no Scale
	// calls. It is called once: the autoscaler keeps its own state (a
	// stabilization window) across calls, so one server answers one
	// deployment's calls, in order.
	Scaler     func() (mmscale.Scaler, error)
	ScalerName string
	// Learned, when set, returns the learned autoscaler (mm-rl), Version
	// its name in answers, Converged its checkpoint's verdict against the
	// heuristic (the gate on held-out days).
	Learned   func() (mmscale.Scaler, error)
	Version   string
	Converged bool
	// Mode is how the learned autoscaler is promoted: SwitchConverged (the
	// default) lets it answer when Converged; SwitchGate when the Scale
	// gate passes on a replay of the routed requests (mmgate.go; it needs
	// the router, Rule and Penalty); SwitchShadow only runs it in shadow
	// (and evaluates the gate, never switching, when the gate's settings
	// are given). Either way the other autoscaler decides beside the one
	// that answers, logged, so both keep their state.
	Mode string
	// Rule is the rule's settings the Scale gate's replays run with (the
	// scalers' own: period, monitor, objective, bounds); Penalty the
	// GPU-hours a request missing its objective costs there (the learned
	// autoscaler's training penalty). GateWindow is the seconds of routed
	// requests replayed (0: DefaultMMGateWindow) and GateEvery the
	// period-end Scale calls between evaluations (0: DefaultMMGateEvery).
	// SwitchConfig's Seeds, MinArrivals, Margin, Confidence, BackMargin,
	// Resamples, Seed and Interval apply as for the route gate.
	Rule       mmscale.Config
	Penalty    float64
	GateWindow float64
	GateEvery  int
	// Deployment names the deployment in the logs.
	Deployment string
}

// mmState is the core's multimodal router and autoscalers; deciders are
// not safe for concurrent use, so decisions are made one at a time under
// mu.
type mmState struct {
	mu         sync.Mutex
	base       mm.Config
	router     *modserve.Router
	deployment string

	scaler, learned mmscale.Scaler
	scalerName      string
	version         string
	converged       bool
	mode            string

	// The Scale gate's settings (WithMM) and state.
	newScaler, newLearned func() (mmscale.Scaler, error)
	rule                  mmscale.Config
	penalty, gateWindow   float64
	gateEvery             int
	gate                  mmGate

	views          []mm.InstanceView // scratch
	numbers        []int             // scratch: the views' numbers
	routed, scaled int64             // answers so far
}

// WithMM has the core answer RouteMM and Scale calls.
func WithMM(cfg MMConfig) Option {
	return func(k *Core) error {
		base := cfg.Base
		base.Instances = [3]int{0, 1, 1}
		if _, err := mm.New(base, nil); err != nil {
			return fmt.Errorf("serve: multimodal deployment: %w", err)
		}
		st := &mmState{base: cfg.Base, deployment: cfg.Deployment, scalerName: cfg.ScalerName, version: cfg.Version, converged: cfg.Converged, mode: cfg.Mode,
			newScaler: cfg.Scaler, newLearned: cfg.Learned, rule: cfg.Rule, penalty: cfg.Penalty, gateWindow: cfg.GateWindow, gateEvery: cfg.GateEvery}
		if st.mode == "" {
			st.mode = SwitchConverged
		}
		if st.mode != SwitchConverged && st.mode != SwitchShadow && st.mode != SwitchGate {
			return fmt.Errorf("serve: scale switch mode %q, want %s, %s or %s", st.mode, SwitchConverged, SwitchShadow, SwitchGate)
		}
		if err := st.checkGate(cfg); err != nil {
			return err
		}
		if !cfg.NoRouter {
			name := cfg.Router
			if name == "" {
				name = modserve.Name
			}
			if name == modserve.Late {
				return fmt.Errorf("serve: multimodal router %s chooses a request's text instance once its images are encoded, which one RouteMM call cannot answer", name)
			}
			r, err := modserve.New(name)
			if err != nil {
				return err
			}
			st.router = r
		}
		if cfg.Scaler != nil {
			var err error
			if st.scaler, err = cfg.Scaler(); err != nil {
				return fmt.Errorf("serve: autoscaler: %w", err)
			}
			if st.scalerName == "" {
				st.scalerName = "modserve"
			}
		}
		if cfg.Learned != nil {
			if cfg.Scaler == nil {
				return fmt.Errorf("serve: a learned autoscaler needs the heuristic one (MMConfig.Scaler) to fall back on")
			}
			var err error
			if st.learned, err = cfg.Learned(); err != nil {
				return fmt.Errorf("serve: learned autoscaler: %w", err)
			}
		}
		if st.router == nil && st.scaler == nil {
			return fmt.Errorf("serve: WithMM with neither a router nor an autoscaler")
		}
		k.mm = st
		return nil
	}
}

// The learned autoscaler's name in answers ("learned:mm-rl@VERSION").
const mmLearnedName = "mm-rl"

func (st *mmState) heurScalePolicy() string    { return "heuristic:" + st.scalerName }
func (st *mmState) learnedScalePolicy() string { return "learned:" + mmLearnedName + "@" + st.version }

// learnedAnswers reports whether the learned autoscaler answers (under
// st.mu).
func (st *mmState) learnedAnswers() bool {
	return st.learned != nil && ((st.mode == SwitchConverged && st.converged) || (st.mode == SwitchGate && st.gate.on))
}

// checkGate checks the Scale gate's settings: SwitchGate needs a router
// (the requests it replays), a learned autoscaler and the rule's
// settings; a penalty, window or count out of range is refused.
func (st *mmState) checkGate(cfg MMConfig) error {
	if st.gateWindow == 0 {
		st.gateWindow = DefaultMMGateWindow
	}
	if st.gateEvery == 0 {
		st.gateEvery = DefaultMMGateEvery
	}
	switch {
	case !(st.penalty >= 0) || math.IsInf(st.penalty, 0):
		return fmt.Errorf("serve: scale gate penalty %v, want a finite cost >= 0", st.penalty)
	case !(st.gateWindow > 0) || math.IsInf(st.gateWindow, 0):
		return fmt.Errorf("serve: scale gate window %v s, want a finite window > 0", st.gateWindow)
	case st.gateEvery < 1:
		return fmt.Errorf("serve: scale gate every %d period-end calls, want at least 1", st.gateEvery)
	case st.mode != SwitchGate:
		return nil
	case cfg.NoRouter || cfg.Learned == nil || cfg.Scaler == nil:
		return fmt.Errorf("serve: scale switch mode %s replays the requests RouteMM routed under both autoscalers: it needs the router, the heuristic and the learned autoscaler", SwitchGate)
	}
	if err := cfg.Rule.Validate(); err != nil {
		return fmt.Errorf("serve: scale gate: the rule's settings (MMConfig.Rule): %w", err)
	}
	return nil
}

// ScaleRecord describes one Scale answer, for the scale log
// (serve/mmlog).
type ScaleRecord struct {
	// ID is the decision id; At when it was made (the request's unix_nanos
	// when given).
	ID string
	At time.Time
	// Deployment and Model name the deployment and its model; Initial,
	// PeriodEnd and Period the call; Current and Window what the client
	// saw (Window is the zero value for an initial call).
	Deployment, Model  string
	Initial, PeriodEnd bool
	Period             int64
	Current            mmscale.Sizes
	Window             mmscale.Window
	// Sizes is the answer; Source, Policy, ModelVersion and Fallback who
	// gave it and why; Shadow and ShadowSizes the other autoscaler's
	// answer ("" when none decided beside).
	Sizes                                  mmscale.Sizes
	Source, Policy, ModelVersion, Fallback string
	Shadow                                 string
	ShadowSizes                            mmscale.Sizes
	// Latency is the decision's time on the server's clock.
	Latency time.Duration
}

// Time implements Record.
func (r *ScaleRecord) Time() time.Time { return r.At }
func (*ScaleRecord) isRecord()         {}

func logSizes(s mmscale.Sizes) mmlog.Sizes {
	return mmlog.Sizes{Image: s.Image, Text: s.Text, Mono: s.Mono}
}

// ScaleLogRecord converts a scale record into a line of the scale log.
func ScaleLogRecord(r *ScaleRecord) mmlog.Scale {
	out := mmlog.Scale{V: mmlog.Version, ID: r.ID, UnixNanos: r.At.UnixNano(), Deployment: r.Deployment, Model: r.Model,
		Initial: r.Initial, PeriodEnd: r.PeriodEnd, Period: r.Period, Current: logSizes(r.Current), Sizes: logSizes(r.Sizes),
		Source: r.Source, Policy: r.Policy, ModelVersion: r.ModelVersion, Fallback: r.Fallback, LatencyNanos: int64(r.Latency)}
	if !r.Initial {
		w := r.Window
		out.Window = &mmlog.Window{Seconds: w.Seconds, Requests: int64(w.Requests), ImageTokens: w.ImageTokens, TextLoad: w.TextLoad,
			Finished: int64(w.Finished), Met: int64(w.Met), PendingImageTokens: w.PendingImageTokens, PendingTextLoad: w.PendingTextLoad,
			PendingRequests: int64(w.PendingRequests), ImageWait: w.ImageWait, TextWait: w.TextWait,
			PeakRequests: w.Peak.Requests, PeakImageTokens: w.Peak.ImageTokens, PeakTextLoad: w.Peak.TextLoad}
	}
	if r.Shadow != "" {
		out.Shadow = &mmlog.ShadowSizes{Policy: r.Shadow, Sizes: logSizes(r.ShadowSizes)}
	}
	return out
}

// MMRouteRecord describes one RouteMM answer, for the multimodal route
// log (serve/mmlog).
type MMRouteRecord struct {
	// ID is the decision id; At when it was made (the server's clock).
	ID string
	At time.Time
	// RequestID, Arrival, Images, Prompt and Output describe the request.
	RequestID              string
	Arrival                float64
	Images, Prompt, Output int
	// Deployment and Model name the deployment and its model.
	Deployment, Model string
	// InstanceIDs and Instances are the instances as the request listed
	// them, Numbers their numbers and Deployed the request's deployed when
	// it numbered them (all kept only when a sink takes the record).
	InstanceIDs []string
	Instances   []mm.InstanceView
	Numbers     []int
	Deployed    int
	// Instance, ImageInstances and Priority are the answer; Source, Policy
	// and Fallback who gave it and why.
	Instance                 int
	ImageInstances           []int
	Priority                 float64
	Source, Policy, Fallback string
	// Latency is the decision's time on the server's clock.
	Latency time.Duration
}

// Time implements Record.
func (r *MMRouteRecord) Time() time.Time { return r.At }
func (*MMRouteRecord) isRecord()         {}

// MMRouteLogRecord converts a multimodal route record into a line of the
// multimodal route log.
func MMRouteLogRecord(r *MMRouteRecord) mmlog.Route {
	return mmlog.Route{V: mmlog.Version, ID: r.ID, UnixNanos: r.At.UnixNano(), Request: r.RequestID, Arrival: r.Arrival,
		Images: r.Images, Prompt: r.Prompt, Output: r.Output, Deployment: r.Deployment, Model: r.Model,
		Instances: mmlog.InstancesOf(r.InstanceIDs, r.Numbers, r.Instances), Deployed: r.Deployed, Instance: r.Instance, ImageInstances: r.ImageInstances,
		Priority: r.Priority, Source: r.Source, Policy: r.Policy, Fallback: r.Fallback, LatencyNanos: int64(r.Latency)}
}

// RouteMM decides where an arriving multimodal request's stages run. It
// validates the request (a *FieldError names the first bad field), builds
// the view the router decides on (the instances as the request lists
// them, the request's isolated TTFT and image tokens from MMConfig.Base),
// asks policies/modserve's router and logs the decision to the sink.
func (k *Core) RouteMM(ctx context.Context, req *pb.RouteMMRequest) (*pb.RouteMMResponse, error) {
	if err := k.enter(ctx); err != nil {
		return nil, err
	}
	defer k.life.RUnlock()
	st := k.mm
	if st == nil || st.router == nil {
		return nil, ErrNoMM
	}
	start := k.clock.Now()
	r := mm.Request{Arrival: req.GetArrivalSeconds(), Prompt: int(req.GetPromptTokens()), Output: int(req.GetOutputTokens()), Images: int(req.GetImages())}
	switch {
	case !(r.Arrival >= 0) || math.IsInf(r.Arrival, 0):
		return nil, &FieldError{Field: "arrival_seconds", Problem: fmt.Sprintf("%v, want a finite time >= 0", r.Arrival)}
	case r.Images < 0 || r.Images > llmreq.MaxImages:
		return nil, &FieldError{Field: "images", Problem: fmt.Sprintf("%d, want 0..%d", r.Images, llmreq.MaxImages)}
	case r.Prompt < 1 || r.Prompt > llmreq.MaxTokens:
		return nil, &FieldError{Field: "prompt_tokens", Problem: fmt.Sprintf("%d, want 1..%d", r.Prompt, llmreq.MaxTokens)}
	case r.Output < 1 || r.Output > llmreq.MaxTokens:
		return nil, &FieldError{Field: "output_tokens", Problem: fmt.Sprintf("%d, want 1..%d", r.Output, llmreq.MaxTokens)}
	case len(req.GetInstances()) == 0 || len(req.GetInstances()) > mm.MaxLive:
		return nil, &FieldError{Field: "instances", Problem: fmt.Sprintf("%d instances, want 1..%d", len(req.GetInstances()), mm.MaxLive)}
	}
	st.mu.Lock()
	views, decoupled, err := mmViews(req.GetInstances(), st.views[:0])
	st.views = views
	if err != nil {
		st.mu.Unlock()
		return nil, err
	}
	numbers, err := mmNumbers(req, st.numbers[:0])
	st.numbers = numbers
	if err != nil {
		st.mu.Unlock()
		return nil, err
	}
	// The view's isolated TTFT and image counts come from a simulation of
	// the served configuration holding this one request.
	cfg := st.base
	cfg.Instances = [3]int{1, 0, 0}
	if decoupled {
		cfg.Instances = [3]int{0, 1, 1}
	}
	var d *mm.Decision
	s, err := mm.New(cfg, []mm.Request{r})
	if err == nil {
		var q *mm.Request
		q, d, err = s.Next()
		if err == nil {
			v := s.View()
			v.Instances, v.Now = views, r.Arrival
			if req.GetDeployed() != 0 {
				v.Numbers, v.Started = numbers, int(req.GetDeployed())
			}
			err = st.router.Route(v, q, d)
			if err == nil && (d.Instance < 0 || d.Instance >= len(views)) {
				err = fmt.Errorf("the router chose instance %d of %d", d.Instance, len(views))
			}
		}
	}
	rec := &MMRouteRecord{At: start, RequestID: req.GetRequestId(), Arrival: r.Arrival, Images: r.Images, Prompt: r.Prompt, Output: r.Output,
		Deployment: st.deployment, Model: st.base.Model.Name, Source: "heuristic", Policy: "heuristic:" + st.router.Name(), Fallback: FallbackNoModel}
	if err == nil {
		st.routed++
		if st.gated() {
			st.gate.observe(r, st.gateWindow)
		}
		rec.Instance, rec.ImageInstances, rec.Priority = d.Instance, slices.Clone(d.Images), d.Priority
		if k.sink != nil {
			rec.Instances = slices.Clone(views)
			if req.GetDeployed() != 0 {
				rec.Numbers, rec.Deployed = slices.Clone(numbers), int(req.GetDeployed())
			}
		}
	}
	st.mu.Unlock()
	if err != nil {
		return nil, &FieldError{Field: "instances", Problem: err.Error()}
	}
	ins := req.GetInstances()
	resp := &pb.RouteMMResponse{DecisionId: k.nextID(), Instance: int32(rec.Instance), InstanceId: ins[rec.Instance].GetId(),
		Images: make([]int32, len(rec.ImageInstances)), Priority: rec.Priority, Policy: rec.Policy, Source: pb.Source_SOURCE_HEURISTIC,
		Reason: "fallback: " + FallbackNoModel}
	for j, i := range rec.ImageInstances {
		resp.Images[j] = int32(i)
	}
	rec.ID = resp.DecisionId
	if k.sink != nil {
		rec.InstanceIDs = make([]string, len(ins))
		for i, in := range ins {
			rec.InstanceIDs[i] = in.GetId()
		}
	}
	rec.Latency = k.clock.Now().Sub(start)
	k.record(rec)
	if k.metrics != nil {
		k.metrics.mmRoutes.WithLabelValues(rec.Source, rec.Fallback).Inc()
	}
	return resp, nil
}

// mmViews reads the request's instances into dst, validating each, and
// reports whether the deployment is decoupled (no monolithic instance).
func mmViews(ins []*pb.MMInstance, dst []mm.InstanceView) ([]mm.InstanceView, bool, error) {
	var pools [3]int
	for i, in := range ins {
		field := func(name string) string { return fmt.Sprintf("instances[%d].%s", i, name) }
		switch {
		case in.GetPool() < pb.MMPool_MM_POOL_MONO || in.GetPool() > pb.MMPool_MM_POOL_TEXT:
			return dst, false, &FieldError{Field: field("pool"), Problem: fmt.Sprintf("unknown pool %d", in.GetPool())}
		case in.GetState() < pb.MMState_MM_STATE_STARTING || in.GetState() > pb.MMState_MM_STATE_GONE:
			return dst, false, &FieldError{Field: field("state"), Problem: fmt.Sprintf("unknown state %d", in.GetState())}
		case in.GetTp() < 1 || in.GetTp() > 64:
			return dst, false, &FieldError{Field: field("tp"), Problem: fmt.Sprintf("%d, want 1..64", in.GetTp())}
		case in.GetPendingImages() < 0 || in.GetPendingImageTokens() < 0 || in.GetPendingTokens() < 0 || in.GetPendingPrefillTokens() < 0 ||
			in.GetOutstanding() < 0 || in.GetWaiting() < 0 || in.GetRunning() < 0:
			return dst, false, &FieldError{Field: field("pending_images"), Problem: "a negative load"}
		}
		pools[in.GetPool()]++
		dst = append(dst, mm.InstanceView{Pool: mm.Pool(in.GetPool()), State: mm.State(in.GetState()), TP: int(in.GetTp()),
			PendingImages: int(in.GetPendingImages()), PendingImageTokens: in.GetPendingImageTokens(), PendingTokens: in.GetPendingTokens(),
			PendingPrefillTokens: in.GetPendingPrefillTokens(), Outstanding: int(in.GetOutstanding()), Waiting: int(in.GetWaiting()), Running: int(in.GetRunning())})
	}
	if pools[mm.Mono] > 0 && pools[mm.Image]+pools[mm.Text] > 0 {
		return dst, false, &FieldError{Field: "instances", Problem: fmt.Sprintf("%d monolithic instances beside %d image and %d text ones: want one kind of deployment", pools[mm.Mono], pools[mm.Image], pools[mm.Text])}
	}
	return dst, pools[mm.Mono] == 0, nil
}

// mmNumbers reads the request's instance numbers into dst: with
// deployed set, each instance's number, in increasing order, below
// deployed; without, none (every number must be 0).
func mmNumbers(req *pb.RouteMMRequest, dst []int) ([]int, error) {
	n := int(req.GetDeployed())
	ins := req.GetInstances()
	if n < 0 {
		return dst, &FieldError{Field: "deployed", Problem: fmt.Sprintf("negative (%d)", n)}
	}
	if n > 0 && n < len(ins) {
		return dst, &FieldError{Field: "deployed", Problem: fmt.Sprintf("%d, fewer than the %d instances listed", n, len(ins))}
	}
	for i, in := range ins {
		k := int(in.GetNumber())
		switch {
		case n == 0 && k != 0:
			return dst, &FieldError{Field: fmt.Sprintf("instances[%d].number", i), Problem: fmt.Sprintf("%d without deployed: want 0 (instances numbered by position)", k)}
		case n == 0:
			continue
		case k < 0 || k >= n:
			return dst, &FieldError{Field: fmt.Sprintf("instances[%d].number", i), Problem: fmt.Sprintf("%d, want 0..%d (deployed %d)", k, n-1, n)}
		case i > 0 && k <= dst[i-1]:
			return dst, &FieldError{Field: fmt.Sprintf("instances[%d].number", i), Problem: fmt.Sprintf("%d after %d: want increasing numbers", k, dst[i-1])}
		}
		dst = append(dst, k)
	}
	return dst, nil
}

// MMInstances is the inverse of what RouteMM reads: the request's
// instances for a simulated deployment's view (ids "0", "1", ...), every
// instance ever deployed, for clients that replay a trace through the
// server. MMLiveInstances sends only the live ones.
func MMInstances(v []mm.InstanceView) []*pb.MMInstance {
	out := make([]*pb.MMInstance, len(v))
	for i := range v {
		out[i] = mmInstance(i, 0, &v[i])
	}
	return out
}

// MMLiveInstances is the request's instances for a simulated deployment's
// view, its live instances only (mm.View.Live: those not gone; ids and
// numbers their numbers, mm.View.Number, their indexes in the
// simulation's view), and the request's deployed (mm.View.Deployed, every
// instance ever deployed): the server answers as it would to
// MMInstances(v.Instances), in positions in this list (Live's), while the
// request grows with the live pools rather than with every instance a
// long autoscaled run has started.
func MMLiveInstances(v *mm.View) ([]*pb.MMInstance, int32) {
	live := v.Live()
	out := make([]*pb.MMInstance, len(live))
	for k, i := range live {
		out[k] = mmInstance(v.Number(i), int32(v.Number(i)), &v.Instances[i])
	}
	return out, int32(v.Deployed())
}

// mmInstance is an instance's entry in a request: id the decimal id,
// number its number (0 in a request without deployed).
func mmInstance(id int, number int32, x *mm.InstanceView) *pb.MMInstance {
	return &pb.MMInstance{Id: strconv.Itoa(id), Number: number, Pool: pb.MMPool(x.Pool), State: pb.MMState(x.State), Tp: int32(x.TP),
		PendingImages: int32(x.PendingImages), PendingImageTokens: x.PendingImageTokens, PendingTokens: x.PendingTokens,
		PendingPrefillTokens: x.PendingPrefillTokens, Outstanding: int32(x.Outstanding), Waiting: int32(x.Waiting), Running: int32(x.Running)}
}

// Scale answers a multimodal deployment's pool sizes for the next period.
// It validates the window (a *FieldError names the first bad field), has
// the heuristic autoscaler decide and, when one is given, the learned one
// beside it; the learned one answers when it is promoted
// (MMConfig.Mode), the heuristic otherwise or when the learned one fails
// (panics or gives sizes out of 0..mm.MaxInstances; the heuristic's are
// cut to that bound). The decision is logged to the sink.
func (k *Core) Scale(ctx context.Context, req *pb.ScaleRequest) (*pb.ScaleResponse, error) {
	if err := k.enter(ctx); err != nil {
		return nil, err
	}
	defer k.life.RUnlock()
	st := k.mm
	if st == nil || st.scaler == nil {
		return nil, ErrNoMM
	}
	start := k.clock.Now()
	at := start
	if n := req.GetUnixNanos(); n != 0 {
		at = time.Unix(0, n)
	}
	cur, w, err := scaleInput(req)
	if err != nil {
		return nil, err
	}
	rec := &ScaleRecord{At: at, Deployment: req.GetDeployment(), Model: st.base.Model.Name, Initial: req.GetInitial(),
		PeriodEnd: req.GetPeriodEnd() && !req.GetInitial(), Period: req.GetPeriod(), Current: cur, Window: w}
	st.mu.Lock()
	decide := func(sc mmscale.Scaler) (out mmscale.Sizes, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("serve: autoscaler panicked: %v", p)
			}
		}()
		if rec.Initial {
			out = sc.Initial()
		} else {
			out = sc.Decide(w, cur, rec.PeriodEnd)
		}
		if err := checkSizes(out); err != nil {
			return out, err
		}
		return out, nil
	}
	heur, herr := decide(st.scaler)
	if herr != nil && checkSizes(heur) != nil {
		// More instances than a deployment holds (a load no profile
		// foresaw): the heuristic's answer is cut to the bound.
		heur = mmscale.Sizes{Image: min(max(heur.Image, 0), mmlog.MaxPool), Text: min(max(heur.Text, 0), mmlog.MaxPool), Mono: min(max(heur.Mono, 0), mmlog.MaxPool)}
		herr = nil
	}
	var learned mmscale.Sizes
	var lerr error
	if st.learned != nil {
		learned, lerr = decide(st.learned)
	}
	answers := st.learnedAnswers()
	rec.Source, rec.Policy, rec.Sizes = "heuristic", st.heurScalePolicy(), heur
	switch {
	case st.learned == nil:
		rec.Fallback = FallbackNoModel
	case answers && lerr == nil:
		rec.Source, rec.Policy, rec.ModelVersion, rec.Sizes = "learned", st.learnedScalePolicy(), st.version, learned
		if herr == nil {
			rec.Shadow, rec.ShadowSizes = st.heurScalePolicy(), heur
		}
	case answers:
		rec.Fallback, rec.ModelVersion = FallbackError, st.version
	default:
		rec.ModelVersion = st.version
		rec.Fallback = FallbackShadow
		if st.mode == SwitchConverged {
			rec.Fallback = FallbackNotConverged
		}
		if lerr == nil {
			rec.Shadow, rec.ShadowSizes = st.learnedScalePolicy(), learned
		}
	}
	if rec.Source == "learned" || herr == nil {
		st.scaled++
	}
	due := false
	if rec.PeriodEnd && st.gated() {
		st.gate.periods++
		due = st.gate.periods >= st.gateEvery
	}
	st.mu.Unlock()
	if due {
		select {
		case k.sw.kick <- struct{}{}:
		default:
		}
	}
	if rec.Source == "heuristic" && herr != nil {
		return nil, fmt.Errorf("serve: heuristic autoscaler: %w", herr)
	}
	resp := &pb.ScaleResponse{DecisionId: k.nextID(), Sizes: &pb.MMSizes{Image: int32(rec.Sizes.Image), Text: int32(rec.Sizes.Text), Mono: int32(rec.Sizes.Mono)},
		Policy: rec.Policy, Source: pb.Source_SOURCE_HEURISTIC, ModelVersion: rec.ModelVersion}
	if rec.Source == "learned" {
		resp.Source = pb.Source_SOURCE_LEARNED
	}
	if rec.Fallback != "" {
		resp.Reason = "fallback: " + rec.Fallback
	}
	rec.ID = resp.DecisionId
	rec.Latency = k.clock.Now().Sub(start)
	k.record(rec)
	if k.metrics != nil {
		k.metrics.scales.WithLabelValues(rec.Source, rec.Fallback).Inc()
		k.metrics.scaleLearned.Set(map[bool]float64{false: 0, true: 1}[rec.Source == "learned"])
		for _, p := range []struct {
			pool string
			n    int
		}{{"image", rec.Sizes.Image}, {"text", rec.Sizes.Text}, {"mono", rec.Sizes.Mono}} {
			k.metrics.scaleSizes.WithLabelValues(p.pool).Set(float64(p.n))
		}
	}
	return resp, nil
}

// checkSizes reports sizes out of the log's bounds.
func checkSizes(s mmscale.Sizes) error {
	if min(s.Image, s.Text, s.Mono) < 0 || max(s.Image, s.Text, s.Mono) > mmlog.MaxPool {
		return fmt.Errorf("serve: sizes %+v out of 0..%d", s, mmlog.MaxPool)
	}
	return nil
}

// scaleInput validates a Scale request and returns its current sizes and
// window (the zero window for an initial call).
func scaleInput(req *pb.ScaleRequest) (mmscale.Sizes, mmscale.Window, error) {
	c := req.GetCurrent()
	cur := mmscale.Sizes{Image: int(c.GetImage()), Text: int(c.GetText()), Mono: int(c.GetMono())}
	if err := checkSizes(cur); err != nil {
		return cur, mmscale.Window{}, &FieldError{Field: "current", Problem: fmt.Sprintf("%+v, want 0..%d instances a pool", cur, mmlog.MaxPool)}
	}
	if req.GetPeriod() < 0 {
		return cur, mmscale.Window{}, &FieldError{Field: "period", Problem: fmt.Sprintf("negative (%d)", req.GetPeriod())}
	}
	if req.GetInitial() {
		return cur, mmscale.Window{}, nil
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"image_tokens", req.GetImageTokens()}, {"text_load", req.GetTextLoad()}, {"pending_image_tokens", req.GetPendingImageTokens()},
		{"pending_text_load", req.GetPendingTextLoad()}, {"image_wait", req.GetImageWait()}, {"text_wait", req.GetTextWait()},
		{"peak_requests", req.GetPeakRequests()}, {"peak_image_tokens", req.GetPeakImageTokens()}, {"peak_text_load", req.GetPeakTextLoad()}} {
		if !(f.x >= 0) || math.IsInf(f.x, 0) {
			return cur, mmscale.Window{}, &FieldError{Field: f.name, Problem: fmt.Sprintf("%v, want a finite number >= 0", f.x)}
		}
	}
	const maxCount = 1 << 40
	switch {
	case !(req.GetSeconds() > 0) || math.IsInf(req.GetSeconds(), 0):
		return cur, mmscale.Window{}, &FieldError{Field: "seconds", Problem: fmt.Sprintf("%v, want a finite window > 0 s", req.GetSeconds())}
	case req.GetRequests() < 0 || req.GetFinished() < 0 || req.GetMet() < 0 || req.GetPendingRequests() < 0 ||
		max(req.GetRequests(), req.GetFinished(), req.GetPendingRequests()) > maxCount:
		return cur, mmscale.Window{}, &FieldError{Field: "requests", Problem: fmt.Sprintf("requests %d, finished %d, met %d, pending %d: want counts 0..2^40",
			req.GetRequests(), req.GetFinished(), req.GetMet(), req.GetPendingRequests())}
	case req.GetMet() > req.GetFinished():
		return cur, mmscale.Window{}, &FieldError{Field: "met", Problem: fmt.Sprintf("%d, more than the %d finished", req.GetMet(), req.GetFinished())}
	}
	w := mmscale.Window{Seconds: req.GetSeconds(), Requests: int(req.GetRequests()), ImageTokens: req.GetImageTokens(), TextLoad: req.GetTextLoad(),
		Finished: int(req.GetFinished()), Met: int(req.GetMet()), PendingImageTokens: req.GetPendingImageTokens(), PendingTextLoad: req.GetPendingTextLoad(),
		PendingRequests: int(req.GetPendingRequests()), ImageWait: req.GetImageWait(), TextWait: req.GetTextWait(),
		Peak: mmscale.Rates{Requests: req.GetPeakRequests(), ImageTokens: req.GetPeakImageTokens(), TextLoad: req.GetPeakTextLoad()}}
	return cur, w, nil
}

// ScaleRequestOf is the inverse of what Scale reads: the request for a
// window and the current sizes, for clients that drive a simulated
// deployment through the server.
func ScaleRequestOf(w mmscale.Window, cur mmscale.Sizes, periodEnd bool) *pb.ScaleRequest {
	return &pb.ScaleRequest{PeriodEnd: periodEnd, Current: &pb.MMSizes{Image: int32(cur.Image), Text: int32(cur.Text), Mono: int32(cur.Mono)},
		Seconds: w.Seconds, Requests: int64(w.Requests), ImageTokens: w.ImageTokens, TextLoad: w.TextLoad, Finished: int64(w.Finished), Met: int64(w.Met),
		PendingImageTokens: w.PendingImageTokens, PendingTextLoad: w.PendingTextLoad, PendingRequests: int64(w.PendingRequests),
		ImageWait: w.ImageWait, TextWait: w.TextWait, PeakRequests: w.Peak.Requests, PeakImageTokens: w.Peak.ImageTokens, PeakTextLoad: w.Peak.TextLoad}
}

// MMSwitchStatus says who answers Scale calls and why.
type MMSwitchStatus struct {
	// Mode is the switch mode (MMConfig.Mode); Answering the autoscaler
	// that answers a call needing no fallback, Shadow the one deciding
	// beside it ("" without a learned autoscaler), Reason why.
	Mode, Answering, Shadow, Reason string
	// Router is the multimodal router ("" without one).
	Router string
	// Routed and Scaled count the RouteMM and Scale answers so far.
	Routed, Scaled int64
	// The Scale gate (SwitchGate, SwitchShadow with its settings): Since
	// when the answer last switched (zero: from the start), Verdict the
	// last evaluation's verdict, VerdictAt when it was made (zero: none),
	// LastGate its summary or why there was none, Evaluations the gate's
	// evaluations, Requests the routed requests its window holds.
	Since       time.Time
	Verdict     gate.Verdict
	VerdictAt   time.Time
	LastGate    string
	Evaluations int64
	Requests    int
}

// MMSwitch returns the multimodal switch's status (the zero value
// without WithMM).
func (k *Core) MMSwitch() MMSwitchStatus {
	st := k.mm
	if st == nil {
		return MMSwitchStatus{}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return k.mmSwitchLocked()
}

// mmSwitchLocked is MMSwitch under st.mu.
func (k *Core) mmSwitchLocked() MMSwitchStatus {
	st := k.mm
	g := &st.gate
	out := MMSwitchStatus{Mode: st.mode, Routed: st.routed, Scaled: st.scaled, Since: g.since, Verdict: g.verdict, VerdictAt: g.at,
		LastGate: g.summary, Evaluations: g.evals, Requests: len(g.window())}
	if st.router != nil {
		out.Router = "heuristic:" + st.router.Name()
	}
	if st.scaler == nil {
		return out
	}
	out.Answering, out.Reason = st.heurScalePolicy(), "no learned autoscaler"
	if st.learned == nil {
		return out
	}
	out.Shadow = st.learnedScalePolicy()
	switch {
	case st.learnedAnswers() && st.mode == SwitchGate:
		out.Answering, out.Shadow, out.Reason = st.learnedScalePolicy(), st.heurScalePolicy(), g.reason
	case st.learnedAnswers():
		out.Answering, out.Shadow, out.Reason = st.learnedScalePolicy(), st.heurScalePolicy(), "the checkpoint says converged (switch mode converged)"
	case g.reason != "":
		out.Reason = g.reason
	case st.mode == SwitchShadow:
		out.Reason = "shadow only (switch mode shadow)"
	case st.mode == SwitchGate:
		out.Reason = "in shadow until the scale gate passes (switch mode gate)"
	default:
		out.Reason = "the checkpoint says converged false (switch mode converged)"
	}
	return out
}
