package env_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/envtest"
)

// switchAt places every pending job under BSP on free one-GPU nodes and
// re-places a running BSP job of two or more workers on its own nodes
// under ASP once its progress reaches point: Sync-Switch's rule, as
// policies/syncswitch applies it.
type switchAt struct{ point float64 }

func (p switchAt) Schedule(v *env.View) ([]env.Decision, error) {
	var ds []env.Decision
	free := slices.Clone(v.Free)
	for _, j := range v.Active {
		switch {
		case j.State == env.Pending:
			var nodes []int
			for n := 0; n < len(free) && len(nodes) < j.Spec.GPUs; n++ {
				if free[n] > 0 {
					free[n]--
					nodes = append(nodes, n)
				}
			}
			if len(nodes) == j.Spec.GPUs {
				ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes})
			}
		case len(j.Alloc) > 1 && j.Sync.Kind == env.BSP && j.Progress >= p.point:
			ds = append(ds, env.Decision{Job: j.ID, Nodes: slices.Clone(j.Alloc), Sync: env.Sync{Kind: env.ASP}})
		}
	}
	return ds, nil
}

// runSwitch runs one flat job of work seconds of BSP on w idle one-GPU
// nodes, deciding every interval seconds: placed under BSP at the first
// tick, switched to ASP at the first tick at or after point, no restart
// delay.
func runSwitch(t *testing.T, w int, work, interval, point float64) env.JobResult {
	t.Helper()
	m := &env.Drover{
		Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
		Workers:  &env.Workers{Period: 300},
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(w, 1), Model: m, Interval: interval}, []env.JobSpec{envtest.MakeJob("a").GPUs(w).Duration(work).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(switchAt{point}, nil); err != nil {
		t.Fatal(err)
	}
	return s.Results()[0]
}

// A flat job of 100 s of BSP work on 2 idle workers (ASP's iteration takes
// BSP's time there), placed at the first 25 s tick and switched to ASP at
// the next, at 25% of its progress: it trains 100 s times the switched
// run's factor, worked by hand from the fit. 25% of the progress is 0.25 /
// Budget of the schedule (ResNet32, the flat model's fallback family:
// Budget 8.302, so 3.01%), between the measured 2% and 4% shares; the ASP
// phase's staleness on 2 workers is 1, a seventh of the measured 7. So the
// factor is 1 + Extra(p)/7 with Extra interpolated between 2.710 (2%) and
// 2.110 (4%): 1 + 2.4065/7 = 1.3438, and the accuracy BSPFinal - Loss(p)/7.
// The same run twice gives the same result, bit for bit.
func TestSyncSwitchChargesTheSwitchedRun(t *testing.T) {
	fam := converge.Default().Families[env.FallbackFamilies.Staleness]
	st, sw := fam.Staleness, fam.Switch
	p2, p4 := sw.Points[0], sw.Points[1]
	if p2.Share != 0.02 || p4.Share != 0.04 {
		t.Fatalf("first measured shares %v, %v; want 0.02, 0.04", p2.Share, p4.Share)
	}
	p := 0.25 / st.Budget.Value
	u := (p - 0.02) / 0.02
	factor := 1 + (p2.Extra.Value+u*(p4.Extra.Value-p2.Extra.Value))/7
	acc := st.BSPFinal.Value - (p2.Loss.Value+u*(p4.Loss.Value-p2.Loss.Value))/7
	if math.Abs(factor-1.3438) > 1e-4 {
		t.Fatalf("hand-worked factor %.5f, want 1.3438 (Extra 2.710 and 2.110, Budget 8.302)", factor)
	}
	r := runSwitch(t, 2, 100, 25, 0.25)
	t.Logf("switched at 25%%: run %.4f s (BSP 100 s), accuracy %.5f, reached %v", r.JCT-r.Queue, r.Accuracy, r.Reached)
	if math.Abs(r.Queue-25) > 1e-9 || math.Abs(r.JCT-r.Queue-100*factor) > 1e-6 {
		t.Errorf("queue %v, run %v s; want 25, %v (100 s x %v)", r.Queue, r.JCT-r.Queue, 100*factor, factor)
	}
	if !r.Reached || math.Abs(r.Accuracy-acc) > 1e-12 || math.Abs(r.TTA-100*factor) > 1e-6 {
		t.Errorf("reached %v, accuracy %v, TTA %v; want true, %v, %v", r.Reached, r.Accuracy, r.TTA, acc, 100*factor)
	}
	if d := cmp.Diff(r, runSwitch(t, 2, 100, 25, 0.25), cmpopts.EquateNaNs()); d != "" {
		t.Errorf("a second run differs (-first +second):\n%s", d)
	}
	// Without the switch the job is BSP's: 100 s at BSPFinal.
	bsp := runSwitch(t, 2, 100, 25, 2)
	if math.Abs(bsp.JCT-bsp.Queue-100) > 1e-6 || math.Abs(bsp.Accuracy-st.BSPFinal.Value) > 1e-12 {
		t.Errorf("never switched: run %v s, accuracy %v; want 100, %v", bsp.JCT-bsp.Queue, bsp.Accuracy, st.BSPFinal.Value)
	}
}

// An 8-worker job switched where Sync-Switch's 5% runs switched (progress
// 0.05 x Budget of BSP's work to 85%) trains, and ends at an accuracy,
// within the spread of those eight measured runs
// (cifar10_res32/switch_exp/b5-a95-run1..8): worker-batches to 0.85 over
// BSP's mean, and final accuracy.
func TestSyncSwitchReproducesMeasuredRuns(t *testing.T) {
	fam := converge.Default().Families[env.FallbackFamilies.Staleness]
	st := fam.Staleness
	var pt *converge.SwitchPoint
	for i := range fam.Switch.Points {
		if fam.Switch.Points[i].Share == 0.05 {
			pt = &fam.Switch.Points[i]
		}
	}
	if pt == nil || len(pt.To) != 8 {
		t.Fatalf("no 8 measured runs at 5%%: %+v", pt)
	}
	var bspTo float64
	for _, x := range st.BSPTo {
		bspTo += x / float64(len(st.BSPTo))
	}
	// Placed at 10 s, switched at 20 s: the work is 10 s over the progress
	// at the switch.
	f := 0.05 * st.Budget.Value
	work := 10 / f
	r := runSwitch(t, 8, work, 10, f-1e-9)
	got := (r.JCT - r.Queue) / work
	lo, hi := slices.Min(pt.To)/bspTo, slices.Max(pt.To)/bspTo
	t.Logf("5%% of the schedule (progress %.4f): %.3f x BSP's examples, runs [%.3f, %.3f]; accuracy %.4f, runs [%.4f, %.4f]", f, got, lo, hi, r.Accuracy, slices.Min(pt.Final), slices.Max(pt.Final))
	if got < lo || got > hi || !r.Reached {
		t.Errorf("%.3f x BSP's examples (reached %v), outside the measured runs' [%.3f, %.3f]", got, r.Reached, lo, hi)
	}
	if r.Accuracy < slices.Min(pt.Final) || r.Accuracy > slices.Max(pt.Final) {
		t.Errorf("accuracy %.4f outside the measured runs' [%.4f, %.4f]", r.Accuracy, slices.Min(pt.Final), slices.Max(pt.Final))
	}
}

// On 16 workers ASP from the start failed, and the only switched runs
// measured there (cluster_16/5050_run1..3) had half the schedule under BSP:
// a job switched earlier is taken to fail as ASP does. It trains the
// schedule (Budget times BSP's work) and ends with no accuracy, having
// missed its target.
func TestSyncSwitchFailsWhereASPFails(t *testing.T) {
	st := converge.Default().Families[env.FallbackFamilies.Staleness].Staleness
	r := runSwitch(t, 16, 100, 25, 0.25)
	if r.Reached || !math.IsNaN(r.Accuracy) || !math.IsInf(r.TTA, 1) || math.Abs(r.JCT-r.Queue-100*st.Budget.Value) > 1e-6 {
		t.Errorf("16 workers, switched at 25%%: run %v s, reached %v, accuracy %v, TTA %v; want %v s, false, NaN, +Inf", r.JCT-r.Queue, r.Reached, r.Accuracy, r.TTA, 100*st.Budget.Value)
	}
}

// Switched answers the whole run's factor less the work done: from progress
// f, (X - f) / (1 - f) of the rest, X from PredictSwitch.
func TestSwitchedRest(t *testing.T) {
	m := converge.Default()
	c := &env.Convergence{}
	for _, f := range []float64{0, 0.1, 0.25, 0.5, 0.9} {
		share, err := m.SwitchShareOf("resnet32-cifar10", f)
		if err != nil {
			t.Fatal(err)
		}
		x, err := m.PredictSwitch("resnet32-cifar10", 4, share, converge.BandFit)
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.Switched("cifar10", 4, f)
		if err != nil {
			t.Fatal(err)
		}
		if want := (x.IterFactor - f) / (1 - f); math.Abs(o.Run-want) > 1e-12 || o.Factor != o.Run || o.Accuracy != x.FinalAccuracy {
			t.Errorf("progress %v: %+v; want run %v, accuracy %v", f, o, want, x.FinalAccuracy)
		}
	}
	if _, err := c.Switched("cifar10", 4, 1); err == nil {
		t.Error("progress 1: no error")
	}
}
