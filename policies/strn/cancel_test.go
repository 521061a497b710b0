package strn_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/strn"
)

// TestScheduleStopsWhenDone: STRN polls its View's Done (once per job
// and once per greedy pick) and, when it is closed, decides nothing and
// returns env.ErrCancelled; an open Done changes no decision (it is a
// signal, not a clock). The jobs need several nodes each, so the
// greedy passes run.
func TestScheduleStopsWhenDone(t *testing.T) {
	s := setup{nodes: 16, jobs: []env.JobSpec{job("a", 12), job("b", 9), job("c", 2)}}
	_, v := s.view(t)
	want, err := (&strn.STRN{}).Schedule(v)
	if err != nil || len(want) != 3 {
		t.Fatalf("without Done: %v, %v; want 3 decisions", want, err)
	}

	_, v = s.view(t)
	v.Done = make(chan struct{})
	if got, err := (&strn.STRN{}).Schedule(v); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("with an open Done: %v, %v; want %v", got, err, want)
	}

	_, v = s.view(t)
	done := make(chan struct{})
	close(done)
	v.Done = done
	if got, err := (&strn.STRN{}).Schedule(v); !errors.Is(err, env.ErrCancelled) || got != nil {
		t.Errorf("with Done closed: %v, %v; want nothing and env.ErrCancelled", got, err)
	}
	// Delegate, which the learned choosers run, stops the same way.
	if got, err := env.Delegate(&strn.STRN{}, v, env.FirstCandidate); !errors.Is(err, env.ErrCancelled) || got != nil {
		t.Errorf("Delegate with Done closed: %v, %v; want nothing and env.ErrCancelled", got, err)
	}
}
