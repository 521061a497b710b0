package gym

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// counter is a test env whose numbers can be followed by hand: the
// observation is (seed mod 1000, steps so far), the reward is the action,
// every step's info is {"t": steps}, and an episode terminates after
// length steps. Its fault fields break one part of the Env contract each.
type counter struct {
	length, actions int
	seed            uint64
	t               int
	started, ended  bool

	shared     *int      // added to the observation: nondeterminism
	reuse      []float64 // returned as every observation: aliasing
	noPanic    bool      // Step after the end does not panic
	ignoreSeed bool      // the first observation ignores the seed
	escape     bool      // the observation leaves the space at step 3
	panicOn    int       // Step panics with errBoom for this action (when > 0)
}

var errBoom = errors.New("boom")

func newCounter(length int) *counter { return &counter{length: length, actions: 3} }

func (c *counter) ObservationSpace() Box {
	return Box{Low: []float64{0, 0}, High: []float64{1000, 1000}}
}

func (c *counter) ActionSpace() Discrete { return Discrete{N: c.actions} }

func (c *counter) Reset(seed uint64) ([]float64, Info) {
	c.seed, c.t, c.started, c.ended = seed, 0, true, false
	if c.ignoreSeed {
		c.seed = 0
	}
	return c.obs(), nil
}

func (c *counter) Step(a int) ([]float64, float64, bool, bool, Info) {
	switch {
	case !c.started:
		panic("counter: step before reset")
	case c.ended && !c.noPanic:
		panic(ErrStepAfterEnd)
	case !c.ActionSpace().Contains(a):
		panic(fmt.Sprintf("counter: invalid action %d", a))
	case c.panicOn > 0 && a == c.panicOn:
		panic(errBoom)
	}
	c.t++
	c.ended = c.t >= c.length
	return c.obs(), float64(a), c.ended, false, Info{"t": float64(c.t)}
}

func (c *counter) obs() []float64 {
	o := []float64{float64(c.seed % 1000), float64(c.t)}
	if c.shared != nil {
		*c.shared++
		o[1] += float64(*c.shared)
	}
	if c.escape && c.t == 3 {
		o[1] = math.NaN()
	}
	if c.reuse != nil {
		copy(c.reuse, o)
		return c.reuse
	}
	return o
}

// masked is a counter with an action mask: action a is valid unless
// a == t mod N (or, with none, no action is valid).
type masked struct {
	*counter
	none bool
}

func (m masked) ActionMask(dst []bool) []bool {
	if cap(dst) < m.actions {
		dst = make([]bool, m.actions)
	}
	dst = dst[:m.actions]
	for a := range dst {
		dst[a] = !m.none && a != m.t%m.actions
	}
	return dst
}

func TestBox(t *testing.T) {
	b := Box{Low: []float64{-1, math.Inf(-1)}, High: []float64{1, math.Inf(1)}}
	tests := []struct {
		name string
		x    []float64
		want bool
	}{
		{"inside", []float64{0, 1e300}, true},
		{"on bounds", []float64{-1, math.Inf(1)}, true},
		{"below", []float64{-1.5, 0}, false},
		{"above", []float64{1.5, 0}, false},
		{"NaN", []float64{0, math.NaN()}, false},
		{"short", []float64{0}, false},
		{"long", []float64{0, 0, 0}, false},
	}
	for _, tt := range tests {
		if got := b.Contains(tt.x); got != tt.want {
			t.Errorf("%s: Contains(%v) = %v, want %v", tt.name, tt.x, got, tt.want)
		}
	}
	if b.Shape() != 2 {
		t.Errorf("Shape() = %d, want 2", b.Shape())
	}
	for _, bad := range []Box{
		{Low: []float64{0}, High: []float64{1, 2}},
		{Low: []float64{2}, High: []float64{1}},
		{Low: []float64{math.NaN()}, High: []float64{1}},
	} {
		if bad.validate() == nil {
			t.Errorf("validate(%v) = nil, want an error", bad)
		}
	}
}

