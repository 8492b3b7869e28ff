package vla

import (
	"fmt"
	"math"

	"github.com/accerl/accerl/kernels"
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
// when below 1) and returns the norm before clipping, summed in float64
// ([kernels.ClipGradNormOf]).
func ClipGradNorm[F Float](grads []F, maxNorm float64) float64 {
	return kernels.ClipGradNormOf(grads, maxNorm)
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

// SoftTargets is an ordinal soft-label table over Bins action bins (the
// "HL-Gauss" targets of Imani & White 2018 and Farebrother et al. 2024,
// "Stop Regressing"): the target of expert bin t is the Gaussian of
// standard deviation Sigma bins centred on t, cut at ±⌈3·Sigma⌉ bins and at
// the ends of [0, Bins), renormalised to sum to 1. A near miss of the
// expert's bin then costs little and a far one much, which the one-hot
// cross-entropy does not tell apart, and neighbouring bins share each
// sample's signal.
type SoftTargets struct {
	bins  int
	sigma float64
	lo    []int       // per expert bin, the first bin of its window
	w     [][]float64 // per expert bin, the window's weights (summing to 1)
}

// NewSoftTargets returns the Gaussian targets of sigma > 0 bins over bins
// bins.
func NewSoftTargets(bins int, sigma float64) *SoftTargets {
	if bins < 1 || !(sigma > 0) {
		panic(fmt.Sprintf("vla: NewSoftTargets: %d bins, sigma %v; want positive", bins, sigma))
	}
	s := &SoftTargets{bins: bins, sigma: sigma, lo: make([]int, bins), w: make([][]float64, bins)}
	r := int(math.Ceil(3 * sigma))
	for t := range bins {
		lo, hi := max(t-r, 0), min(t+r, bins-1)
		w := make([]float64, hi-lo+1)
		z := 0.0
		for b := lo; b <= hi; b++ {
			x := float64(b-t) / sigma
			w[b-lo] = math.Exp(-x * x / 2)
			z += w[b-lo]
		}
		for i := range w {
			w[i] /= z
		}
		s.lo[t], s.w[t] = lo, w
	}
	return s
}

// Sigma is the targets' standard deviation in bins.
func (s *SoftTargets) Sigma() float64 { return s.sigma }

// Row returns the target distribution of expert bin t over all bins.
func (s *SoftTargets) Row(t int) []float64 {
	out := make([]float64, s.bins)
	copy(out[s.lo[t]:], s.w[t])
	return out
}

// softLogitGrad writes ∂L/∂z = scale·(π − q_t) for one row of log-softmax
// logp (the head's width: the Bins action columns first, q 0 past them).
func softLogitGrad[F Float](s *SoftTargets, logp []F, t int, scale F, dz []F) {
	for j, l := range logp {
		dz[j] = scale * expNeg(l)
	}
	lo := s.lo[t]
	for i, q := range s.w[t] {
		dz[lo+i] -= scale * F(q)
	}
}

// SoftCrossEntropy scores a Forward tape of the expert's tokens against
// soft targets: with q_r the targets' row of the expert bin at action
// position r and n = B·ActionDims positions,
//
//	L = −(1/n) Σ_r Σ_b q_rb log π_rb
//
// It returns L, the one-hot cross-entropy −(1/n) Σ_r log π(t_r) (what
// [CrossEntropy] reports, comparable across targets) and the share of
// positions whose teacher-forced argmax is the expert's bin. [Net.BackwardSoft]
// takes L's gradient.
func SoftCrossEntropy[F Float](tape *Tape[F], s *SoftTargets) (loss, hard, accuracy float64) {
	n := len(tape.Logp)
	k := tape.width
	na := n / tape.B
	hits := 0
	for r := range n {
		t := tape.tokens[r/na][r%na]
		row := tape.logp[r*k : (r+1)*k]
		lo := s.lo[t]
		for i, q := range s.w[t] {
			loss -= q * float64(row[lo+i])
		}
		hard -= float64(tape.Logp[r])
		if tape.Greedy[r] == t {
			hits++
		}
	}
	return loss / float64(n), hard / float64(n), float64(hits) / float64(n)
}
