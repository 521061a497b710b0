package gym

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
)

// AutoresetMode says how a Vector restarts an env whose episode ended,
// following Gymnasium's gymnasium.vector.AutoresetMode.
type AutoresetMode int

const (
	// NextStep is Gymnasium's default since 1.0. The step on which an
	// episode ends returns its last observation, reward and flags as
	// usual. The env's next Vector.Step ignores its action, resets the
	// env, and returns the reset observation with reward 0, terminated
	// and truncated false, and the reset's info. A learner must therefore
	// drop (mask out) the transition from an episode's last observation
	// to the reset observation: it is not a transition of the MDP.
	NextStep AutoresetMode = iota

	// SameStep resets the env within the step on which its episode ends.
	// That step returns the reward and flags of the final transition, but
	// Obs[i] and Infos[i] are the reset's observation and info; the
	// episode's last observation and info are in FinalObs[i] and
	// FinalInfos[i] (Gymnasium's info["final_obs"] and
	// info["final_info"]). Bootstrap a truncated episode from FinalObs[i],
	// never from Obs[i].
	SameStep
)

// String returns the mode's Gymnasium name.
func (m AutoresetMode) String() string {
	switch m {
	case NextStep:
		return "next_step"
	case SameStep:
		return "same_step"
	}
	return fmt.Sprintf("AutoresetMode(%d)", int(m))
}

// VectorStep is the result of one Vector.Step: row i of each slice
// belongs to env i. All slices are freshly allocated by each Step and
// belong to the caller.
type VectorStep struct {
	// Obs[i] is env i's observation after the step (in SameStep mode,
	// the first observation of the next episode when env i's episode
	// ended). The rows share one backing array of n*obsDim floats.
	Obs [][]float64
	// Rewards[i] is the reward of env i's transition (0 for a NextStep
	// reset step).
	Rewards []float64
	// Terminated[i] and Truncated[i] are env i's flags for this step.
	Terminated, Truncated []bool
	// Infos[i] is env i's info (the reset's info for a reset).
	Infos []Info
	// FinalObs is nil in NextStep mode. In SameStep mode it has one row
	// per env: FinalObs[i] is the last observation of the episode that
	// env i ended in this step, and nil if it did not end.
	FinalObs [][]float64
	// FinalInfos is like FinalObs for the last step's info.
	FinalInfos []Info
}

// Vector runs n independent envs in lockstep, like Gymnasium's
// SyncVectorEnv and AsyncVectorEnv, and restarts each env whose episode
// ends according to its AutoresetMode. With parallel set, a fixed pool of
// min(n, GOMAXPROCS) goroutines steps contiguous blocks of envs; results
// are bit-identical to the sequential mode because each env is stepped
// by exactly one goroutine and envs share no state. A Vector is not safe
// for concurrent use; call Close to stop its goroutines.
//
// Seeding: Reset(seed) resets env i with seed+i, as Gymnasium's vector
// envs do. Gymnasium's autoreset calls reset() without a seed, continuing
// the env's generator; Env.Reset always takes a seed, so instead the
// Vector draws the seed of env i's next episode from a PCG stream seeded
// with seed+i. Trajectories thus depend on the Reset seed only.
type Vector struct {
	envs     []Env
	mode     AutoresetMode
	obsSpace Box
	actSpace Discrete
	obsDim   int

	reseed   []*rand.Rand // reseed[i] draws env i's autoreset seeds
	ended    []bool       // ended[i]: env i's last step ended its episode
	started  bool
	closed   bool
	masks    bool // the envs implement Masker
	stepInto bool // the envs implement StepperInto

	// The worker pool (nil when sequential). Worker w steps envs
	// [bounds[w], bounds[w+1]) each time it receives on work[w].
	work   []chan struct{}
	bounds []int
	done   sync.WaitGroup // one Done per worker per dispatch
	exited sync.WaitGroup // one Done per worker on exit
	panics []any          // panics[w]: what worker w's envs panicked with

	// The dispatched call, read by the workers after they receive.
	call func(i int)
}

// autoresetStream is the PCG stream of the autoreset seed generators.
const autoresetStream = 0x6175746f7265 // "autore"

// ErrNoEnvs is returned by NewVector when n < 1.
var ErrNoEnvs = errors.New("gym: vector needs at least one env")

