package testenv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MountainCarContinuous-v0 constants, as in Gymnasium's
// continuous_mountain_car.py.
const (
	mcMinAction    = -1.0
	mcMaxAction    = 1.0
	mcMinPosition  = -1.2
	mcMaxPosition  = 0.6
	mcMaxSpeed     = 0.07
	mcGoalPosition = 0.45
	mcGoalVelocity = 0.0
	mcPower        = 0.0015
	mcDefaultSteps = 999
)

// MountainCarContinuous is Gymnasium's MountainCarContinuous-v0 (Moore
// 1990): a car in a sinusoidal valley whose engine is too weak to climb the
// right hill directly. The state and observation are (x, ẋ); the action is
// one force a whose clipped value f = clip(a, −1, 1) drives
//
//	ẋ' = clip(ẋ + 0.0015 f − 0.0025 cos(3x), −0.07, 0.07)
//	x' = clip(x + ẋ', −1.2, 0.6);  ẋ' = 0 if x' = −1.2 and ẋ' < 0 (inelastic wall)
//
// The episode terminates when x' ≥ 0.45 and ẋ' ≥ 0, and is truncated when
// the step count reaches MaxEpisodeSteps (999). The reward is −0.1 a² with
// the UNclipped action, as Gymnasium computes it, plus 100 on the
// terminating step. Reset draws x from U[−0.6, −0.4) with ẋ = 0.
//
// Gymnasium stores the state as np.float32 after every step (the reset
// state stays float64 until the first step); this type rounds the stored
// state the same way and does the arithmetic of a step in float64.
// Stepping after termination continues the dynamics, as Gymnasium does.
type MountainCarContinuous struct {
	maxSteps int
	pos, vel float64
	steps    int
	started  bool
}

// NewMountainCarContinuous returns an environment that must be Reset before
// stepping.
func NewMountainCarContinuous(opts Options) *MountainCarContinuous {
	n := opts.MaxEpisodeSteps
	if n == 0 {
		n = mcDefaultSteps
	}
	return &MountainCarContinuous{maxSteps: n}
}

// ObsDim returns 2.
func (c *MountainCarContinuous) ObsDim() int { return 2 }

// ActionSpace returns one continuous dimension bounded by ±1 (force).
func (c *MountainCarContinuous) ActionSpace() ActionSpace {
	return ActionSpace{Low: []float64{mcMinAction}, High: []float64{mcMaxAction}}
}

// Reset draws x from U[−0.6, −0.4) and sets ẋ = 0.
func (c *MountainCarContinuous) Reset(rng *rand.Rand) []float64 {
	c.pos = -0.6 + 0.2*rng.Float64()
	c.vel = 0
	c.steps, c.started = 0, true
	return c.obs()
}

// Step applies force action[0]; the dynamics see it clipped to [−1, 1],
// the action cost sees it as given.
func (c *MountainCarContinuous) Step(action []float64) ([]float64, float64, bool, bool) {
	if !c.started {
		panic("testenv: mountaincar_continuous: Step called before Reset")
	}
	a := continuousAction("mountaincar_continuous", action, 1)[0]
	force := bound(a, mcMinAction, mcMaxAction)
	pos, vel := c.pos, c.vel

	vel += force*mcPower - 0.0025*math.Cos(3*pos)
	vel = bound(vel, -mcMaxSpeed, mcMaxSpeed)
	pos += vel
	pos = bound(pos, mcMinPosition, mcMaxPosition)
	if pos == mcMinPosition && vel < 0 {
		vel = 0
	}
	terminated := pos >= mcGoalPosition && vel >= mcGoalVelocity
	reward := 0.0
	if terminated {
		reward = 100.0
	}
	reward -= (a * a) * 0.1

	c.pos, c.vel = float64(float32(pos)), float64(float32(vel))
	c.steps++
	return c.obs(), reward, terminated, c.steps >= c.maxSteps
}

func (c *MountainCarContinuous) obs() []float64 {
	return []float64{roundObs(c.pos), roundObs(c.vel)}
}

const mountainCarContinuousTag = "mountaincar_continuous"

// MarshalBinary encodes x, ẋ, the step count and the step limit.
func (c *MountainCarContinuous) MarshalBinary() ([]byte, error) {
	w := NewStateWriter(mountainCarContinuousTag)
	w.Int(c.maxSteps)
	w.Int(c.steps)
	w.Bool(c.started)
	w.F64(c.pos)
	w.F64(c.vel)
	return w.Data(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary. The step limit
// in the data must equal this environment's.
func (c *MountainCarContinuous) UnmarshalBinary(data []byte) error {
	r := NewStateReader(data, mountainCarContinuousTag)
	maxSteps := r.Int()
	steps := r.Int()
	started := r.Bool()
	pos, vel := r.F64(), r.F64()
	if err := r.Done(); err != nil {
		return fmt.Errorf("mountaincar_continuous: unmarshal state: %w", err)
	}
	if maxSteps != c.maxSteps {
		return fmt.Errorf("mountaincar_continuous: unmarshal state: step limit %d in state, environment has %d", maxSteps, c.maxSteps)
	}
	c.steps, c.started, c.pos, c.vel = steps, started, pos, vel
	return nil
}

// Succeeded reports whether an episode that ended with these flags succeeded: reached the flag.
func (c *MountainCarContinuous) Succeeded(terminated, truncated bool) (success, ok bool) {
	return terminated, true
}
