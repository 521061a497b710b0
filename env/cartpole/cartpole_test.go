package cartpole

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/gym"
)

// sqrt3 is √3, for the hand-worked step at theta = pi/6.
var sqrt3 = math.Sqrt(3)

// TestAdvance checks one Euler step against values worked by hand from
// Gymnasium's formulas, with total_mass = 1.1 = 11/10 and
// polemass_length = 0.05:
//
//	temp     = (force + 0.05*theta_dot²*sin) / 1.1
//	thetaacc = (9.8*sin - cos*temp) / (0.5*(4/3 - 0.1*cos²/1.1))
//	xacc     = temp - 0.05*thetaacc*cos/1.1
//	x' = x + 0.02*x_dot, x_dot' = x_dot + 0.02*xacc,
//	theta' = theta + 0.02*theta_dot, theta_dot' = theta_dot + 0.02*thetaacc
func TestAdvance(t *testing.T) {
	tests := []struct {
		name   string
		state  [4]float64
		action int
		want   [4]float64
	}{{
		// sin 0 = 0, cos 0 = 1: temp = 10/1.1 = 100/11;
		// den = 0.5*(4/3 - 1/11) = 0.5*41/33 = 41/66;
		// thetaacc = -(100/11)*(66/41) = -600/41;
		// xacc = 100/11 + 0.05*(600/41)/1.1 = 100/11 + 300/451 = 400/41.
		// x_dot' = 0.02*400/41 = 8/41, theta_dot' = -0.02*600/41 = -12/41.
		name:   "rest/push right",
		state:  [4]float64{0, 0, 0, 0},
		action: 1,
		want:   [4]float64{0, 8.0 / 41, 0, -12.0 / 41},
	}, {
		// Same as above with the force reversed: thetaacc = 600/41,
		// xacc = -400/41. x' = 0.1 + 0.02*0.2 = 0.104,
		// x_dot' = 0.2 - 8/41 = 0.2/41 = 1/205, theta' = 0.02*0.5 = 0.01,
		// theta_dot' = 0.5 + 12/41 = 32.5/41 = 65/82.
		name:   "upright moving/push left",
		state:  [4]float64{0.1, 0.2, 0, 0.5},
		action: 0,
		want:   [4]float64{0.104, 1.0 / 205, 0.01, 65.0 / 82},
	}, {
		// theta = pi/6 (sin 1/2, cos √3/2), theta_dot = 2, push right:
		// temp = (10 + 0.05*4*0.5)/1.1 = 10.1/1.1 = 101/11;
		// den = 0.5*(4/3 - 0.1*(3/4)/1.1) = 0.5*(4/3 - 3/44) = 167/264;
		// thetaacc = (4.9 - (√3/2)(101/11))*264/167 = (1293.6 - 1212√3)/167;
		// xacc = 101/11 - 0.05*thetaacc*(√3/2)/1.1 = 101/11 - thetaacc*√3/44.
		name:   "tilted spinning/push right",
		state:  [4]float64{0, 0, math.Pi / 6, 2},
		action: 1,
		want: func() [4]float64 {
			thetaAcc := (1293.6 - 1212*sqrt3) / 167
			xAcc := 101.0/11 - thetaAcc*sqrt3/44
			return [4]float64{0, 0.02 * xAcc, math.Pi/6 + 0.04, 2 + 0.02*thetaAcc}
		}(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advance(tt.state, tt.action)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Errorf("state[%d] = %.17g, want %.17g (got %v)", i, got[i], tt.want[i], got)
				}
			}
		})
	}
}

