package env

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stepProfile computes for Step seconds per iteration and all-reduces for
// Sync seconds per node beyond the first (envtest.Flat, which this package's
// own tests cannot import).
type stepProfile struct{ Step, Sync float64 }

func (stepProfile) Name() string                          { return "step" }
func (stepProfile) InitBatchSize() int                    { return 32 }
func (stepProfile) MaxBatchSize() int                     { return 1024 }
func (stepProfile) MinLocalBsz() int                      { return 32 }
func (stepProfile) MaxLocalBsz() int                      { return 1024 }
func (stepProfile) MaxEpochs() int                        { return 1 }
func (stepProfile) GradStats(int, int) (float64, float64) { return 1, 0 }
func (stepProfile) Progress(e int) float64                { return float64(e) }
func (stepProfile) CompletionEpoch(int) int               { return 0 }
func (stepProfile) Iteration(_, e int) float64            { return float64(e + 1) }
func (p stepProfile) Throughput(placement []int, _ int) (float64, float64) {
	extra := float64(len(placement) - 1)
	return p.Step + p.Sync*extra, p.Sync * extra
}

// netLoads is a constant background NIC load per node.
type netLoads map[int]float64

func (b netLoads) Load(n int, _ float64) Usage { return Usage{Net: b[n]} }
func (netLoads) Step() float64                 { return 300 }

