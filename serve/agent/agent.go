package agent

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	pb "github.com/drover-sched/drover/serve/proto"
)

// Defaults of the Config fields.
const (
	// DefaultInterval is the sampling interval.
	DefaultInterval = 5 * time.Second
	// DefaultBuffer is how many unacknowledged samples and iteration
	// reports the agent keeps: about 5.7 hours of samples at 5 s.
	DefaultBuffer = 4096
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// reconnection.
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// DefaultIterAddr is where `drover agent` listens for iteration times
	// (its -iter-addr flag's default; an empty Config.IterAddr turns the
	// endpoint off).
	DefaultIterAddr = "127.0.0.1:9465"
	// RackUnknown is the Rack of a node whose rack is not known.
	RackUnknown = -1
)

// Config configures an Agent. Server and NodeID are required; the other
// fields have defaults.
type Config struct {
	// Server is the drover server's gRPC address, as grpc.NewClient takes
	// it ("host:port").
	Server string
	// DialOptions are grpc.NewClient's options: transport credentials
	// (gRPC requires them; insecure.NewCredentials() for plaintext) and
	// per-RPC credentials such as serve.BearerToken.
	DialOptions []grpc.DialOption

	// NodeID names the node as Place requests name it (Node.id).
	NodeID string
	// AgentID identifies this agent process; sequence numbers are per
	// AgentID. Default: 16 random hex digits (crypto/rand).
	AgentID string
	// Root is the directory whose proc/ the Sampler reads: "/" on a node
	// (the default), a fixture tree in tests.
	Root string
	// Interval is the sampling interval (default DefaultInterval).
	Interval time.Duration

	// GPUs and GPUType are the node's GPU count and model (default: what
	// the GPU source found).
	GPUs    int
	GPUType string
	// CPUs is the node's CPU count (default: the first sample's).
	CPUs int
	// MemoryGiB is the node's memory (default: the first sample's
	// MemTotal).
	MemoryGiB float64
	// NICGbps is the NIC bandwidth (0: unknown).
	NICGbps float64
	// Rack is the node's rack, RackUnknown (-1) when not known. The zero
	// value is rack 0.
	Rack int
	// Version is the agent's version in the hello (default: the binary's
	// module version).
	Version string

	// Buffer is how many unacknowledged samples and iteration reports the
	// agent keeps (default DefaultBuffer); when full, the oldest give way
	// to a Gap notice.
	Buffer int
	// MinBackoff and MaxBackoff bound the wait before reconnecting
	// (defaults DefaultMinBackoff, DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// Rand jitters the backoff (default: a PCG seeded from crypto/rand).
	// Only the agent's stream goroutine uses it.
	Rand rand.Source
	// Clock is the source of time (default RealClock).
	Clock Clock
	// Logger receives the agent's log (default slog.Default()).
	Logger *slog.Logger
	// GPU reads the GPUs (default NewGPUSource()). If it implements
	// io.Closer, Run closes it when it returns.
	GPU GPUSource

	// IterAddr is the address of the local HTTP endpoint for training
	// jobs' iteration times (POST /v1/iterations) and GET /healthz; ""
	// turns it off. `drover agent` defaults it to DefaultIterAddr.
	IterAddr string
	// IterListener, when set, serves the endpoint instead of listening on
	// IterAddr. Run closes it.
	IterListener net.Listener
}

// The server's limits on the hello (serve/state): ids and names, the GPU
// note, the GPU count.
const (
	maxIDBytes   = 256
	maxNoteBytes = 4 * maxIDBytes
	maxGPUs      = 1024
)