func TestDiscrete(t *testing.T) {
	d := Discrete{N: 3}
	for a, want := range map[int]bool{-1: false, 0: true, 2: true, 3: false} {
		if got := d.Contains(a); got != want {
			t.Errorf("Contains(%d) = %v, want %v", a, got, want)
		}
	}
}

// autoresetSeed is the seed the Vector draws for the k-th autoreset
// (k = 1, 2, ...) of env i after Reset(seed), per its documentation.
func autoresetSeed(seed uint64, i, k int) uint64 {
	r := rand.New(rand.NewPCG(seed+uint64(i), autoresetStream))
	var s uint64
	for range k {
		s = r.Uint64()
	}
	return s
}

// TestVectorAutoreset follows two counters (episodes of 2 and 3 steps,
// Reset seed 10) through both autoreset modes by hand.
func TestVectorAutoreset(t *testing.T) {
	s0 := float64(autoresetSeed(10, 0, 1) % 1000)  // env 0's second episode
	s1 := float64(autoresetSeed(10, 1, 1) % 1000)  // env 1's second episode
	s0b := float64(autoresetSeed(10, 0, 2) % 1000) // env 0's third episode
	ti := func(t float64) Info { return Info{"t": t} }
	tests := []struct {
		name string
		mode AutoresetMode
		want []VectorStep
	}{{
		name: "next step",
		mode: NextStep,
		want: []VectorStep{{
			Obs: [][]float64{{10, 1}, {11, 1}}, Rewards: []float64{1, 2},
			Terminated: []bool{false, false}, Truncated: []bool{false, false},
			Infos: []Info{ti(1), ti(1)},
		}, {
			// env 0 ends its 2-step episode.
			Obs: [][]float64{{10, 2}, {11, 2}}, Rewards: []float64{1, 1},
			Terminated: []bool{true, false}, Truncated: []bool{false, false},
			Infos: []Info{ti(2), ti(2)},
		}, {
			// env 0's action is ignored: it resets, reward 0, no flags;
			// env 1 ends its 3-step episode.
			Obs: [][]float64{{s0, 0}, {11, 3}}, Rewards: []float64{0, 2},
			Terminated: []bool{false, true}, Truncated: []bool{false, false},
			Infos: []Info{nil, ti(3)},
		}, {
			Obs: [][]float64{{s0, 1}, {s1, 0}}, Rewards: []float64{1, 0},
			Terminated: []bool{false, false}, Truncated: []bool{false, false},
			Infos: []Info{ti(1), nil},
		}},
	}, {
		name: "same step",
		mode: SameStep,
		want: []VectorStep{{
			Obs: [][]float64{{10, 1}, {11, 1}}, Rewards: []float64{1, 2},
			Terminated: []bool{false, false}, Truncated: []bool{false, false},
			Infos: []Info{ti(1), ti(1)}, FinalObs: [][]float64{nil, nil}, FinalInfos: []Info{nil, nil},
		}, {
			// env 0 ends and resets within the step.
			Obs: [][]float64{{s0, 0}, {11, 2}}, Rewards: []float64{1, 1},
			Terminated: []bool{true, false}, Truncated: []bool{false, false},
			Infos: []Info{nil, ti(2)}, FinalObs: [][]float64{{10, 2}, nil}, FinalInfos: []Info{ti(2), nil},
		}, {
			Obs: [][]float64{{s0, 1}, {s1, 0}}, Rewards: []float64{2, 2},
			Terminated: []bool{false, true}, Truncated: []bool{false, false},
			Infos: []Info{ti(1), nil}, FinalObs: [][]float64{nil, {11, 3}}, FinalInfos: []Info{nil, ti(3)},
		}, {
			Obs: [][]float64{{s0b, 0}, {s1, 1}}, Rewards: []float64{1, 0},
			Terminated: []bool{true, false}, Truncated: []bool{false, false},
			Infos: []Info{nil, ti(1)}, FinalObs: [][]float64{{s0, 2}, nil}, FinalInfos: []Info{ti(2), nil},
		}},
	}}
	actions := [][]int{{1, 2}, {1, 1}, {2, 2}, {1, 0}}
	for _, tt := range tests {
		for _, parallel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/parallel=%v", tt.name, parallel), func(t *testing.T) {
				v, err := NewVector(func(i int) Env { return newCounter(2 + i) }, 2, tt.mode, parallel)
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				obs, infos := v.Reset(10)
				if want := [][]float64{{10, 0}, {11, 0}}; !reflect.DeepEqual(obs, want) || !reflect.DeepEqual(infos, []Info{nil, nil}) {
					t.Fatalf("Reset(10) = %v %v, want %v [nil nil]", obs, infos, want)
				}
				for k, a := range actions {
					got := v.Step(a)
					if !reflect.DeepEqual(got, tt.want[k]) {
						t.Errorf("step %d (actions %v):\n got %+v\nwant %+v", k+1, a, got, tt.want[k])
					}
				}
			})
		}
	}
}

