package cartpole

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/env/gym"
)

// MaxEpisodeSteps is CartPole-v1's time limit: the step that completes
// this many steps of an episode returns truncated = true.
const MaxEpisodeSteps = 500

// Gymnasium's constants, as CartPoleEnv.__init__ sets them.
const (
	gravity   = 9.8
	forceMag  = 10.0
	tau       = 0.02 // seconds between state updates
	xLimit    = 2.4  // Gymnasium's x_threshold
	resetLow  = -0.05
	resetHigh = 0.05
)

// The masses, the half length and the quantities derived from them are
// variables so that the derived ones are computed at run time, in
// float64, one rounding per operation in the order Python evaluates
// them. Go evaluates constant expressions exactly and rounds once, which
// for theta_threshold_radians (12*2*pi/360) gives a different last bit.
var (
	massCart       = 1.0
	massPole       = 0.1
	length         = 0.5 // half the pole's length
	pi             = math.Pi
	totalMass      = massPole + massCart           // 1.1
	poleMassLength = massPole * length             // 0.05
	thetaThreshold = 12 * 2 * pi / 360             // 0.20943951023931953 in Python
	resetScale     = resetHigh - float64(resetLow) // numpy uniform's high - low
	obsHigh        = [4]float64{xLimit * 2, math.MaxFloat32, thetaThreshold * 2, math.MaxFloat32}
)

// rngStream is the PCG stream of the reset distribution.
const rngStream = 0x63617274706f6c65 // "cartpole"

// CartPole is Gymnasium's CartPole-v1 (classic_control/cartpole.py
// wrapped in TimeLimit(500)): a pole balanced on a cart pushed left
// (action 0) or right (action 1) by a 10 N force.
//
// The dynamics are Gymnasium's to the operation: the state (x, x_dot,
// theta, theta_dot) is kept in float64, as Gymnasium keeps self.state in
// Python floats, advanced by explicit Euler with tau = 0.02 s, and every
// product is rounded before it is added (explicit conversions forbid the
// compiler's fused multiply-add) so that each operation rounds as in
// NumPy. Observations are the state rounded to float32, as Gymnasium's
// np.array(self.state, dtype=np.float32), returned as float64. The one
// source of difference from Gymnasium is sin and cos: Go's math package
// and the C library CPython calls can differ in the last bit (they do, for
// example, for cos(-0.0137) on glibc), and the state then drifts from
// Gymnasium's by a few ulps over an episode; observations, rounded to
// float32, almost always stay identical. Given the C library's sine and
// cosine, the arithmetic reproduces Gymnasium's bits exactly (tested).
//
// The reward is 1 for every step, including the terminating one (v1's
// default, sutton_barto_reward=False). An episode terminates when |x| >
// 2.4 or |theta| > 12 degrees, and is truncated on the step that
// completes MaxEpisodeSteps steps (both flags are true when both happen,
// as with Gymnasium's TimeLimit).
//
// Reset(seed) draws each state variable uniformly from [-0.05, 0.05) as
// numpy's uniform does (low + (high-low)*u), but from a math/rand/v2 PCG
// seeded with seed: the initial states are not the ones Gymnasium draws
// from the same seed.
//
// A CartPole is not safe for concurrent use.
type CartPole struct {
	state       [4]float64 // x, x_dot, theta, theta_dot
	steps       int        // steps in the current episode
	maxSteps    int
	suttonBarto bool
	started     bool // Reset was called
	ended       bool // the last step terminated or truncated
	pcg         *rand.PCG
	rng         *rand.Rand
}

var (
	_ gym.Env         = (*CartPole)(nil)
	_ gym.StepperInto = (*CartPole)(nil)
)

// Option configures a CartPole.
type Option func(*CartPole)

// WithMaxSteps sets the time limit to n steps instead of
// MaxEpisodeSteps; n <= 0 disables truncation.
func WithMaxSteps(n int) Option { return func(c *CartPole) { c.maxSteps = n } }

// WithSuttonBartoReward switches to Gymnasium's sutton_barto_reward=True:
// reward 0 for every non-terminating step and -1 for the terminating one.
func WithSuttonBartoReward() Option { return func(c *CartPole) { c.suttonBarto = true } }

