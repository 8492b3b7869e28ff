// Package envrpc steps environments in another process or on another host over dm_env_rpc
// v1 (github.com/google-deepmind/dm_env_rpc): a gRPC bidirectional stream of
// EnvironmentRequest and EnvironmentResponse messages (dmenvrpc, generated from our own
// wire-compatible copy of the protocol in proto/). The server serves accerl's simulators
// (BuiltinWorlds: testenv's classic-control tasks and the tabletop suites) to any
// dm_env_rpc client, Python's included; the client is an engine.Env (and an
// engine.FrameEnv with frames) for any dm_env_rpc server that follows the conventions
// below, so a rollout worker can step a simulator that runs elsewhere.
//
// # Conversation
//
// One stream holds one world:
//
//	CreateWorld{settings}     → world_name     settings: "world" (which simulator, default
//	                                           "cartpole"), "seed", and the world's own
//	JoinWorld{world_name}     → specs          actions and observations keyed by uid
//	Reset{settings}           → specs          the next sequence's "seed", or a tabletop
//	                                           world's "task" and "init_state"
//	Step{}                    → RUNNING, first observations (a step after Join, Reset or
//	                                           an ended sequence starts one; actions ignored)
//	Step{actions}             → RUNNING | TERMINATED | INTERRUPTED, observations
//	Extension{PropertyRequest}  read or write property "state" (the checkpoint of a world)
//
// A world's observations are "state" (float64 [obs dim]), "reward" (float64 scalar, that
// of the step just taken), "success" (bool scalar, meaningful on the step that ends a
// sequence; absent for tasks without one, Pendulum), and for tabletop worlds
// "instruction" (string) and, with setting "pixels", "frame" (uint8 [cameras, H, W, 3]).
// The action "action" is an int64 scalar within [0, N−1] for a discrete task, a float64
// vector with min and max for a continuous one. A terminal state of the task is
// TERMINATED; a time limit is INTERRUPTED, so Python's DmEnvAdaptor gives discount 0 and
// 1 respectively, as dm_env expects. A failed request answers a google.rpc.Status and the
// stream goes on.
//
// # The client
//
// Dial creates and joins a world; Reset draws a seed from the engine's generator and sends
// it with the step that starts the episode (one round trip), so the remote episode equals
// the in-process simulator's reset from ResetRNG(seed), bit for bit; every Step is one
// round trip. The client requests only what it reads: state, reward, success, and the
// frame when asked for (Config.Frames), the instruction on the first step of an episode.
// A lost server is reconnected with backoff and its running episode ends truncated (see
// Env); a checkpoint carries the world's state when the server offers property "state".
//
// # Costs
//
// Measured on the 2-core development machine under load (go test -run XXX -bench .
// ./envrpc, one environment, loopback): CartPole 3–6·10⁶ steps/s in process, 1.0–1.4·10⁴
// remote (a round trip of 70–95 µs, 227 bytes on the wire per step); a tabletop suite
// 3.1–3.6·10⁴ in process, 6·10³ remote (622 B/step); with two 64×64 cameras 2·10³ in
// process, 1.1–1.5·10³ remote (25.4 kB/step: the frames' 24,576 bytes and framing). The
// engine steps its environments concurrently, so a pipeline with several environments per
// worker hides much of the round trip.
package envrpc