func TestNewVectorErrors(t *testing.T) {
	tests := []struct {
		name    string
		makeEnv func(int) Env
		n       int
		mode    AutoresetMode
	}{
		{"no envs", func(int) Env { return newCounter(2) }, 0, NextStep},
		{"bad mode", func(int) Env { return newCounter(2) }, 2, AutoresetMode(7)},
		{"nil env", func(int) Env { return nil }, 2, NextStep},
		{"mismatched spaces", func(i int) Env { c := newCounter(2); c.actions = 2 + i; return c }, 2, SameStep},
	}
	for _, tt := range tests {
		if v, err := NewVector(tt.makeEnv, tt.n, tt.mode, true); err == nil {
			v.Close()
			t.Errorf("%s: NewVector succeeded, want an error", tt.name)
		}
	}
	if _, err := NewVector(func(int) Env { return newCounter(2) }, 0, NextStep, false); !errors.Is(err, ErrNoEnvs) {
		t.Errorf("n = 0: error %v, want ErrNoEnvs", err)
	}
}

// TestVectorClose checks that Close stops every worker goroutine.
func TestVectorClose(t *testing.T) {
	before := runtime.NumGoroutine()
	v, err := NewVector(func(int) Env { return newCounter(5) }, 16, NextStep, true)
	if err != nil {
		t.Fatal(err)
	}
	v.Reset(1)
	for range 10 {
		v.Step(make([]int, 16))
	}
	v.Close()
	v.Close() // idempotent
	// Exited workers may take a moment to be unscheduled: poll for up to a
	// minute (a loaded machine under -race can take seconds).
	for i := 0; i < 60000 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before NewVector", n, before)
	}
}

// TestVectorPanics checks the programmer errors, and that a panic in an
// env on a worker reaches the caller with its value wrapped.
func TestVectorPanics(t *testing.T) {
	mk := func(parallel bool) *Vector {
		v, err := NewVector(func(int) Env { c := newCounter(5); c.panicOn = 2; return c }, 3, NextStep, parallel)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		run  func(v *Vector)
		want string
	}{
		{"step before reset", func(v *Vector) { v.Step([]int{0, 0, 0}) }, "gym: vector step before Reset"},
		{"wrong action count", func(v *Vector) { v.Reset(0); v.Step([]int{0}) }, "gym: 1 actions for 3 envs"},
		{"action outside space", func(v *Vector) { v.Reset(0); v.Step([]int{0, 3, 0}) }, "gym: action 3 for env 1 outside 3 actions"},
		{"env panic", func(v *Vector) { v.Reset(0); v.Step([]int{0, 0, 2}) }, "boom"},
		{"after close", func(v *Vector) { v.Close(); v.Reset(0) }, "gym: vector used after Close"},
	}
	for _, tt := range tests {
		for _, parallel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/parallel=%v", tt.name, parallel), func(t *testing.T) {
				v := mk(parallel)
				defer v.Close()
				defer func() {
					r := recover()
					if !strings.Contains(fmt.Sprint(r), tt.want) {
						t.Errorf("panic %v, want %q", r, tt.want)
					}
					if err, ok := r.(error); ok && tt.want == "boom" && !errors.Is(err, errBoom) {
						t.Errorf("panic %v does not wrap errBoom", err)
					}
				}()
				tt.run(v)
			})
		}
	}
}

