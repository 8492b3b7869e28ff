package testenv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Acrobot-v1 constants, as in Gymnasium's acrobot.py.
const (
	acDt           = 0.2
	acLinkLength1  = 1.0 // [m]
	acLinkMass1    = 1.0 // [kg]
	acLinkMass2    = 1.0
	acLinkCOMPos1  = 0.5 // [m] position of the centre of mass of link 1
	acLinkCOMPos2  = 0.5
	acLinkMOI      = 1.0 // moment of inertia of both links
	acGravity      = 9.8
	acDefaultSteps = 500
)

// Velocity limits 4π and 9π, evaluated in float64 as Python does (see
// cpThetaThreshold). They are never written.
var (
	acMaxVel1 = func() float64 { pi := math.Pi; return 4 * pi }()
	acMaxVel2 = func() float64 { pi := math.Pi; return 9 * pi }()
)

// acTorques maps actions 0, 1, 2 to the torque on the middle joint.
var acTorques = [3]float64{-1, 0, 1}

// Acrobot is Gymnasium's Acrobot-v1 (Sutton 1996; Sutton & Barto's book
// dynamics): two links hanging from a fixed pivot, with torque −1, 0 or +1
// applied at the joint between them. The state is (θ1, θ2, θ̇1, θ̇2) with θ1 = 0
// pointing down and θ2 relative to link 1; the observation is
// (cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2).
//
// Each step integrates the book equations of motion over 0.2 s with one
// classical Runge-Kutta (RK4) step, wraps the angles into [−π, π] and clips
// the velocities to ±4π and ±9π. The episode terminates when the free end
// rises above the bar, −cos θ1 − cos(θ1+θ2) > 1, with reward 0; every other
// step pays −1. It is truncated when the step count reaches
// MaxEpisodeSteps (500). Reset draws each state component uniformly from
// (−0.1, 0.1), rounded to float32 as Gymnasium stores it.
type Acrobot struct {
	maxSteps int
	state    [4]float64 // theta1, theta2, dtheta1, dtheta2
	steps    int
	started  bool
}

// NewAcrobot returns an Acrobot that must be Reset before stepping.
func NewAcrobot(opts Options) *Acrobot {
	n := opts.MaxEpisodeSteps
	if n == 0 {
		n = acDefaultSteps
	}
	return &Acrobot{maxSteps: n}
}

// ObsDim returns 6.
func (a *Acrobot) ObsDim() int { return 6 }

// ActionSpace returns a discrete space of 3 actions (torque −1, 0, +1).
func (a *Acrobot) ActionSpace() ActionSpace { return ActionSpace{N: 3} }

// Reset draws the state uniformly from (−0.1, 0.1)⁴ at float32 precision.
func (a *Acrobot) Reset(rng *rand.Rand) []float64 {
	for i := range a.state {
		a.state[i] = float64(float32(-0.1 + 0.2*rng.Float64()))
	}
	a.steps, a.started = 0, true
	return a.obs()
}

// Step applies torque −1, 0 or +1 (actions 0, 1, 2) for 0.2 s.
func (a *Acrobot) Step(action []float64) ([]float64, float64, bool, bool) {
	if !a.started {
		panic("testenv: acrobot: Step called before Reset")
	}
	torque := acTorques[discreteAction("acrobot", action, 3)]
	ns := rk4(func(s [4]float64) [4]float64 { return acrobotDerivs(s, torque) }, a.state, acDt)
	ns[0] = wrap(ns[0], -math.Pi, math.Pi)
	ns[1] = wrap(ns[1], -math.Pi, math.Pi)
	ns[2] = bound(ns[2], -acMaxVel1, acMaxVel1)
	ns[3] = bound(ns[3], -acMaxVel2, acMaxVel2)
	a.state = ns
	a.steps++

	terminated := a.terminal()
	reward := -1.0
	if terminated {
		reward = 0
	}
	return a.obs(), reward, terminated, a.steps >= a.maxSteps
}

// terminal reports whether the free end is above the bar:
// −cos θ1 − cos(θ2 + θ1) > 1.
func (a *Acrobot) terminal() bool {
	return -math.Cos(a.state[0])-math.Cos(a.state[1]+a.state[0]) > 1.0
}

func (a *Acrobot) obs() []float64 {
	s := a.state
	return []float64{
		roundObs(math.Cos(s[0])), roundObs(math.Sin(s[0])),
		roundObs(math.Cos(s[1])), roundObs(math.Sin(s[1])),
		roundObs(s[2]), roundObs(s[3]),
	}
}

