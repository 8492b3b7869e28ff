// Package edm is the observation model M_obs of a pixel world model: an
// EDM denoiser (Karras et al. 2022, "Elucidating the Design Space of
// Diffusion-Based Generative Models") in the style of DIAMOND (Alonso et
// al. 2024, "Diffusion for World Modeling: Visual Details Matter in
// Atari") that predicts the next camera frame from the last k frames and
// the action. It is float32 with explicit forward and backward passes, its
// matrix products on a [kernels.Backend], and depends on the standard
// library and package kernels only.
//
// # Frames
//
// A frame is ImageSize×ImageSize RGB bytes in HWC order ([Frame]); the
// model sees pixels as v/127.5 − 1 ∈ [−1, 1]. With C cameras one time step
// is 3C channels. A sample ([Sample]) is k past steps, the action a taken
// after the last of them, and the next step x₀ to predict.
//
// # Denoiser and preconditioning
//
// The denoiser of a noisy next frame x at noise level σ is
//
//	D(x; σ) = c_skip(σ)·x + c_out(σ)·F_θ(c_in(σ)·x, c_noise(σ), past, a)
//
//	c_skip = σ_d²/(σ² + σ_d²),  c_out = σ·σ_d/√(σ² + σ_d²),  c_in = 1/√(σ² + σ_d²),  c_noise = ¼ ln σ
//
// with σ_d = 0.5 (Karras et al. Table 1). The past frames enter F_θ
// unscaled, concatenated to c_in·x along channels (3C + 3Ck input
// channels).
//
// # Training
//
// With ln σ ~ N(P_mean, P_std²) = N(−0.4, 1.2²) per sample and ε ~ N(0, I),
// x = x₀ + σε, the loss is
//
//	L = E‖F_θ(c_in·x, c_noise, past, a) − (x₀ − c_skip·x)/c_out‖²  (mean over pixels)
//
// which equals λ(σ)·‖D(x; σ) − x₀‖² with EDM's weight λ = 1/c_out²: the
// network's target has unit variance at every σ. [Trainer] minimises it
// with Adam on minibatches drawn with replacement. Two optional changes to
// the contexts it trains on address the error that compounds when
// [Net.Imagine] feeds the model its own frames: [EDM.ContextNoise] adds
// Gaussian noise to them (GameNGen) and [EDM.SelfForcing] replaces their
// most recent steps by the model's own predictions (scheduled sampling).
//
// # Sampling
//
// [Net.Sample] integrates the probability-flow ODE dx/dσ = (x − D(x; σ))/σ
// with Euler steps on the Karras schedule
//
//	σ_i = (σ_max^{1/ρ} + i/(N−1)·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ,  σ_N = 0
//
// from x = σ_max·ε, with DIAMOND's N = 3, σ_max = 5, σ_min = 2e-3, ρ = 7
// (σ = 5, 0.283, 0.002, 0), and clips the result to [−1, 1].
// [Net.Imagine] feeds its own predictions back as history to roll out H
// steps open loop.
//
// # Network F_θ
//
// Conditioning: e = Fourier(c_noise) + W_a·a + b_a (fixed frequencies, see
// noiseEmbedding; a linear action embedding, where DIAMOND embeds a
// discrete Atari action), then cond = W₂·SiLU(W₁·e + b₁) + b₂. Every group
// norm is adaptive (DIAMOND's AdaGroupNorm, FiLM):
//
//	y = GroupNorm(x)·(1 + γ) + β,  [γ | β] = W·cond + b
//
// A residual block is h = conv₃(SiLU(norm(x))), y = conv₃(SiLU(norm(h))) +
// proj(x), proj a 1×1 conv when the widths differ. The U-Net, for levels
// l = 0 … L−1 of widths Channels[l]:
//
//	h = conv₃(c_in·x ⊕ past)
//	encoder: for each level, a stride-2 3×3 conv (below the top level), then one residual block → skip_l
//	decoder: from the deepest level up, one residual block on h ⊕ skip_l, then nearest 2× upsampling
//	out = conv₃(SiLU(norm(h)))   (3C channels, zero-initialised)
//
// where ⊕ concatenates channels. Convolutions are im2col + one GEMM over
// the whole batch (activations are channel-major, CNHW, see conv).
//
// # Size: 32×32 on 2 CPU cores
//
// DIAMOND and AcceRL run channels [64, 64, 64, 64] with two residual
// blocks per level at 64×64 on a GPU. Here one training step of the
// default model (32×32, channels [32, 32, 64], one block per level, no
// attention, no convolution after upsampling, batch 16) costs about 1 s on
// the 2 shared cores of the development machine (~170 MFLOP forward per
// sample, three times that with the backward pass, plus the im2col copies);
// the same layout at 64×64 would cost four times as much per step and the
// full DIAMOND widths and depths another ~4×, leaving a few dozen steps in
// the minutes a test or demo may take. 32×32 still shows the gripper, the
// bowls and the plate of the tabletop scene (a few pixels each), which is
// what an imagined rollout must get right for the reward model to judge it.
//
// # Conventions
//
// All parameters live in one flat slice with named spans ([Net.Spans],
// PyTorch shapes) and the gradients in a second slice of the same layout;
// backward passes accumulate into the gradients. The code is generic over
// float32 and float64: the float64 instantiation is the mirror on which
// the gradient checks run. Shape misuse panics with an "edm: " message;
// numerical trouble (a non-finite loss) is an error from [Trainer.Step].
package edm
