// Package vla is a micro vision-language-action policy in float32 with
// explicit forward and backward passes: a decoder-only transformer that
// reads camera images, a language instruction and proprioception and
// writes the robot's action as ActionDims discrete tokens (7: dx, dy, dz,
// droll, dpitch, dyaw, gripper), each one of Bins = 256 bins that occupy
// the last Bins ids of the language model's vocabulary (as in OpenVLA, Kim
// et al. 2024, "OpenVLA: An Open-Source Vision-Language-Action Model"). It
// depends on the standard library and package kernels (its float32
// [kernels.Backend]) only.
//
// # Sequence
//
// Every sample is one sequence of PrefixLen + ActionDims positions:
//
//	[camera 0 patches | … | camera C−1 patches | MaxInstr instruction words | proprio | action 0 … action A−1]
//
// The positions are embedded as follows.
//
//   - patch stem (per camera, ViT style, Dosovitskiy et al. 2021): the
//     S×S RGB image is cut into (S/P)² non-overlapping P×P patches in
//     raster order, pixels scaled to v/127.5 − 1, each patch flattened as
//     (row, column, channel) and projected to Dim by the camera's own
//     linear layer, plus that camera's learned position embedding per
//     patch and a learned camera-type embedding;
//   - instruction: word ids embedded with the token-embedding table (V ×
//     Dim) plus a learned sequence position; positions past the
//     instruction hold <pad> and are masked out of attention;
//   - proprio: a linear map of the ProprioDim-vector to Dim plus its
//     sequence position;
//   - action position k: the embedding of action token k−1 (the <act>
//     token for k = 0) plus its sequence position; the logits of token k
//     come from the final hidden state at position k.
//
// The vocabulary of V = VocabSize tokens is: word ids 0 … WordVocab−1,
// <pad> = WordVocab, <act> = WordVocab+1, unused ids (an LM's other tokens,
// present so the table and the full head have a realistic size), and the
// action tokens V−Bins … V−1.
//
// # Transformer
//
// Layers pre-norm blocks (GPT-2, Radford et al. 2019):
//
//	h = x + W_o·MHA(LN₁(x)) + b_o,   out = h + W₂·GELU(W₁·LN₂(h) + b₁) + b₂
//
// with Heads-head scaled dot-product attention (Vaswani et al. 2017), the
// exact GELU, hidden width MLPRatio·Dim, then a final layer norm. The
// attention mask is prefix-LM style (bidirectional over the observation,
// causal over the actions, as in UniLM and PaliGemma): query i may attend
// to key j iff j is not padding and (j < PrefixLen or j ≤ i). So action
// position k sees the whole prefix and the action positions ≤ k, and no
// prefix position ever sees an action.
//
// # Heads
//
// The LM head is a V × Dim matrix (untied from the embedding, no bias).
// With Config.SlimHead ("vocabulary slimming") only its Bins action-token
// rows are used: logits, log-softmax, entropy and gradients cover the
// action tokens alone, and the other V−Bins rows get neither gradients nor
// optimizer state. Without it the full head computes all V logits and the
// softmax normalises over V; the action tokens' log-probs are then the slim
// ones minus log Z (Z the full softmax's mass on the action tokens), and
// every row of the head receives gradient (pushing non-action logits down).
// Act never emits a non-action token: with the full head it samples from
// the V-softmax renormalised over the action tokens.
//
// The value head is linear, Dim → 1, on the mean of the final hidden
// states over the sample's valid prefix positions (patches, non-padding
// words, proprio): the prefix does not depend on the actions, so Act's
// prefix pass and Forward's teacher-forced pass give the same value.
//
// # Acting, scoring, training
//
// [Net.Act] runs the prefix once, caches every layer's keys and values,
// and decodes the action tokens one position at a time against the cache
// (sampling with an rng, or greedy). [Net.Forward] scores given tokens with
// teacher forcing, all positions in one pass, and returns a [Tape] with
// per-token log-probs and entropies and per-sample values; [Net.Backward]
// takes ∂L/∂ of those and accumulates parameter gradients. [CrossEntropy]
// is the behaviour-cloning loss, [Adam] and [ClipGradNorm] the optimizer
// pieces, [Net.MarshalBinary] and [Adam.MarshalBinary] the checkpoints
// (versioned, checksummed, bit-exact), [DefaultConfig] and the RL-sized
// [SmallConfig] the presets, [Bench] the size and speed measurement, and
// [Config.ActionToTokens] / [Config.TokensToAction] the binning (bin
// centres low + (b + ½)(high − low)/Bins).
//
// # In the RL engine
//
// [Policy] is the model as a kernels.FrameNetwork, the interface of accerl's
// learner and inference service: it reads each observation's proprioception
// from the engine's observation vector and the images and instruction from
// the observation's frame ([PolicyConfig] says where), samples the action
// tokens with Act, and scores them for the token-level PPO, GIPO, SAPO and
// v-trace losses with Forward and Backward. The learner's optimiser works on
// float64 master parameters that Policy rounds into the float32 model after
// every step (mixed precision).
//
// # Conventions
//
// The model is generic over its element type: [Model] = Net[float32] acts
// and trains; Net[float64] runs the same code for the finite-difference
// gradient checks. All parameters live in ONE flat slice ([Net.Params],
// layout in [Net.Spans], PyTorch shapes: a linear weight is out × in) and
// gradients in a second one ([Net.Grads]) that is the same layout cut
// short: the non-action LM-head rows are the last (V−Bins)·Dim parameters,
// so with the slim head Grads (and an optimizer's state) simply stop
// before them. Backward accumulates; call ZeroGrads first. Batches of
// hidden states are row-major (sample, position) × Dim.
//
// All matrix products go through matmul and batchMatmul in gemm.go: a
// float32 model runs them on its [kernels.Backend] ([kernels.NewCPU], the
// AVX2/FMA GEMM, unless [Net.SetBackend] says otherwise), the float64 model
// on the pure-Go gemm there, the reference of the gradient checks.
// Attention multiplies head-major copies of q, k and v (one contiguous
// t × Dim/Heads block per sequence and head), all sequences and heads in
// one batched GEMM. The float32 exponentials and the GELU's error function
// are polynomial fits accurate to float32 (fastmath.go); the float64 model
// uses math.Exp and math.Erf.
//
// A Net keeps the scratch of Act and Backward between calls, and
// [Net.ForwardInto] reuses a tape, so the hot path allocates only its
// small results; in exchange a Net serves one goroutine at a time.
//
// Shape misuse (wrong image size, a token out of range, a too-long
// instruction) is a programmer error and panics with a message prefixed
// "vla: "; an invalid Config panics in New and is an error from
// [Config.Validate] and [Bench].
package vla
