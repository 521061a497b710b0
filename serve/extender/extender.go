package extender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Paths the Handler serves: the verbs appended to the scheduler
// configuration's urlPrefix (filterVerb "filter", prioritizeVerb
// "prioritize").
const (
	FilterPath     = "/filter"
	PrioritizePath = "/prioritize"
)

// Placer decides where a job runs: *serve.Core.
type Placer interface {
	// Place decides where the request's job runs.
	Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error)
}

var _ Placer = (*serve.Core)(nil)

// NodeGetter looks nodes up by name, for requests that carry only node
// names (nodeCacheCapable: true). NodeStore is one, fed by its owner (an
// informer, say, whose core/v1 Nodes become Nodes through their JSON).
type NodeGetter interface {
	// Node returns the named node, false when it is unknown.
	Node(name string) (*Node, bool)
}

// Config configures a Handler. The zero value is usable.
type Config struct {
	// TTL is how long a job's placement is reused for its pods (default
	// 5 minutes).
	TTL time.Duration
	// MaxJobs bounds the placements held; beyond it the oldest is dropped
	// (default 10000).
	MaxJobs int
	// MaxBodyBytes is the largest request body accepted (default 32 MiB:
	// kube-scheduler sends whole Node objects unless nodeCacheCapable).
	// A longer body is refused with 413 as soon as the limit is read.
	MaxBodyBytes int64
	// MaxConcurrent bounds the calls answered at once: the Core's Place
	// and the answer's encoding (default 4; kube-scheduler makes one
	// call at a time per profile). A call beyond it is refused at once
	// with 429 once its body has been read: a slot is never held while
	// a body arrives, nor while the answer is written, so clients that
	// send or read slowly cannot keep the extender at 429.
	MaxConcurrent int
	// MaxBufferedBytes bounds the request bytes read by the calls in
	// progress together, bodies still arriving included (default
	// MaxConcurrent x MaxBodyBytes); a call whose bytes would pass it is
	// refused with 429. With Limits.MaxNodes it bounds the memory the
	// extender's requests take.
	MaxBufferedBytes int64
	// ReadTimeout bounds the reading of one request's body, from the
	// moment the handler starts (default 5 s, well under kube-scheduler's
	// 30 s extender HTTPTimeout); a slower body is refused with 408 and
	// its connection closed. The http.Server's own ReadHeaderTimeout
	// must bound the headers.
	ReadTimeout time.Duration
	// Timeout bounds one Place call of the Core (default 1 s).
	Timeout time.Duration
	// IntraRackGbps and CrossRackGbps are the cluster's bandwidths between
	// two nodes of one rack and of different racks (0: unknown).
	IntraRackGbps, CrossRackGbps float64
	// Nodes resolves node names for nodeCacheCapable requests (nil: such
	// requests are answered with an Error).
	Nodes NodeGetter
	// Limits are the Core's request limits, which each node is checked
	// against on its own (zero: serve.DefaultLimits). Limits.MaxNodes
	// also bounds the nodes (or node names) of a request while it is
	// read: the node after the last one allowed is refused with 413.
	Limits serve.Limits
	// Clock times the placements' TTL (default serve.RealClock).
	Clock serve.Clock
}

// Handler is the kube-scheduler extender: an http.Handler serving the
// filter and prioritize verbs over a Placer. It is safe for concurrent
// use.
type Handler struct {
	placer Placer
	cfg    Config
	plans  *cache
	// calls holds a token per call being answered.
	calls chan struct{}
	// buffered is the request bytes read by the calls in progress.
	buffered atomic.Int64
}

// writeTimeout bounds the writing of an answer: a client that does not
// read it is cut off.
const writeTimeout = 10 * time.Second

var _ http.Handler = (*Handler)(nil)

// New returns the extender over p.
func New(p Placer, cfg Config) (*Handler, error) {
	if p == nil {
		return nil, errors.New("extender: nil placer")
	}
	if cfg.TTL < 0 || cfg.MaxJobs < 0 || cfg.MaxBodyBytes < 0 || cfg.Timeout < 0 || cfg.MaxConcurrent < 0 || cfg.ReadTimeout < 0 || cfg.MaxBufferedBytes < 0 {
		return nil, fmt.Errorf("extender: config %+v: negative TTL, MaxJobs, MaxBodyBytes, Timeout, MaxConcurrent, MaxBufferedBytes or ReadTimeout", cfg)
	}
	if cfg.TTL == 0 {
		cfg.TTL = 5 * time.Minute
	}
	if cfg.MaxJobs == 0 {
		cfg.MaxJobs = 10000
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 4
	}
	if cfg.MaxBufferedBytes == 0 {
		cfg.MaxBufferedBytes = int64(cfg.MaxConcurrent) * cfg.MaxBodyBytes
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 5 * time.Second
	}
	if cfg.Limits == (serve.Limits{}) {
		cfg.Limits = serve.DefaultLimits
	}
	if cfg.Clock == nil {
		cfg.Clock = serve.RealClock{}
	}
	return &Handler{placer: p, cfg: cfg, plans: newCache(cfg.TTL, cfg.MaxJobs), calls: make(chan struct{}, cfg.MaxConcurrent)}, nil
}

