package proprio

import (
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/kernels/internal/gradcheck"
)

// Every backward pass is checked against central finite differences
// (∂L/∂x_i ≈ (L(x + h·e_i) − L(x − h·e_i))/2h) of the float64
// instantiation of the same generic code; TestFloat32MatchesFloat64 ties
// the float32 model to it. The quotient errs by its truncation term
// h²·|L⁽³⁾|/6 plus the rounding of two float64 losses, ≈ 2.2e-16·|L|/h.
// The test losses — L = Σ y ⊙ r with r ~ N(0, 1), or the model's MSE on
// random targets — have |L| ≲ 50 and |L⁽³⁾| ≲ 100 here (a few layers of
// width ≤ 6 with weights of order 1; SiLU's third derivative is at most
// 0.5, the MSE's second is constant). At h = 1e-5 that is ≲ 2e-9 + 1e-9,
// so a tolerance of 1e-6 relative to max(1, |analytic|) has a margin of
// ~300×, while a wrong or missing term (a transposed weight, a dropped
// bias gradient, the 2/(N·D) of the MSE off by a factor) moves a gradient
// by ≳ 1e-2 at these scales.
const (
	fdStep  = 1e-5
	gradTol = 1e-6
)

var randVec, dot = gradcheck.RandVec, gradcheck.Dot

func checkGrad(t *testing.T, name string, f func() float64, x, analytic []float64) {
	t.Helper()
	gradcheck.Check(t, name, f, x, analytic, fdStep, gradTol)
}

func TestLinearGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, in, out = 3, 4, 5
	l := linear[float64]{in: in, out: out, w: tensor[float64]{randVec(rng, out*in, 0.7), make([]float64, out*in)},
		b: tensor[float64]{randVec(rng, out, 0.7), make([]float64, out)}}
	x, r := randVec(rng, n*in, 1), randVec(rng, n*out, 1)
	loss := func() float64 { return dot(l.forward(x, n), r) }
	dx := l.backward(x, r, n)
	checkGrad(t, "input", loss, x, dx)
	checkGrad(t, "weight", loss, l.w.w, l.w.g)
	checkGrad(t, "bias", loss, l.b.w, l.b.g)
}

func TestSiLUGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, r := randVec(rng, 20, 3), randVec(rng, 20, 1) // spread over SiLU's curved part
	checkGrad(t, "silu input", func() float64 { return dot(silu(x), r) }, x, siluBack(x, r))
}

// tinyConfig is small enough to finite-difference every parameter: k = 3
// vectors of 4 values, a 2-D action, hidden widths 6 and 5.
func tinyConfig() Config { return Config{History: 3, ProprioDim: 4, ActionDim: 2, Hidden: []int{6, 5}} }

// identityNorm is the standardisation that changes nothing.
func identityNorm(c Config) Norm {
	ones := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	return Norm{InMean: make([]float64, c.In()), InStd: ones(c.In()), OutMean: make([]float64, c.ProprioDim), OutStd: ones(c.ProprioDim)}
}

// newTestModel returns a tiny float64 model with every parameter, the
// zero-initialised output layer and the biases included, drawn from
// N(0, 0.5²), so that no term of the backward pass is negligible.
func newTestModel(seed uint64) *Model[float64] {
	c := tinyConfig()
	m := NewModel[float64](c, identityNorm(c), nil)
	copy(m.Params(), randVec(rand.New(rand.NewPCG(seed, 1)), len(m.Params()), 0.5))
	return m
}

// TestModelGradients checks the whole model under its MSE loss, every
// parameter span and the input.
func TestModelGradients(t *testing.T) {
	m := newTestModel(5)
	rng := rand.New(rand.NewPCG(5, 6))
	c := m.Config()
	const n = 3
	b := Batch[float64]{N: n, X: randVec(rng, n*c.In(), 1), Z: randVec(rng, n*c.ProprioDim, 1)}
	loss := func() float64 { return m.EvalLoss(b) }
	m.ZeroGrads()
	m.Loss(b)
	for _, s := range m.Spans() {
		k := 1
		for _, v := range s.Shape {
			k *= v
		}
		checkGrad(t, s.Name, loss, m.Params()[s.Offset:s.Offset+k], m.Grads()[s.Offset:s.Offset+k])
	}
	y, tp := m.forward(b.X, n)
	_, dy := mse(y, b.Z)
	checkGrad(t, "input", loss, b.X, m.backward(tp, dy))
}
