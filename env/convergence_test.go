package env_test

import (
	"errors"
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/envtest"
)

// TestConvergenceOutcome checks the wiring of the fitted model: every
// number is worked from the fit's own parameters (converge's tests check
// those against the measurements).
func TestConvergenceOutcome(t *testing.T) {
	fams := converge.Default().Families
	r32 := fams["resnet32-cifar10"].Staleness
	r50 := fams["resnet50-cifar100"].Staleness
	c := &env.Convergence{}
	tests := []struct {
		name    string
		model   string
		sync    env.Sync
		w       int
		fit     *converge.StalenessFit
		sbar    float64
		reached bool
	}{
		{"bsp", "cifar10", env.Sync{}, 8, r32, 0, true},
		{"asp on 8", "cifar10", env.Sync{Kind: env.ASP}, 8, r32, 7, true},
		{"ssp(3) on 8", "cifar10", env.Sync{Kind: env.SSP, Staleness: 3}, 8, r32, 3, true},
		{"ssp(30) on 8 is bounded by the workers", "cifar10", env.Sync{Kind: env.SSP, Staleness: 30}, 8, r32, 7, true},
		{"imagenet takes resnet50", "imagenet", env.Sync{Kind: env.ASP}, 8, r50, 7, true},
		{"an unmeasured model takes the fallback", "bert", env.Sync{Kind: env.ASP}, 4, r32, 3, true},
		// Diverge is 15 (ASP failed on 16 workers): sbar 15 diverges.
		{"asp on 16 diverges", "cifar10", env.Sync{Kind: env.ASP}, 16, r32, 15, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := c.Outcome(tt.model, tt.sync, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if o.Reached != tt.reached {
				t.Fatalf("reached %v, want %v", o.Reached, tt.reached)
			}
			if !tt.reached {
				if !o.Diverged || !math.IsNaN(o.Accuracy) || !math.IsInf(o.Factor, 1) || o.Run != tt.fit.Budget.Value {
					t.Fatalf("outcome %+v: want diverged, NaN accuracy, +Inf factor, run = budget %v", o, tt.fit.Budget.Value)
				}
				return
			}
			wantF := 1 + tt.fit.Slowdown.Value*tt.sbar
			wantA := tt.fit.BSPFinal.Value - tt.fit.Drop.Value*tt.sbar
			if math.Abs(o.Factor-wantF) > 1e-12 || o.Run != o.Factor || math.Abs(o.Accuracy-wantA) > 1e-12 {
				t.Fatalf("outcome %+v: want factor %v, accuracy %v", o, wantF, wantA)
			}
		})
	}
	// The measured ratio itself (Sync-Switch, ResNet32 on CIFAR-10, ASP
	// on 8 workers against BSP: 4.05x the worker-batches to 85%).
	if f := c.Factor("cifar10", env.Sync{Kind: env.ASP}, 8); math.Abs(f-4.05) > 0.01 {
		t.Errorf("Factor(cifar10, asp, 8) = %v, want the measured 4.05", f)
	}
	if f := c.Factor("cifar10", env.Sync{Kind: env.ASP}, 16); !math.IsInf(f, 1) {
		t.Errorf("Factor(cifar10, asp, 16) = %v, want +Inf (diverges)", f)
	}
	if f := c.RunFactor("cifar10", env.Sync{Kind: env.ASP}, 16); f != r32.Budget.Value {
		t.Errorf("RunFactor(cifar10, asp, 16) = %v, want the schedule's %v", f, r32.Budget.Value)
	}
}

func TestConvergenceBand(t *testing.T) {
	// At the costly end Diverge is its interval's low end, 8: ASP on 9
	// workers (staleness 8) diverges there and not at the fit (15).
	asp9 := env.Sync{Kind: env.ASP}
	fit, err := (&env.Convergence{}).Outcome("cifar10", asp9, 9)
	if err != nil || !fit.Reached {
		t.Fatalf("fit: %+v, %v: want reached", fit, err)
	}
	high, err := (&env.Convergence{Band: converge.BandHigh}).Outcome("cifar10", asp9, 9)
	if err != nil || high.Reached || !high.Diverged {
		t.Fatalf("high: %+v, %v: want diverged", high, err)
	}
	low, err := (&env.Convergence{Band: converge.BandLow}).Outcome("cifar10", env.Sync{Kind: env.ASP}, 8)
	if err != nil || !(low.Factor < fit.Factor) {
		t.Fatalf("low: %+v, %v: want a smaller factor than the fit's", low, err)
	}
}

