// Package kernels holds the numerics of accerl: dense layers and MLPs with
// explicit backward passes, a categorical action head, the PPO actor-critic
// model, generalized advantage estimation (GAE), the Adam optimizer, gradient
// clipping and the clipped PPO loss. It depends on gonum only and knows nothing
// of Temporal, specs or the rollout engine.
//
// # Conventions
//
// Everything is float64. Batches are row-major flat slices: n observations of
// dimension d are one []float64 of length n*d, row i at [i*d:(i+1)*d]. All
// parameters of a model live in ONE flat slice and their gradients in a second
// flat slice with the same layout (see [ActorCritic.Layout]), so that the
// optimizer, gradient clipping, checksums, checkpoints and weight publishing
// all work on plain slices.
//
// Layers keep views into those flat slices: a [Dense] layer's W and B alias
// the owner's parameter slice, GW and GB alias the gradient slice. Backward
// passes accumulate (+=) into gradients; call [ActorCritic.ZeroGrads] before
// each minibatch.
//
// # Reference semantics
//
// The model and the learner follow CleanRL's ppo.py (Huang et al. 2022,
// "CleanRL: High-quality Single-file Implementations of Deep Reinforcement
// Learning Algorithms"): separate actor and critic MLPs, orthogonal
// initialisation with gain sqrt(2) for hidden layers, 0.01 for the policy
// output and 1 for the value output, zero biases, Adam with eps 1e-5,
// per-minibatch advantage normalisation, clipped surrogate and clipped value
// loss, global gradient-norm clipping. The loss is Schulman et al. 2017,
// "Proximal Policy Optimization Algorithms", eq. 7 and 9; GAE is Schulman et
// al. 2016, "High-Dimensional Continuous Control Using Generalized Advantage
// Estimation", eq. 16.
//
// # Structure for later algorithms
//
// The pieces are separable so that other losses and heads can be added
// without rewriting the model: a loss sees only per-sample log-probabilities,
// entropies and values ([LossInput]) and returns the gradient of the loss with
// respect to them ([LossGrad]); [ActorCritic.Evaluate] and
// [ActorCritic.Backward] carry those per-sample gradients back through the
// action head and the two MLPs. A GIPO, SAPO or V-trace loss is one more
// function of that shape; a Gaussian or token head is one more head type
// beside [Categorical].
//
// # Errors and panics
//
// Shape misuse (a slice of the wrong length, an unknown activation) is a
// programmer error and panics with a message prefixed "kernels: ".
// Numerical trouble (a non-finite loss, gradient or parameter) is reported as
// an error value by [PPO.Update].
//
// Matrix products all go through one function in matmul.go, which uses gonum's
// pure-Go BLAS; that is the single place a later OpenBLAS or CUDA build tag
// swaps.
package kernels