// withDefaults checks c and returns it with its defaults filled in.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Server == "":
		return c, errors.New("agent: Config.Server is empty")
	case c.NodeID == "":
		return c, errors.New("agent: Config.NodeID is empty")
	case c.Interval < 0:
		return c, fmt.Errorf("agent: Config.Interval is %v, want positive", c.Interval)
	case c.Buffer < 0:
		return c, fmt.Errorf("agent: Config.Buffer is %d, want positive", c.Buffer)
	case c.MinBackoff < 0 || c.MaxBackoff < 0:
		return c, fmt.Errorf("agent: Config.MinBackoff %v and MaxBackoff %v must not be negative", c.MinBackoff, c.MaxBackoff)
	case c.GPUs < 0 || c.CPUs < 0 || c.MemoryGiB < 0 || c.NICGbps < 0:
		return c, fmt.Errorf("agent: Config GPUs %d, CPUs %d, MemoryGiB %v, NICGbps %v must not be negative", c.GPUs, c.CPUs, c.MemoryGiB, c.NICGbps)
	case len(c.NodeID) > maxIDBytes || len(c.AgentID) > maxIDBytes || len(c.GPUType) > maxIDBytes || len(c.Version) > maxIDBytes:
		return c, fmt.Errorf("agent: Config NodeID, AgentID, GPUType and Version must be at most %d bytes", maxIDBytes)
	case c.GPUs > maxGPUs:
		return c, fmt.Errorf("agent: Config.GPUs is %d, want at most %d", c.GPUs, maxGPUs)
	case c.Rack < RackUnknown:
		return c, fmt.Errorf("agent: Config.Rack is %d, want a rack index or RackUnknown (-1)", c.Rack)
	}
	if c.AgentID == "" {
		var b [8]byte
		crand.Read(b[:]) // never fails (crypto/rand)
		c.AgentID = hex.EncodeToString(b[:])
	}
	if c.Root == "" {
		c.Root = "/"
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Buffer == 0 {
		c.Buffer = DefaultBuffer
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = max(DefaultMaxBackoff, c.MinBackoff)
	}
	if c.MinBackoff > c.MaxBackoff {
		return c, fmt.Errorf("agent: Config.MinBackoff %v is above MaxBackoff %v", c.MinBackoff, c.MaxBackoff)
	}
	if c.Rand == nil {
		var b [16]byte
		crand.Read(b[:])
		c.Rand = rand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]))
	}
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.GPU == nil {
		c.GPU = NewGPUSource()
	}
	if c.Version == "" {
		c.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			c.Version = bi.Main.Version
		}
	}
	return c, nil
}

// An Agent streams one node's telemetry to a drover server: procfs
// samples, GPU readings and training jobs' iteration times, each
// sequenced, buffered until acknowledged and resent after a reconnection.
// See the package documentation.
type Agent struct {
	cfg Config
	log *slog.Logger
	rng *rand.Rand
	buf *buffer

	running   atomic.Bool
	connected atomic.Bool

	// sampler state, used by one goroutine at a time.
	lastSampleErr string
	gpuErrs       map[string]bool

	staleMu   sync.Mutex
	staleSaid float64
}

// ErrRunning is returned by Run when the Agent already runs or ran: an
// Agent streams once (its sequence numbers belong to its AgentID).
var ErrRunning = errors.New("agent: Run called twice")

// New checks cfg, fills in its defaults and returns an Agent. It starts
// nothing: Run does.
func New(cfg Config) (*Agent, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Agent{
		cfg:     c,
		log:     c.Logger.With("node", c.NodeID, "agent", c.AgentID),
		rng:     rand.New(c.Rand),
		buf:     newBuffer(c.Buffer),
		gpuErrs: map[string]bool{},
	}, nil
}

// AgentID returns the agent's id (Config.AgentID or the generated one).
func (a *Agent) AgentID() string { return a.cfg.AgentID }