func TestConvergenceStrategyKindsAgree(t *testing.T) {
	// Convergence converts env.SyncKind to converge.StrategyKind by value.
	for _, k := range []struct {
		e env.SyncKind
		c converge.StrategyKind
	}{{env.BSP, converge.BSP}, {env.ASP, converge.ASP}, {env.SSP, converge.SSP}, {env.LocalSGD, converge.LocalSGD}} {
		if uint8(k.e) != uint8(k.c) {
			t.Errorf("env kind %v = %d, converge's = %d", k.e, k.e, k.c)
		}
	}
}

func TestUnmeasuredStrategyRefused(t *testing.T) {
	// A strategy the model has no answer for is a bad decision.
	c := &env.Convergence{Families: map[string]env.Families{envtest.FlatName: {Staleness: "vgg16", Local: "vgg16"}}} // batch size only
	m := &env.Drover{
		Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
		Workers:  &env.Workers{Period: 300, Convergence: c},
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(100).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	err = s.Apply([]env.Decision{{Job: 0, Nodes: []int{0, 1}, Sync: env.Sync{Kind: env.ASP}}})
	if !errors.Is(err, env.ErrBadDecision) || !errors.Is(err, converge.ErrNotMeasured) {
		t.Fatalf("Apply = %v, want ErrBadDecision wrapping converge.ErrNotMeasured", err)
	}
	if err := s.Apply([]env.Decision{{Job: 0, Nodes: []int{0, 1}}}); err != nil {
		t.Fatalf("BSP: %v", err)
	}
}

func TestMissedTargetRunsTheSchedule(t *testing.T) {
	// A flat job of 100 s of BSP work on idle, identical workers: ASP's
	// iteration takes BSP's time, so the run time is the convergence
	// factor times 100 s. The flat profile's model takes the fallback
	// family (ResNet32 on CIFAR-10).
	st := fallbackStaleness()
	tests := []struct {
		name    string
		w       int
		want    float64
		reached bool
		acc     float64
	}{
		{"asp on 2 reaches", 2, 100 * (1 + st.Slowdown.Value), true, st.BSPFinal.Value - st.Drop.Value},
		{"asp on 16 diverges and runs the schedule", 16, 100 * st.Budget.Value, false, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runWorkers(t, env.Homogeneous(tt.w, 1), nil, env.Sync{Kind: env.ASP}, envtest.MakeJob("a").GPUs(tt.w).Duration(100).Obj())
			r := s.Results()[0]
			if math.Abs(r.JCT-tt.want) > 1e-6 {
				t.Errorf("JCT %v, want %v", r.JCT, tt.want)
			}
			if r.Reached != tt.reached || (tt.reached && math.Abs(r.Accuracy-tt.acc) > 1e-12) || (!tt.reached && !math.IsNaN(r.Accuracy)) {
				t.Errorf("reached %v, accuracy %v: want %v, %v", r.Reached, r.Accuracy, tt.reached, tt.acc)
			}
			sum := s.Summary()
			if tt.reached {
				if !(math.Abs(r.TTA-tt.want) < 1e-6) || sum.Missed != 0 || math.Abs(sum.AvgTTA-tt.want) > 1e-6 || sum.TTAPerTarget != sum.AvgTTA || math.Abs(sum.AvgAccuracy-tt.acc) > 1e-12 {
					t.Errorf("TTA %v, summary %+v", r.TTA, sum)
				}
				return
			}
			if !math.IsInf(r.TTA, 1) || sum.Missed != 1 || sum.AvgTTA != 0 || !math.IsInf(sum.TTAPerTarget, 1) || sum.AvgAccuracy != 0 {
				t.Errorf("TTA %v, summary missed %d, avg TTA %v, per target %v, avg accuracy %v: want +Inf, 1, 0, +Inf, 0", r.TTA, sum.Missed, sum.AvgTTA, sum.TTAPerTarget, sum.AvgAccuracy)
			}
		})
	}
}

func TestBSPAccuracyFollowsTheBand(t *testing.T) {
	// BSP trains as long at every band; its accuracy is BSPFinal at the
	// band's end (the low-cost end takes the interval's top).
	st := converge.Default().Families["resnet32-cifar10"].Staleness
	for _, b := range []struct {
		band converge.Band
		want float64
	}{{converge.BandFit, st.BSPFinal.Value}, {converge.BandLow, st.BSPFinal.Hi}, {converge.BandHigh, st.BSPFinal.Lo}} {
		o, err := (&env.Convergence{Band: b.band}).Outcome("cifar10", env.Sync{}, 4)
		if err != nil || o.Factor != 1 || o.Run != 1 || o.Accuracy != b.want {
			t.Errorf("band %v: %+v, %v: want factor 1, accuracy %v", b.band, o, err, b.want)
		}
	}
}

