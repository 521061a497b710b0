package placement

import (
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// stateOf reads the State the Encoder needs from a running Env.
func stateOf(e *Env) *State {
	s := &State{Free: append([]int(nil), e.view.Free...)}
	if tel, ok := e.view.Model.(env.Telemetry); ok {
		s.Load = make([]env.Usage, len(s.Free))
		for n := range s.Load {
			s.Load[n] = tel.NodeLoad(n, e.view.Now)
		}
	}
	for _, a := range e.view.Active {
		if a.State == env.Pending {
			s.Pending++
		} else {
			s.Running++
		}
	}
	return s
}

// TestEncoderMatchesEnv plays episodes of both environments, with and
// without telemetry, and checks at every step that the Encoder gives the
// Env's observation and mask bit for bit and decodes the action into the
// allocation Step applies.
func TestEncoderMatchesEnv(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	const nodes = 16
	for _, tc := range []struct {
		name        string
		sync, strag bool
	}{
		{"placement", false, false},
		{"placement+telemetry", false, true},
		{"sync+telemetry", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(seed uint64) env.Model {
				m := &env.Drover{Profiles: profiles}
				if tc.strag {
					w, err := trace.Stragglers{Seed: seed}.Workers(nodes)
					if err != nil {
						t.Fatal(err)
					}
					m.Workers = w
				}
				return m
			}
			c := env.Homogeneous(nodes, 4)
			e, err := New(Config{Jobs: trace.Specs(datasets.Builtin()), Cluster: c, NewModel: mk, RestartDelay: env.DefaultRestartDelay, Sync: tc.sync})
			if err != nil {
				t.Fatal(err)
			}
			enc := NewEncoder(&c, tc.sync)
			if enc.ObsDim() != e.ObservationSpace().Shape() || enc.Actions() != e.ActionSpace().N {
				t.Fatalf("encoder shape %d/%d, env %d/%d", enc.ObsDim(), enc.Actions(), e.ObservationSpace().Shape(), e.ActionSpace().N)
			}
			obs, _ := e.Reset(3)
			steps, checked := 0, 0
			for !e.done && steps < 300 {
				s, job := stateOf(e), e.job
				if got := enc.Observe(nil, s, &job.Spec); !slices.Equal(got, obs) {
					t.Fatalf("step %d: observation\n got %v\nwant %v", steps, got, obs)
				}
				mask := e.ActionMask(nil)
				if got := enc.Mask(nil, s, job.Spec.GPUs); !slices.Equal(got, mask) {
					t.Fatalf("step %d: mask got %v, want %v", steps, got, mask)
				}
				// Alternate between the valid actions so every kind is decoded.
				var valid []int
				for a, ok := range mask {
					if ok {
						valid = append(valid, a)
					}
				}
				a := valid[steps%len(valid)]
				alloc, sy := enc.Decode(s, job.Spec.GPUs, a)
				obs, _, _, _, _ = e.Step(a)
				if job.State == env.Running && (!slices.Equal(job.Alloc, alloc) || job.Sync != sy) {
					t.Fatalf("step %d: action %d decoded to %v %v, env placed %v %v", steps, a, alloc, sy, job.Alloc, job.Sync)
				}
				if job.State == env.Running {
					checked++
				}
				steps++
			}
			if steps < 20 || checked < steps/2 {
				t.Fatalf("only %d steps, %d placements checked", steps, checked)
			}
		})
	}
}