// New returns a CartPole-v1 env; call Reset before Step.
func New(opts ...Option) *CartPole {
	pcg := rand.NewPCG(0, rngStream)
	c := &CartPole{maxSteps: MaxEpisodeSteps, pcg: pcg, rng: rand.New(pcg)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ObservationSpace implements gym.Env: x in [-4.8, 4.8], theta in
// [-0.418, 0.418] rad (24 degrees, twice the termination angle, so that a
// failing observation is still in the space), and velocities bounded only
// by the float32 range. The bounds are Gymnasium's float32 values.
func (c *CartPole) ObservationSpace() gym.Box {
	low, high := make([]float64, 4), make([]float64, 4)
	for i, h := range obsHigh {
		high[i] = float64(float32(h))
		low[i] = -high[i]
	}
	return gym.Box{Low: low, High: high}
}

// ActionSpace implements gym.Env: 0 pushes the cart left, 1 right.
func (c *CartPole) ActionSpace() gym.Discrete { return gym.Discrete{N: 2} }

// Reset implements gym.Env: it reseeds the env's generator with seed and
// draws a new initial state. The info is nil. The returned slice is fresh.
func (c *CartPole) Reset(seed uint64) ([]float64, gym.Info) {
	c.pcg.Seed(seed, rngStream)
	for i := range c.state {
		c.state[i] = resetLow + float64(resetScale*c.rng.Float64())
	}
	c.steps, c.started, c.ended = 0, true, false
	return c.observe(make([]float64, 4)), nil
}

// Step implements gym.Env; the returned observation is fresh.
func (c *CartPole) Step(action int) (obs []float64, reward float64, terminated, truncated bool, info gym.Info) {
	return c.StepInto(nil, action)
}

// StepInto implements gym.StepperInto: it is Step writing the observation
// into dst[:4] when cap(dst) >= 4, without allocating.
func (c *CartPole) StepInto(dst []float64, action int) (obs []float64, reward float64, terminated, truncated bool, info gym.Info) {
	switch {
	case !c.started:
		panic("cartpole: step before reset")
	case c.ended:
		panic(gym.ErrStepAfterEnd)
	case action != 0 && action != 1:
		panic(fmt.Sprintf("cartpole: invalid action %d", action))
	}
	c.state = advance(c.state, action)
	x, theta := c.state[0], c.state[2]
	terminated = x < -xLimit || x > xLimit || theta < -thetaThreshold || theta > thetaThreshold
	c.steps++
	truncated = c.maxSteps > 0 && c.steps >= c.maxSteps
	c.ended = terminated || truncated
	reward = 1
	if c.suttonBarto {
		reward = 0
		if terminated {
			reward = -1
		}
	}
	if cap(dst) < 4 {
		dst = make([]float64, 4)
	}
	return c.observe(dst[:4]), reward, terminated, truncated, nil
}

// advance returns the state one Euler step of tau after s under action,
// with Gymnasium's formulas (Florian, "Correct equations for the dynamics
// of the cart-pole system", 2007) in Gymnasium's order of operations.
func advance(s [4]float64, action int) [4]float64 {
	return advanceTrig(s, action, math.Sin(s[2]), math.Cos(s[2]))
}

// advanceTrig is advance given sin(theta) and cos(theta), so that tests
// can supply the C library's values and compare with Gymnasium bit for
// bit.
func advanceTrig(s [4]float64, action int, sinTheta, cosTheta float64) [4]float64 {
	x, xDot, theta, thetaDot := s[0], s[1], s[2], s[3]
	force := forceMag
	if action == 0 {
		force = -forceMag
	}
	// temp = (force + polemass_length * theta_dot**2 * sintheta) / total_mass
	temp := (force + float64(float64(poleMassLength*float64(thetaDot*thetaDot))*sinTheta)) / totalMass
	// thetaacc = (gravity*sintheta - costheta*temp) /
	//            (length * (4/3 - masspole * costheta**2 / total_mass))
	num := float64(gravity*sinTheta) - float64(cosTheta*temp)
	den := length * (4.0/3.0 - float64(massPole*float64(cosTheta*cosTheta))/totalMass)
	thetaAcc := num / den
	// xacc = temp - polemass_length * thetaacc * costheta / total_mass
	xAcc := temp - float64(poleMassLength*thetaAcc*cosTheta)/totalMass
	return [4]float64{
		x + float64(tau*xDot),
		xDot + float64(tau*xAcc),
		theta + float64(tau*thetaDot),
		thetaDot + float64(tau*thetaAcc),
	}
}

// observe writes the state, rounded to float32, into dst and returns it.
func (c *CartPole) observe(dst []float64) []float64 {
	for i, v := range c.state {
		dst[i] = float64(float32(v))
	}
	return dst
}

// State returns the internal float64 state (x, x_dot, theta, theta_dot),
// Gymnasium's env.unwrapped.state.
func (c *CartPole) State() [4]float64 { return c.state }

// SetState overwrites the internal state, as assigning
// env.unwrapped.state does in Gymnasium: for tests and for starting from
// a chosen state. It changes neither the step count nor whether the
// episode has ended.
func (c *CartPole) SetState(s [4]float64) { c.state = s }
