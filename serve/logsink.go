package serve

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/serve/mmlog"
	"github.com/drover-sched/drover/serve/routelog"
)

// LogSink is the Sink that appends every decision and outcome to a Parquet
// decision log (datasets/declog). Record only queues the record: the log's
// Writer encodes and writes it on its own goroutine, and when its queue is
// full drops it and counts it (Dropped, drover_log_dropped_total), so a
// slow disk never delays a Place. Flush seals the current file, and Close
// writes the queue, seals and closes the log; a killed process loses only
// the queued records (the next Writer recovers the unsealed file).
//
// With a route log (WithRoutes), every Route decision also goes to it in
// full (serve/routelog: the request, the instances' states, the answer,
// the shadow decision), which `drover eval --log` re-scores; the decision
// log keeps its one-row summary of it (LogRecord).
//
// With multimodal logs (WithMM), every Scale and RouteMM answer goes to
// the scale log and the multimodal route log (serve/mmlog) only: the
// decision log has no columns for them.
type LogSink struct {
	w        *declog.Writer
	routes   *routelog.Writer
	scales   *routelog.Writer
	mmRoutes *routelog.Writer
}

var (
	_ Sink    = (*LogSink)(nil)
	_ Flusher = (*LogSink)(nil)
)

// NewLogSink returns a sink writing to w, which it owns from then on.
func NewLogSink(w *declog.Writer) *LogSink { return &LogSink{w: w} }

// WithRoutes has the sink write every Route decision to w too, which it
// owns from then on; it returns s.
func (s *LogSink) WithRoutes(w *routelog.Writer) *LogSink {
	s.routes = w
	return s
}

// WithMM has the sink write every Scale answer to scales and every
// RouteMM answer to routes (serve/mmlog's lines; either may be nil to
// drop them), which it owns from then on; it returns s.
func (s *LogSink) WithMM(scales, routes *routelog.Writer) *LogSink {
	s.scales, s.mmRoutes = scales, routes
	return s
}

// Record implements Sink.
func (s *LogSink) Record(r Record) error {
	switch r := r.(type) {
	case *ScaleRecord:
		if s.scales == nil {
			return nil
		}
		line := ScaleLogRecord(r)
		if err := line.Validate(); err != nil {
			return err
		}
		return s.scales.AppendLine(mmlog.EncodeScale(nil, &line))
	case *MMRouteRecord:
		if s.mmRoutes == nil {
			return nil
		}
		line := MMRouteLogRecord(r)
		if err := line.Validate(); err != nil {
			return err
		}
		return s.mmRoutes.AppendLine(mmlog.EncodeRoute(nil, &line))
	}
	err := s.w.Append(LogRecord(r))
	if rr, ok := r.(*RouteRecord); ok && s.routes != nil {
		line := RouteLogRecord(rr)
		err = errors.Join(err, s.routes.Append(&line))
	}
	return err
}

