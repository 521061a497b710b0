package compare

import (
	"time"

	"github.com/drover-sched/drover/datasets/declog"
)

// JobRun is what a decision log's outcomes say about one job's run: the
// time of its first Started outcome, and the time and JCT of its last
// Finished one (zero when the log has none). The replays of a served
// workload from its log (drover eval --log, train/direct.FromLog) gather
// each job's outcomes with it.
type JobRun struct {
	// Started is the first Started outcome's time.
	Started time.Time
	// Finished and JCT are the last Finished outcome's time and JCT.
	Finished time.Time
	JCT      float64
}

// Add folds one of the job's outcomes, in log order, into r: the first
// Started outcome sets Started, every Finished one Finished and JCT;
// other kinds change nothing.
func (r *JobRun) Add(o *declog.Outcome) {
	switch o.Kind {
	case declog.Started:
		if r.Started.IsZero() {
			r.Started = o.Time
		}
	case declog.Finished:
		r.Finished, r.JCT = o.Time, o.JCT
	}
}

// Span returns the seconds from Started to Finished, and whether the log
// gives them: both outcomes logged, Finished after Started.
func (r JobRun) Span() (float64, bool) {
	if r.Started.IsZero() || r.Finished.IsZero() || !r.Finished.After(r.Started) {
		return 0, false
	}
	return r.Finished.Sub(r.Started).Seconds(), true
}
