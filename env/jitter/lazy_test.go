package jitter

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/internal/fastexp"
)

// eager is the process as it was before holding times were resolved
// lazily: every holding time's logarithm taken when it is drawn. It is the
// obviously correct version Process must match draw for draw.
type eager struct {
	p      Params
	rng    *rand.Rand
	ep     *rand.Rand
	epSrc  rand.PCG
	level  float64
	base   []float64
	noise  []float64
	slow   []float64
	left   []int64
	scale  float64
	innov  float64
	exit   float64
	lnStay [2]float64
}

func newEager(p Params, workers int, src rand.Source) *eager {
	q := &eager{p: p, base: make([]float64, workers), noise: make([]float64, workers), slow: make([]float64, workers),
		left: make([]int64, workers), innov: math.Sqrt(1 - p.NoiseAR*p.NoiseAR), exit: 1 / p.StragglerLength}
	q.ep = rand.New(&q.epSrc)
	q.lnStay = [2]float64{math.Log1p(-p.StragglerRate), math.Log1p(-q.exit)}
	r := rand.New(src)
	q.rng = r
	q.epSrc.Seed(r.Uint64(), r.Uint64())
	z := r.NormFloat64()
	if z < 0 {
		q.level = p.LevelMedian * math.Exp(p.LevelSpreadLow*z)
	} else {
		q.level = p.LevelMedian * math.Exp(p.LevelSpreadHigh*z)
	}
	q.scale = q.level * math.Sqrt(1-p.Persistent)
	pers := q.level * math.Sqrt(p.Persistent)
	on := 0.0
	if p.StragglerRate > 0 {
		on = p.StragglerRate / (p.StragglerRate + q.exit)
	}
	for w := range q.base {
		a, e := r.NormFloat64(), r.NormFloat64()
		u, z := q.ep.Float64(), q.ep.NormFloat64()
		q.base[w] = pers * a
		q.noise[w] = e
		in := 0
		if u < on {
			q.slow[w] = q.magnitude(z)
			in = 1
		}
		q.left[w] = q.wait(in)
	}
	return q
}

func (q *eager) wait(in int) int64 {
	u := 1 - q.ep.Float64()
	ln := q.lnStay[in]
	if ln == 0 {
		return maxWait
	}
	n := math.Floor(math.Log(u) / ln)
	if !(n < maxWait-1) {
		return maxWait
	}
	return 1 + int64(n)
}

func (q *eager) magnitude(z float64) float64 {
	return 1 + (q.p.StragglerSlowdown-1)*math.Exp(q.p.StragglerSpread*z)
}

func (q *eager) next(dst []float64) {
	phi := q.p.NoiseAR
	for w := range dst {
		q.noise[w] = phi*q.noise[w] + q.innov*q.rng.NormFloat64()
		if q.left[w]--; q.left[w] == 0 {
			if q.slow[w] > 0 {
				q.slow[w] = 0
				q.left[w] = q.wait(0)
			} else {
				q.slow[w] = q.magnitude(q.ep.NormFloat64())
				q.left[w] = q.wait(1)
			}
		}
		y := min(max(q.base[w]+q.scale*q.noise[w], -maxLog), maxLog)
		s := fastexp.Exp(y)
		if q.slow[w] > 0 {
			s *= q.slow[w]
		}
		dst[w] = s
	}
}

// TestLazyHoldingTimes: Process, which takes a holding time's logarithm
// only when its count could end, draws exactly what the eager version
// draws, iteration by iteration, over params from the calibrated ones to
// episodes at every iteration (rates of 0 and 1 included), and after a
// Reset.
func TestLazyHoldingTimes(t *testing.T) {
	with := func(rate, length float64) Params {
		p := Default()
		p.StragglerRate, p.StragglerLength = rate, length
		return p
	}
	tests := []struct {
		name  string
		p     Params
		iters int
	}{
		{"default", Default(), 3000},
		{"dedicated", Dedicated(), 3000},
		{"frequent", with(0.05, 4), 3000},
		{"short episodes", with(0.3, 1.5), 2000},
		{"every iteration", with(1, 1), 500},
		{"never", with(0, 32.5), 500},
		{"endless episodes", with(0.5, math.MaxFloat64), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(6) {
				workers := 1 + int(seed)*5
				q, err := New(tt.p, workers, rand.NewPCG(seed, 7))
				if err != nil {
					t.Fatal(err)
				}
				if seed%2 == 1 {
					q.Reset(rand.NewPCG(seed, 7)) // the same draws again
				}
				ref := newEager(tt.p, workers, rand.NewPCG(seed, 7))
				got, want := make([]float64, workers), make([]float64, workers)
				for it := range tt.iters {
					q.Next(got)
					ref.next(want)
					for w := range got {
						if got[w] != want[w] || q.InEpisode(w) != (ref.slow[w] > 0) {
							t.Fatalf("seed %d, iteration %d, worker %d: %v (episode %v), want %v (episode %v)",
								seed, it, w, got[w], q.InEpisode(w), want[w], ref.slow[w] > 0)
						}
					}
				}
			}
		})
	}
}
