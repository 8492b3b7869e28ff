package testenv

import (
	"encoding"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// ActionSpace describes the actions an Env accepts. N > 0 means discrete with
// N choices, passed as action[0] = float64(index); N == 0 means continuous
// with len(Low) dimensions bounded by Low and High.
type ActionSpace struct {
	N         int
	Low, High []float64
}

// Dims returns the length of an action slice: 1 for a discrete space,
// len(Low) for a continuous one.
func (s ActionSpace) Dims() int {
	if s.N > 0 {
		return 1
	}
	return len(s.Low)
}

// Env is one simulator instance; it is not safe for concurrent use.
type Env interface {
	// ObsDim returns the length of every observation.
	ObsDim() int
	// ActionSpace describes valid actions.
	ActionSpace() ActionSpace
	// Reset starts a new episode with the initial state drawn from rng and
	// returns the first observation.
	Reset(rng *rand.Rand) []float64
	// Step applies action and returns the next observation (a fresh slice
	// the caller may keep), the reward, and whether the episode terminated
	// (a terminal state of the task) or was truncated (time limit).
	Step(action []float64) (obs []float64, reward float64, terminated, truncated bool)
	// Succeeded reports whether an episode that ended with these flags reached the task's
	// goal: CartPole balanced until the time limit (truncated), Acrobot and MountainCar
	// reached theirs (terminated). Pendulum has no goal (its episodes only end at the time
	// limit and its reward is a cost): ok is false for it, and for any task without a notion
	// of success.
	Succeeded(terminated, truncated bool) (success, ok bool)
	// MarshalBinary encodes the complete episode state (physics state and
	// step count).
	encoding.BinaryMarshaler
	// UnmarshalBinary restores a state from MarshalBinary; stepping after
	// it gives bit-identical results to stepping the original.
	encoding.BinaryUnmarshaler
}

// Options adjusts an environment built by Make.
type Options struct {
	// MaxEpisodeSteps is the time limit after which an episode is
	// truncated; 0 means the kind's Gymnasium default (500 for CartPole-v1
	// and Acrobot-v1, 200 for Pendulum-v1, 999 for
	// MountainCarContinuous-v0).
	MaxEpisodeSteps int
}

// Environment kinds accepted by Make.
const (
	KindCartPole              = "cartpole"               // CartPole-v1
	KindAcrobot               = "acrobot"                // Acrobot-v1
	KindPendulum              = "pendulum"               // Pendulum-v1
	KindMountainCarContinuous = "mountaincar_continuous" // MountainCarContinuous-v0
)

// Kinds returns the environment kinds Make knows, sorted.
func Kinds() []string {
	return []string{KindAcrobot, KindCartPole, KindMountainCarContinuous, KindPendulum}
}

// Make builds an environment of the given kind. An unknown kind or a
// negative step limit is an error.
func Make(kind string, opts Options) (Env, error) {
	if opts.MaxEpisodeSteps < 0 {
		return nil, fmt.Errorf("make environment %q: max episode steps must not be negative, got %d", kind, opts.MaxEpisodeSteps)
	}
	switch kind {
	case KindCartPole:
		return NewCartPole(opts), nil
	case KindAcrobot:
		return NewAcrobot(opts), nil
	case KindPendulum:
		return NewPendulum(opts), nil
	case KindMountainCarContinuous:
		return NewMountainCarContinuous(opts), nil
	}
	return nil, fmt.Errorf("make environment: unknown kind %q (known: %s)", kind, strings.Join(Kinds(), ", "))
}

// discreteAction checks that action is one valid index of an n-way discrete
// space and returns it; misuse is a programmer error and panics.
func discreteAction(env string, action []float64, n int) int {
	if len(action) != 1 {
		panic(fmt.Sprintf("testenv: %s: action has %d values, want 1", env, len(action)))
	}
	a := int(action[0])
	if float64(a) != action[0] || a < 0 || a >= n {
		panic(fmt.Sprintf("testenv: %s: action %v is not an integer in [0, %d)", env, action[0], n))
	}
	return a
}

// continuousAction checks that action has dims finite values and returns
// it. A wrong length is a programmer error; so is a NaN or infinite action,
// which only a policy with non-finite parameters could produce (the learner
// refuses such parameters), so both panic.
func continuousAction(env string, action []float64, dims int) []float64 {
	if len(action) != dims {
		panic(fmt.Sprintf("testenv: %s: action has %d values, want %d", env, len(action), dims))
	}
	for i, v := range action {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic(fmt.Sprintf("testenv: %s: action[%d] = %v is not finite", env, i, v))
		}
	}
	return action
}