func TestBelievedIsTheFit(t *testing.T) {
	// A policy on a simulator run at the costly end believes the fit of
	// the same model and families.
	fams := map[string]env.Families{"cifar10": {Staleness: "resnet50-cifar100"}}
	run := &env.Convergence{Band: converge.BandHigh, Families: fams}
	m := &env.Drover{Workers: &env.Workers{Convergence: run}}
	b := env.Believed(m)
	if b.Band != converge.BandFit || b == run {
		t.Fatalf("Believed: band %v (same value %v), want the fit", b.Band, b == run)
	}
	want := (&env.Convergence{Families: fams}).Factor("cifar10", env.Sync{Kind: env.ASP}, 8)
	if got := b.Factor("cifar10", env.Sync{Kind: env.ASP}, 8); got != want {
		t.Errorf("believed factor %v, want the fit's %v under the same families", got, want)
	}
	if env.Believed(m) != b {
		t.Error("Believed builds a new model on every call")
	}
	if env.Believed(struct{}{}) != env.DefaultConvergence {
		t.Error("a model without a convergence model: want DefaultConvergence")
	}
	fit := &env.Convergence{}
	if env.Believed(&env.Drover{Workers: &env.Workers{Convergence: fit}}) != fit {
		t.Error("a model run at the fit: want its own")
	}
}

func TestTTAPerTarget(t *testing.T) {
	// Two jobs of 100 s of BSP work on 16 one-GPU nodes, run one after
	// the other: an 8-worker ASP job that reaches its target in
	// 100 x (1 + 7 Slowdown) s, and a 16-worker one that diverges and
	// trains the schedule, 100 x Budget s. AvgTTA is the first's; the
	// seconds per target reached are both over the one reached.
	st := fallbackStaleness()
	a := envtest.MakeJob("a").GPUs(8).Duration(100).Obj()
	b := envtest.MakeJob("b").GPUs(16).Duration(100).Obj()
	s := runWorkers(t, env.Homogeneous(16, 1), nil, env.Sync{Kind: env.ASP}, a, b)
	sum := s.Summary()
	ta, tb := 100*(1+7*st.Slowdown.Value), 100*st.Budget.Value
	if sum.Missed != 1 || math.Abs(sum.AvgTTA-ta) > 1e-6 || math.Abs(sum.TTAPerTarget-(ta+tb)) > 1e-6 {
		t.Errorf("missed %d, avg TTA %v, per target %v: want 1, %v, %v", sum.Missed, sum.AvgTTA, sum.TTAPerTarget, ta, ta+tb)
	}
}

func TestConvergenceLocalSGD(t *testing.T) {
	// Local SGD(H) ends at the job's BSP accuracy (its staleness family's
	// BSPFinal) less Drop (H-1) of its local family, and reaches the
	// staleness family's target in BSP's iterations while that stays at
	// or above it, or misses it and trains the staleness family's
	// schedule.
	fams := converge.Default().Families
	r50 := fams["resnet50-imagenet"].Local
	c := &env.Convergence{}
	tests := []struct {
		name, model, local, st string
		h                      int
	}{
		{"imagenet local(8)", "imagenet", "resnet50-imagenet", "resnet50-cifar100", 8},
		{"bert local(8)", "bert", "bert-large-squad", "resnet32-cifar10", 8},
		{"cifar10 falls back to resnet50-imagenet", "cifar10", "resnet50-imagenet", "resnet32-cifar10", 16},
		{"imagenet local(200) misses", "imagenet", "resnet50-imagenet", "resnet50-cifar100", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lf, sf := fams[tt.local].Local, fams[tt.st].Staleness
			loss := lf.Drop.Value * float64(tt.h-1)
			acc := sf.BSPFinal.Value - loss
			o, err := c.Outcome(tt.model, env.Sync{Kind: env.LocalSGD, Period: tt.h}, 8)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(o.Accuracy-acc) > 1e-12 || math.Abs(o.Loss-loss) > 1e-12 {
				t.Errorf("accuracy %v, loss %v; want %v, %v", o.Accuracy, o.Loss, acc, loss)
			}
			if reach := acc >= sf.Target; o.Reached != reach {
				t.Fatalf("reached %v, want %v (accuracy %v, target %v)", o.Reached, reach, acc, sf.Target)
			}
			if o.Reached && (o.Factor != 1 || o.Run != 1) {
				t.Errorf("factor %v, run %v: want BSP's iterations", o.Factor, o.Run)
			}
			if !o.Reached && (!math.IsInf(o.Factor, 1) || o.Run != sf.Budget.Value) {
				t.Errorf("factor %v, run %v: want +Inf and the %s schedule", o.Factor, o.Run, tt.st)
			}
		})
	}
	// ResNet-50 loses (H-1) x 0.09 points: local(16) about 1.35, as the
	// fit's doc says, against the 1.50 PaddleFleetX measured.
	if gap := 15 * r50.Drop.Value; math.Abs(gap-0.0135) > 0.001 {
		t.Errorf("resnet50 local(16) gap %v, want about 0.0135", gap)
	}
}