func TestVectorActionMasks(t *testing.T) {
	v, err := NewVector(func(int) Env { return masked{counter: newCounter(1)} }, 2, NextStep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Reset(0)
	// t = 0: action 0 invalid.
	if got, want := v.ActionMasks(), [][]bool{{false, true, true}, {false, true, true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("masks after Reset = %v, want %v", got, want)
	}
	v.Step([]int{1, 2}) // both episodes end; the next Step resets them
	if got, want := v.ActionMasks(), [][]bool{{true, true, true}, {true, true, true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("masks before a next-step reset = %v, want all valid %v", got, want)
	}
	plain, _ := NewVector(func(int) Env { return newCounter(1) }, 1, NextStep, false)
	plain.Reset(0)
	if m := plain.ActionMasks(); m != nil {
		t.Errorf("masks of envs without Masker = %v, want nil", m)
	}
}

func TestCheck(t *testing.T) {
	shared := 0
	tests := []struct {
		name    string
		makeEnv func() Env
		opts    []CheckOption
		want    string // substring of the error; "" for none
	}{
		{"good", func() Env { return newCounter(4) }, nil, ""},
		{"good masked", func() Env { return masked{counter: newCounter(4)} }, nil, ""},
		{"nondeterministic", func() Env { c := newCounter(4); c.shared = &shared; return c }, nil, "gave"},
		{"aliased observations", func() Env { c := newCounter(4); c.reuse = make([]float64, 2); return c }, nil, "modified"},
		{"no panic after end", func() Env { c := newCounter(4); c.noPanic = true; return c }, nil, "step after episode end"},
		{"seed ignored", func() Env { c := newCounter(4); c.ignoreSeed = true; return c }, nil, "same observation"},
		{"seed ignored, allowed", func() Env { c := newCounter(4); c.ignoreSeed = true; return c }, []CheckOption{SeedIndependentReset()}, ""},
		{"observation outside space", func() Env { c := newCounter(9); c.escape = true; return c }, nil, "outside the observation space"},
		{"no valid action", func() Env { return masked{counter: newCounter(4), none: true} }, nil, "at least one valid"},
		{"same env twice", func() func() Env { c := newCounter(4); return func() Env { return c } }(), nil, "same env twice"},
		{"env panics", func() Env { c := newCounter(4); c.panicOn = 1; return c }, nil, "env panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.makeEnv, 1, 30, nil, tt.opts...)
			if tt.want == "" && err != nil {
				t.Errorf("Check = %v, want nil", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Check = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckPolicy(t *testing.T) {
	mk := func() Env { return masked{counter: newCounter(4)} }
	if err := Check(mk, 1, 10, func([]float64, int) int { return 5 }); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("out-of-space action: Check = %v", err)
	}
	// At t = 0 action 0 is masked.
	if err := Check(mk, 1, 10, func([]float64, int) int { return 0 }); err == nil || !strings.Contains(err.Error(), "masked action") {
		t.Errorf("masked action: Check = %v", err)
	}
	// The policy sees the observation and the step index.
	var steps []int
	err := Check(func() Env { return newCounter(3) }, 1, 5, func(o []float64, step int) int {
		steps = append(steps, step, int(o[1]))
		return 1
	})
	if want := []int{0, 0, 1, 1, 2, 2, 3, 0, 4, 1}; err != nil || !reflect.DeepEqual(steps, want) {
		t.Errorf("policy saw (step, t) %v, err %v; want %v", steps, err, want)
	}
}

func TestAutoresetModeString(t *testing.T) {
	for m, want := range map[AutoresetMode]string{NextStep: "next_step", SameStep: "same_step", 9: "AutoresetMode(9)"} {
		if got := m.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
