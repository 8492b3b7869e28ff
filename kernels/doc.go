// Package kernels holds the numerics of accerl: dense layers and MLPs with
// explicit backward passes, the action heads (categorical, autoregressive
// tokens, diagonal Gaussian), the actor-critic [Policy], generalized
// advantage estimation (GAE), v-trace targets, advantage normalisation, the
// Adam optimizer with a learning-rate schedule, gradient clipping, and the
// PPO, GIPO, SAPO and v-trace losses with the [PolicyLearner] that applies
// them. It depends on gonum (and purego, to load CUDA at run time) only and
// knows nothing of Temporal, specs or the rollout engine.
//
// Beside those float64 models it holds the float32 compute layer of the
// larger models (the micro-VLA of package kernels/vla): the [Backend]
// interface — GEMM and strided batched GEMM, 2-D convolution, softmax,
// layer norm, GELU, elementwise ops and the Adam step, each with its
// reference semantics in its doc comment — and three implementations:
// [NewReference] (plain loops with float64 accumulation, the yardstick of
// parity tests), [NewCPU] (a packed, cache-blocked GEMM with an AVX2/FMA
// micro-kernel, pure Go elsewhere or with -tags noasm, parallel over cores)
// and [NewCUDA] (cuBLAS and NVRTC kernels through libcuda loaded at run
// time, no cgo; an error where no GPU is found, see [CUDAAvailable]).
//
// # Conventions
//
// The models of this package (Dense, MLP, Policy, the learners, the world
// models) are float64; the [Backend] is float32. Batches are row-major flat
// slices: n observations of dimension d are one []float64 of length n*d, row
// i at [i*d:(i+1)*d]. All
// parameters of a model live in ONE flat slice and their gradients in a second
// flat slice with the same layout (see [Policy.Layout]), so that the optimizer, gradient clipping, checksums,
// checkpoints and weight publishing all work on plain slices.
//
// Layers keep views into those flat slices: a [Dense] layer's W and B alias
// the owner's parameter slice, GW and GB alias the gradient slice. Backward
// passes accumulate (+=) into gradients; call ZeroGrads before each
// minibatch.
//
// # One model, one learner
//
// [Policy] with the [PolicyLearner] covers every action head, any of the
// four losses, a learning-rate schedule and the policy-lag diagnostics.
// With the categorical head, "ppo" and per-minibatch advantage
// normalisation ([DefaultLearnerConfig]) it is CleanRL's ppo.py for
// discrete actions. The learner satisfies [Learner].
//
// The learner trains any [Network]: [Policy] is one, and package vla's
// micro-VLA (a transformer over camera frames and an instruction) is
// another; a [FrameNetwork] also reads each sample's frame, which a [Batch]
// then carries in Frames (and each [Piece] in NextFrame).
//
// # Reference semantics
//
// The models and learners follow CleanRL's ppo.py and
// ppo_continuous_action.py (Huang et al. 2022, "CleanRL: High-quality
// Single-file Implementations of Deep Reinforcement Learning Algorithms"):
// separate actor and critic MLPs, orthogonal initialisation with gain
// sqrt(2) for hidden layers, 0.01 for the policy output and 1 for the value
// output, zero biases, a state-independent log σ for continuous actions,
// Adam with eps 1e-5, clipped surrogate and clipped value loss, global
// gradient-norm clipping. The PPO loss is Schulman et al. 2017, "Proximal
// Policy Optimization Algorithms", eq. 7 and 9; GAE is Schulman et al. 2016,
// "High-Dimensional Continuous Control Using Generalized Advantage
// Estimation", eq. 16; v-trace is Espeholt et al. 2018, "IMPALA", eq. 1;
// SAPO is Gao et al. 2025, "Soft Adaptive Policy Optimization"; GIPO is the
// AcceRL design's Gaussian importance-sampling weight. [Loss] states each
// as a formula.
//
// # Action heads
//
// A [Policy] has an actor trunk (the hidden layers, activated), one head
// and a critic. Log-probabilities, entropies and importance ratios are per
// token; a step has [Policy.TokensPerStep] tokens:
//
//   - categorical: a linear layer to NumActions logits, one token per step.
//   - gaussian: a linear layer to the means and a state-independent log σ
//     vector; the whole action vector is one token with its joint
//     log-density (CleanRL sums over dimensions before forming the ratio).
//   - tokens (VLA style): each of ActionDims continuous dimensions is cut
//     into Bins bins (default 256); token b of dimension d stands for the
//     bin centre low_d + (b + ½)(high_d − low_d)/Bins ([BinCenter],
//     inverse [BinOf]). The tokens of a step are decoded autoregressively:
//     token k's logits are W_k [f(o); e(t_0); …; e(t_{k−1})] + b_k, with
//     f(o) the trunk's features, e a learned Bins × EmbedDim embedding table
//     shared by all positions (default width 8) and a separate output layer
//     per position. Each output layer produces only the Bins action-token
//     logits — "vocabulary slimming": a VLA head restricted to the
//     action-token slice of its vocabulary, so the softmax, the entropy and
//     the ratio ignore every other token. Training evaluates all positions
//     in one pass with the recorded tokens (teacher forcing); sampling and
//     greedy decoding go position by position.
//
// # Losses and the learner
//
// A loss sees only per-token log-probabilities and entropies and per-step
// values, advantages and returns ([LossInput]) and returns the gradient of
// the loss with respect to them ([LossGrad]); [Policy.Backward] carries those
// through the head and the two MLPs. [Loss] selects by name ("ppo",
// "gipo", "sapo", "vtrace") and adds the common terms: value loss
// (optionally clipped), entropy bonus, and an optional KL(π_old‖π_θ)
// penalty. [LearnerConfig] adds the rest: [LRSchedule] (warmup, then
// constant, linear or cosine decay), gradient clipping, epochs and
// minibatches, and advantage normalisation — "minibatch" (CleanRL), "batch"
// (once over the whole batch) or "global" (μ and σ² merged across trainer
// shards through [AdvStats]), or "none". For v-trace the learner computes
// the targets itself from the batch's rewards and episode pieces; for the
// others the batch carries advantages, which [RecomputeGAE] can recompute
// with the current critic (value recomputation).
//
// Every [PolicyLearner.Update] first evaluates the whole batch once and
// reports the importance ratios π_θ/π_old as [UpdateStats].Lag
// ([RatioStats]: share of tokens PPO would clip, share of GIPO weights
// below 1e-3, effective sample size, KL estimate) — the measurements of a
// policy-lag study.
//
// # Errors and panics
//
// Shape misuse (a slice of the wrong length, an unknown activation, a token
// out of range, episode pieces that do not cover the batch) is a programmer
// error and panics with a message prefixed "kernels: ". Numerical trouble
// (a non-finite loss, gradient or parameter) is reported as an error value
// by [PolicyLearner.Update], after undoing the offending step.
//
// The float64 models' matrix products all go through one function in
// matmul.go, which uses gonum's pure-Go BLAS. The float32 models call a
// [Backend] instead, chosen at run time.
package kernels
