package jitter

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/drover-sched/drover/internal/fastexp"
	"github.com/drover-sched/drover/internal/mustjson"
)

// Params are the numbers of the slowdown process. A job's worker w has, in
// iteration t, the slowdown
//
//	s[w,t] = exp(L * (sqrt(P)*a[w] + sqrt(1-P)*e[w,t])) * b[w,t]
//
// where L is the job's variation level, a[w] ~ N(0,1) is drawn once per
// worker, e[w,t] is a stationary AR(1) series with unit variance, and b[w,t]
// is 1 outside a straggler episode and the episode's slowdown inside one.
type Params struct {
	// LevelMedian is the median over jobs of the job's variation level L:
	// the standard deviation of a worker's log slowdown outside straggler
	// episodes. It is > 0.
	LevelMedian float64 `json:"level_median"`
	// LevelSpreadLow and LevelSpreadHigh are the standard deviations of
	// log L across jobs below and above the median (log L is a two-piece
	// normal: log L = log LevelMedian + z*spread, z ~ N(0,1), with the low
	// spread for z < 0). Real jobs differ by orders of magnitude, and more
	// so above the median. Both are >= 0.
	LevelSpreadLow  float64 `json:"level_spread_low"`
	LevelSpreadHigh float64 `json:"level_spread_high"`
	// Persistent is the share P in [0, 1] of a worker's log-slowdown
	// variance that is fixed for the life of the job (the per-worker
	// factor); the rest is per-iteration noise.
	Persistent float64 `json:"persistent"`
	// NoiseAR is the lag-one autocorrelation in [0, 1) of the per-iteration
	// noise e (an AR(1) process in log space, scaled to unit variance).
	NoiseAR float64 `json:"noise_ar"`
	// StragglerRate is the probability in [0, 1] that a worker outside an
	// episode enters a straggler episode in a given iteration.
	StragglerRate float64 `json:"straggler_rate"`
	// StragglerLength is the mean episode length in iterations (>= 1); an
	// episode ends after each iteration with probability 1/StragglerLength,
	// so its length is geometric.
	StragglerLength float64 `json:"straggler_length"`
	// StragglerSlowdown is the median slowdown factor (> 1) of an episode;
	// it multiplies the worker's other factors for the whole episode.
	StragglerSlowdown float64 `json:"straggler_slowdown"`
	// StragglerSpread is the standard deviation (>= 0) across episodes of
	// log(slowdown - 1): an episode slows its worker by
	// 1 + (StragglerSlowdown-1)*exp(StragglerSpread*z), z ~ N(0,1).
	StragglerSpread float64 `json:"straggler_spread"`
}

// ErrParams is wrapped by the error Validate returns.
var ErrParams = errors.New("jitter: invalid params")

// Validate reports whether every field is in its documented range.
func (p Params) Validate() error {
	if p.valid() {
		return nil // New validates at every call: the common case is cheap
	}
	return p.check()
}

// check is Validate's table: the error naming the first field out of its
// range, or nil.
func (p Params) check() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	check := []struct {
		name string
		v    float64
		ok   bool
	}{
		{"level_median", p.LevelMedian, p.LevelMedian > 0},
		{"level_spread_low", p.LevelSpreadLow, p.LevelSpreadLow >= 0},
		{"level_spread_high", p.LevelSpreadHigh, p.LevelSpreadHigh >= 0},
		{"persistent", p.Persistent, p.Persistent >= 0 && p.Persistent <= 1},
		{"noise_ar", p.NoiseAR, p.NoiseAR >= 0 && p.NoiseAR < 1},
		{"straggler_rate", p.StragglerRate, p.StragglerRate >= 0 && p.StragglerRate <= 1},
		{"straggler_length", p.StragglerLength, p.StragglerLength >= 1},
		{"straggler_slowdown", p.StragglerSlowdown, p.StragglerSlowdown > 1},
		{"straggler_spread", p.StragglerSpread, p.StragglerSpread >= 0},
	}
	for _, c := range check {
		if !finite(c.v) || !c.ok {
			return fmt.Errorf("%w: %s = %v", ErrParams, c.name, c.v)
		}
	}
	return nil
}

// valid reports what Validate checks, without building its error: every
// field finite and in range.
func (p Params) valid() bool {
	finite := func(v float64) bool { return v-v == 0 } // false for NaN and ±Inf
	return finite(p.LevelMedian) && p.LevelMedian > 0 &&
		finite(p.LevelSpreadLow) && p.LevelSpreadLow >= 0 &&
		finite(p.LevelSpreadHigh) && p.LevelSpreadHigh >= 0 &&
		p.Persistent >= 0 && p.Persistent <= 1 &&
		p.NoiseAR >= 0 && p.NoiseAR < 1 &&
		p.StragglerRate >= 0 && p.StragglerRate <= 1 &&
		finite(p.StragglerLength) && p.StragglerLength >= 1 &&
		finite(p.StragglerSlowdown) && p.StragglerSlowdown > 1 &&
		finite(p.StragglerSpread) && p.StragglerSpread >= 0
}

