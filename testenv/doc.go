// Package testenv provides reinforcement-learning environments for accerl:
// classic-control tasks with Gymnasium-exact dynamics (CartPole-v1 and
// Acrobot-v1 with discrete actions, Pendulum-v1 and MountainCarContinuous-v0
// with continuous ones) and a step-latency model that makes a cheap simulator
// behave, in wall time, like a heavy external one.
//
// # Environments
//
// An [Env] is one simulator instance. Reset starts an episode with an initial
// state drawn from the caller's *rand.Rand (math/rand/v2), so seeds flow
// explicitly from the experiment spec; Step advances one step and reports
// Gymnasium's (obs, reward, terminated, truncated). Truncation is
// Gymnasium's TimeLimit wrapper: truncated becomes true on the step at which
// the step count reaches the limit. MarshalBinary captures the complete
// episode state (physics state, step count, flags) and UnmarshalBinary
// restores it, so that stepping a restored copy gives bit-identical results;
// checkpoints and crash recovery rely on that.
//
// Environments are built by [Make] from a kind name ("cartpole", "acrobot",
// "pendulum", "mountaincar_continuous"); there is no global registry to add
// to. Discrete actions travel as action[0] = float64(index); continuous
// ones as one float64 per dimension, which the environment clips to its
// [ActionSpace] bounds exactly where Gymnasium does.
//
// # Fidelity to Gymnasium
//
// The equations, constants, integrators, thresholds, reward rules and reset
// distributions follow gymnasium/envs/classic_control (cartpole.py,
// acrobot.py, pendulum.py, continuous_mountain_car.py). The internal state
// is float64 as in Gymnasium; observations are rounded to float32 precision
// because Gymnasium returns np.float32 arrays, Acrobot's initial state is
// rounded to float32 as Gymnasium's reset does, and MountainCarContinuous's
// state is rounded to float32 after every step as Gymnasium stores it.
// Arithmetic that NumPy would do in float32 on float32 actions is done in
// float64 (see each type's comment). Random draws cannot match NumPy's
// generator, so episodes match Gymnasium in distribution, and step by step
// given the same state.
//
// # Latency model
//
// MuJoCo-class simulators of the kind the AcceRL article targets run at
// most about 200 Hz per instance, and some instances are persistently
// slower than others. [Latency] describes such a delay distribution
// (none, constant, or lognormal with a heavy right tail, plus a fraction of
// slow workers), and [WithLatency] wraps an Env so that every Step first
// sleeps for a sampled delay. The delay is a sleep, not CPU work: a 2-core
// machine can host many simulated rollout workers, which is what
// throughput experiments of the asynchronous pipeline need.
package testenv