// NewVector builds a Vector of n envs, env i made by makeEnv(i). Every env
// must be a distinct value sharing no mutable state with the others, and
// all must have the same observation and action spaces. It returns
// ErrNoEnvs when n < 1 and an error for an unknown mode, a nil env, a
// malformed space or mismatched spaces.
func NewVector(makeEnv func(i int) Env, n int, mode AutoresetMode, parallel bool) (*Vector, error) {
	if n < 1 {
		return nil, ErrNoEnvs
	}
	if mode != NextStep && mode != SameStep {
		return nil, fmt.Errorf("gym: unknown autoreset mode %v", mode)
	}
	v := &Vector{envs: make([]Env, n), mode: mode, reseed: make([]*rand.Rand, n), ended: make([]bool, n)}
	for i := range v.envs {
		e := makeEnv(i)
		if e == nil {
			return nil, fmt.Errorf("gym: makeEnv(%d) returned nil", i)
		}
		v.envs[i] = e
		v.reseed[i] = rand.New(rand.NewPCG(0, autoresetStream))
	}
	v.obsSpace, v.actSpace = v.envs[0].ObservationSpace(), v.envs[0].ActionSpace()
	if err := v.obsSpace.validate(); err != nil {
		return nil, err
	}
	if v.actSpace.N < 1 {
		return nil, fmt.Errorf("gym: action space has %d actions", v.actSpace.N)
	}
	v.obsDim = v.obsSpace.Shape()
	_, v.masks = v.envs[0].(Masker)
	_, v.stepInto = v.envs[0].(StepperInto)
	for i, e := range v.envs[1:] {
		if !e.ObservationSpace().equal(v.obsSpace) || e.ActionSpace() != v.actSpace {
			return nil, fmt.Errorf("gym: env %d's spaces differ from env 0's", i+1)
		}
		_, m := e.(Masker)
		_, s := e.(StepperInto)
		v.masks = v.masks && m
		v.stepInto = v.stepInto && s
	}
	if parallel {
		v.startWorkers(min(n, runtime.GOMAXPROCS(0)))
	}
	return v, nil
}

// startWorkers starts k workers over contiguous, near-equal blocks.
func (v *Vector) startWorkers(k int) {
	n := len(v.envs)
	v.work = make([]chan struct{}, k)
	v.bounds = make([]int, k+1)
	v.panics = make([]any, k)
	for w := range k {
		v.bounds[w+1] = (w + 1) * n / k
		v.work[w] = make(chan struct{})
	}
	v.exited.Add(k)
	for w := range k {
		go v.worker(w)
	}
}

// worker runs the dispatched call on its block until its channel closes.
func (v *Vector) worker(w int) {
	defer v.exited.Done()
	for range v.work[w] {
		v.runBlock(w)
	}
}

// runBlock runs v.call over worker w's block, recording a panic so that
// the caller's goroutine can re-raise it.
func (v *Vector) runBlock(w int) {
	defer v.done.Done()
	defer func() {
		if r := recover(); r != nil {
			v.panics[w] = r
		}
	}()
	for i := v.bounds[w]; i < v.bounds[w+1]; i++ {
		v.call(i)
	}
}

// each runs f(i) for every env i: in order on the calling goroutine, or
// on the pool. A panic in f is re-raised here (the lowest worker's first).
func (v *Vector) each(f func(i int)) {
	if v.closed {
		panic("gym: vector used after Close")
	}
	if v.work == nil {
		for i := range v.envs {
			f(i)
		}
		return
	}
	v.call = f
	v.done.Add(len(v.work))
	for _, c := range v.work {
		c <- struct{}{}
	}
	v.done.Wait()
	v.call = nil
	for w, p := range v.panics {
		if p != nil {
			clear(v.panics)
			if err, ok := p.(error); ok {
				panic(fmt.Errorf("gym: env in worker %d panicked: %w", w, err))
			}
			panic(fmt.Sprintf("gym: env in worker %d panicked: %v", w, p))
		}
	}
}

// NumEnvs returns the number of envs n.
func (v *Vector) NumEnvs() int { return len(v.envs) }

// Mode returns the autoreset mode.
func (v *Vector) Mode() AutoresetMode { return v.mode }

// ObservationSpace returns the observation space of a single env.
func (v *Vector) ObservationSpace() Box { return v.obsSpace }

// ActionSpace returns the action space of a single env.
func (v *Vector) ActionSpace() Discrete { return v.actSpace }

// Reset resets env i with seed+i and returns the first observations and
// infos, freshly allocated and owned by the caller.
func (v *Vector) Reset(seed uint64) ([][]float64, []Info) {
	n := len(v.envs)
	obs, infos := v.rows(), make([]Info, n)
	v.each(func(i int) {
		s := seed + uint64(i)
		v.reseed[i] = rand.New(rand.NewPCG(s, autoresetStream))
		o, info := v.envs[i].Reset(s)
		v.copyObs(obs[i], o, i)
		infos[i] = info
		v.ended[i] = false
	})
	v.started = true
	return obs, infos
}