func TestRelayPicksHighestBandwidthPeer(t *testing.T) {
	// Five 1-GPU nodes: 0, 2, 3 and 4 in rack 0, node 1 alone in rack 1;
	// 40 Gbit/s per node across racks against 100 within, so rack 1's
	// uplink carries 0.4 of an intra-rack flow and rack 0's 1.6. A
	// 5-worker BSP job on nodes 0..4 (ring 0 1 2 3 4), compute 1 s, an
	// all-reduce of 0.5 x 4 = 2 s that is all bandwidth (Net 1). Its ring
	// crosses racks at 0->1 and 1->2: each meets rack 1's uplink, one flow
	// on 0.4: slowdown 2.5. NIC backgrounds: node 2 0.3, node 3 0.4, node
	// 4 0.1 (a NIC slowdown of 1/(1-bg) with the job's own flow).
	//
	// Ring exchanges m = 2 x slowdown: 5, 5, 2.857, 3.333, 2.222; times
	// T = 1 + m: 6, 6, 3.857, 4.333, 3.222. Median 4.333, limit 5.2:
	// nodes 0 and 1 straggle, both for their exchange (with the median
	// exchange 3.333 they would take 4.333).
	//
	// A relay moves 5/(2x4) = 0.625 of a ring member's traffic, and its
	// flow counts as 0.625 of a flow on the peer's NIC. For node 0 (idle
	// NIC, same rack as 2, 3, 4; node 1 straggles and is no peer):
	//   - node 2: NIC (1+0.625)/0.7 = 2.3214, the pair's slowdown;
	//     relayed exchange 2 x 0.625 x 2.3214 = 2.9018, node 2's own
	//     2 x 2.3214 = 4.6429: both under 5, it would help;
	//   - node 3: NIC 1.625/0.6 = 2.7083, node 3's own exchange 5.4167 > 5:
	//     no help;
	//   - node 4: NIC 1.625/0.9 = 1.8056, the least slowdown (the highest
	//     bandwidth): relayed 2 x 0.625 x 1.8056 = 2.2569, node 4's own
	//     3.6111. Node 4 it is, although node 2 comes first in the ring.
	// For node 1 (rack 1: every pair crosses the 2.5 uplink): node 2,
	// slowdown max(2.3214, 2.5) = 2.5, relayed 3.125, node 2's own
	// 4.6429; node 3 no help as before; node 4, now carrying node 0's
	// relay too, NIC (1+1.25)/0.9 = 2.5, own exchange 5 (not under 5).
	// Node 2 it is.
	//
	// Node 4's exchange grows from 2.2222 to 3.6111 and node 2's from
	// 2.8571 to 4.6429; their NICs carry 1.625 flows. The iteration
	// (1 s of compute plus the slowest exchange) drops from 6 s to 5.6429.
	c := Homogeneous(5, 1)
	c.CrossRackGbps = 40
	for i := range c.Nodes {
		c.Nodes[i].Rack = 0
	}
	c.Nodes[1].Rack = 1
	d := &Drover{
		Profiles: map[string]Profile{"step": stepProfile{Step: 1, Sync: 0.5}},
		Workers: &Workers{
			Background:    netLoads{2: 0.3, 3: 0.4, 4: 0.1},
			BurstNoise:    -1,
			Sensitivities: map[string]Sensitivity{"step": {Net: 1}},
			STRET:         true,
		},
	}
	j := &Job{ID: 0, Spec: JobSpec{Name: "a", GPUs: 5, Duration: 100, Model: "step"}}
	if err := d.Admit(j, &Meta{}); err != nil {
		t.Fatal(err)
	}
	j.Alloc = []int{0, 1, 2, 3, 4}
	d.Place(j, &c)
	d.Refresh(j, &c, 0)
	s := j.m.(*droverJob)
	nic := func(bg, flows float64) float64 { return flows / (1 - bg) }
	v := 5.0 / 8
	want := []float64{
		2 * v * nic(0.1, 1+v),
		2 * v * 2.5,
		2 * nic(0.3, 1+v),
		2 * nic(0.4, 1),
		2 * nic(0.1, 1+v),
	}
	tol := cmpopts.EquateApprox(0, 1e-12)
	if diff := cmp.Diff([]int{4, 2, -1, -1, -1}, s.w.stret.peer); diff != "" {
		t.Errorf("peers (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.w.m, tol); diff != "" {
		t.Errorf("exchanges (-want,+got):\n%s", diff)
	}
	flows := []float64{d.occ[0].flows, d.occ[1].flows, d.occ[2].flows, d.occ[3].flows, d.occ[4].flows}
	// Each NIC carries the job's flow at its duty cycle, its exchange's
	// share of an iteration (2 s of 3), and a relay's in full (a BSP job's
	// relays run during its own exchanges).
	duty := 2.0 / 3
	if diff := cmp.Diff([]float64{duty, duty, duty + v, duty, duty + v}, flows, tol); diff != "" {
		t.Errorf("NIC flows (-want,+got):\n%s", diff)
	}
	if got, want := s.iterTime, 1+2*nic(0.3, 1+v); math.Abs(got-want) > 1e-12 {
		t.Errorf("iteration %v s, want %v", got, want)
	}
	if s.relayed != 2 || j.RelayChanges != 1 {
		t.Errorf("%v relaying workers, %d relay changes; want 2 and 1", s.relayed, j.RelayChanges)
	}
	// The next refresh sees the same loads: the same relays, no change,
	// and the flows are not counted twice.
	d.Refresh(j, &c, 300)
	if j.RelayChanges != 1 || math.Abs(d.occ[4].flows-(duty+v)) > 1e-12 {
		t.Errorf("after a second refresh: %d relay changes, node 4 flows %v; want 1 and %v", j.RelayChanges, d.occ[4].flows, duty+v)
	}
	// Leaving the nodes takes the relays' flows along.
	d.Release(j)
	for n, o := range d.occ {
		if math.Abs(o.flows) > 1e-12 {
			t.Errorf("node %d keeps %v flows after release", n, o.flows)
		}
	}
}

func TestMarginal(t *testing.T) {
	// Four epochs at a quarter of the training each. Rising: 0.5, 0.8,
	// 0.9, 0.905. Falling (a WER): 50, 20, 12, 11.9.
	rising := &curve{at: []float64{0.25, 0.5, 0.75, 1}, metric: []float64{0.5, 0.8, 0.9, 0.905}, dir: 1}
	falling := &curve{at: []float64{0.25, 0.5, 0.75, 1}, metric: []float64{50, 20, 12, 11.9}, dir: -1}
	tests := []struct {
		name string
		c    *curve
		x    float64
		want bool
	}{
		// Before 0.25 + 0.1 no window of validations exists yet.
		{"too early", rising, 0.3, false},
		// At 0.5: 0.8 now, 0.68 at 0.4: recent rate 1.2 per unit of
		// training; since the first validation (0.8-0.5)/0.25 = 1.2.
		{"steep", rising, 0.5, false},
		// At 0.8: 0.901 now, 0.88 at 0.7: recent 0.21; average
		// 0.401/0.55 = 0.729, a tenth of which is 0.0729 < 0.21.
		{"slowing", rising, 0.8, false},
		// At 1: 0.905 now, 0.903 at 0.9: recent 0.02; average
		// 0.405/0.75 = 0.54: 0.02 <= 0.054, marginal.
		{"flat", rising, 1, true},
		// Falling: at 0.5 recent (32-20)/0.1 = 120, average 30/0.25 = 120.
		{"falling steep", falling, 0.5, false},
		// At 1: 11.9 now, 11.94 at 0.9: recent 0.4; average 38.1/0.75 =
		// 50.8: 0.4 <= 5.08.
		{"falling flat", falling, 1, true},
		{"no curve", nil, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.marginal(tt.x); got != tt.want {
				t.Errorf("marginal(%v) = %v, want %v", tt.x, got, tt.want)
			}
		})
	}
}