// gymnasiumRun is a 20-step known answer from Gymnasium's step()
// arithmetic: CartPoleEnv.step's expressions, transcribed verbatim into
// CPython 3 (Python floats are IEEE float64, like the numpy float64
// scalars of self.state) and run from start with actions, printing
// float.hex of math.sin(theta) and math.cos(theta) (glibc) before each
// step and of the final state.
var gymnasiumRun = struct {
	start   [4]float64
	actions []int
	sinCos  [][2]float64
	final   [4]float64
}{
	start:   [4]float64{0.01, -0.02, 0.03, -0.04},
	actions: []int{1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1},
	sinCos: [][2]float64{
		{0x1.eb723f19667c6p-6, 0x1.ffc505a355cf6p-1},
		{0x1.de5845f17be01p-6, 0x1.ffc82017476b2p-1},
		{0x1.74847d7268690p-6, 0x1.ffde1dcbe74acp-1},
		{0x1.5bae5eea3ad34p-7, 0x1.fff89f29b3990p-1},
		{0x1.2572f7d80c7aap-8, 0x1.fffeaf9f328a3p-1},
		{-0x1.e7af7162b5235p-8, 0x1.fffc5eefbb707p-1},
		{-0x1.b9aaaac8fd468p-7, 0x1.fff417e6c61aep-1},
		{-0x1.c13b88b5d8573p-7, 0x1.fff3ae92835ccp-1}, // Go's math.Cos: ...835cbp-1
		{-0x1.45accd0925590p-6, 0x1.ffe61a5501cdbp-1},
		{-0x1.4c447dbaeff13p-6, 0x1.ffe50b2ecfda4p-1},
		{-0x1.b4c5a790c42d5p-6, 0x1.ffd16ac3cbd0ap-1},
		{-0x1.3f965555d965bp-5, 0x1.ff9c3846bdb51p-1},
		{-0x1.d5f9ce62bb4d9p-5, 0x1.ff281f2ca7aa9p-1},
		{-0x1.1f36692aa528ep-4, 0x1.febd5f4e78fb0p-1},
		{-0x1.3d02c7a73cc4dp-4, 0x1.fe76d92b747b2p-1},
		{-0x1.44c4b3443fbbfp-4, 0x1.fe6357372ad31p-1},
		{-0x1.6653785875570p-4, 0x1.fe097bd58aa5ep-1},
		{-0x1.721c685175477p-4, 0x1.fde7d11e3708dp-1},
		{-0x1.97e6e6702ea7ep-4, 0x1.fd74716b669f5p-1},
		{-0x1.a83f4912c53bbp-4, 0x1.fd3f08fa6980bp-1},
	},
	final: [4]float64{0x1.29f7f951ffb31p-4, -0x1.43d5cf71db940p-7, -0x1.a42bd51d6d115p-4, -0x1.0ed21a6fe7adap-2},
}

// TestAdvanceMatchesGymnasium: with the C library's sine and cosine the
// trajectory is Gymnasium's bit for bit; with Go's it stays within a few
// ulps, and its float32 observations are identical.
func TestAdvanceMatchesGymnasium(t *testing.T) {
	g := gymnasiumRun
	s := g.start
	for k, a := range g.actions {
		if sc := g.sinCos[k]; !withinULP(math.Sin(s[2]), sc[0]) || !withinULP(math.Cos(s[2]), sc[1]) {
			t.Fatalf("step %d: theta %x: libm sin, cos = %x, %x; Go's differ by more than an ulp", k, s[2], sc[0], sc[1])
		}
		s = advanceTrig(s, a, g.sinCos[k][0], g.sinCos[k][1])
	}
	if s != g.final {
		t.Errorf("with libm's sin/cos: state after 20 steps = %x, want %x (Gymnasium)", s, g.final)
	}

	s = g.start
	for _, a := range g.actions {
		s = advance(s, a)
	}
	for i := range s {
		if math.Abs(s[i]-g.final[i]) > 1e-15 {
			t.Errorf("with Go's sin/cos: state[%d] = %x, want %x within 1e-15", i, s[i], g.final[i])
		}
		if float32(s[i]) != float32(g.final[i]) {
			t.Errorf("observation %d = %v, Gymnasium's %v", i, float32(s[i]), float32(g.final[i]))
		}
	}
}

// withinULP reports whether a and b are equal or adjacent float64s.
func withinULP(a, b float64) bool { return a == b || math.Nextafter(b, a) == a }

// TestConstants checks the derived constants against the values CPython
// computes for Gymnasium's expressions.
func TestConstants(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"total_mass = 0.1 + 1.0", totalMass, 1.1},
		{"polemass_length = 0.1 * 0.5", poleMassLength, 0.05},
		{"theta_threshold_radians = 12 * 2 * math.pi / 360", thetaThreshold, 0.20943951023931953},
		{"uniform scale = 0.05 - -0.05", resetScale, 0.1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %.17g, want %.17g", tt.name, tt.got, tt.want)
		}
	}
}

