package compare

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/google/go-cmp/cmp"
)

// TestJobRun: the first Started outcome and the last Finished one count;
// the span needs both, Finished after Started.
func TestJobRun(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	started := func(s int) declog.Outcome { return declog.Outcome{Time: at(s), JobID: "a", Kind: declog.Started} }
	finished := func(s int, jct float64) declog.Outcome {
		return declog.Outcome{Time: at(s), JobID: "a", Kind: declog.Finished, JCT: jct}
	}
	tests := []struct {
		name     string
		outcomes []declog.Outcome
		want     JobRun
		span     float64
		ok       bool
	}{
		{name: "none"},
		{name: "started only", outcomes: []declog.Outcome{started(10)}, want: JobRun{Started: at(10)}},
		{name: "finished only", outcomes: []declog.Outcome{finished(70, 65)}, want: JobRun{Finished: at(70), JCT: 65}},
		{name: "started and finished", outcomes: []declog.Outcome{started(10), finished(70, 65)},
			want: JobRun{Started: at(10), Finished: at(70), JCT: 65}, span: 60, ok: true},
		{name: "first started, last finished", outcomes: []declog.Outcome{started(10), {Time: at(20), JobID: "a", Kind: declog.Iteration},
			started(30), finished(50, 45), finished(90, 85)},
			want: JobRun{Started: at(10), Finished: at(90), JCT: 85}, span: 80, ok: true},
		{name: "finished before started", outcomes: []declog.Outcome{finished(5, 1), started(10)},
			want: JobRun{Started: at(10), Finished: at(5), JCT: 1}},
		{name: "finished at start", outcomes: []declog.Outcome{started(10), finished(10, 0)},
			want: JobRun{Started: at(10), Finished: at(10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r JobRun
			for i := range tt.outcomes {
				r.Add(&tt.outcomes[i])
			}
			if diff := cmp.Diff(tt.want, r); diff != "" {
				t.Errorf("run (-want,+got):\n%s", diff)
			}
			if span, ok := r.Span(); span != tt.span || ok != tt.ok {
				t.Errorf("Span = %v, %v; want %v, %v", span, ok, tt.span, tt.ok)
			}
		})
	}
}
