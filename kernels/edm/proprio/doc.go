// Package proprio is the proprioception head of the pixel world model: a
// small MLP that predicts the robot's next proprioception vector (tabletop:
// fingertip position, gripper orientation as axis-angle, the two finger
// positions; 8 values) from the last k of them and the action. The
// observation model M_obs (package edm) imagines camera frames only; the
// VLA policy also reads proprioception, so an imagined observation needs
// both, and this head supplies the second half. It is float32 for training
// and float64 for the gradient checks, through the same generic code, with
// explicit forward and backward passes, and depends on the standard
// library and package kernels only.
//
// # Inputs and target
//
// A [Sample] holds k = History past vectors p_1 … p_k (p_k the current
// one), the action a taken after p_k and the next vector p_{k+1}. The
// network reads the feature vector
//
//	f = [p_k, p_k − p_{k−1}, …, p_2 − p_1, a]      (k·D + A values)
//
// — the current state, the last k−1 motions, the action — and predicts the
// change Δ = p_{k+1} − p_k. Both are standardised with statistics of the
// training set ([FitNorm]), fixed thereafter and saved with the model:
//
//	x = (f − μ_f)/σ_f,   z = (Δ − μ_Δ)/σ_Δ,   p̂_{k+1} = p_k + μ_Δ + σ_Δ ⊙ y
//
// (σ floored at [MinStd]). Predicting the change rather than the vector
// puts the model's capacity where the information is: the tabletop
// controller moves the fingertip by 1.5 cm and turns it by 0.1 rad per
// action unit, so Δ is small next to p and nearly a function of a, while
// the standardisation gives every dimension — metres, radians, finger
// travel — unit scale in the loss. The past motions tell the model what
// the last steps achieved against what was asked (a fingertip that stopped
// on a table or a bowl, fingers closed on an object), which is what the
// current vector and the action alone cannot tell.
//
// Why no image feature: the head is meant to run inside imagination, where
// the image is M_obs's own prediction; a pixel input would feed M_obs's
// errors into the proprio rollout and tie the two models' training
// together, for the few steps where a contact changes the motion, which
// the past motions already reveal. It is left out until a measurement
// shows those steps dominate the error.
//
// # Network
//
//	h_0 = x,  h_{l+1} = SiLU(W_l·h_l + b_l) for each hidden width,  y = W_L·h_L + b_L
//
// with PyTorch's default initialisation (U(±1/√fan_in) weights, zero
// biases) except the output layer, which starts at zero, so that an
// untrained head predicts the training set's mean change μ_Δ and its loss
// on the data it was fitted on is exactly 1 (each z has unit variance).
//
// # Loss and training
//
//	L = 1/(N·D) Σ_i Σ_d (y_{i,d} − z_{i,d})²
//
// the mean squared error in standardised units. [Trainer] minimises it
// with Adam ([kernels.Backend.AdamStep]: β = (0.9, 0.999), eps 1e-8) on
// minibatches drawn with replacement, with optional gradient-norm
// clipping. Its whole state round-trips through MarshalBinary, so a
// restored trainer continues bit for bit.
//
// # Imagination
//
// [Model.Rollout] predicts H steps open loop from k real vectors and H
// actions, feeding each prediction back as the newest past vector, as
// package edm's Net.Imagine does with frames. The baseline it must beat is
// copying the last real vector.
//
// # Conventions
//
// All parameters live in one flat slice with named spans ([Model.Spans],
// PyTorch shapes) and the gradients in a second slice of the same layout;
// backward passes accumulate into the gradients. The matrix products are
// plain loops accumulating in float64: at the default size (7,240
// parameters) a training step of 64 samples is about 3 MFLOP, forward and
// backward (≈ 2 ms on one core of the development machine), too little
// for a backend's GEMM to pay for its call. Shape misuse panics with a "proprio: " message; a
// non-finite loss is an error from [Trainer.Step].
package proprio