// Stats are an Agent's counters since it started.
type Stats struct {
	// Sent counts messages written to streams: hellos, and resends after
	// a reconnection.
	Sent uint64 `json:"sent"`
	// Acked counts buffered messages the server acknowledged.
	Acked uint64 `json:"acked"`
	// Dropped counts samples and iteration reports dropped from the full
	// buffer (each is counted in a Gap notice).
	Dropped uint64 `json:"dropped"`
	// Rejected counts messages the server refused as invalid
	// (InvalidArgument after it acknowledged the hello); each is dropped
	// so that it does not block the stream, and logged.
	Rejected uint64 `json:"rejected"`
	// Reconnects counts streams opened after the first.
	Reconnects uint64 `json:"reconnects"`
	// Buffered is the number of messages waiting for acknowledgement.
	Buffered int `json:"buffered"`
	// LastSeq is the last sequence number given out; AckedSeq the highest
	// acknowledged.
	LastSeq  uint64 `json:"last_seq"`
	AckedSeq uint64 `json:"acked_seq"`
	// Connected reports whether a stream is open.
	Connected bool `json:"connected"`
}

// Stats returns the agent's counters. It is safe to call at any time.
func (a *Agent) Stats() Stats {
	s := a.buf.stats()
	s.Connected = a.connected.Load()
	return s
}

// Run samples the node every Interval and streams to the server until ctx
// ends, reconnecting with backoff whenever the stream fails; it returns
// nil then. It returns an error before streaming when the first sample
// fails (Root holds no procfs files) or the iteration endpoint cannot
// listen, and the server's error, after stopping, when the server refuses
// the agent itself rather than one message: its hello (InvalidArgument
// before any acknowledgement) or its credentials (Unauthenticated,
// PermissionDenied), which a reconnection would send again.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	cfg := a.cfg
	gpu := describeGPUs(cfg.GPU)
	if c, ok := cfg.GPU.(io.Closer); ok {
		defer func() {
			if err := c.Close(); err != nil {
				a.log.Warn("closing the GPU source", "err", err)
			}
		}()
	}
	if !gpu.Available {
		a.log.Warn("GPU telemetry off", "why", gpu.Note)
	} else if gpu.Note != "" {
		a.log.Warn("GPU source", "note", gpu.Note)
	}
	sampler, err := NewSampler(cfg.Root)
	var first Reading
	if err == nil {
		first, err = sampler.Sample(cfg.Clock.Now())
	}
	if err != nil {
		if cfg.IterListener != nil {
			cfg.IterListener.Close()
		}
		return fmt.Errorf("agent: first sample: %w", err)
	}
	hello := a.hello(first, gpu)

	ln := cfg.IterListener
	if ln == nil && cfg.IterAddr != "" {
		if ln, err = net.Listen("tcp", cfg.IterAddr); err != nil {
			return fmt.Errorf("agent: iteration endpoint: %w", err)
		}
	}
	// gRPC's own reconnection backoff (1 s to 120 s by default) would
	// stretch the agent's; the caller's options may still override it.
	opts := append([]grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: cfg.MinBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: cfg.MaxBackoff},
		MinConnectTimeout: 20 * time.Second,
	})}, cfg.DialOptions...)
	conn, err := grpc.NewClient(cfg.Server, opts...)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("agent: server %s: %w", cfg.Server, err)
	}
	defer conn.Close()

	a.log.Info("agent starting", "server", cfg.Server, "root", cfg.Root, "interval", cfg.Interval,
		"gpus", hello.Gpus, "gpu_type", hello.GpuType, "gpu_telemetry", hello.GpuTelemetry, "cpus", hello.Cpus,
		"memory_gib", hello.MemoryGib, "nic_gbps", hello.NicGbps, "rack", hello.Rack, "buffer", cfg.Buffer, "version", hello.Version)
	a.record(first)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var srv *http.Server
	if ln != nil {
		srv = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
		a.log.Info("iteration endpoint listening", "addr", ln.Addr().String(), "path", IterationsPath)
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("iteration endpoint stopped", "err", err)
			}
		})
	}
	wg.Go(func() { a.sampleLoop(ctx, sampler) })
	var refusal error // the server's, when it refused the agent
	wg.Go(func() {
		if refusal = a.streamLoop(ctx, pb.NewTelemetryClient(conn), hello); refusal != nil {
			cancel()
		}
	})
	<-ctx.Done()
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.Background(), time.Second)
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		scancel()
	}
	wg.Wait()
	st := a.Stats()
	a.log.Info("agent stopped", "sent", st.Sent, "acked", st.Acked, "dropped", st.Dropped,
		"reconnects", st.Reconnects, "unacknowledged", st.Buffered)
	return refusal
}