//go:embed params.json
var paramsJSON []byte

// Default returns the fit of Params to the Alibaba PAI v2020 mini-batch
// CoV table (see the package documentation), embedded from params.json
// and decoded on the first call, not at package initialisation.
var Default = sync.OnceValue(func() Params { return mustjson.Decode[Params]("jitter: params.json", paramsJSON) })

//go:embed dedicated.json
var dedicatedJSON []byte

// Dedicated returns the process of workers that hold whole GPUs, embedded from
// dedicated.json. No public trace records per-worker iteration times of
// such jobs (the PAI v2020 mini-batch jobs share GPUs), so it keeps
// Default's shape (persistent share, noise autocorrelation, episode length
// and magnitude) with three changes: the level's upper spread is its lower
// one (Default's heavy upper tail, level_spread_high 2.4 against 0.58,
// comes from jobs squeezed by their GPU's co-tenants, which a dedicated
// GPU does not have); the level's median is 0.02 (a worker's compute time
// varies by about 2% from its typical one), calibrated with the dedicated
// regime's burst noise to the papers' measurement of stragglers on
// dedicated GPUs (see env/trace's RegimeDedicated and drover calibrate);
// and the straggler episodes start at Default's rate scaled by the same
// factor as the level (0.02 / 0.07782: on a dedicated GPU the other work
// that disturbs a worker, steadily or in bursts, shrinks alike), 5.5e-5
// per iteration.
// Like Default, it is decoded on the first call.
var Dedicated = sync.OnceValue(func() Params { return mustjson.Decode[Params]("jitter: dedicated.json", dedicatedJSON) })

// Process draws the per-worker slowdowns of one job, iteration by
// iteration. It is deterministic given its rand.Source and not safe for
// concurrent use.
//
// It draws from two streams split off its source: the noise stream gives
// the job's level, the per-worker factors and one normal per worker per
// iteration; the episode stream gives the straggler episodes. An episode's
// start and end are a two-state Markov chain with per-iteration transition
// probabilities StragglerRate and 1/StragglerLength, so the time to the
// next transition is geometric: the process draws it once per transition
// (and the magnitude once per episode) instead of a uniform every
// iteration, which is the same law at a third of the draws. The uniform
// behind a holding time is drawn when the time starts; its logarithm,
// which turns it into a number of iterations, is only taken when the
// count could end (see worker), since most jobs end long before a worker's
// next episode.
type Process struct {
	p     Params
	noise rand.Rand // the noise stream, over the caller's source
	ep    rand.Rand // the episode stream, over epSrc
	epSrc rand.PCG  // its source
	level float64   // the job's variation level L
	w     []worker
	scale float64 // L*sqrt(1-P)
	innov float64 // sqrt(1-NoiseAR^2)
	exit  float64 // 1/StragglerLength
	// lnStay[0] and lnStay[1] are log(1 - p) for the transition
	// probability p outside and inside an episode.
	lnStay [2]float64
	// loPer[i] is (1-1e-9) / -lnStay[i], which turns 1-u into a lower
	// bound of a holding time (see hold); used when lnStay[i] is finite
	// and negative.
	loPer [2]float64
}

// worker is one worker's state, kept together: Next reads all of it.
type worker struct {
	base  float64 // L*sqrt(P)*a[w]
	noise float64 // e[w], the AR(1) state
	slow  float64 // episode slowdown b[w]; 0 outside an episode
	// left counts the iterations until the worker's next transition; while
	// u > 0 the holding time is not resolved yet, and left counts down to
	// lo instead, a lower bound of it: the exact time, wait(u), is
	// computed when left reaches 0 (see hold).
	left int64
	lo   int64
	u    float64
}

// inlineWorkers is the most workers New allocates together with the
// Process (one: most jobs in the traces have one GPU, and a larger array
// would cost them memory for nothing).
const inlineWorkers = 1

// New returns the process of one job with the given number of workers,
// drawing the job's level, the per-worker factors and the initial state
// (stationary: the noise at its stationary law, each worker in an episode
// with the stationary probability) from src. It returns an error wrapping
// ErrParams for invalid p and panics when workers < 1.
func New(p Params, workers int, src rand.Source) (*Process, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 {
		panic("jitter: workers must be >= 1")
	}
	var q *Process
	if workers <= inlineWorkers {
		// The process and its worker in one object.
		both := &struct {
			Process
			w [inlineWorkers]worker
		}{}
		q = &both.Process
		q.w = both.w[:workers]
	} else {
		q = &Process{w: make([]worker, workers)}
	}
	q.p = p
	q.innov = math.Sqrt(1 - p.NoiseAR*p.NoiseAR)
	q.exit = 1 / p.StragglerLength
	q.ep = *rand.New(&q.epSrc)
	q.lnStay = [2]float64{math.Log1p(-p.StragglerRate), math.Log1p(-q.exit)}
	for i, ln := range q.lnStay {
		q.loPer[i] = (1 - 1e-9) / -ln
	}
	q.Reset(src)
	return q, nil
}

