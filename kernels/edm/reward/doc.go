// Package reward is the reward model M_rew of the pixel world model: a
// classifier that reads one time step of camera frames and gives two
// probabilities, p_success (the task's goal holds in this frame, or held
// at an earlier one of the same episode) and p_end (the episode has ended
// by this frame). AcceRL fine-tunes it from the VLA's vision backbone; here
// it shares the shape of package vla's patch stem, can be initialised from
// a trained vla.Model's stem ([Model.CopyVLAStem]), and is trained with the
// focal loss. In imagination the reward of a step is the rise in p_success
// ([Increments]):
//
//	r̂_t = p_success(o_{t+1}) − p_success(o_t)
//
// so an imagined rollout is paid 1 in total when it goes from "not yet" to
// "done", whichever step it happens at.
//
// # Network
//
// For a step of C camera frames of S×S RGB pixels cut into P×P patches
// (np = (S/P)² per camera, raster order, each flattened as (row, column,
// channel) with pixels v/127.5 − 1, exactly as package vla does):
//
//	a_{c,p} = W_c·patch_{c,p} + b_c + pos_{c,p}        (D values; vla's stem)
//	t_{c,p} = SiLU(a_{c,p})                            (token features)
//	h       = 1/(C·np) · Σ_{c,p} t_{c,p}                (mean pool)
//	u       = SiLU(W₁·h + b₁)                          (Hidden values)
//	z       = W₂·u + b₂                                (2 logits: success, end)
//	p_k     = σ(z_k)
//
// The SiLU between the stem and the pool is this package's addition. In
// the VLA the transformer mixes the patch tokens before anything pools
// them; without a non-linearity here the mean of linear maps would be the
// linear map of the mean patch, the position embeddings would add a
// constant, and the classifier would see the average 8×8 tile of the image
// and nothing of where things are. With it, each token is a feature
// detector gated by its position (a black bowl at the plate's patch counts
// differently from one elsewhere), and the pool counts detections.
//
// # Loss
//
// Both logits are trained as independent binary classifiers with the focal
// loss of Lin et al. 2017 ("Focal Loss for Dense Object Detection", eq. 5):
//
//	p_t = p if y = 1 else 1 − p,   α_t = α if y = 1 else 1 − α
//	FL  = −α_t (1 − p_t)^γ log p_t
//
// with γ = 2 (the paper's) and α optional (α ≤ 0 gives α_t = 1). The
// (1 − p_t)^γ factor shrinks the loss of frames the model already gets
// right, so the few success frames of an episode of a hundred are not
// drowned by its easy negatives. The loss of a batch is the mean over its
// frames of the sum over the two logits. Its derivative with respect to
// the logit z (s = +1 for y = 1, −1 for y = 0) is
//
//	∂FL/∂z = α_t s (1 − p_t)^γ (γ p_t log p_t − (1 − p_t))
//
// which at γ = 0, α_t = 1 is the familiar p − y of the cross-entropy.
//
// # Conventions
//
// The model is float64 with explicit backward passes (it is small — 31 k
// parameters at the default size, ~0.8 MFLOP per frame forward — so
// there is no float32 twin; the gradient checks run on the code that
// trains). All parameters live in one flat slice with named spans
// ([Model.Spans], PyTorch shapes) and the gradients in a second slice of
// the same layout; backward passes accumulate. Shape misuse panics with a
// "reward: " message; a non-finite loss or gradient is an error from
// [Trainer.Step].
package reward