// RequestError is the body of a 4xx answer: a request that is not an
// ExtenderArgs (400), too large (413), too slow (408) or one too many at
// once (429). Field names its first bad part, e.g. "Pod", "Nodes.items"
// or "body".
type RequestError struct {
	// Field is the bad part of the request.
	Field string `json:"field"`
	// Problem says what is wrong with it.
	Problem string `json:"error"`
}

// Error implements error.
func (e *RequestError) Error() string { return e.Field + ": " + e.Problem }

// ServeHTTP serves POST FilterPath and POST PrioritizePath. A malformed
// request (bad JSON, no Pod, no nodes) is answered 400 with a
// RequestError, one over MaxBodyBytes or Limits.MaxNodes 413, one whose
// body is not read within ReadTimeout 408, one beyond MaxConcurrent or
// MaxBufferedBytes 429; everything else 200, with scheduling problems in
// ExtenderFilterResult.Error (see the package doc). The body is read and
// decoded before the call takes one of the MaxConcurrent slots, and the
// answer is encoded before it gives the slot back and written after.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != FilterPath && r.URL.Path != PrioritizePath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, &RequestError{Field: "method", Problem: r.Method + ", want POST"})
		return
	}
	// Not supported by every ResponseWriter (httptest's recorder): then
	// only the server's own timeouts apply.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.cfg.ReadTimeout))
	body := &budgetReader{r: http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes), h: h}
	defer body.release()
	args, code, rerr := h.decode(body)
	if rerr != nil {
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, code, rerr)
		return
	}
	out, ok := h.answer(r.Context(), r.URL.Path, args)
	if !ok {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, &RequestError{Field: "request",
			Problem: fmt.Sprintf("%d calls in progress, the most this extender takes at once; retry", cap(h.calls))})
		return
	}
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// answer takes one of the MaxConcurrent slots, or reports false, and
// returns the JSON answer of a decoded call to path (FilterPath or
// PrioritizePath), giving the slot back before the answer is written.
func (h *Handler) answer(ctx context.Context, path string, args *ExtenderArgs) ([]byte, bool) {
	select {
	case h.calls <- struct{}{}:
		defer func() { <-h.calls }()
	default:
		return nil, false
	}
	var out bytes.Buffer
	if path == FilterPath {
		json.NewEncoder(&out).Encode(h.Filter(ctx, args))
	} else {
		list, _ := h.Prioritize(ctx, args)
		json.NewEncoder(&out).Encode(list)
	}
	return out.Bytes(), true
}

// errBudget is a budgetReader's error once the calls in progress have
// read MaxBufferedBytes.
var errBudget = errors.New("extender: request bytes buffered over MaxBufferedBytes")

// budgetReader counts the bytes a call reads toward its Handler's
// MaxBufferedBytes, until release.
type budgetReader struct {
	r    io.Reader
	h    *Handler
	read int64
}

// Read implements io.Reader. Bytes that pass the budget are not
// returned: the call ends with errBudget.
func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.read += int64(n)
		if b.h.buffered.Add(int64(n)) > b.h.cfg.MaxBufferedBytes {
			return 0, errBudget
		}
	}
	return n, err
}

// release gives the bytes read back to the budget.
func (b *budgetReader) release() { b.h.buffered.Add(-b.read) }