// curved is a stepProfile with a validation curve.
type curved struct {
	stepProfile
	its, metric []float64
}

func (c curved) ValidationCurve(int) ([]float64, []float64) { return c.its, c.metric }

func TestNewCurve(t *testing.T) {
	tests := []struct {
		name string
		p    Profile
		want *curve
	}{
		{"iterations to progress", curved{its: []float64{10, 30, 40}, metric: []float64{0.2, 0.6, 0.7}},
			&curve{at: []float64{0.25, 0.75, 1}, metric: []float64{0.2, 0.6, 0.7}, dir: 1}},
		{"falling metric", curved{its: []float64{10, 20}, metric: []float64{30, 20}},
			&curve{at: []float64{0.5, 1}, metric: []float64{30, 20}, dir: -1}},
		{"one epoch", curved{its: []float64{10}, metric: []float64{0.5}}, nil},
		{"no curve", stepProfile{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, newCurve(tt.p, 32), cmp.AllowUnexported(curve{})); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestParseSTRETStages(t *testing.T) {
	tests := []struct {
		in      string
		want    STRETStage
		wantErr bool
	}{
		{"", 0, false},
		{"relay", STRETRelay, false},
		{"withhold, tune", STRETWithhold | STRETTune, false},
		{"relay,withhold,tune", STRETRelay | STRETWithhold | STRETTune, false},
		{"restart", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSTRETStages(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseSTRETStages(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestBSPDutyCycle: two BSP jobs share both NICs of a two-node cluster,
// one worker of each on each node; each computes 1 s and all-reduces
// 0.5 s (all bandwidth, Net 1), so its flow is on the wire 0.5 s of every
// 1.5 s, a third of the time. The second job's exchange meets the first
// one's flow a third of the time: 0.5 x (1 + 1/3) = 0.6667 s, an
// iteration of 1.6667 s. A BSP job's flow used to count in full (duty
// 1): 0.5 x 2 = 1 s, an iteration of 2 s, as if the first job
// communicated without pause.
func TestBSPDutyCycle(t *testing.T) {
	c := Homogeneous(2, 2)
	d := &Drover{
		Profiles: map[string]Profile{"step": stepProfile{Step: 1, Sync: 0.5}},
		Workers:  &Workers{BurstNoise: -1, Sensitivities: map[string]Sensitivity{"step": {Net: 1}}},
	}
	var jobs [2]*Job
	for i := range jobs {
		jobs[i] = &Job{ID: i, Spec: JobSpec{Name: fmt.Sprint("j", i), GPUs: 2, Duration: 100, Model: "step"}}
		if err := d.Admit(jobs[i], &Meta{}); err != nil {
			t.Fatal(err)
		}
		jobs[i].Alloc = []int{0, 1}
		d.Place(jobs[i], &c)
	}
	d.Refresh(jobs[1], &c, 0)
	s := jobs[1].m.(*droverJob)
	if want := 1 + 0.5*(1+1.0/3); math.Abs(s.iterTime-want) > 1e-12 {
		t.Errorf("iteration %v s, want %v", s.iterTime, want)
	}
	for n, o := range d.occ {
		if want := 2.0 / 3; math.Abs(o.flows-want) > 1e-12 {
			t.Errorf("node %d carries %v flows, want two at a third of the time, %v", n, o.flows, want)
		}
	}
}

// TestSSPEndMatchesSchedule: Sync.IterTime's SSP end, one row of finish
// times, is SSPSchedule's last row's maximum bit for bit, over random
// compute and exchange times, bounds and sizes.
func TestSSPEndMatchesSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		K, w, s := 1+rng.IntN(70), 1+rng.IntN(9), rng.IntN(6)
		c := make([][]float64, K)
		for k := range c {
			c[k] = make([]float64, w)
			for i := range c[k] {
				c[k][i] = rng.ExpFloat64()
			}
		}
		m := make([]float64, w)
		for i := range m {
			m[i] = rng.Float64()
		}
		f := SSPSchedule(c, m, s)
		want := 0.0
		for _, x := range f[K-1] {
			want = max(want, x)
		}
		if got := sspEnd(c, m, s); got != want {
			t.Fatalf("K %d, w %d, s %d: %v, want %v", K, w, s, got, want)
		}
	}
}
