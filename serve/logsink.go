package serve

import (
	"github.com/drover-sched/drover/serve/declog"
)

// LogSink is the Sink that appends every decision and outcome to a Parquet
// decision log (serve/declog). Records are buffered by the log's Writer;
// Flush seals the current file (a crash loses at most the records since
// the last Flush), and Close seals and closes the log.
type LogSink struct {
	w *declog.Writer
}

var (
	_ Sink    = (*LogSink)(nil)
	_ Flusher = (*LogSink)(nil)
)

// NewLogSink returns a sink writing to w, which it owns from then on.
func NewLogSink(w *declog.Writer) *LogSink { return &LogSink{w: w} }

// Record implements Sink.
func (s *LogSink) Record(r Record) error {
	return s.w.Append(LogRecord(r))
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
	}
	panic("serve: unknown record type")
}

// Flush implements Flusher: it seals the log's current file.
func (s *LogSink) Flush() error { return s.w.Flush() }

// Close seals and closes the log.
func (s *LogSink) Close() error { return s.w.Close() }
