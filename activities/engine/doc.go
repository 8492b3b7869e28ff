// Package engine is accerl's training data plane: the AcceRL pipeline of
// rollout workers, a batching inference service, a replay buffer and a
// trainer, in one process, connected by channels. It runs inside a training
// segment activity but knows nothing of Temporal: the activity builds an
// Engine from a Config (and, when resuming, a Snapshot), calls Run for a
// number of updates, and stores Snapshot's result in its checkpoint.
//
// # Data flow
//
//	env goroutines ──obs──▶ InferenceService ──action──▶ env goroutines
//	      │ (one per environment,   (batches; weights swapped                │
//	      │  grouped into workers)   between batches)                        │
//	      └──────────────── chunks ──▶ ReplayBuffer ──▶ trainer ──weights────┘
//
// Rollout: every environment steps in its own goroutine; a rollout worker is
// the group of EnvsPerWorker environments that share a latency profile
// (worker indices below Latency.NumSlow are the slow ones). One goroutine per
// environment, rather than one per worker stepping its environments in turn,
// means no environment ever waits for another one's slow simulator step; the
// goroutines are cheap because a simulated step is mostly a sleep. Each
// environment sends its observation to the inference service, waits only for
// its own action, steps, and appends the step to its current Chunk, tagged
// with the policy version that acted. A chunk goes to the replay buffer when
// it holds ChunkSteps steps or its episode ends; a chunk that did not
// terminate keeps the next observation so that the trainer can bootstrap
// V(next).
//
// Policy: a kernels.Policy with the head Config.Policy.Head selects —
// categorical (discrete action spaces), tokens (each continuous action
// dimension cut into Bins tokens and decoded autoregressively, VLA style)
// or gaussian (continuous). The observation width and the action space
// come from the environment; New refuses a head that does not fit it. A
// chunk stores what the head needs for training: the action tokens (one
// per step, or ActionDims per step for the tokens head) or the continuous
// actions as sampled, and one log-probability per token; the environment
// receives the head's EnvActions (bin centres for tokens, the sample
// clipped to the bounds for gaussian).
//
// Inference: InferenceService keeps a FIFO of requests and runs a batch when
// MaxBatch requests are queued or when the oldest queued request has waited
// MaxWait, whichever comes first (the Clock is injectable, so tests check
// the rule with a fake clock). The trainer publishes weights with a version
// number; the service swaps them in between batches, acting with version
// max(0, v−Lag).
//
// Replay and trainer: ReplayBuffer holds up to ReplayCapacity steps and
// evicts the oldest chunks; Take(n) blocks until it can hand out at least n
// steps of whole chunks, oldest first, each step tagged with its staleness
// (trainer version − acting version); MaxStaleness discards older chunks.
// The trainer sorts a batch by (environment, chunk sequence) and builds a
// kernels.Batch with one Piece per chunk. For ppo, gipo and sapo it
// computes GAE per chunk (bootstrap 0 after termination, V(next) with the
// current critic after a cut or truncation; with RecomputeValues V(o_t) is
// recomputed with the current critic too, kernels.RecomputeGAE); v-trace
// computes its targets inside the learner from the rewards and pieces.
// Advantage normalisation follows Learner.AdvNorm; "global" hands the
// learner the batch's kernels.AdvStats, which with the engine's single
// trainer equal "batch". kernels.PolicyLearner.Update then runs the loss
// Learner.Algo selects, with the learning rate of Learner.Schedule at the
// run-wide update count, and the trainer publishes version+1. A failed
// update (non-finite numbers) restores the parameters and the optimiser
// to their state before it and ends Run with an error naming the update.
//
// # Modes
//
// In async mode (ModeAsync) collection and training are decoupled: the
// environments never wait for the trainer and the trainer only waits for
// BatchSteps of data. In sync mode (ModeSync) the same components run
// lock-step: every environment collects ceil(BatchSteps/envs) steps with
// the same weights, then the trainer updates while everyone waits. Sync mode
// is the throughput baseline and is deterministic: each environment samples
// its actions with its own RNG stream (so batching order does not matter),
// the batch is sorted, and every RNG state is in the Snapshot, so that two
// runs with one Seed end with the same ParamsSHA256, and so does a run
// interrupted by Snapshot/New at a segment boundary. Finished episodes
// report the step count as if the round's environments stepped in
// lockstep, so the episode stream is deterministic too.
//
// # Step budget
//
// Config.MaxEnvSteps bounds the run-wide environment steps exactly. In
// async mode every environment reserves each step from a run-wide counter
// before asking for its action; when no step is left it pushes its partial
// chunk (a cut, bootstrapped from its current observation) and stops. Once
// all have stopped the trainer drains the replay buffer: a last update on
// whatever is left, even less than BatchSteps. In sync mode the last round
// collects only the remaining steps, shared out in environment order (the
// first remainder-mod-envs environments take one step more), which depends
// only on the step count and so survives Snapshot/New. Either way Run then
// returns with SegmentStats.BudgetReached, EnvSteps equal to the budget.
//
// # World model
//
// With Config.WorldModel.Enabled the trainer keeps AcceRL's two buffers
// next to the replay FIFO. B_real is a ring of the most recent real
// transitions (each with its history window o_{t−k+1..t}, its action in
// the environment's encoding, o_{t+1}, the reward model's label and the
// termination flag; terminated chunks keep their last observation as
// Chunk.TerminalObs for this). B_img holds imagined chunks (Env −1) not yet
// trained on. Each update, in the trainer's goroutine:
//
//  1. takes its imagined share from B_img (worldmodel.MixBatch at the
//     imagination ratio: round(ratio·BatchSteps) steps of whole chunks) and
//     the rest from real data: in async mode replay hands out the missing
//     steps (real data fills any shortfall of B_img); in sync mode every
//     round collects RealBatchSteps, the real share;
//  2. sorts the real chunks, evaluates M_obs on their transitions (the
//     validation loss on recent real data, UpdateReport.WMValLoss, measured
//     before the model trains on them) and adds them to B_real;
//  3. fits M_obs every ObsEvery and M_rew every RewEvery updates on
//     minibatches drawn from B_real (a model that was not pretrained with
//     LoadWorldModel fits its normalisations and trains the first time
//     B_real holds a minibatch, and imagines only from then on);
//  4. updates the policy on real and imagined chunks alike: imagined chunks
//     bootstrap with V(ô_H) under the current critic unless the model
//     predicted a termination (then 0);
//  5. refills B_img with the new policy: start states drawn uniformly from
//     B_real, rolled Horizon steps through the world model
//     (worldmodel.Imagine; rewards from M_rew, r̂ = M_rew(ô_{t+1}) −
//     M_rew(ô_t) in success_delta mode).
//
// Only real steps count toward MaxEnvSteps and EnvSteps. The horizon is
// fixed for a Run (SetHorizon or a new Config changes it between Runs; the
// Run workflow's schedule does). Everything the world model holds — both
// models and their optimisers, B_real, B_img, the episode tails and its RNG
// (stream 4 under Seed) — is in the Snapshot, so sync mode stays bit-exact
// across Snapshot/New with the world model on.
//
// # Failure injection
//
// Config.InjectNaNAtUpdate is a test-only hook: that run-wide update gets a
// NaN advantage (a NaN reward for v-trace), the learner reports its
// non-finite error, and Run returns it; the parameters stay finite, so a
// Snapshot never holds a NaN (Snapshot also refuses non-finite state
// outright).
//
// # Measurements
//
// Each update produces an UpdateReport and each Run a SegmentStats:
// environment steps per second; the environment-bound ceiling (the sum over
// environments of 1/(mean step time + inference compute per request)) and
// the achieved fraction of it; inference batch sizes against the number of
// requests waiting when each batch formed; queue-wait quantiles; the
// trainer's busy fraction; the rollout idle fraction; the staleness
// histogram; the learner's policy-lag diagnostics (UpdateReport.Stats:
// ClipFrac, LowWeightFrac and ESS per minibatch step, and Lag, the
// importance ratios of the whole batch before the update). BenchThroughput
// runs the sync/async comparison the AcceRL
// throughput claim rests on.
package engine
