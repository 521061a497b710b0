package declog

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
)

// Kind says whether a Record is a decision or an outcome.
type Kind uint8

// The record kinds.
const (
	// KindDecision is a placement decision the server answered.
	KindDecision Kind = iota + 1
	// KindOutcome is a report on a job's progress.
	KindOutcome
)

// String returns the kind as the log's "kind" column spells it.
func (k Kind) String() string {
	switch k {
	case KindDecision:
		return "decision"
	case KindOutcome:
		return "outcome"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// OutcomeKind says what an outcome reports.
type OutcomeKind string

// The outcome kinds.
const (
	// Started: the job's workers started on their nodes.
	Started OutcomeKind = "started"
	// Iteration: iteration-time samples of the running job.
	Iteration OutcomeKind = "iteration"
	// Finished: the job reached its target; Outcome.JCT is set.
	Finished OutcomeKind = "finished"
)

// valid reports whether k is one of the outcome kinds.
func (k OutcomeKind) valid() bool { return k == Started || k == Iteration || k == Finished }

// Decision is one answer of the policy server: where a job's workers and
// parameter servers go and how they synchronize, and which policy answered.
type Decision struct {
	// Time is when the decision was made (the Writer's clock when zero).
	Time time.Time
	// RequestID identifies the request that asked for the decision.
	RequestID string
	// JobID identifies the job being placed.
	JobID string
	// Source names the policy that answered: "learned@v3" for version 3 of
	// a learned policy, "heuristic:strn" for a heuristic.
	Source string
	// Fallback is why the heuristic answered instead of the learned policy
	// ("deadline", "unconverged", "infeasible", "error", ...), or empty
	// when no fallback happened.
	Fallback string
	// Workers holds the node id of each worker, in worker order.
	Workers []string
	// PS holds the node id of each parameter server (empty for
	// all-reduce jobs).
	PS []string
	// Sync is the synchronization strategy as env.Sync spells it ("bsp",
	// "asp", "ssp(3)", "local(8)").
	Sync string
	// Latency is how long the server took to decide.
	Latency time.Duration
	// Shadow names the policy that also decided this request in shadow,
	// without answering ("learned@v3" beside the heuristic that answered,
	// or "heuristic:strn" beside the learned policy that answered); empty
	// when none did. ShadowWorkers and ShadowSync are its decision (empty
	// when it placed nothing), ShadowFailure why it gave none ("deadline",
	// "error", "infeasible"; empty when it decided).
	Shadow        string
	ShadowWorkers []string
	ShadowSync    string
	ShadowFailure string
	// JobModel, JobGPUs, JobArch, JobBatchSize and JobExpectedDuration
	// describe the job as the Place request gave it, so that a replay can
	// rebuild the served workload from the log: its model's name, the GPUs
	// (workers) it asked for, its architecture ("ring" or "ps", as
	// env.Arch spells it), its global batch size and its expected run time
	// in seconds. Zero values mean unknown (files written before these
	// columns existed read so).
	JobModel            string
	JobGPUs             int
	JobArch             string
	JobBatchSize        int
	JobExpectedDuration float64
	// JobSubmitted is when the job was submitted, as the Place request
	// gave it (Job.submit_unix_nanos), so that a replay can put its
	// arrival where it was; the zero time means unknown (files written
	// before the column existed read so).
	JobSubmitted time.Time
}

// Outcome is a report on a placed job, from the cluster back to the server.
type Outcome struct {
	// Time is when the outcome was reported (the Writer's clock when zero).
	Time time.Time
	// RequestID is the decision request the outcome belongs to, if known.
	RequestID string
	// JobID identifies the job.
	JobID string
	// Kind says what is reported.
	Kind OutcomeKind
	// IterationTimes are iteration-time samples in seconds (Iteration
	// reports; may be empty otherwise).
	IterationTimes []float64
	// JCT is the job completion time in seconds (Finished reports; 0
	// otherwise).
	JCT float64
}

// Record is one entry of the decision log: a Decision or an Outcome, as
// Kind says; the other field is the zero value.
type Record struct {
	// Kind says which of Decision and Outcome holds the record.
	Kind Kind
	// Decision is the record when Kind is KindDecision.
	Decision Decision
	// Outcome is the record when Kind is KindOutcome.
	Outcome Outcome
}

// Record wraps d as a log record.
func (d Decision) Record() Record { return Record{Kind: KindDecision, Decision: d} }

// Record wraps o as a log record.
func (o Outcome) Record() Record { return Record{Kind: KindOutcome, Outcome: o} }

// Time returns the record's timestamp.
func (r *Record) Time() time.Time {
	if r.Kind == KindOutcome {
		return r.Outcome.Time
	}
	return r.Decision.Time
}

// JobID returns the record's job id.
func (r *Record) JobID() string {
	if r.Kind == KindOutcome {
		return r.Outcome.JobID
	}
	return r.Decision.JobID
}

// Validate checks the record's fields and returns an error naming the
// first bad one (as the log's column names it).
func (r *Record) Validate() error {
	switch r.Kind {
	case KindDecision:
		d := &r.Decision
		if d.Latency < 0 {
			return fieldErr("latency_ns", fmt.Errorf("negative: %v", d.Latency))
		}
		if d.Shadow == "" && (len(d.ShadowWorkers) > 0 || d.ShadowSync != "" || d.ShadowFailure != "") {
			return fieldErr("shadow", errors.New("empty, but the other shadow columns are set"))
		}
		if d.ShadowFailure != "" && len(d.ShadowWorkers) > 0 {
			return fieldErr("shadow_failure", fmt.Errorf("%q, but the shadow decision has workers", d.ShadowFailure))
		}
		if d.JobGPUs < 0 {
			return fieldErr("job_gpus", fmt.Errorf("%d, want >= 0 (0: unknown)", d.JobGPUs))
		}
		if d.JobArch != "" && d.JobArch != "ring" && d.JobArch != "ps" {
			return fieldErr("job_arch", fmt.Errorf("%q, want ring, ps or empty (unknown)", d.JobArch))
		}
		if d.JobBatchSize < 0 {
			return fieldErr("job_batch_size", fmt.Errorf("%d, want >= 0 (0: unknown)", d.JobBatchSize))
		}
		if x := d.JobExpectedDuration; math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fieldErr("job_expected_duration_s", fmt.Errorf("%v, want a finite value >= 0 (0: unknown)", x))
		}
		if t := d.JobSubmitted; !t.IsZero() && (!t.After(time.Unix(0, 0)) || !t.Before(time.Unix(0, math.MaxInt64))) {
			return fieldErr("job_submit_unix_nanos", fmt.Errorf("%v, want a time after 1970-01-01 in int64 nanoseconds (zero: unknown)", t))
		}
	case KindOutcome:
		o := &r.Outcome
		if !o.Kind.valid() {
			return fieldErr("outcome", fmt.Errorf("unknown outcome kind %q (want started, iteration or finished)", o.Kind))
		}
		for i, t := range o.IterationTimes {
			if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
				return fieldErr("iteration_times_s", fmt.Errorf("sample %d = %v, want a finite value >= 0", i, t))
			}
		}
		if math.IsNaN(o.JCT) || math.IsInf(o.JCT, 0) || o.JCT < 0 {
			return fieldErr("jct_s", fmt.Errorf("%v, want a finite value >= 0", o.JCT))
		}
	default:
		return fieldErr("kind", fmt.Errorf("unknown record kind %d", r.Kind))
	}
	return nil
}

// FormatError is a problem with a record or a log file: the file (empty
// for in-memory data), the 1-based row (0 when the whole file is bad) and
// the column. Its message reads "declog: FILE:ROW: FIELD: problem".
type FormatError = pqlog.FormatError

func fieldErr(field string, err error) error {
	return &FormatError{Log: "declog", Field: field, Err: err}
}
