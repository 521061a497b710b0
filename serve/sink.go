package serve

import (
	"errors"
	"sync"
	"time"
)

// Sink receives a record of every decision the server makes and of every
// outcome a client reports, for the decision log (Parquet, in a separate
// package) and offline evaluation. Record is called synchronously from the
// request's goroutine, concurrently from many: an implementation must be
// safe for concurrent use and quick (buffer, don't fsync per record). The
// server calls Flush (when the sink is a Flusher) and then Close (when it
// is an io.Closer) once, after the last request has finished, so that no
// record is lost on shutdown.
type Sink interface {
	// Record stores one *DecisionRecord or *OutcomeRecord. The record and
	// what it points to are not modified after the call; the sink may keep
	// them.
	Record(r Record) error
}

// Flusher is a Sink that buffers and can write out what it holds.
type Flusher interface {
	// Flush writes out the buffered records.
	Flush() error
}

// Record is a *DecisionRecord, an *OutcomeRecord, a *RouteRecord, a
// *ScaleRecord or an *MMRouteRecord; a sink tells them apart
// with a type switch.
type Record interface {
	// Time returns when the record was made.
	Time() time.Time
	isRecord()
}

// DecisionRecord describes one Place decision.
type DecisionRecord struct {
	// ID is the decision id returned to the client.
	ID string
	// At is when the decision was made: the request's time when it gave
	// one (PlaceRequest.unix_nanos), else the server's clock.
	At time.Time
	// Submitted is when the job was submitted (Job.submit_unix_nanos;
	// zero: unknown).
	Submitted time.Time
	// JobID, Model, Workers, PSShards, Arch, BatchSize and
	// ExpectedSeconds describe the job as the request gave it: Arch is
	// "ring" or "ps" (env.Arch's spelling), BatchSize the global batch size
	// (0: the model's default) and ExpectedSeconds the expected run time
	// (0: unknown).
	JobID           string
	Model           string
	Workers         int
	PSShards        int
	Arch            string
	BatchSize       int
	ExpectedSeconds float64
	// Nodes and FreeGPUs describe the cluster: node count and free GPUs.
	Nodes, FreeGPUs int
	// Placed is false when the job did not fit.
	Placed bool
	// WorkerNodes and PSNodes are the node ids of the workers and the
	// parameter servers.
	WorkerNodes, PSNodes []string
	// Sync is the chosen sync strategy ("bsp", "ssp(3)", ...).
	Sync string
	// Source is "heuristic" or "learned"; Policy names the policy that
	// answered ("learned@v3", "heuristic:strn").
	Source, Policy string
	// ModelVersion is the learned version that answered or was bypassed.
	ModelVersion string
	// Fallback is why the heuristic answered ("" when the learned policy
	// did): one of the Fallback* reasons.
	Fallback string
	// Canary is true when the request was routed to the canary version.
	Canary bool
	// Obs is the learned policy's observation and Action its action (-1
	// when it gave none); Obs is nil when no observation was built.
	Obs    []float32
	Action int
	// Latency is the time the decision took inside the core.
	Latency time.Duration
	// Shadow names the policy that also decided in shadow, without
	// answering ("learned@v3" beside the heuristic, "heuristic:strn"
	// beside the learned policy; "" when none did); ShadowWorkerNodes and
	// ShadowSync are its decision (empty when it placed nothing),
	// ShadowFailure why it gave none (a Fallback* reason: deadline, error,
	// infeasible, overload; "" when it decided).
	Shadow            string
	ShadowWorkerNodes []string
	ShadowSync        string
	ShadowFailure     string
}

// Time implements Record.
func (r *DecisionRecord) Time() time.Time { return r.At }
func (*DecisionRecord) isRecord()         {}

// Outcome kinds, as OutcomeRecord.Kind spells them.
const (
	OutcomeStarted    = "started"
	OutcomeIterations = "iterations"
	OutcomeFinished   = "finished"
)

// OutcomeRecord describes one reported event in a job's life.
type OutcomeRecord struct {
	// At is when it happened (the client's time, or the server's receipt).
	At time.Time
	// Received is when the server received it.
	Received time.Time
	// JobID and DecisionID link the event to its job and decision.
	JobID, DecisionID string
	// Kind is OutcomeStarted, OutcomeIterations or OutcomeFinished.
	Kind string
	// Nodes are the workers' node ids (started).
	Nodes []string
	// Worker is the worker the samples are from (-1: the whole job) and
	// IterationSeconds the samples (iterations).
	Worker           int
	IterationSeconds []float64
	// Success and JCTSeconds describe the end (finished).
	Success    bool
	JCTSeconds float64
}

// Time implements Record.
func (r *OutcomeRecord) Time() time.Time { return r.At }
func (*OutcomeRecord) isRecord()         {}

// ErrSinkClosed is returned by MemorySink.Record after Close.
var ErrSinkClosed = errors.New("serve: sink closed")

// MemorySink keeps every record in memory, for tests and examples.
type MemorySink struct {
	mu        sync.Mutex
	decisions []*DecisionRecord
	outcomes  []*OutcomeRecord
	routes    []*RouteRecord
	scales    []*ScaleRecord
	mmRoutes  []*MMRouteRecord
	flushed   int
	closed    bool
}

var (
	_ Sink    = (*MemorySink)(nil)
	_ Flusher = (*MemorySink)(nil)
)

// Record implements Sink. It returns ErrSinkClosed after Close.
func (m *MemorySink) Record(r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrSinkClosed
	}
	switch r := r.(type) {
	case *DecisionRecord:
		m.decisions = append(m.decisions, r)
	case *OutcomeRecord:
		m.outcomes = append(m.outcomes, r)
	case *RouteRecord:
		m.routes = append(m.routes, r)
	case *ScaleRecord:
		m.scales = append(m.scales, r)
	case *MMRouteRecord:
		m.mmRoutes = append(m.mmRoutes, r)
	}
	return nil
}

// Flush implements Flusher; it counts the calls.
func (m *MemorySink) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushed++
	return nil
}

// Close marks the sink closed.
func (m *MemorySink) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// Decisions returns a copy of the decision records so far.
func (m *MemorySink) Decisions() []*DecisionRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*DecisionRecord(nil), m.decisions...)
}

// Outcomes returns a copy of the outcome records so far.
func (m *MemorySink) Outcomes() []*OutcomeRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*OutcomeRecord(nil), m.outcomes...)
}

// Routes returns a copy of the route records so far.
func (m *MemorySink) Routes() []*RouteRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*RouteRecord(nil), m.routes...)
}

// Scales returns a copy of the scale records so far.
func (m *MemorySink) Scales() []*ScaleRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*ScaleRecord(nil), m.scales...)
}

// MMRoutes returns a copy of the multimodal route records so far.
func (m *MemorySink) MMRoutes() []*MMRouteRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*MMRouteRecord(nil), m.mmRoutes...)
}

// Closed reports whether Close was called, and Flushes how often Flush was.
func (m *MemorySink) Closed() (closed bool, flushes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed, m.flushed
}