func TestStepObservation(t *testing.T) {
	c := New()
	c.Reset(1)
	c.SetState([4]float64{0, 0, 0, 0})
	obs, r, term, trunc, info := c.Step(1)
	// The hand-worked state 8/41, -12/41 (TestAdvance), rounded to float32.
	want := []float64{0, float64(float32(8.0 / 41)), 0, float64(float32(-12.0 / 41))}
	for i := range want {
		if obs[i] != want[i] {
			t.Errorf("obs[%d] = %.9g, want %.9g", i, obs[i], want[i])
		}
	}
	if r != 1 || term || trunc || info != nil {
		t.Errorf("Step = reward %v, terminated %v, truncated %v, info %v; want 1, false, false, nil", r, term, trunc, info)
	}
	if s := c.State(); s[1] != 8.0/41 && math.Abs(s[1]-8.0/41) > 1e-15 {
		t.Errorf("internal x_dot = %.17g, want 8/41 in float64", s[1])
	}
}

func TestTermination(t *testing.T) {
	th := thetaThreshold
	tests := []struct {
		name  string
		state [4]float64
		want  bool
	}{
		// With zero velocities the position and angle do not move in one
		// step, so a state on a threshold stays on it: not terminated
		// (Gymnasium's comparisons are strict).
		{"x at +2.4", [4]float64{2.4, 0, 0, 0}, false},
		{"x at -2.4", [4]float64{-2.4, 0, 0, 0}, false},
		{"x past +2.4", [4]float64{2.4, 0.01, 0, 0}, true},   // x' = 2.4002
		{"x past -2.4", [4]float64{-2.4, -0.01, 0, 0}, true}, // x' = -2.4002
		{"theta at +12 deg", [4]float64{0, 0, th, 0}, false},
		{"theta at -12 deg", [4]float64{0, 0, -th, 0}, false},
		{"theta past +12 deg", [4]float64{0, 0, th, 0.01}, true},   // theta' = th + 0.0002
		{"theta past -12 deg", [4]float64{0, 0, -th, -0.01}, true}, // theta' = -th - 0.0002
		{"x just inside", [4]float64{2.39, 0.4, 0, 0}, false},      // x' = 2.398
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.Reset(0)
			c.SetState(tt.state)
			_, r, term, trunc, _ := c.Step(1)
			if term != tt.want || trunc || r != 1 {
				t.Errorf("Step from %v = terminated %v, truncated %v, reward %v; want %v, false, 1", tt.state, term, trunc, r, tt.want)
			}
		})
	}
}

// TestTruncation holds the pole upright (SetState before every step) so
// that only the time limit can end the episode.
func TestTruncation(t *testing.T) {
	tests := []struct {
		name     string
		opts     []Option
		lastStep int // the step (1-based) that must truncate; 0: none in 600
	}{
		{"v1 default", nil, 500},
		{"custom limit", []Option{WithMaxSteps(7)}, 7},
		{"no limit", []Option{WithMaxSteps(0)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.opts...)
			c.Reset(3)
			for step := 1; step <= 600; step++ {
				c.SetState([4]float64{})
				_, r, term, trunc, _ := c.Step(step % 2)
				if term || r != 1 {
					t.Fatalf("step %d: terminated %v, reward %v; want false, 1", step, term, r)
				}
				if trunc != (step == tt.lastStep) {
					t.Fatalf("step %d: truncated %v, want %v", step, trunc, step == tt.lastStep)
				}
				if trunc {
					return
				}
			}
		})
	}
}

// TestTerminatedAndTruncated: a pole that falls on step 500 gives both
// flags, as Gymnasium's TimeLimit does.
func TestTerminatedAndTruncated(t *testing.T) {
	c := New()
	c.Reset(3)
	for range 499 {
		c.SetState([4]float64{})
		c.Step(0)
	}
	c.SetState([4]float64{2.4, 1, 0, 0})
	if _, r, term, trunc, _ := c.Step(0); !term || !trunc || r != 1 {
		t.Errorf("step 500 past the edge = terminated %v, truncated %v, reward %v; want true, true, 1", term, trunc, r)
	}
}

func TestSuttonBartoReward(t *testing.T) {
	c := New(WithSuttonBartoReward())
	c.Reset(0)
	if _, r, term, _, _ := c.Step(1); term || r != 0 {
		t.Errorf("non-terminal step: reward %v terminated %v, want 0 false", r, term)
	}
	c.SetState([4]float64{2.4, 1, 0, 0})
	if _, r, term, _, _ := c.Step(1); !term || r != -1 {
		t.Errorf("terminal step: reward %v terminated %v, want -1 true", r, term)
	}
}

