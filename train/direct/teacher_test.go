package direct

import (
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	pdirect "github.com/drover-sched/drover/policies/direct"
)

// TestTeacherOfIsWhatIsCloned: the policy that policies/direct.TeacherOf
// names (which drover eval and serve's gate run beside a learned policy)
// is the one behaviour cloning records: the registry's strn and
// sas+strn-sync replay the built-in workload (16 x 4 GPUs, seed 3) exactly
// as the recording teacher of each learned policy does.
func TestTeacherOfIsWhatIsCloned(t *testing.T) {
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	replay := func(p policies.Policy) env.Summary {
		res, err := trace.Run(trace.Options{Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: prof, Policy: p,
			Nodes: 16, GPUsPerNode: 4, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: 3}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Summary
	}
	for _, name := range []string{pdirect.STRNRL, pdirect.SASRL} {
		t.Run(name, func(t *testing.T) {
			f, err := builtin.Registry().Factory(pdirect.TeacherOf(name))
			if err != nil {
				t.Fatal(err)
			}
			p, err := f(policies.Config{})
			if err != nil {
				t.Fatal(err)
			}
			want := replay(p)
			cfg, err := pdirect.Config(name, 8, false)
			if err != nil {
				t.Fatal(err)
			}
			prop, rule := newTeacher(name)
			n := 0
			got := replay(pdirect.Teacher(cfg, prop, rule, func(pdirect.Sample) { n++ }))
			if got != want || n == 0 {
				t.Errorf("recording teacher %+v (%d samples), want %s's run %+v", got, n, pdirect.TeacherOf(name), want)
			}
		})
	}
}