// Reset redraws the process from src as New(p, q.Workers(), src) would,
// with the same draws, reusing its memory: for callers that draw many
// independent jobs of one size (a Monte Carlo over jobs).
func (q *Process) Reset(src rand.Source) {
	q.noise = *rand.New(src)
	q.reset()
}

// reset draws the job's level, the per-worker factors and the initial
// state from the noise stream and the episode stream split off it.
func (q *Process) reset() {
	p := q.p
	r := &q.noise
	q.epSrc.Seed(r.Uint64(), r.Uint64())
	z := r.NormFloat64()
	if z < 0 {
		q.level = p.LevelMedian * math.Exp(p.LevelSpreadLow*z)
	} else {
		q.level = p.LevelMedian * math.Exp(p.LevelSpreadHigh*z)
	}
	q.scale = q.level * math.Sqrt(1-p.Persistent)
	pers := q.level * math.Sqrt(p.Persistent)
	// Stationary share of iterations in an episode.
	on := 0.0
	if p.StragglerRate > 0 {
		on = p.StragglerRate / (p.StragglerRate + q.exit)
	}
	for i := range q.w {
		// A fixed number of draws per worker from each stream, whatever
		// the params, so that runs with different params share their
		// random numbers.
		a, e := r.NormFloat64(), r.NormFloat64()
		u, z := q.ep.Float64(), q.ep.NormFloat64()
		w := &q.w[i]
		w.base = pers * a
		w.noise = e
		w.slow = 0
		in := 0
		if u < on {
			w.slow = q.magnitude(z)
			in = 1
		}
		// Geometric holding times are memoryless: the stationary state's
		// remaining time has the same law as a fresh one.
		q.hold(w, in)
	}
}

// maxWait stands for "never" (a transition probability of 0).
const maxWait = 1 << 62

// hold draws w's holding time in state in (0 outside an episode, 1
// inside): the number of iterations (>= 1) until its next transition,
// wait(in, U) for U uniform on (0, 1]. When a lower bound lo >= 1 of it
// is certain without the logarithm (1 - U <= -log U), it keeps U and
// counts down to lo; Next resolves the exact time if the count gets there.
func (q *Process) hold(w *worker, in int) {
	u := 1 - q.ep.Float64()
	ln := q.lnStay[in]
	if ln < 0 && !math.IsInf(ln, 0) {
		// wait = 1 + floor(log(u)/ln) >= 1 + floor((1-u)/-ln), and the
		// computed product is within a few ulps of the exact quotient: a
		// relative margin of 1e-9 keeps lo below wait. (lo only decides
		// when wait(u) is computed: the holding time is wait(u) whatever
		// it is.)
		if a := (1 - u) * q.loPer[in]; a >= 1 && a < 1<<53 {
			w.lo = int64(a)
			w.left, w.u = w.lo, u
			return
		}
	}
	w.left, w.u = wait(u, ln), 0
}

// wait returns the number of iterations (>= 1) until the next transition
// out of a state whose staying probability 1-p has logarithm ln, for the
// uniform u on (0, 1]: 1 + floor(log(u) / ln), geometric with success
// probability p.
func wait(u, ln float64) int64 {
	if ln == 0 { // p = 0: never
		return maxWait
	}
	n := math.Floor(math.Log(u) / ln) // +Inf / -Inf cases: p = 1 gives 0
	if !(n < maxWait-1) {
		return maxWait
	}
	return 1 + int64(n)
}

// magnitude is an episode's slowdown for the standard normal draw z.
func (q *Process) magnitude(z float64) float64 {
	return 1 + (q.p.StragglerSlowdown-1)*math.Exp(q.p.StragglerSpread*z)
}

// Prefetch reads the state that Next reads and changes nothing: a caller
// about to call Next on many processes can Prefetch them all first, so
// that their memory loads overlap instead of stalling one Next after
// another. What it returns means nothing.
func (q *Process) Prefetch() float64 {
	x := q.p.NoiseAR + q.innov + q.scale
	if n := len(q.w); n > 0 {
		x += q.w[0].noise + q.w[n-1].noise
	}
	return x
}

// Workers returns the number of workers.
func (q *Process) Workers() int { return len(q.w) }

