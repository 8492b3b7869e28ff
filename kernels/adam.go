package kernels

import (
	"fmt"
	"math"
)

// Adam is the Adam optimizer (Kingma & Ba 2015, "Adam: A Method for
// Stochastic Optimization", Algorithm 1) with PyTorch's placement of eps. Per
// parameter i, at step T (counted from 1):
//
//	M_i ← β1 M_i + (1−β1) g_i
//	V_i ← β2 V_i + (1−β2) g_i²
//	p_i ← p_i − LR/(1−β1^T) · M_i / (sqrt(V_i)/sqrt(1−β2^T) + Eps)
//
// All state is exported so that checkpoints can save and restore it exactly.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	M, V                  []float64 // first and second moment estimates
	T                     int       // steps taken so far
}

// NewAdam returns an optimizer for n parameters with learning rate lr,
// β1 = 0.9, β2 = 0.999 and eps = 1e-5 (CleanRL's PPO value, larger than
// PyTorch's default 1e-8).
func NewAdam(n int, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-5, M: make([]float64, n), V: make([]float64, n)}
}

// Step applies one update to params from grads (both of length len(a.M)).
func (a *Adam) Step(params, grads []float64) { a.step(params, grads, false) }

// StepSparse is Step for entries whose gradient is not exactly 0: an entry
// with a zero gradient keeps its parameter and both moments, as if it were
// not part of the step (torch's SparseAdam); the step counter T still
// advances. A critic-only update uses it so that the momentum of earlier
// policy steps does not keep moving parameters the update gave no gradient.
func (a *Adam) StepSparse(params, grads []float64) { a.step(params, grads, true) }

func (a *Adam) step(params, grads []float64, sparse bool) {
	if len(params) != len(a.M) || len(grads) != len(a.M) || len(a.V) != len(a.M) {
		panic(fmt.Sprintf("kernels: Adam.Step: params %d, grads %d, state %d/%d; want all equal",
			len(params), len(grads), len(a.M), len(a.V)))
	}
	a.T++
	t := float64(a.T)
	bc1 := 1 - math.Pow(a.Beta1, t)
	bc2 := 1 - math.Pow(a.Beta2, t)
	stepSize := a.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	for i, g := range grads {
		if sparse && g == 0 {
			continue
		}
		m := a.Beta1*a.M[i] + (1-a.Beta1)*g
		v := a.Beta2*a.V[i] + (1-a.Beta2)*g*g
		a.M[i], a.V[i] = m, v
		params[i] -= stepSize * m / (math.Sqrt(v)/sqrtBC2 + a.Eps)
	}
}

// L2Norm returns sqrt(Σ x_i²), scaled so that large finite values do not
// overflow the sum of squares.
func L2Norm(x []float64) float64 {
	scale := 0.0
	for _, v := range x {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return scale
	}
	s := 0.0
	for _, v := range x {
		r := v / scale
		s += r * r
	}
	return scale * math.Sqrt(s)
}

// ClipGradNorm rescales grads in place so that their global L2 norm is at
// most maxNorm, as torch.nn.utils.clip_grad_norm_ does: with
// c = maxNorm/(norm + 1e-6), grads are multiplied by c when c < 1. It
// returns the norm before clipping. maxNorm must be positive.
func ClipGradNorm(grads []float64, maxNorm float64) (norm float64) {
	if !(maxNorm > 0) {
		panic(fmt.Sprintf("kernels: ClipGradNorm: maxNorm must be positive, got %v", maxNorm))
	}
	norm = L2Norm(grads)
	if c := maxNorm / (norm + 1e-6); c < 1 {
		for i := range grads {
			grads[i] *= c
		}
	}
	return norm
}

// ClipGradNormOf is ClipGradNorm for gradients of either float width (the float32 models of
// kernels/vla and kernels/edm), summing the squares in float64; a maxNorm ≤ 0 only measures.
// It returns the norm before clipping (NaN or ±Inf for non-finite gradients, which it then
// leaves as they are).
func ClipGradNormOf[F ~float32 | ~float64](grads []F, maxNorm float64) float64 {
	s := 0.0
	for _, g := range grads {
		s += float64(g) * float64(g)
	}
	norm := math.Sqrt(s)
	if c := maxNorm / (norm + 1e-6); maxNorm > 0 && c < 1 {
		for i := range grads {
			grads[i] *= F(c)
		}
	}
	return norm
}

// AdamState is Adam's complete state as plain, JSON-serialisable data, for checkpoints.
type AdamState struct {
	LR    float64   `json:"lr"`
	Beta1 float64   `json:"beta1"`
	Beta2 float64   `json:"beta2"`
	Eps   float64   `json:"eps"`
	M     []float64 `json:"m"`
	V     []float64 `json:"v"`
	T     int       `json:"t"`
}

// State returns a copy of the optimizer's state.
func (a *Adam) State() AdamState {
	return AdamState{LR: a.LR, Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps,
		M: append([]float64(nil), a.M...), V: append([]float64(nil), a.V...), T: a.T}
}

// Restore sets the optimizer to s. The moment vectors must match the optimizer's size.
func (a *Adam) Restore(s AdamState) error {
	if len(s.M) != len(a.M) || len(s.V) != len(a.V) {
		return fmt.Errorf("adam state has %d/%d moments, want %d", len(s.M), len(s.V), len(a.M))
	}
	a.LR, a.Beta1, a.Beta2, a.Eps, a.T = s.LR, s.Beta1, s.Beta2, s.Eps, s.T
	copy(a.M, s.M)
	copy(a.V, s.V)
	return nil
}
