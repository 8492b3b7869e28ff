package testenv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Pendulum-v1 constants, as in Gymnasium's pendulum.py.
const (
	pdMaxSpeed     = 8.0  // |θ̇| is clipped to this after every step
	pdMaxTorque    = 2.0  // |u| is clipped to this before it is applied
	pdDt           = 0.05 // seconds per step
	pdGravity      = 10.0 // Gymnasium's default g
	pdMass         = 1.0
	pdLength       = 1.0
	pdDefaultSteps = 200
)

// Pendulum is Gymnasium's Pendulum-v1: a rigid pendulum of mass 1 and length
// 1 on a frictionless pivot, to be swung up and balanced upright with a
// bounded torque. The state is (θ, θ̇) with θ = 0 upright; the observation is
// (cos θ, sin θ, θ̇) and the action is one torque u, clipped to [−2, 2].
// Each step first computes the cost of the current state and the clipped
// torque, then integrates with semi-implicit Euler over dt = 0.05 s:
//
//	cost = norm(θ)² + 0.1 θ̇² + 0.001 u²        (norm wraps θ into [−π, π))
//	θ̇'  = clip(θ̇ + (3g/(2l) sin θ + 3/(m l²) u) dt, −8, 8)
//	θ'   = θ + θ̇' dt
//
// with g = 10, m = l = 1, and pays reward −cost. The episode never
// terminates; it is truncated when the step count reaches MaxEpisodeSteps
// (200). Reset draws θ uniformly from [−π, π) and θ̇ from [−1, 1). θ itself
// is never wrapped, as in Gymnasium; only the cost and the observation see
// it through norm and cos/sin.
//
// Gymnasium receives the torque as float32 and, under NumPy 2's promotion
// rules, forms 3u and 0.001u² in float32; here they are float64, which
// changes results by at most float32 rounding of those two terms.
type Pendulum struct {
	maxSteps int
	theta    float64
	thetaDot float64
	steps    int
	started  bool
}

// NewPendulum returns a Pendulum that must be Reset before stepping.
func NewPendulum(opts Options) *Pendulum {
	n := opts.MaxEpisodeSteps
	if n == 0 {
		n = pdDefaultSteps
	}
	return &Pendulum{maxSteps: n}
}

// ObsDim returns 3.
func (p *Pendulum) ObsDim() int { return 3 }

// ActionSpace returns one continuous dimension bounded by ±2 (torque).
func (p *Pendulum) ActionSpace() ActionSpace {
	return ActionSpace{Low: []float64{-pdMaxTorque}, High: []float64{pdMaxTorque}}
}

// Reset draws θ from U[−π, π) and θ̇ from U[−1, 1).
func (p *Pendulum) Reset(rng *rand.Rand) []float64 {
	p.theta = -math.Pi + 2*math.Pi*rng.Float64()
	p.thetaDot = -1 + 2*rng.Float64()
	p.steps, p.started = 0, true
	return p.obs()
}

// Step applies torque action[0], clipped to [−2, 2].
func (p *Pendulum) Step(action []float64) ([]float64, float64, bool, bool) {
	if !p.started {
		panic("testenv: pendulum: Step called before Reset")
	}
	u := bound(continuousAction("pendulum", action, 1)[0], -pdMaxTorque, pdMaxTorque)
	th, thDot := p.theta, p.thetaDot
	n := angleNormalize(th)
	cost := n*n + 0.1*(thDot*thDot) + 0.001*(u*u)

	// Grouped as pendulum.py: (3*g/(2*l)*sin(th) + 3.0/(m*l**2)*u) * dt.
	g, l, m := pdGravity, pdLength, pdMass
	newThDot := thDot + (3*g/(2*l)*math.Sin(th)+3.0/(m*(l*l))*u)*pdDt
	newThDot = bound(newThDot, -pdMaxSpeed, pdMaxSpeed)
	p.theta = th + newThDot*pdDt
	p.thetaDot = newThDot
	p.steps++
	return p.obs(), -cost, false, p.steps >= p.maxSteps
}

func (p *Pendulum) obs() []float64 {
	return []float64{roundObs(math.Cos(p.theta)), roundObs(math.Sin(p.theta)), roundObs(p.thetaDot)}
}

// angleNormalize maps x into [−π, π) as pendulum.py's angle_normalize,
// ((x + π) mod 2π) − π, with the floored modulo of Python and NumPy (the
// result takes the divisor's sign), not Go's truncated math.Mod.
func angleNormalize(x float64) float64 {
	twoPi := 2 * math.Pi
	r := math.Mod(x+math.Pi, twoPi)
	if r < 0 {
		r += twoPi
	}
	return r - math.Pi
}

const pendulumTag = "pendulum"

// MarshalBinary encodes θ, θ̇, the step count and the step limit.
func (p *Pendulum) MarshalBinary() ([]byte, error) {
	w := NewStateWriter(pendulumTag)
	w.Int(p.maxSteps)
	w.Int(p.steps)
	w.Bool(p.started)
	w.F64(p.theta)
	w.F64(p.thetaDot)
	return w.Data(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary. The step limit
// in the data must equal this environment's.
func (p *Pendulum) UnmarshalBinary(data []byte) error {
	r := NewStateReader(data, pendulumTag)
	maxSteps := r.Int()
	steps := r.Int()
	started := r.Bool()
	theta, thetaDot := r.F64(), r.F64()
	if err := r.Done(); err != nil {
		return fmt.Errorf("pendulum: unmarshal state: %w", err)
	}
	if maxSteps != p.maxSteps {
		return fmt.Errorf("pendulum: unmarshal state: step limit %d in state, environment has %d", maxSteps, p.maxSteps)
	}
	p.steps, p.started, p.theta, p.thetaDot = steps, started, theta, thetaDot
	return nil
}

// Succeeded reports that Pendulum has no notion of success (ok = false): it has no goal
// state, only a cost.
func (*Pendulum) Succeeded(terminated, truncated bool) (success, ok bool) { return false, false }