// hello builds the stream's hello from the config, the first sample and
// the GPU source.
func (a *Agent) hello(first Reading, gpu GPUInfo) *pb.AgentHello {
	c := a.cfg
	h := &pb.AgentHello{
		NodeId: c.NodeID, AgentId: c.AgentID,
		Gpus: int32(c.GPUs), GpuType: c.GPUType,
		Cpus: int32(c.CPUs), MemoryGib: c.MemoryGiB,
		NicGbps: c.NICGbps, Rack: int32(c.Rack),
		GpuTelemetry: gpu.Available, GpuNote: gpu.Note,
		IntervalS: c.Interval.Seconds(), Version: c.Version,
	}
	if h.Gpus == 0 {
		h.Gpus = int32(min(gpu.Count, maxGPUs))
	}
	if h.GpuType == "" {
		h.GpuType = truncate(gpu.Type, maxIDBytes)
	}
	h.GpuNote = truncate(h.GpuNote, maxNoteBytes)
	if h.Cpus == 0 {
		h.Cpus = int32(first.NumCPU)
	}
	if h.MemoryGib == 0 {
		h.MemoryGib = float64(first.MemTotalBytes) / (1 << 30)
	}
	return h
}

// truncate cuts s to at most n bytes, on a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sampleLoop samples at every tick until ctx ends.
func (a *Agent) sampleLoop(ctx context.Context, s *Sampler) {
	t := a.cfg.Clock.NewTicker(a.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C():
			r, err := s.Sample(now)
			if err != nil {
				if msg := err.Error(); msg != a.lastSampleErr {
					a.log.Warn("sample failed; the next good one measures from the last good one", "err", err)
					a.lastSampleErr = msg
				}
				continue
			}
			if a.lastSampleErr != "" {
				a.log.Info("sampling again")
				a.lastSampleErr = ""
			}
			a.record(r)
		}
	}
}

// record logs r's notes, reads the GPUs and buffers the sample.
func (a *Agent) record(r Reading) {
	for _, n := range r.Notes {
		a.log.Warn("proc", "note", n)
	}
	gpus, err := a.cfg.GPU.Read(r.Time)
	if err != nil && !a.gpuErrs[err.Error()] && len(a.gpuErrs) < 100 {
		a.gpuErrs[err.Error()] = true
		a.log.Warn("GPU readings incomplete (said once)", "err", err)
	}
	a.push(&pb.AgentMessage{Body: &pb.AgentMessage_Sample{Sample: NodeSample(r, gpus)}}, r.Time.UnixNano())
}

// push buffers m and logs the start of a gap.
func (a *Agent) push(m *pb.AgentMessage, at int64) {
	if a.buf.push(m, at) {
		a.log.Warn("buffer full: dropping the oldest unacknowledged messages; a gap notice will tell the server",
			"buffer", a.cfg.Buffer, "connected", a.connected.Load())
	}
}

// Handler returns the iteration endpoint's handler: POST /v1/iterations
// takes an IterationReport (400 naming the field when it is invalid, 413
// above MaxReportBytes, 202 when buffered); GET /healthz answers the
// agent's Stats as JSON. Run serves it on IterAddr; it can also be
// mounted elsewhere.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+IterationsPath, a.postIterations)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a.Stats())
	})
	return mux
}

func (a *Agent) postIterations(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxReportBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("body: more than %d bytes", MaxReportBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	it, err := DecodeIterations(data)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.push(&pb.AgentMessage{Body: &pb.AgentMessage_Iterations{Iterations: it}}, a.cfg.Clock.Now().UnixNano())
	w.WriteHeader(http.StatusAccepted)
}
