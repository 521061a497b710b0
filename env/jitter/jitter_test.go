package jitter

import (
	"errors"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"
)

func TestCoV(t *testing.T) {
	tests := []struct {
		name         string
		xs           []float64
		pop, sample  float64
		wantPopIsNaN bool
	}{
		// mean 1.5; squared deviations 0.25*3 + 2.25 = 3; population std
		// sqrt(3/4) = 0.8660, sample std sqrt(3/3) = 1.
		{name: "1,1,1,3", xs: []float64{1, 1, 1, 3}, pop: math.Sqrt(0.75) / 1.5, sample: 1 / 1.5},
		{name: "constant", xs: []float64{2, 2, 2}, pop: 0, sample: 0},
		// One of 10 workers is busy, the rest take no time: population
		// CoV sqrt(n-1) = 3, sample CoV sqrt(n) = sqrt(10), the bounds.
		{name: "one of ten", xs: []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, pop: 3, sample: math.Sqrt(10)},
		{name: "empty", xs: nil, wantPopIsNaN: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CoV(tt.xs)
			if tt.wantPopIsNaN {
				if !math.IsNaN(got) || !math.IsNaN(SampleCoV(tt.xs)) {
					t.Fatalf("CoV = %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tt.pop) > 1e-12 {
				t.Errorf("CoV = %v, want %v", got, tt.pop)
			}
			if s := SampleCoV(tt.xs); math.Abs(s-tt.sample) > 1e-12 {
				t.Errorf("SampleCoV = %v, want %v", s, tt.sample)
			}
		})
	}
	if got := CoV([]float64{1, 1, 1, 3}); math.Abs(got-0.5774) > 5e-5 {
		t.Errorf("CoV(1,1,1,3) = %v, want 0.5774", got)
	}
}

// naiveCoV is CoV by the textbook formula sqrt(E[x^2] - E[x]^2) / E[x].
func naiveCoV(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	m := s / n
	return math.Sqrt(math.Max(0, s2/n-m*m)) / m
}

func TestCoVQuick(t *testing.T) {
	f := func(raw [10]uint16) bool {
		xs := make([]float64, len(raw))
		for i, v := range raw {
			xs[i] = 1 + float64(v)
		}
		return math.Abs(CoV(xs)-naiveCoV(xs)) < 1e-9
	}
	if err := quick.Check(f, &quick.Config{Rand: newQuickRand()}); err != nil {
		t.Error(err)
	}
}

func TestHasStraggler(t *testing.T) {
	tests := []struct {
		name      string
		xs        []float64
		threshold float64
		want      int
	}{
		{name: "equal", xs: []float64{1, 1, 1, 1}, threshold: 0.2, want: 0},
		{name: "exactly 20% is not more", xs: []float64{1, 1, 1, 1.2}, threshold: 0.2, want: 0},
		{name: "21% is", xs: []float64{1, 1, 1, 1.21}, threshold: 0.2, want: 1},
		// Even length: sorted 1, 1.2, 1.4, 1.9; median 1.3, limit 1.56.
		{name: "even median", xs: []float64{1, 1.9, 1.2, 1.4}, threshold: 0.2, want: 1},
		// Odd length: median 10, limit 15.
		{name: "two stragglers", xs: []float64{10, 16, 9, 30, 10}, threshold: 0.5, want: 2},
		{name: "fast workers do not count", xs: []float64{0.1, 1, 1}, threshold: 0.2, want: 0},
		{name: "empty", xs: nil, threshold: 0.2, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stragglers(tt.xs, tt.threshold); got != tt.want {
				t.Errorf("Stragglers = %d, want %d", got, tt.want)
			}
			if got := HasStraggler(tt.xs, tt.threshold); got != (tt.want > 0) {
				t.Errorf("HasStraggler = %v, want %v", got, tt.want > 0)
			}
		})
	}
	times := [][]float64{{1, 1, 1}, {1, 1, 2}, {1, 2, 2}, {3, 1, 1}}
	if got := StragglerFraction(times, 0.2); got != 0.5 {
		t.Errorf("StragglerFraction = %v, want 0.5", got)
	}
}

// newQuickRand is testing/quick's generator, seeded (math/rand v1 is what
// quick.Config takes).
func newQuickRand() *mrand.Rand { return mrand.New(mrand.NewSource(1)) }

func draw(t *testing.T, p Params, workers, iters int, seed uint64) [][]float64 {
	t.Helper()
	q, err := New(p, workers, rand.NewPCG(seed, 1))
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, iters)
	for i := range out {
		out[i] = make([]float64, workers)
		q.Next(out[i])
	}
	return out
}

func TestDeterminism(t *testing.T) {
	a := draw(t, Default(), 10, 500, 7)
	b := draw(t, Default(), 10, 500, 7)
	c := draw(t, Default(), 10, 500, 8)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("iteration %d: same seed, different draws %v vs %v", i, a[i], b[i])
		}
	}
	differ := false
	for i := range a {
		differ = differ || !slices.Equal(a[i], c[i])
	}
	if !differ {
		t.Fatal("different seeds gave the same sequence")
	}
	for _, row := range a {
		for _, v := range row {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("slowdown %v, want finite and > 0", v)
			}
		}
	}
}

// TestTypicalWorker checks the normalisation: without stragglers the
// median slowdown over workers and iterations is about 1 (the log slowdown
// is a centred normal).
func TestTypicalWorker(t *testing.T) {
	p := Default()
	p.StragglerRate = 0
	var all []float64
	for seed := range uint64(200) {
		for _, row := range draw(t, p, 10, 50, seed) {
			all = append(all, row...)
		}
	}
	slices.Sort(all)
	if m := all[len(all)/2]; math.Abs(math.Log(m)) > 0.05 {
		t.Errorf("median slowdown %v, want about 1", m)
	}
}

