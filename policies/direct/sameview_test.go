package direct_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/direct"
)

// seen is what an actor was shown at one decision.
type seen struct {
	obs  []float64
	mask []bool
}

// rotating returns an actor that records what it is shown and takes, at
// its k-th call, valid action number 5k mod (valid actions): hold among
// them when it is valid. Two runs that show it the same things take the
// same actions.
func rotating(rec *[]seen) direct.Actor {
	return func(obs []float64, mask []bool) int {
		*rec = append(*rec, seen{slices.Clone(obs), slices.Clone(mask)})
		var valid []int
		for a, ok := range mask {
			if ok {
				valid = append(valid, a)
			}
		}
		if len(valid) == 0 {
			return -1
		}
		return valid[(5*(len(*rec)-1))%len(valid)]
	}
}

// TestPolicySeesWhatEnvSees: policies/direct.Policy (what drover serve
// deploys and eval runs) shows its actor exactly the observations and
// masks sched.Env (what strn-rl and sas-rl train on) shows a policy taking
// the same actions, decision by decision, on a loaded cluster where
// several jobs start at one decision point, many decision points have no
// job that fits, and holds are valid. The Policy used to read telemetry
// only where some job fit (a different moving P90 and round robin of
// reads, so different load groups and pressures) and counted the jobs
// started earlier at the same decision point as pending (features 11-12)
// and not as running (the hold mask).
func TestPolicySeesWhatEnvSees(t *testing.T) {
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	cluster := env.Homogeneous(6, 4)
	w := datasets.Builtin()
	var jobs []env.JobSpec
	for _, j := range trace.Specs(w) {
		if j.GPUs <= cluster.TotalGPUs() && len(jobs) < 50 {
			jobs = append(jobs, j)
		}
	}
	ref, err := trace.Stragglers{}.NewReference(len(cluster.Nodes))
	if err != nil {
		t.Fatal(err)
	}
	newModel := func(seed uint64) env.Model {
		wk, err := trace.Stragglers{Seed: seed, Reference: ref}.Workers(len(cluster.Nodes))
		if err != nil {
			t.Fatal(err)
		}
		return &env.Drover{Profiles: prof, GPUsPerNode: 4, Workers: wk}
	}
	for _, name := range []string{direct.STRNRL, direct.SASRL} {
		t.Run(name, func(t *testing.T) {
			cfg, err := direct.Config(name, 4, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Refresh = 60 // several readings between decision points
			const seed = 2

			var inEnv []seen
			act := rotating(&inEnv)
			e, err := sched.NewEnv(sched.EnvConfig{Encoder: cfg, Jobs: jobs, Cluster: cluster, NewModel: newModel, RestartDelay: env.DefaultRestartDelay})
			if err != nil {
				t.Fatal(err)
			}
			obs, _ := e.Reset(seed)
			var mask []bool
			for {
				mask = e.ActionMask(mask)
				var done bool
				obs, _, done, _, _ = e.Step(act(obs, mask))
				if done {
					break
				}
			}

			var inPolicy []seen
			p := direct.New(cfg, rotating(&inPolicy))
			s, err := env.New(env.Config{Cluster: cluster, Model: newModel(seed), RestartDelay: env.DefaultRestartDelay}, jobs)
			if err != nil {
				t.Fatal(err)
			}
			// Count the decision points with several starts and with none
			// possible, to show the run exercises both.
			multi, idle := 0, 0
			counting := countingPolicy{p: p, multi: &multi, idle: &idle}
			if err := s.Run(counting, nil); err != nil {
				t.Fatal(err)
			}
			decided, held, _ := p.Counts()
			t.Logf("%d decisions (%d held), %d decision points with several starts, %d with nothing to decide", len(inPolicy), held, multi, idle)
			if multi == 0 || idle == 0 || held == 0 || decided == 0 {
				t.Fatalf("the run does not exercise the difference: %d multi-start and %d idle decision points, %d holds", multi, idle, held)
			}
			if len(inPolicy) != len(inEnv) {
				t.Errorf("%d decisions under the Policy, %d in the Env", len(inPolicy), len(inEnv))
			}
			for k := range min(len(inPolicy), len(inEnv)) {
				a, b := inEnv[k], inPolicy[k]
				if !slices.Equal(a.obs, b.obs) || !slices.Equal(a.mask, b.mask) {
					t.Fatalf("decision %d: the Policy sees %s; the Env %s", k, describe(b, a), describe(a, b))
				}
			}
			if got, want := s.Summary(), e.Summary(); got != want {
				t.Errorf("Policy's run %+v, the Env's %+v", got, want)
			}
		})
	}
}

// describe lists where x differs from y.
func describe(x, y seen) string {
	var d []string
	for i := range min(len(x.obs), len(y.obs)) {
		if x.obs[i] != y.obs[i] {
			d = append(d, fmt.Sprintf("obs[%d]=%.4g", i, x.obs[i]))
		}
	}
	for i := range min(len(x.mask), len(y.mask)) {
		if x.mask[i] != y.mask[i] {
			d = append(d, fmt.Sprintf("mask[%d]=%v", i, x.mask[i]))
		}
	}
	return fmt.Sprint(d)
}

// countingPolicy runs p and counts its decision points with several
// starts and those where no pending job fits the free GPUs.
type countingPolicy struct {
	p           *direct.Policy
	multi, idle *int
}

func (c countingPolicy) Schedule(v *env.View) ([]env.Decision, error) {
	free := 0
	for _, f := range v.Free {
		free += f
	}
	if !slices.ContainsFunc(v.Active, func(j *env.Job) bool { return j.State == env.Pending && j.Spec.GPUs <= free }) {
		*c.idle++
	}
	ds, err := c.p.Schedule(v)
	if len(ds) > 1 {
		*c.multi++
	}
	return ds, err
}
