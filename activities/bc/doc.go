// Package bc trains a state-based [kernels.Policy] by behaviour cloning
// (BC) on the tabletop expert's demonstrations and measures it on the
// fixed initial states, the warm start of AcceRL's recipe (BC, then RL
// fine-tuning).
//
// The recipe (see Config for the knobs and their measured effect):
//
//   - Demonstrations: [Collect] plays the scripted expert from randomised
//     resets, noise-free labels with DART-style execution noise (Laskey et
//     al., 2017, "DART: Noise Injection for Robust Imitation Learning"):
//     the environment executes a* + N(0, σ²) on the motion dimensions,
//     the dataset stores a*, so the data covers the states a slightly
//     wrong policy visits together with the corrections back.
//   - Features: [Features] appends to the 46-D observation each object
//     slot's offset from the fingertip, o_i − p_tip, scaled to action
//     units (1.5 cm), because the expert's action is exactly such an
//     offset divided by 1.5 cm and clamped; features are then
//     standardised by the dataset's mean and standard deviation.
//   - Model: a gaussian head whose mean is trained by least squares (the
//     log-std is frozen during BC, which makes −log π half the squared
//     error up to a constant), predicting a chunk of K future actions
//     (as ACT, OpenVLA-OFT and AcceRL do); the first Execute of them run
//     open loop before the policy is queried again.
//   - Evaluation: [Evaluate] runs the greedy policy (the mean) from each
//     task's fixed initial states, all episodes in lockstep with one
//     batched forward pass per step.
//
// The same demonstrations also train a pixel policy, the micro-VLA of
// package kernels/vla ([VLAConfig], [TrainVLA]): [CollectImages] records
// the camera images (rendered at the policy's size), instruction and
// proprioception before every expert step; each action of the chunk
// a_t … a_{t+K−1} becomes 7 tokens of [ActionBins] = 256 bins over [−1, 1]
// (at most 1/256 from the value), so the transformer writes 7·K tokens per
// query; it is trained by teacher-forced token cross-entropy and plays by
// greedy KV-cached decoding ([VLAActor], evaluated by [EvaluateEnv] on
// environments rendering what it reads).
package bc