// TestRandomEpisodeReturn: with reward 1 per step, including the last,
// an episode's return equals its length.
func TestRandomEpisodeReturn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	c := New()
	for ep := range uint64(20) {
		c.Reset(ep)
		ret, n := 0.0, 0
		for {
			_, r, term, trunc, _ := c.Step(rng.IntN(2))
			ret += r
			n++
			if term || trunc {
				break
			}
		}
		if ret != float64(n) {
			t.Errorf("episode %d: return %v, length %d", ep, ret, n)
		}
		if n < 8 || n > MaxEpisodeSteps {
			t.Errorf("episode %d: length %d outside the plausible [8, 500] for a random policy", ep, n)
		}
	}
}

func TestReset(t *testing.T) {
	c := New()
	o1, info := c.Reset(42)
	s := c.State()
	for i, v := range s {
		if v < -0.05 || v >= 0.05 {
			t.Errorf("state[%d] = %v outside [-0.05, 0.05)", i, v)
		}
		if o1[i] != float64(float32(v)) {
			t.Errorf("obs[%d] = %v, want float32(state) = %v", i, o1[i], float32(v))
		}
	}
	if info != nil {
		t.Errorf("info = %v, want nil", info)
	}
	c.Step(0)
	o2, _ := c.Reset(42)
	o3, _ := New().Reset(42)
	o4, _ := c.Reset(43)
	for i := range o1 {
		if o2[i] != o1[i] || o3[i] != o1[i] {
			t.Errorf("Reset(42) obs[%d]: %v, again %v, fresh env %v; want equal", i, o1[i], o2[i], o3[i])
		}
	}
	if o4[0] == o1[0] && o4[1] == o1[1] {
		t.Errorf("Reset(43) = %v, same as Reset(42)", o4)
	}
}

func TestObservationSpace(t *testing.T) {
	sp := New().ObservationSpace()
	want := []float64{4.8, math.MaxFloat32, 24 * math.Pi / 180, math.MaxFloat32} // 24 deg = 0.41887902
	if sp.Shape() != 4 || len(sp.High) != 4 {
		t.Fatalf("shape %d, bounds %d/%d; want 4", sp.Shape(), len(sp.Low), len(sp.High))
	}
	for i := range want {
		if math.Abs(sp.High[i]-want[i]) > 1e-6*want[i] || sp.Low[i] != -sp.High[i] {
			t.Errorf("bound %d = [%v, %v], want ±%v", i, sp.Low[i], sp.High[i], want[i])
		}
		if sp.High[i] != float64(float32(sp.High[i])) {
			t.Errorf("bound %d = %v is not a float32 value", i, sp.High[i])
		}
	}
	if a := New().ActionSpace(); a.N != 2 {
		t.Errorf("action space N = %d, want 2", a.N)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		policy func([]float64, int) int
	}{
		{"random", nil},
		{"always right", func([]float64, int) int { return 1 }},
		// Pushing toward the pole's fall keeps it up for whole episodes,
		// so the check also crosses time-limit truncations.
		{"balance", func(o []float64, _ int) int {
			if o[2]+0.5*o[3] > 0 {
				return 1
			}
			return 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := gym.Check(func() gym.Env { return New() }, 7, 1200, tt.policy); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestPanics(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *CartPole)
		want string
	}{
		{"step before reset", func(c *CartPole) { c.Step(0) }, "cartpole: step before reset"},
		{"invalid action", func(c *CartPole) { c.Reset(0); c.Step(2) }, "cartpole: invalid action 2"},
		{"step after end", func(c *CartPole) {
			c.Reset(0)
			c.SetState([4]float64{2.4, 1, 0, 0})
			c.Step(0)
			c.Step(0)
		}, "gym: step after episode end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				var msg string
				switch r := r.(type) {
				case error:
					msg = r.Error()
				case string:
					msg = r
				}
				if !strings.Contains(msg, tt.want) {
					t.Errorf("panic %v, want %q", r, tt.want)
				}
			}()
			tt.run(New())
		})
	}
}

func TestStepIntoAllocs(t *testing.T) {
	c := New()
	c.Reset(0)
	buf := make([]float64, 4)
	allocs := testing.AllocsPerRun(100, func() {
		c.SetState([4]float64{})
		obs, _, _, _, _ := c.StepInto(buf, 1)
		if &obs[0] != &buf[0] {
			t.Fatal("StepInto did not use dst")
		}
	})
	if allocs != 0 {
		t.Errorf("StepInto allocates %v times per step, want 0", allocs)
	}
}