// decode reads the request's ExtenderArgs (decodeArgs) from body, at
// most MaxBodyBytes of it, and returns the HTTP status of a refusal.
func (h *Handler) decode(body io.Reader) (*ExtenderArgs, int, *RequestError) {
	args, err := decodeArgs(body, h.cfg.Limits.MaxNodes)
	var (
		mbe *http.MaxBytesError
		tme *tooManyError
		ute *json.UnmarshalTypeError
		se  *json.SyntaxError
		fe  *fieldError
	)
	field := "body"
	if errors.As(err, &fe) {
		field = fe.field
	}
	switch {
	case err == nil:
	case errors.As(err, &mbe):
		return nil, http.StatusRequestEntityTooLarge, &RequestError{Field: "body", Problem: fmt.Sprintf("larger than %d bytes", mbe.Limit)}
	case errors.As(err, &tme):
		return nil, http.StatusRequestEntityTooLarge, &RequestError{Field: field, Problem: tme.Error()}
	case errors.Is(err, errBudget):
		return nil, http.StatusTooManyRequests, &RequestError{Field: "request", Problem: fmt.Sprintf("the calls in progress have read %d bytes, the most this extender buffers at once; retry", h.cfg.MaxBufferedBytes)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, &RequestError{Field: "body", Problem: fmt.Sprintf("not read within %v", h.cfg.ReadTimeout)}
	case errors.Is(err, io.EOF):
		return nil, http.StatusBadRequest, &RequestError{Field: "body", Problem: "empty, want a JSON ExtenderArgs"}
	case errors.As(err, &ute):
		if ute.Field != "" {
			field = joinField(field, ute.Field)
		}
		return nil, http.StatusBadRequest, &RequestError{Field: field, Problem: fmt.Sprintf("JSON %s, want %v", ute.Value, ute.Type)}
	case errors.As(err, &se):
		return nil, http.StatusBadRequest, &RequestError{Field: "body", Problem: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, http.StatusBadRequest, &RequestError{Field: "body", Problem: "unexpected EOF: truncated JSON"}
	case fe != nil:
		return nil, http.StatusBadRequest, &RequestError{Field: field, Problem: fe.err.Error()}
	default:
		return nil, http.StatusBadRequest, &RequestError{Field: "body", Problem: err.Error()}
	}
	if rerr := checkArgs(args); rerr != nil {
		return nil, http.StatusBadRequest, rerr
	}
	return args, http.StatusOK, nil
}

// checkArgs reports what an ExtenderArgs lacks.
func checkArgs(args *ExtenderArgs) *RequestError {
	switch {
	case args == nil:
		return &RequestError{Field: "body", Problem: "missing"}
	case args.Pod == nil:
		return &RequestError{Field: "Pod", Problem: "missing"}
	case args.Nodes == nil && args.NodeNames == nil:
		return &RequestError{Field: "Nodes", Problem: "missing, want Nodes (nodeCacheCapable: false) or NodeNames (true)"}
	}
	return nil
}

// candidates are a request's nodes: the names in order, and the nodes
// that could be resolved.
type candidates struct {
	names   []string
	nodes   []*Node
	unknown map[string]string // name -> why it is not resolved
}

func (h *Handler) candidates(args *ExtenderArgs) candidates {
	var c candidates
	if args.Nodes != nil {
		c.names = make([]string, len(args.Nodes.Items))
		c.nodes = make([]*Node, len(args.Nodes.Items))
		for i := range args.Nodes.Items {
			c.names[i], c.nodes[i] = args.Nodes.Items[i].Name, &args.Nodes.Items[i]
		}
		return c
	}
	c.names = *args.NodeNames
	c.nodes = make([]*Node, 0, len(c.names))
	c.unknown = map[string]string{}
	for _, name := range c.names {
		if n, ok := h.cfg.Nodes.Node(name); ok && n != nil && n.Name == name {
			c.nodes = append(c.nodes, n)
		} else {
			c.unknown[name] = "drover: node not in the extender's node cache"
		}
	}
	return c
}

// Filter keeps the nodes that the job's placement uses for the pod's
// role. The other nodes fail with a reason: FailedAndUnresolvableNodes
// for those Drover cannot use at all (no GPU, bad annotations),
// FailedNodes for those the placement leaves out. The answer has Nodes
// or NodeNames as the request has. A pod that is not Drover's keeps every
// node. A malformed request, pod annotation or Core failure is the
// result's Error.
func (h *Handler) Filter(ctx context.Context, args *ExtenderArgs) *ExtenderFilterResult {
	res := &ExtenderFilterResult{FailedNodes: FailedNodesMap{}, FailedAndUnresolvableNodes: FailedNodesMap{}}
	if rerr := checkArgs(args); rerr != nil {
		res.Error = "drover: " + rerr.Error()
		return res
	}
	pj, ok, err := JobFromPod(args.Pod)
	if err != nil {
		res.Error = fmt.Sprintf("drover: pod %s: %v", podName(args.Pod), err)
		return res
	}
	if !ok { // not Drover's: every node passes
		res.Nodes, res.NodeNames = args.Nodes, args.NodeNames
		if args.Nodes != nil {
			res.NodeNames = nil
		}
		return res
	}
	if args.Nodes == nil && h.cfg.Nodes == nil {
		res.Error = "drover: " + errNoNodeCache.Error()
		return res
	}
	c := h.candidates(args)
	p, bad, err := h.plan(ctx, pj, c)
	if err != nil {
		res.Error = fmt.Sprintf("drover: pod %s: %v", podName(args.Pod), err)
		return res
	}
	why := fmt.Sprintf("drover: no %s of job %s placed here (decision %s, %s)", roleName(pj.Role), pj.Job.GetId(), p.decisionID, p.policy)
	if !p.placed {
		why = fmt.Sprintf("drover: job %s not placed: %s", pj.Job.GetId(), p.reason)
	}
	keep := func(name string) bool {
		if r, ok := c.unknown[name]; ok {
			res.FailedAndUnresolvableNodes[name] = r
			return false
		}
		if r, ok := bad[name]; ok {
			res.FailedAndUnresolvableNodes[name] = r
			return false
		}
		if p.count(pj.Role, name) == 0 {
			res.FailedNodes[name] = why
			return false
		}
		return true
	}
	if args.Nodes != nil {
		res.Nodes = &NodeList{Items: []Node{}} // few are kept: grow as needed
		for i := range args.Nodes.Items {
			if keep(args.Nodes.Items[i].Name) {
				res.Nodes.Items = append(res.Nodes.Items, args.Nodes.Items[i])
			}
		}
		return res
	}
	names := make([]string, 0, len(c.names))
	for _, name := range c.names {
		if keep(name) {
			names = append(names, name)
		}
	}
	res.NodeNames = &names
	return res
}

// errNoNodeCache answers a NodeNames request without a NodeGetter.
var errNoNodeCache = errors.New("request carries node names only and this extender has no node cache: configure nodeCacheCapable: false")

// Prioritize scores every node of the request 0..10 by how many of the
// job's tasks of the pod's role the placement puts there: 10 for the
// node with the most, scaled, 0 for a node it does not use. A pod that
// is not Drover's scores 0 everywhere. On an error (the ones Filter
// reports) every node scores 0 and the error is returned too;
// kube-scheduler ignores prioritize errors anyway.
func (h *Handler) Prioritize(ctx context.Context, args *ExtenderArgs) (HostPriorityList, error) {
	if rerr := checkArgs(args); rerr != nil {
		return HostPriorityList{}, rerr
	}
	var names []string
	if args.Nodes != nil {
		names = make([]string, len(args.Nodes.Items))
		for i := range args.Nodes.Items {
			names[i] = args.Nodes.Items[i].Name
		}
	} else {
		names = *args.NodeNames
	}
	list := make(HostPriorityList, len(names))
	for i, name := range names {
		list[i] = HostPriority{Host: name, Score: MinExtenderPriority}
	}
	pj, ok, err := JobFromPod(args.Pod)
	if err != nil || !ok {
		return list, err
	}
	if args.Nodes == nil && h.cfg.Nodes == nil {
		return list, errNoNodeCache
	}
	p, _, err := h.plan(ctx, pj, h.candidates(args))
	if err != nil {
		return list, err
	}
	for i := range list {
		list[i].Score = p.score(pj.Role, list[i].Host)
	}
	return list, nil
}

// plan returns the job's placement: the cached one while it is fresh and
// uses one of the candidates, else a new decision of the Placer over the
// candidates (cached when it placed the job). bad maps the candidates
// Drover cannot use to why.
func (h *Handler) plan(ctx context.Context, pj PodJob, c candidates) (p *plan, bad map[string]string, err error) {
	cluster, bad := ClusterFromNodes(c.nodes, h.cfg.Limits, h.cfg.IntraRackGbps, h.cfg.CrossRackGbps)
	now := h.cfg.Clock.Now()
	key := pj.Job.GetId()
	stale := false
	if p, ok := h.plans.get(key, now); ok {
		for _, n := range cluster.Nodes {
			if p.count(pj.Role, n.Id) > 0 {
				return p, bad, nil
			}
		}
		// The placement's nodes are all gone from the candidates (full,
		// cordoned, deleted): decide afresh rather than wait out the TTL.
		stale = true
	}
	if len(cluster.Nodes) == 0 {
		return &plan{placed: false, reason: "no candidate node Drover can use"}, bad, nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	resp, err := h.placer.Place(ctx, &pb.PlaceRequest{Job: pj.Job, Cluster: cluster})
	if err != nil {
		return nil, bad, err
	}
	p = newPlan(resp)
	if p.placed {
		p = h.plans.add(key, p, now, stale)
	}
	return p, bad, nil
}

func podName(p *Pod) string { return p.Namespace + "/" + p.Name }

func roleName(r pb.Role) string {
	if r == pb.Role_ROLE_PS {
		return "parameter server"
	}
	return "worker"
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// NodeStore is a NodeGetter that holds nodes in memory; its owner keeps
// it current (Set on add and update, Delete on removal). It is safe for
// concurrent use.
type NodeStore struct {
	mu    sync.RWMutex
	nodes map[string]*Node
}

var _ NodeGetter = (*NodeStore)(nil)

// Set adds or replaces the node (by name). The store keeps n: do not
// change it afterwards.
func (s *NodeStore) Set(n *Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		s.nodes = map[string]*Node{}
	}
	s.nodes[n.Name] = n
}

// Delete removes the named node.
func (s *NodeStore) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, name)
}

// Node implements NodeGetter.
func (s *NodeStore) Node(name string) (*Node, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, ok := s.nodes[name]
	return n, ok
}
