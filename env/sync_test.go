package env_test

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
)

// Two iterations of three workers; worker 2 is slow in the first
// iteration, worker 0 in the second. Communication 0.5 s on every link but
// worker 1's, which is congested (1 s).
var (
	cTimes = [][]float64{{1, 1, 3}, {2, 1, 1}}
	mTimes = []float64{0.5, 1, 0.5}
)

func TestIterTimeHandWorked(t *testing.T) {
	tests := []struct {
		name string
		s    env.Sync
		want float64
	}{
		// BSP: (max(1,1,3) + max(2,1,1))/2 + max m = 2.5 + 1 = 3.5.
		{"bsp is the slowest worker", env.Sync{Kind: env.BSP}, 3.5},
		// ASP: a = (1.5+0.5, 1+1, 2+0.5) = (2, 2, 2.5); 3/(1/2+1/2+1/2.5) = 3/1.4.
		{"asp is the harmonic pace", env.Sync{Kind: env.ASP}, 3 / 1.4},
		// SSP(1): iteration 0 ends at (1.5, 2, 3.5); nobody waits for
		// iteration 1, which ends at (4, 4, 5): 5 s for 2 iterations.
		{"ssp(1) absorbs one iteration of jitter", env.Sync{Kind: env.SSP, Staleness: 1}, 2.5},
		// SSP(0): a barrier at 3.5, then (6, 5.5, 5): 6 s for 2.
		{"ssp(0) waits each iteration", env.Sync{Kind: env.SSP, Staleness: 0}, 3},
		// Local SGD(2): max window mean (1.5, 1, 2) = 2, plus max m / 2 = 0.5.
		{"local(2)", env.Sync{Kind: env.LocalSGD, Period: 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.IterTime(cTimes, mTimes); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("%v: got %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestBSPIsSlowestWorker(t *testing.T) {
	// One iteration, no communication: BSP takes exactly the slowest time.
	c := [][]float64{{0.7, 1.9, 1.2, 0.4}}
	if got := (env.Sync{}).IterTime(c, []float64{0, 0, 0, 0}); got != 1.9 {
		t.Errorf("BSP iteration = %v, want the slowest worker's 1.9", got)
	}
}

func TestStrategyOrdering(t *testing.T) {
	// With jitter, waiting less is never slower: ASP <= SSP(s) <= BSP.
	bsp := env.Sync{Kind: env.BSP}.IterTime(cTimes, mTimes)
	ssp := env.Sync{Kind: env.SSP, Staleness: 1}.IterTime(cTimes, mTimes)
	asp := env.Sync{Kind: env.ASP}.IterTime(cTimes, mTimes)
	if !(asp <= ssp && ssp <= bsp) {
		t.Errorf("asp %v, ssp %v, bsp %v: want asp <= ssp <= bsp", asp, ssp, bsp)
	}
}

func TestParseSync(t *testing.T) {
	for in, want := range map[string]env.Sync{
		"bsp": {Kind: env.BSP}, "ASP": {Kind: env.ASP}, "ssp(4)": {Kind: env.SSP, Staleness: 4},
		"ssp:2": {Kind: env.SSP, Staleness: 2}, "local(16)": {Kind: env.LocalSGD, Period: 16},
	} {
		got, err := env.ParseSync(in)
		if err != nil || got != want {
			t.Errorf("ParseSync(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gossip", "ssp(x)", "local(0)", "ssp(-1)"} {
		if _, err := env.ParseSync(bad); err == nil {
			t.Errorf("ParseSync(%q) succeeded", bad)
		}
	}
}

func TestSSPBound(t *testing.T) {
	// Random compute times (a fixed-seed LCG): whenever a worker starts an
	// iteration k, every worker has completed at least k-s iterations.
	var x uint64 = 1
	rnd := func() float64 { x = x*6364136223846793005 + 1442695040888963407; return float64(x>>11) / (1 << 53) }
	for _, s := range []int{0, 1, 3, 7} {
		K, w := 40, 6
		c := make([][]float64, K)
		for k := range c {
			c[k] = make([]float64, w)
			for i := range c[k] {
				c[k][i] = 0.1 + rnd()*rnd()*5 // heavy right tail
			}
		}
		m := []float64{0.1, 0.2, 0, 0.3, 0.1, 0.05}
		f := env.SSPSchedule(c, m, s)
		for k := range K {
			for i := range w {
				start := f[k][i] - c[k][i] - m[i]
				for j := range w {
					done := 0
					for done < K && f[done][j] <= start+1e-12 {
						done++
					}
					if done < k-s {
						t.Fatalf("s=%d: worker %d starts iteration %d at %.3f when worker %d has completed only %d", s, i, k, start, j, done)
					}
				}
			}
		}
	}
}
