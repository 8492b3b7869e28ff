package vla

import (
	"fmt"
	"math"
)

// Adam is the Adam optimizer (Kingma & Ba 2015, "Adam: A Method for
// Stochastic Optimization", Algorithm 1) with PyTorch's placement of eps,
// on a flat slice. Per parameter i, at step T (counted from 1):
//
//	M_i ← β1 M_i + (1−β1) g_i
//	V_i ← β2 V_i + (1−β2) g_i²
//	p_i ← p_i − LR/(1−β1^T) · M_i / (sqrt(V_i)/sqrt(1−β2^T) + Eps)
//
// The moments are stored in F; the update is computed in float64.
type Adam[F Float] struct {
	LR, Beta1, Beta2, Eps float64
	M, V                  []F
	T                     int
}

// NewAdam returns an optimizer for n parameters with learning rate lr,
// β1 = 0.9, β2 = 0.999 and eps = 1e-8 (PyTorch's default, usual for
// transformer training; the float32 moments hold √V down to ~1e-19, so eps
// only guards the very first steps of never-touched parameters).
func NewAdam[F Float](n int, lr float64) *Adam[F] {
	return &Adam[F]{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, M: make([]F, n), V: make([]F, n)}
}

// Step updates params[:len(grads)] from grads (len(grads) = len(M)); with
// a slim head pass the model's Params() and Grads(), and the frozen LM-head
// rows past the end of Grads stay untouched.
func (a *Adam[F]) Step(params, grads []F) {
	if len(grads) != len(a.M) || len(a.V) != len(a.M) || len(params) < len(grads) {
		panic(fmt.Sprintf("vla: Adam.Step: params %d, grads %d, state %d/%d; want grads = state ≤ params",
			len(params), len(grads), len(a.M), len(a.V)))
	}
	a.T++
	t := float64(a.T)
	stepSize := a.LR / (1 - math.Pow(a.Beta1, t))
	sqrtBC2 := math.Sqrt(1 - math.Pow(a.Beta2, t))
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	// Elementwise, so splitting over goroutines changes nothing.
	parallelRange(len(grads), parGrain, func(lo, hi int) {
		ms, vs, ps := a.M[lo:hi], a.V[lo:hi], params[lo:hi]
		for i, gf := range grads[lo:hi] {
			g := float64(gf)
			m := b1*float64(ms[i]) + (1-b1)*g
			v := b2*float64(vs[i]) + (1-b2)*g*g
			ms[i], vs[i] = F(m), F(v)
			ps[i] -= F(stepSize * m / (math.Sqrt(v)/sqrtBC2 + eps))
		}
	})
}

// ClipGradNorm rescales grads so that their global L2 norm is at most
// maxNorm (torch.nn.utils.clip_grad_norm_: factor maxNorm/(norm + 1e-6)
// when below 1) and returns the norm before clipping, summed in float64.
func ClipGradNorm[F Float](grads []F, maxNorm float64) float64 {
	s := 0.0
	for _, g := range grads {
		s += float64(g) * float64(g)
	}
	norm := math.Sqrt(s)
	if c := maxNorm / (norm + 1e-6); c < 1 {
		for i := range grads {
			grads[i] *= F(c)
		}
	}
	return norm
}

// CrossEntropy is the behaviour-cloning loss of a tape from Forward with
// the expert's tokens: the token-level cross-entropy
//
//	L = −(1/(B·ActionDims)) Σ_i Σ_k log π(t_ik | o_i, t_i,<k)
//
// It returns L, the share of positions whose teacher-forced argmax is the
// expert token, and ∂L/∂Logp for Backward.
func CrossEntropy[F Float](tape *Tape[F]) (loss, accuracy float64, dLogp []F) {
	n := len(tape.Logp)
	dLogp = make([]F, n)
	g := F(-1 / float64(n))
	hits := 0
	na := n / tape.B
	for r, lp := range tape.Logp {
		loss -= float64(lp)
		dLogp[r] = g
		if tape.Greedy[r] == tape.tokens[r/na][r%na] {
			hits++
		}
	}
	return loss / float64(n), float64(hits) / float64(n), dLogp
}