// acrobotDerivs returns (θ̇1, θ̇2, θ̈1, θ̈2) for state s and joint torque tau,
// the "book" dynamics of acrobot.py's _dsdt (which include the
// −m2 l1 lc2 θ̇1² sin θ2 term missing from the NIPS paper):
//
//	d1 = m1 lc1² + m2 (l1² + lc2² + 2 l1 lc2 cos θ2) + I1 + I2
//	d2 = m2 (lc2² + l1 lc2 cos θ2) + I2
//	φ2 = m2 lc2 g cos(θ1 + θ2 − π/2)
//	φ1 = −m2 l1 lc2 θ̇2² sin θ2 − 2 m2 l1 lc2 θ̇2 θ̇1 sin θ2 + (m1 lc1 + m2 l1) g cos(θ1 − π/2) + φ2
//	θ̈2 = (τ + d2/d1 φ1 − m2 l1 lc2 θ̇1² sin θ2 − φ2) / (m2 lc2² + I2 − d2²/d1)
//	θ̈1 = −(d2 θ̈2 + φ1) / d1
//
// Operations are grouped as in the Python source.
func acrobotDerivs(s [4]float64, tau float64) [4]float64 {
	const (
		m1, m2   = acLinkMass1, acLinkMass2
		l1       = acLinkLength1
		lc1, lc2 = acLinkCOMPos1, acLinkCOMPos2
		i1, i2   = acLinkMOI, acLinkMOI
	)
	// g is a variable so that products like (m1 lc1 + m2 l1)·g round in
	// float64 as in Python; a constant expression would be exact and can
	// differ in the last bit (1.5·9.8).
	g := acGravity
	theta1, theta2, dtheta1, dtheta2 := s[0], s[1], s[2], s[3]
	d1 := m1*(lc1*lc1) + m2*(l1*l1+lc2*lc2+2*l1*lc2*math.Cos(theta2)) + i1 + i2
	d2 := m2*(lc2*lc2+l1*lc2*math.Cos(theta2)) + i2
	phi2 := m2 * lc2 * g * math.Cos(theta1+theta2-math.Pi/2.0)
	phi1 := -m2*l1*lc2*(dtheta2*dtheta2)*math.Sin(theta2) -
		2*m2*l1*lc2*dtheta2*dtheta1*math.Sin(theta2) +
		(m1*lc1+m2*l1)*g*math.Cos(theta1-math.Pi/2) + phi2
	ddtheta2 := (tau + d2/d1*phi1 - m2*l1*lc2*(dtheta1*dtheta1)*math.Sin(theta2) - phi2) /
		(m2*(lc2*lc2) + i2 - (d2*d2)/d1)
	ddtheta1 := -(d2*ddtheta2 + phi1) / d1
	return [4]float64{dtheta1, dtheta2, ddtheta1, ddtheta2}
}

// rk4 advances y by one classical fourth-order Runge-Kutta step of size dt
// for the autonomous system y' = f(y):
//
//	k1 = f(y), k2 = f(y + dt/2 k1), k3 = f(y + dt/2 k2), k4 = f(y + dt k3)
//	y ← y + dt/6 (k1 + 2k2 + 2k3 + k4)
func rk4(f func([4]float64) [4]float64, y [4]float64, dt float64) [4]float64 {
	dt2 := dt / 2.0
	axpy := func(a float64, x, y [4]float64) (out [4]float64) {
		for i := range out {
			out[i] = y[i] + a*x[i]
		}
		return out
	}
	k1 := f(y)
	k2 := f(axpy(dt2, k1, y))
	k3 := f(axpy(dt2, k2, y))
	k4 := f(axpy(dt, k3, y))
	var out [4]float64
	for i := range out {
		out[i] = y[i] + dt/6.0*(k1[i]+2*k2[i]+2*k3[i]+k4[i])
	}
	return out
}

// wrap maps x into [lo, hi] by adding or subtracting hi − lo, as acrobot.py's
// wrap does (a value exactly on a bound stays).
func wrap(x, lo, hi float64) float64 {
	diff := hi - lo
	for x > hi {
		x -= diff
	}
	for x < lo {
		x += diff
	}
	return x
}

// bound clips x to [lo, hi].
func bound(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

const acrobotTag = "acrobot"

// MarshalBinary encodes the state, step count and step limit.
func (a *Acrobot) MarshalBinary() ([]byte, error) {
	w := NewStateWriter(acrobotTag)
	w.Int(a.maxSteps)
	w.Int(a.steps)
	w.Bool(a.started)
	for _, v := range a.state {
		w.F64(v)
	}
	return w.Data(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary. The step limit
// in the data must equal this environment's.
func (a *Acrobot) UnmarshalBinary(data []byte) error {
	r := NewStateReader(data, acrobotTag)
	maxSteps := r.Int()
	steps := r.Int()
	started := r.Bool()
	var s [4]float64
	for i := range s {
		s[i] = r.F64()
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("acrobot: unmarshal state: %w", err)
	}
	if maxSteps != a.maxSteps {
		return fmt.Errorf("acrobot: unmarshal state: step limit %d in state, environment has %d", maxSteps, a.maxSteps)
	}
	a.steps, a.started, a.state = steps, started, s
	return nil
}

// Succeeded reports whether an episode that ended with these flags succeeded: swung the tip above the bar.
func (a *Acrobot) Succeeded(terminated, truncated bool) (success, ok bool) { return terminated, true }