// Step steps env i with actions[i] (ignored for an env that NextStep
// mode is resetting) and returns the results, with envs whose episode
// ended restarted according to the mode. It panics before the first
// Reset, after Close, when len(actions) != NumEnvs, or when an action
// that is stepped lies outside the action space.
func (v *Vector) Step(actions []int) VectorStep {
	if !v.started {
		panic("gym: vector step before Reset")
	}
	n := len(v.envs)
	if len(actions) != n {
		panic(fmt.Sprintf("gym: %d actions for %d envs", len(actions), n))
	}
	r := VectorStep{
		Obs:        v.rows(),
		Rewards:    make([]float64, n),
		Terminated: make([]bool, n),
		Truncated:  make([]bool, n),
		Infos:      make([]Info, n),
	}
	if v.mode == SameStep {
		r.FinalObs = make([][]float64, n)
		r.FinalInfos = make([]Info, n)
	}
	v.each(func(i int) { v.stepEnv(i, actions[i], &r) })
	return r
}

// stepEnv steps (or resets) env i, writing row i of r. It touches only
// row i and env i's state, so workers may run it concurrently.
func (v *Vector) stepEnv(i, action int, r *VectorStep) {
	e := v.envs[i]
	if v.mode == NextStep && v.ended[i] {
		o, info := e.Reset(v.reseed[i].Uint64())
		v.copyObs(r.Obs[i], o, i)
		r.Infos[i] = info
		v.ended[i] = false
		return
	}
	if !v.actSpace.Contains(action) {
		panic(fmt.Sprintf("gym: action %d for env %d outside %d actions", action, i, v.actSpace.N))
	}
	var o []float64
	if v.stepInto {
		o, r.Rewards[i], r.Terminated[i], r.Truncated[i], r.Infos[i] = e.(StepperInto).StepInto(r.Obs[i], action)
	} else {
		o, r.Rewards[i], r.Terminated[i], r.Truncated[i], r.Infos[i] = e.Step(action)
	}
	v.copyObs(r.Obs[i], o, i)
	end := r.Terminated[i] || r.Truncated[i]
	if v.mode == SameStep && end {
		r.FinalObs[i] = append([]float64(nil), r.Obs[i]...)
		r.FinalInfos[i] = r.Infos[i]
		o, r.Infos[i] = e.Reset(v.reseed[i].Uint64())
		v.copyObs(r.Obs[i], o, i)
		end = false
	}
	v.ended[i] = end
}

// ActionMasks returns each env's action mask (true = valid), freshly
// allocated, or nil when the envs do not implement Masker. An env that
// NextStep mode will reset on the next Step gets an all-true mask, since
// its action is ignored. It panics before the first Reset.
func (v *Vector) ActionMasks() [][]bool {
	if !v.started {
		panic("gym: vector action masks before Reset")
	}
	if !v.masks {
		return nil
	}
	n, k := len(v.envs), v.actSpace.N
	flat := make([]bool, n*k)
	masks := make([][]bool, n)
	for i, e := range v.envs {
		row := flat[i*k : (i+1)*k : (i+1)*k]
		if v.mode == NextStep && v.ended[i] {
			for j := range row {
				row[j] = true
			}
		} else if m := e.(Masker).ActionMask(row); len(m) != k {
			panic(fmt.Sprintf("gym: env %d's mask has %d entries, want %d", i, len(m), k))
		} else if &m[0] != &row[0] {
			copy(row, m)
		}
		masks[i] = row
	}
	return masks
}

// Close stops the worker goroutines and waits for them to exit. It is
// idempotent; the Vector cannot be used afterwards.
func (v *Vector) Close() {
	if v.closed {
		return
	}
	v.closed = true
	for _, c := range v.work {
		close(c)
	}
	v.exited.Wait()
}

// rows returns n observation rows over one fresh backing array.
func (v *Vector) rows() [][]float64 {
	n, d := len(v.envs), v.obsDim
	flat := make([]float64, n*d)
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return rows
}

// copyObs copies env i's observation o into dst, panicking on a wrong
// length; it does nothing when o already is dst.
func (v *Vector) copyObs(dst, o []float64, i int) {
	if len(o) != len(dst) {
		panic(fmt.Sprintf("gym: env %d returned %d observation values, want %d", i, len(o), len(dst)))
	}
	if len(o) > 0 && &o[0] == &dst[0] {
		return
	}
	copy(dst, o)
}