// TestEpisodeLength checks that straggler episodes last StragglerLength
// iterations on average. Lengths are geometric with mean L and standard
// deviation sqrt(L(L-1)) < L, so the mean of n episodes is within 4L/sqrt(n)
// of L but with probability about 1e-4.
func TestEpisodeLength(t *testing.T) {
	for _, L := range []float64{1, 5, 40} {
		p := Params{LevelMedian: 0.05, Persistent: 0.5, NoiseAR: 0.5,
			StragglerRate: 0.01, StragglerLength: L, StragglerSlowdown: 3, StragglerSpread: 0.3}
		q, err := New(p, 8, rand.NewPCG(3, uint64(L)))
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, 8)
		run := make([]int, 8)
		for w := range run {
			if q.InEpisode(w) {
				run[w] = -1 << 30 // already running: its length is unknown
			}
		}
		var total, n, in int
		const iters = 200000
		for range iters {
			q.Next(xs)
			for w := range run {
				if q.InEpisode(w) {
					in++
				}
				switch {
				case q.InEpisode(w):
					run[w]++
				case run[w] > 0:
					total += run[w]
					n++
					run[w] = 0
				default:
					run[w] = 0
				}
			}
		}
		mean := float64(total) / float64(n)
		if tol := 4 * L / math.Sqrt(float64(n)); math.Abs(mean-L) > tol {
			t.Errorf("L=%v: mean episode length %v over %d episodes, want within %v", L, mean, n, tol)
		}
		// The stationary share of episode time is pi = r/(r+1/L). For a
		// two-state chain whose transition probabilities sum to a = r+1/L,
		// the occupancy of N steps has variance pi(1-pi)(2-a)/(a N); 8
		// independent workers make N = 8 x iters, and 5 sigma bounds it.
		r, a := p.StragglerRate, p.StragglerRate+1/L
		pi := r / a
		N := float64(8 * iters)
		share := float64(in) / N
		if tol := 5 * math.Sqrt(pi*(1-pi)*(2-a)/(a*N)); math.Abs(share-pi) > tol {
			t.Errorf("L=%v: episode share %v, want %v within %v", L, share, pi, tol)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*Params){
		func(p *Params) { p.LevelMedian = 0 },
		func(p *Params) { p.LevelSpreadHigh = math.NaN() },
		func(p *Params) { p.Persistent = 1.5 },
		func(p *Params) { p.NoiseAR = 1 },
		func(p *Params) { p.StragglerRate = -0.1 },
		func(p *Params) { p.StragglerLength = 0.5 },
		func(p *Params) { p.StragglerSlowdown = 1 },
		func(p *Params) { p.StragglerSpread = math.Inf(1) },
	}
	for i, mod := range bad {
		p := Default()
		mod(&p)
		if _, err := New(p, 4, rand.NewPCG(1, 1)); !errors.Is(err, ErrParams) {
			t.Errorf("case %d: New error %v, want ErrParams", i, err)
		}
	}
}

func TestValidFastPathIsCheck(t *testing.T) {
	// valid (Validate's fast path) against check (the table that names the
	// field): same verdict on every field at its edges, NaN and ±Inf, and
	// on random mixes of those.
	edges := []float64{math.NaN(), math.Inf(-1), math.Inf(1), -0.1, 0, 0.5, 1, 1.5, math.MaxFloat64}
	p := Default()
	fields := []*float64{&p.LevelMedian, &p.LevelSpreadLow, &p.LevelSpreadHigh, &p.Persistent, &p.NoiseAR,
		&p.StragglerRate, &p.StragglerLength, &p.StragglerSlowdown, &p.StragglerSpread}
	agree := func() bool { return p.valid() == (p.check() == nil) }
	for i, f := range fields {
		for _, v := range edges {
			p = Default()
			*f = v
			if !agree() {
				t.Errorf("field %d = %v: valid %v, check %v", i, v, p.valid(), p.check())
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 3))
	for range 20000 {
		p = Default()
		for _, f := range fields {
			if r.IntN(4) == 0 {
				*f = edges[r.IntN(len(edges))]
			}
		}
		if !agree() {
			t.Fatalf("%+v: valid %v, check %v", p, p.valid(), p.check())
		}
	}
}

func TestResetIsNew(t *testing.T) {
	// A process reset from a source draws exactly what a new process from
	// the same source draws, whatever it drew before.
	p := Default()
	p.StragglerRate = 0.05 // episodes in most draws
	q, err := New(p, 7, rand.NewPCG(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	got, want := make([]float64, 7), make([]float64, 7)
	for seed := range uint64(20) {
		for range 3 {
			q.Next(got) // some history to forget
		}
		q.Reset(rand.NewPCG(seed, 99))
		fresh, err := New(p, 7, rand.NewPCG(seed, 99))
		if err != nil {
			t.Fatal(err)
		}
		if q.Level() != fresh.Level() || q.Episodes() != fresh.Episodes() {
			t.Fatalf("seed %d: level %v episodes %d, want %v and %d", seed, q.Level(), q.Episodes(), fresh.Level(), fresh.Episodes())
		}
		for range 50 {
			q.Next(got)
			fresh.Next(want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("seed %d: %v, want %v", seed, got, want)
				}
			}
		}
	}
}