// Level returns the job's variation level L drawn by New.
func (q *Process) Level() float64 { return q.level }

// InEpisode reports whether worker w is in a straggler episode in the
// iteration last drawn by Next (or initially, before the first Next).
func (q *Process) InEpisode(w int) bool { return q.w[w].slow > 0 }

// Episodes returns how many workers are in a straggler episode in the
// iteration last drawn by Next.
func (q *Process) Episodes() int {
	n := 0
	for i := range q.w {
		if q.w[i].slow > 0 {
			n++
		}
	}
	return n
}

// maxLog bounds the log slowdown outside episodes so that it stays finite
// (e^50 is about 5e21) however large the level.
const maxLog = 50

// Next advances the process by one iteration and writes each worker's
// multiplicative slowdown (> 0; the median worker outside episodes is
// about 1) into dst. It panics unless len(dst) == Workers().
func (q *Process) Next(dst []float64) {
	if len(dst) != len(q.w) {
		panic("jitter: dst length mismatch")
	}
	phi := q.p.NoiseAR
	for i := range dst {
		w := &q.w[i]
		w.noise = phi*w.noise + q.innov*q.noise.NormFloat64()
		if w.left--; w.left == 0 {
			q.step(w)
		}
		y := w.base + q.scale*w.noise
		// Clamped by comparisons (min and max on floats carry NaN and
		// signed-zero rules this loop does not need; y is finite).
		if y > maxLog {
			y = maxLog
		} else if y < -maxLog {
			y = -maxLog
		}
		s := fastexp.Exp(y)
		if w.slow > 0 {
			s *= w.slow
		}
		dst[i] = s
	}
}

// step handles w's count reaching 0 in Next: the end of its holding time,
// a transition, or, for a holding time not resolved yet, its lower bound,
// where the exact time is computed and the count goes on if it is longer.
func (q *Process) step(w *worker) {
	if w.u > 0 {
		in := 0
		if w.slow > 0 {
			in = 1
		}
		w.left, w.u = wait(w.u, q.lnStay[in])-w.lo, 0
		if w.left > 0 {
			return
		}
	}
	if w.slow > 0 {
		w.slow = 0
		q.hold(w, 0)
	} else {
		w.slow = q.magnitude(q.ep.NormFloat64())
		q.hold(w, 1)
	}
}

// CoV returns the coefficient of variation of xs with the population
// standard deviation, sqrt(mean((x-mean)^2)) / mean, as the dataset's
// README defines it. It is NaN for an empty xs and for a zero mean.
func CoV(xs []float64) float64 {
	m, ss := meanSS(xs)
	return math.Sqrt(ss/float64(len(xs))) / m
}

// SampleCoV returns the coefficient of variation of xs with the sample
// standard deviation, sqrt(sum((x-mean)^2)/(n-1)) / mean: sqrt(n/(n-1))
// times CoV. The PAI v2020 CoV table was computed this way (pandas'
// default): 908 of its values exceed 3, the largest population CoV that 10
// non-negative values can have, and none exceeds sqrt(10). It is NaN when
// len(xs) < 2 or the mean is 0.
func SampleCoV(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m, ss := meanSS(xs)
	return math.Sqrt(ss/float64(len(xs)-1)) / m
}

// meanSS returns the mean of xs and the sum of squared deviations from it.
func meanSS(xs []float64) (mean, ss float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, ss
}

// DefaultThreshold is the straggler threshold of the cluster model: a
// worker straggles when its time exceeds the job median by more than 20%.
const DefaultThreshold = 0.2

// HasStraggler reports whether some worker's time in xs exceeds the median
// of xs by more than threshold (a fraction: 0.2 = 20%), that is,
// x > (1+threshold)*median.
func HasStraggler(xs []float64, threshold float64) bool {
	return Stragglers(xs, threshold) > 0
}

// Stragglers returns how many values in xs exceed (1+threshold) times the
// median of xs (the mean of the two middle values for an even length).
func Stragglers(xs []float64, threshold float64) int {
	if len(xs) == 0 {
		return 0
	}
	lim := (1 + threshold) * median(xs)
	n := 0
	for _, x := range xs {
		if x > lim {
			n++
		}
	}
	return n
}

// median returns the median of xs without modifying it.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	k := len(s) / 2
	if len(s)%2 == 1 {
		return s[k]
	}
	return (s[k-1] + s[k]) / 2
}

// StragglerFraction returns the fraction of the rows of times (iterations
// by workers) for which HasStraggler holds; 0 for no rows.
func StragglerFraction(times [][]float64, threshold float64) float64 {
	if len(times) == 0 {
		return 0
	}
	n := 0
	for _, xs := range times {
		if HasStraggler(xs, threshold) {
			n++
		}
	}
	return float64(n) / float64(len(times))
}
