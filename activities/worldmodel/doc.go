// Package worldmodel holds AcceRL's world-model machinery outside the
// numerics: the offline dataset, pretraining, imagination, mixing real and
// imagined data, and the imagination-horizon schedule. It knows nothing of
// Temporal; activities call it, and the Run workflow keeps the horizon
// schedule's state.
//
// # The pieces, in the order a run uses them
//
//  1. [CollectOffline] records N episodes of a behaviour policy (the paper
//     uses 1,000; only "random" exists so far) into an Arrow IPC dataset;
//     [ReadDataset] loads it.
//  2. [Pretrain] fits the observation model M_obs(o_{t−k+1..t}, a_t) →
//     ô_{t+1} and the reward model M_rew(o) (see kernels.ObsModel and
//     kernels.RewardModel) on it, with a validation split by episode, and
//     returns a [WMState] to checkpoint. It resumes bit-exactly from one.
//  3. During training, [Imagine] rolls start states taken from real
//     trajectories H steps forward with the current policy, producing
//     [ImaginedChunk]s for B_img, and [MixBatch] draws a training batch from
//     B_real and B_img at the imagination ratio.
//  4. After each world-model update the validation loss on real data feeds
//     the horizon schedule (runstate.HorizonSchedule, kept by the Run
//     workflow), which raises H from 5 towards 50 as the loss falls and
//     never lowers it.
//
// The world model keeps training online with the same learners
// ([WorldModel].ObsLearner.Fit every obs_every policy updates, RewLearner.Fit
// every rew_every); building those batches from B_real is the engine's job.
//
// # Dataset layout
//
//	<dir>/
//	  part-000000.arrow    episodes 0 … 99 (EpisodesPerFile per shard)
//	  part-000001.arrow    episodes 100 … 199
//	  …
//	  dataset.json         DatasetInfo: config, sizes, per-file rows and SHA-256; written last
//
// Each shard is an Arrow IPC file (Feather v2) with one row per transition:
//
//	column      type                          meaning
//	episode     int64                         episode index, from 0
//	t           int64                         step within the episode, from 0
//	obs         fixed_size_list<float64>[d]   o_t
//	action      list<float64>                 a_t: [index] for a discrete space, the vector otherwise
//	reward      float64                       r_t
//	terminated  bool                          the step reached a terminal state
//	truncated   bool                          the step hit the time limit
//	next_obs    fixed_size_list<float64>[d]   o_{t+1}
//
// The schema metadata carries accerl.table = "offline_dataset",
// accerl.schema_version, the collect config as JSON and the shard's episode
// range. Episode e is simulated with rand.New(rand.NewPCG(Seed, e)) for its
// reset and its actions, so the dataset depends only on its config and any
// shard can be rebuilt alone. Files are written to a temporary name,
// fsynced and renamed; the manifest commits the dataset. CollectOffline
// returns an existing verified dataset at once, and after a crash keeps the
// finished shards and writes the rest.
//
// # Rewards in imagination
//
// With reward = "direct", M_rew regresses r_t from o_{t+1} and an imagined
// step earns the prediction. With "success_delta", M_rew predicts
// p_success(o), trained on each episode's outcome (the success column, the simulator's own signal), and an
// imagined step earns r̂_t = p(ô_{t+1}) − p(ô_t): a potential-based shaping
// reward that telescopes along the chunk. Either way M_rew's second output
// predicts termination; an imagined chunk ends where it reaches 0.5 and
// then bootstraps with 0, otherwise it runs H steps and bootstraps with
// V(ô_H).
//
// # Determinism
//
// Every random choice comes from a PCG stream keyed by the run's seed and a
// fixed stream constant: initialisation, the train/validation split and the
// minibatch permutations. [WMState] holds the sampler's state at the start
// of the current epoch, so a resumed Pretrain redraws the same permutation;
// the parameters and Adam moments are float64 and round-trip through JSON
// exactly.
package worldmodel
