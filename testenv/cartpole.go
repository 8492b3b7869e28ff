package testenv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// CartPole-v1 constants, as in Gymnasium's cartpole.py.
const (
	cpGravity        = 9.8
	cpMassCart       = 1.0
	cpMassPole       = 0.1
	cpTotalMass      = cpMassPole + cpMassCart
	cpLength         = 0.5 // half the pole's length
	cpPoleMassLength = cpMassPole * cpLength
	cpForceMag       = 10.0
	cpTau            = 0.02 // seconds between state updates
	cpXThreshold     = 2.4
	cpDefaultSteps   = 500
)

// cpThetaThreshold is 12 degrees in radians, evaluated in float64 steps as
// Python does for Gymnasium's 12 * 2 * math.pi / 360 (a Go constant
// expression would round only once and could differ in the last bit). It is
// never written.
var cpThetaThreshold = func() float64 {
	pi := math.Pi
	return 24 * pi / 360
}()

// CartPole is Gymnasium's CartPole-v1 (Barto, Sutton & Anderson 1983): a
// pole hinged on a cart that moves along a frictionless track. The state and
// observation are (x, ẋ, θ, θ̇); action 0 pushes the cart left and 1 right
// with force 10 N. Each step integrates
//
//	temp = (F + m_p l θ̇² sin θ) / (m_c + m_p)
//	θ̈   = (g sin θ − cos θ · temp) / (l (4/3 − m_p cos²θ / (m_c + m_p)))
//	ẍ   = temp − m_p l θ̈ cos θ / (m_c + m_p)
//
// with explicit Euler over τ = 0.02 s (positions advance with the old
// velocities). The reward is 1 for every step including the terminating one;
// the episode terminates when |x| > 2.4 or |θ| > 12°, and is truncated when
// the step count reaches MaxEpisodeSteps (500). Reset draws each state
// component uniformly from (−0.05, 0.05). Stepping again after termination
// yields reward 0, as in Gymnasium.
type CartPole struct {
	maxSteps int
	state    [4]float64 // x, x_dot, theta, theta_dot
	steps    int
	started  bool
	done     bool // termination already reported (Gymnasium's steps_beyond_terminated)
}

// NewCartPole returns a CartPole that must be Reset before stepping.
func NewCartPole(opts Options) *CartPole {
	n := opts.MaxEpisodeSteps
	if n == 0 {
		n = cpDefaultSteps
	}
	return &CartPole{maxSteps: n}
}

// ObsDim returns 4.
func (c *CartPole) ObsDim() int { return 4 }

// ActionSpace returns a discrete space of 2 actions.
func (c *CartPole) ActionSpace() ActionSpace { return ActionSpace{N: 2} }

// Reset draws the state uniformly from (−0.05, 0.05)⁴ and returns it.
func (c *CartPole) Reset(rng *rand.Rand) []float64 {
	for i := range c.state {
		c.state[i] = -0.05 + 0.1*rng.Float64()
	}
	c.steps, c.started, c.done = 0, true, false
	return c.obs()
}

// Step applies action 0 (push left) or 1 (push right).
func (c *CartPole) Step(action []float64) ([]float64, float64, bool, bool) {
	if !c.started {
		panic("testenv: cartpole: Step called before Reset")
	}
	a := discreteAction("cartpole", action, 2)
	x, xDot, theta, thetaDot := c.state[0], c.state[1], c.state[2], c.state[3]
	force := -cpForceMag
	if a == 1 {
		force = cpForceMag
	}
	cosTheta, sinTheta := math.Cos(theta), math.Sin(theta)

	// Parenthesised like cartpole.py so that float64 rounding matches.
	temp := (force + cpPoleMassLength*(thetaDot*thetaDot)*sinTheta) / cpTotalMass
	thetaAcc := (cpGravity*sinTheta - cosTheta*temp) /
		(cpLength * (4.0/3.0 - cpMassPole*(cosTheta*cosTheta)/cpTotalMass))
	xAcc := temp - cpPoleMassLength*thetaAcc*cosTheta/cpTotalMass

	// Explicit Euler (Gymnasium's default kinematics_integrator "euler").
	x += cpTau * xDot
	xDot += cpTau * xAcc
	theta += cpTau * thetaDot
	thetaDot += cpTau * thetaAcc
	c.state = [4]float64{x, xDot, theta, thetaDot}
	c.steps++

	terminated := x < -cpXThreshold || x > cpXThreshold ||
		theta < -cpThetaThreshold || theta > cpThetaThreshold
	reward := 1.0
	if terminated {
		if c.done {
			reward = 0 // stepping past the end is undefined in Gymnasium; it pays 0
		}
		c.done = true
	}
	truncated := c.steps >= c.maxSteps
	return c.obs(), reward, terminated, truncated
}

func (c *CartPole) obs() []float64 {
	o := make([]float64, 4)
	for i, v := range c.state {
		o[i] = roundObs(v)
	}
	return o
}

const cartPoleTag = "cartpole"

// MarshalBinary encodes the state, step count, flags and step limit.
func (c *CartPole) MarshalBinary() ([]byte, error) {
	w := NewStateWriter(cartPoleTag)
	w.Int(c.maxSteps)
	w.Int(c.steps)
	w.Bool(c.started)
	w.Bool(c.done)
	for _, v := range c.state {
		w.F64(v)
	}
	return w.Data(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary. The step limit
// in the data must equal this environment's.
func (c *CartPole) UnmarshalBinary(data []byte) error {
	r := NewStateReader(data, cartPoleTag)
	maxSteps := r.Int()
	steps := r.Int()
	started, done := r.Bool(), r.Bool()
	var s [4]float64
	for i := range s {
		s[i] = r.F64()
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("cartpole: unmarshal state: %w", err)
	}
	if maxSteps != c.maxSteps {
		return fmt.Errorf("cartpole: unmarshal state: step limit %d in state, environment has %d", maxSteps, c.maxSteps)
	}
	c.steps, c.started, c.done, c.state = steps, started, done, s
	return nil
}

// Succeeded reports whether an episode that ended with these flags succeeded: balanced the pole until the time limit.
func (c *CartPole) Succeeded(terminated, truncated bool) (success, ok bool) {
	return truncated && !terminated, true
}