// LogRecord converts a server record into a decision-log record: a
// decision keeps its id, job, answering policy (Policy, e.g.
// "heuristic:strn" or "learned@v3"), fallback reason, node ids, sync
// strategy and latency, the shadow decision (policy, worker nodes, sync,
// failure) and the job as the request gave it (model, GPUs, architecture,
// batch size, expected run time, submission time: the log's job_*
// columns); an outcome its
// job, decision id, kind, samples and JCT ("iterations" becomes
// declog.Iteration).
func LogRecord(r Record) declog.Record {
	switch r := r.(type) {
	case *DecisionRecord:
		return declog.Decision{Time: r.At, RequestID: r.ID, JobID: r.JobID, Source: r.Policy, Fallback: r.Fallback,
			Workers: r.WorkerNodes, PS: r.PSNodes, Sync: r.Sync, Latency: r.Latency,
			Shadow: r.Shadow, ShadowWorkers: r.ShadowWorkerNodes, ShadowSync: r.ShadowSync, ShadowFailure: r.ShadowFailure,
			JobModel: r.Model, JobGPUs: r.Workers, JobArch: r.Arch, JobBatchSize: r.BatchSize, JobExpectedDuration: r.ExpectedSeconds, JobSubmitted: r.Submitted}.Record()
	case *OutcomeRecord:
		kind := declog.OutcomeKind(r.Kind)
		if r.Kind == OutcomeIterations {
			kind = declog.Iteration
		}
		return declog.Outcome{Time: r.At, RequestID: r.DecisionID, JobID: r.JobID, Kind: kind,
			IterationTimes: r.IterationSeconds, JCT: r.JCTSeconds}.Record()
	case *RouteRecord:
		// A route is logged as a decision: its request id as the job, the
		// prefill and decode instances' ids as the workers, the KV format
		// as the sync column, the prompt and output tokens as the job's
		// GPUs and batch size (the log has no inference columns yet).
		return declog.Decision{Time: r.At, RequestID: r.ID, JobID: r.RequestID, Source: r.Policy, Fallback: r.Fallback,
			Workers: []string{r.Prefill, r.Decode}, Sync: r.Format, Latency: r.Latency,
			JobModel: "llm-request", JobGPUs: r.Prompt, JobBatchSize: r.Output}.Record()
	case *ScaleRecord:
		// The decision log has no columns for a scaling answer: a row
		// names the deployment as the job and the target sizes as the
		// sync column (LogSink writes the scale log instead).
		return declog.Decision{Time: r.At, RequestID: r.ID, JobID: r.Deployment, Source: r.Policy, Fallback: r.Fallback,
			Sync: fmt.Sprintf("image=%d,text=%d,mono=%d", r.Sizes.Image, r.Sizes.Text, r.Sizes.Mono), Latency: r.Latency, JobModel: "mm-scale"}.Record()
	case *MMRouteRecord:
		return declog.Decision{Time: r.At, RequestID: r.ID, JobID: r.RequestID, Source: r.Policy, Fallback: r.Fallback,
			Latency: r.Latency, JobModel: "mm-request", JobGPUs: r.Prompt, JobBatchSize: r.Output}.Record()
	}
	panic("serve: unknown record type")
}

// Dropped returns how many records the log dropped because its queue was
// full.
func (s *LogSink) Dropped() int64 { return s.w.Dropped() }

// RegisterLogs adds drover_log_dropped_total{log="decisions"} (from
// decisions), {log="routes"}, {log="scales"} and {log="mmroutes"} (from its
// route, scale and multimodal route logs, when it has them) and
// drover_log_dropped_total{log="telemetry"} (from telemetry) to m's registry: the records each log dropped because its
// queue was full, read at each scrape. A nil log is left out. A server
// calls it once, after NewMetrics and before serving.
func (m *Metrics) RegisterLogs(decisions *LogSink, telemetry *telemlog.Writer) error {
	for _, l := range []struct {
		name    string
		dropped func() int64
	}{
		{"decisions", func() int64 { return decisions.Dropped() }},
		{"telemetry", func() int64 { return telemetry.Dropped() }},
		{"routes", func() int64 { return decisions.RoutesDropped() }},
		{"scales", func() int64 { return decisions.scales.Dropped() }},
		{"mmroutes", func() int64 { return decisions.mmRoutes.Dropped() }},
	} {
		if (l.name != "telemetry" && decisions == nil) || (l.name == "telemetry" && telemetry == nil) || (l.name == "routes" && decisions.routes == nil) ||
			(l.name == "scales" && decisions.scales == nil) || (l.name == "mmroutes" && decisions.mmRoutes == nil) {
			continue
		}
		c := prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "drover_log_dropped_total",
			Help:        "Records a log (decisions, routes, telemetry) dropped because its write queue was full.",
			ConstLabels: prometheus.Labels{"log": l.name},
		}, func() float64 { return float64(l.dropped()) })
		if err := m.Registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Flush implements Flusher: it waits for the queued records and seals the
// log's current file (and writes the route log's queued lines).
func (s *LogSink) Flush() error {
	err := s.w.Flush()
	for _, w := range []*routelog.Writer{s.routes, s.scales, s.mmRoutes} {
		if w != nil {
			err = errors.Join(err, w.Flush())
		}
	}
	return err
}

// Close writes the queued records, seals and closes the log (and the
// route log).
func (s *LogSink) Close() error {
	err := s.w.Close()
	for _, w := range []*routelog.Writer{s.routes, s.scales, s.mmRoutes} {
		if w != nil {
			err = errors.Join(err, w.Close())
		}
	}
	return err
}

// RoutesDropped returns how many route records the route log dropped
// because its queue was full (0 without one).
func (s *LogSink) RoutesDropped() int64 {
	if s.routes == nil {
		return 0
	}
	return s.routes.Dropped()
}
