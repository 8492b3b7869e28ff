package engine

import (
	"encoding"
	"io"
	"math/rand/v2"
)

// ActionSpace describes the actions an Env accepts. N > 0 means discrete with N choices,
// passed as action[0] = float64(index); N == 0 means continuous with len(Low) dimensions
// bounded by Low and High.
type ActionSpace struct {
	N         int
	Low, High []float64
}

// Dims returns the length of an action slice: 1 for a discrete space, len(Low) for a
// continuous one.
func (s ActionSpace) Dims() int {
	if s.N > 0 {
		return 1
	}
	return len(s.Low)
}

// StepResult is what one environment step returns.
type StepResult struct {
	// Obs is the next observation; the caller may keep it.
	Obs []float64
	// Reward is the step's reward.
	Reward float64
	// Terminated means the episode reached a terminal state of the task; Truncated that it
	// hit its time limit.
	Terminated, Truncated bool
	// Success, on the step that ends an episode, says whether the episode reached the task's
	// goal. HasSuccess is false for tasks without a notion of success (Pendulum's episodes
	// only end at the time limit); Success is then meaningless.
	Success, HasSuccess bool
}

// Env is the environment interface the engine steps. The engine owns it; whoever builds an
// engine passes an [EnvFactory] that makes them (package activities adapts testenv's
// simulators; a remote simulator can satisfy it just as well). An Env that holds resources
// (a connection) also implements io.Closer: Engine.Close closes the engine's, and Evaluate
// the one it plays.
type Env interface {
	// ObsDim returns the observation length.
	ObsDim() int
	// ActionSpace describes the valid actions.
	ActionSpace() ActionSpace
	// Reset starts an episode drawing the initial state from rng and returns the first
	// observation.
	Reset(rng *rand.Rand) []float64
	// Step applies action (ActionSpace().Dims() values).
	Step(action []float64) StepResult
	// MarshalBinary and UnmarshalBinary capture and restore the complete episode state, so
	// that a restored environment steps bit-identically.
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// FrameEnv is an Env whose observations also carry a frame: the camera images of the
// current state as raw bytes (for the tabletop suites, each camera's RGB image, H×W×3,
// cameras concatenated). The engine stores each step's frame once, beside its observation,
// in the replay buffer and checkpoints, and hands the frame of every inference request to a
// policy that reads frames ([FrameReader]). Frames are opaque bytes to the engine.
type FrameEnv interface {
	Env
	// FrameBytes is the length of every frame.
	FrameBytes() int
	// Frame appends the frame of the current observation (the one the last Reset or Step
	// returned) to dst and returns the extended slice.
	Frame(dst []byte) []byte
}

// EnvFactory makes environment index of an engine: 0 … NumEnvs−1 are the rollout
// environments (worker index / EnvsPerWorker owns environment index), and index NumEnvs is
// the one Evaluate plays, which should not simulate latency. Every call returns a new,
// independent environment; all of an engine's environments must have the same observation
// width and action space.
type EnvFactory func(index int) (Env, error)

// EpisodeResetter is an evaluation environment whose episodes are numbered: ResetEpisode(n,
// rng) starts the n-th episode of an evaluation (from 0), whatever this environment played
// before, so that an evaluation played on several environments side by side starts episode
// n from the same initial state as one played on a single environment (the tabletop suites'
// fixed initial states: episode n is task n mod T from initial state n div T). Wrappers of
// an Env that change its observations implement it by calling [ResetEpisode] on the inner
// one.
type EpisodeResetter interface {
	ResetEpisode(n int, rng *rand.Rand) []float64
}

// ResetEpisode starts episode n of an evaluation on env: env.ResetEpisode(n, rng) when env is
// an [EpisodeResetter], else env.Reset(rng) (an environment that draws its initial state
// from rng: the evaluation draws them in episode order).
func ResetEpisode(env Env, n int, rng *rand.Rand) []float64 {
	if er, ok := env.(EpisodeResetter); ok {
		return er.ResetEpisode(n, rng)
	}
	return env.Reset(rng)
}

// CloseEnv closes env if it holds resources (io.Closer); wrappers of an Env call it to pass
// Close on.
func CloseEnv(env Env) error {
	if c, ok := env.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
