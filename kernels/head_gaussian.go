package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// halfLog2Pi is ½ log 2π, the per-dimension constant of a Gaussian's
// log-density.
var halfLog2Pi = 0.5 * math.Log(2*math.Pi)

// gaussianHead is CleanRL's continuous actor output (ppo_continuous_action.py):
// a linear layer from the features to the means μ and a state-independent
// parameter vector s = log σ, one entry per action dimension. For a D-dim
// action a:
//
//	log π(a) = Σ_d −½ ((a_d − μ_d)/σ_d)² − s_d − ½ log 2π
//	H        = Σ_d ½ + ½ log 2π + s_d
//
// The whole vector is one token: one joint log-density per step, as CleanRL
// sums over dimensions before forming the ratio.
type gaussianHead struct {
	d          int
	mean       *Dense
	logStd     []float64 // view of the parameters
	gLogStd    []float64 // view of the gradients
	low, high  []float64 // optional clip bounds for EnvActions
	initLogStd float64

	n    int
	feat []float64
	act  []float64
	mu   []float64 // n×D
	dmu  []float64
}

func newGaussianHead(featDim int, cfg PolicyConfig) *gaussianHead {
	return &gaussianHead{d: cfg.ActionDims, mean: NewDense(featDim, cfg.ActionDims),
		low: cfg.Low, high: cfg.High, initLogStd: cfg.InitLogStd}
}

func (h *gaussianHead) numParams() int     { return h.mean.NumParams() + h.d }
func (h *gaussianHead) tokensPerStep() int { return 1 }
func (h *gaussianHead) envActionDims() int { return h.d }

func (h *gaussianHead) bind(params, grads []float64) {
	nm := h.mean.NumParams()
	h.mean.Bind(params[:nm:nm], grads[:nm:nm])
	h.logStd, h.gLogStd = params[nm:], grads[nm:]
}

func (h *gaussianHead) init(rng *rand.Rand) {
	h.mean.InitOrthogonal(0.01, rng)
	for i := range h.logStd {
		h.logStd[i] = h.initLogStd
	}
}

func (h *gaussianHead) spans(off, trunkLayers int) []ParamSpan {
	s := denseSpans(fmt.Sprintf("actor_mean.%d.", 2*trunkLayers), h.mean, off)
	return append(s, ParamSpan{Name: "actor_logstd", Offset: off + h.mean.NumParams(), Shape: []int{1, h.d}})
}

func (h *gaussianHead) checkActions(op string, a Actions, n int) {
	checkN("Policy."+op+" (gaussian actions)", n*h.d, len(a.Continuous))
}

func (h *gaussianHead) means(feat []float64, n int) []float64 {
	h.mu = grow(h.mu, n*h.d)
	h.mean.Forward(feat, n, h.mu)
	return h.mu
}

// logDensity returns log π(a) of one D-dim row.
func (h *gaussianHead) logDensity(a, mu []float64) float64 {
	lp := 0.0
	for d, s := range h.logStd {
		z := (a[d] - mu[d]) / math.Exp(s)
		lp += -0.5*z*z - s - halfLog2Pi
	}
	return lp
}

func (h *gaussianHead) entropy() float64 {
	e := 0.0
	for _, s := range h.logStd {
		e += 0.5 + halfLog2Pi + s
	}
	return e
}

func (h *gaussianHead) evaluate(feat []float64, n int, a Actions, logp, ent []float64) {
	mu := h.means(feat, n)
	e := h.entropy()
	for i := 0; i < n; i++ {
		logp[i] = h.logDensity(a.Continuous[i*h.d:(i+1)*h.d], mu[i*h.d:(i+1)*h.d])
		ent[i] = e
	}
	h.n, h.feat, h.act = n, feat, a.Continuous
}

// backward uses, per row i and dimension d with z = (a − μ)/σ,
//
//	∂log π/∂μ_d = z/σ_d,   ∂log π/∂s_d = z² − 1,   ∂H/∂s_d = 1.
func (h *gaussianHead) backward(dlogp, dent, dfeat []float64) {
	n := h.n
	h.dmu = grow(h.dmu, n*h.d)
	for d, s := range h.logStd {
		sigma := math.Exp(s)
		g := 0.0
		for i := 0; i < n; i++ {
			z := (h.act[i*h.d+d] - h.mu[i*h.d+d]) / sigma
			h.dmu[i*h.d+d] = dlogp[i] * z / sigma
			g += dlogp[i]*(z*z-1) + dent[i]
		}
		h.gLogStd[d] += g
	}
	h.mean.Backward(h.feat, h.dmu, n, dfeat)
}

// sample draws a_d = μ_d + σ_d ε with one rng.NormFloat64() per dimension,
// rows in order.
func (h *gaussianHead) sample(feat []float64, n int, rng *rand.Rand, a Actions, logp []float64) {
	mu := h.means(feat, n)
	for i := 0; i < n; i++ {
		row := a.Continuous[i*h.d : (i+1)*h.d]
		for d, s := range h.logStd {
			row[d] = mu[i*h.d+d] + math.Exp(s)*rng.NormFloat64()
		}
		logp[i] = h.logDensity(row, mu[i*h.d:(i+1)*h.d])
	}
}

func (h *gaussianHead) mode(feat []float64, n int, a Actions) {
	copy(a.Continuous, h.means(feat, n))
}

func (h *gaussianHead) envActions(a Actions, n int, out []float64) {
	copy(out, a.Continuous[:n*h.d])
	if len(h.low) == 0 {
		return
	}
	for i := range out {
		d := i % h.d
		out[i] = clamp(out[i], h.low[d], h.high[d])
	}
}
