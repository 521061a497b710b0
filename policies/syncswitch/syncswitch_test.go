package syncswitch_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/syncswitch"
)

var (
	bsp = env.Sync{Kind: env.BSP}
	asp = env.Sync{Kind: env.ASP}
)

// TestRule checks the rule on a hand-made decision point, switch point
// 0.25, two workers a job unless said: job 0 (pending, progress 0) and
// job 1 (pending, re-placed at progress 0.3) are placed by the policy and
// get BSP and ASP, job 7 (one worker, progress 0.5) BSP; of the running
// jobs the policy left alone, job 2 (BSP at 0.2) stays, job 3 (BSP at
// 0.25, the switch point) and job 4 (BSP at 0.9, on nodes 1 and 2) are
// restarted on their nodes under ASP, job 5 (ASP already) and job 6 (one
// worker, BSP at 0.8) stay.
func TestRule(t *testing.T) {
	active := []*env.Job{
		{ID: 0, State: env.Pending},
		{ID: 1, State: env.Pending, Progress: 0.3},
		{ID: 2, State: env.Running, Alloc: []int{0, 0}, Progress: 0.2, Sync: bsp},
		{ID: 3, State: env.Running, Alloc: []int{0, 0}, Progress: 0.25, Sync: bsp},
		{ID: 4, State: env.Running, Alloc: []int{1, 2}, Progress: 0.9, Sync: bsp, PSRebalance: true},
		{ID: 5, State: env.Running, Alloc: []int{3, 3}, Progress: 0.5, Sync: asp},
		{ID: 6, State: env.Running, Alloc: []int{3}, Progress: 0.8, Sync: bsp},
		{ID: 7, State: env.Pending, Progress: 0.5},
	}
	v := &env.View{Active: active}
	r := &syncswitch.Rule{Point: 0.25}
	ds := []env.Decision{{Job: 0, Nodes: []int{4, 4}}, {Job: 1, Nodes: []int{5, 5}}, {Job: 7, Nodes: []int{6}}}
	if err := r.Assign(v, ds); err != nil {
		t.Fatal(err)
	}
	want := []env.Decision{
		{Job: 0, Nodes: []int{4, 4}, Sync: bsp},
		{Job: 1, Nodes: []int{5, 5}, Sync: asp},
		{Job: 7, Nodes: []int{6}, Sync: bsp},
		{Job: 3, Nodes: []int{0, 0}, Sync: asp},
		{Job: 4, Nodes: []int{1, 2}, Sync: asp, PSRebalance: true},
	}
	if diff := cmp.Diff(want, r.Switch(v, ds)); diff != "" {
		t.Errorf("decisions (-want,+got):\n%s", diff)
	}
	if err := (&syncswitch.Rule{Point: 1.5}).Assign(v, ds); err == nil {
		t.Error("switch point 1.5 accepted")
	}
}

// TestSwitchWorkedCase replays one job under "first-fit+sync-switch"
// (switch point 0.25) in the per-worker model and checks the times and
// the iterations against a hand computation. One node of 4 GPUs, idle, no
// jitter or network noise; the Flat profile with a 1 s step (one node: no
// all-reduce), so every worker computes 1 s an iteration and the job's
// reference iteration is 1 s; 1000 s of work (1000 iterations under BSP);
// decisions every 25 s; a 10 s restart delay.
//
// The job starts at the first tick, 25, and trains under BSP from 35 at
// one iteration a second. It reaches the switch point (250 iterations) at
// 285, between the ticks at 275 (progress 0.24) and 300 (0.265): at 300
// it is restarted under ASP with 265 iterations' work done. ASP runs the
// same 1 s iterations (w / sum 1/a_i with equal a_i), but the
// convergence model charges what the measured switched runs needed: the
// flat profile's model takes the fallback family, ResNet32 on CIFAR-10,
// where progress 0.265 of BSP's work to the target is p = 0.265 / Budget
// of Sync-Switch's schedule (Budget 8.302: p = 3.19%), between its
// measured 2% and 4% shares, and the ASP phase on 4 workers has a
// staleness of 3, 3/7 of the measured runs': the whole run needs X = 1 +
// 3/7 Extra(p) times BSP's iterations, Extra interpolated between 2.710
// and 2.110 (X = 2.008). From 310 the job trains the 1000 X - 265
// iterations left, one a second: it ends at 45 + 1000 X after 1000 X
// iterations, against 1035 and 1000 under BSP alone and 35 + 1000 f and
// 1000 f under ASP alone, f = 1 + 3 Slowdown = 2.31 (ASP from the start).
func TestSwitchWorkedCase(t *testing.T) {
	fam := converge.Default().Families[env.FallbackFamilies.Staleness]
	f := 1 + 3*fam.Staleness.Slowdown.Value
	p2, p4 := fam.Switch.Points[0], fam.Switch.Points[1]
	p := 0.265 / fam.Staleness.Budget.Value
	x := 1 + 3.0/7*(p2.Extra.Value+(p-p2.Share)/(p4.Share-p2.Share)*(p4.Extra.Value-p2.Extra.Value))
	if p2.Share != 0.02 || p4.Share != 0.04 || math.Abs(x-2.008) > 0.001 {
		t.Fatalf("shares %v, %v, X %v: want 0.02, 0.04, 2.008", p2.Share, p4.Share, x)
	}
	tests := []struct {
		policy             string
		finish, iterations float64
		starts             int
		sync               env.Sync
	}{
		{"first-fit+sync-switch", 45 + 1000*x, 1000 * x, 2, asp},
		{"first-fit+bsp", 1035, 1000, 1, bsp},
		{"first-fit+asp", 35 + 1000*f, 1000 * f, 1, asp},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			m := &env.Drover{
				Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
				Workers:  &env.Workers{BurstNoise: -1},
			}
			s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: 25, RestartDelay: 10},
				[]env.JobSpec{envtest.MakeJob("a").GPUs(4).Duration(1000).Obj()})
			if err != nil {
				t.Fatal(err)
			}
			p, err := builtin.Registry().New(tt.policy, policies.Config{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(p, nil); err != nil {
				t.Fatal(err)
			}
			j := s.Jobs()[0]
			if math.Abs(j.Finish-tt.finish) > 1e-9*tt.finish || math.Abs(j.Iterations-tt.iterations) > 1e-9*tt.iterations ||
				j.Starts != tt.starts || j.Sync != tt.sync {
				t.Errorf("finish %v, %v iterations, %d starts, last %v; want %v, %v, %d, %v",
					j.Finish, j.Iterations, j.Starts, j.Sync, tt.finish, tt.iterations, tt.starts, tt.sync)
			}
		})
	}
}
