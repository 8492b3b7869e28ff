package edm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/kernels/internal/gradcheck"
)

// Every backward pass is checked against central finite differences
// (∂L/∂x_i ≈ (L(x + h·e_i) − L(x − h·e_i))/2h) of the float64
// instantiation of the same generic code; TestFloat32MatchesFloat64 ties
// the float32 model to it. The difference quotient is off by its
// truncation error h²·|L⁽³⁾|/6 plus the rounding error of two float64
// losses, ≈ 2.2e-16·|L|/h. Our test losses are L = Σ y ⊙ r with r ~ N(0, 1):
// |L| ≲ 100 and |L⁽³⁾| ≲ 1e3 (group norms over tens of values of unit
// scale; SiLU's third derivative is at most 0.5). At h = 1e-5 that is
// ≲ 2e-8 + 2e-9, so a tolerance of 1e-6 relative to max(1, |analytic|)
// has a margin of ~50×, and a wrong or missing term, which moves a
// gradient by ≳ 1e-3 at these weight and activation scales (a dropped
// FiLM or skip term by O(0.1)), cannot pass.
const (
	fdStep  = 1e-5
	gradTol = 1e-6
)

// checkGrad runs gradcheck.Check at this file's step and tolerance.
func checkGrad(t *testing.T, name string, f func() float64, x, analytic []float64) {
	t.Helper()
	gradcheck.Check(t, name, f, x, analytic, fdStep, gradTol)
}

var randVec, dot = gradcheck.RandVec, gradcheck.Dot

// newTensor returns a parameter tensor of n values drawn at scale.
func newTensor(rng *rand.Rand, n int, scale float64) tensor[float64] {
	return tensor[float64]{w: randVec(rng, n, scale), g: make([]float64, n)}
}

func TestConvGradients(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		cin, cout, size, stride int
	}{
		{"3x3", 3, 4, 3, 1},
		{"3x3 stride 2", 2, 3, 3, 2},
		{"1x1", 3, 2, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const n, h, w = 2, 6, 4
			l := conv[float64]{cin: tc.cin, cout: tc.cout, size: tc.size, stride: tc.stride,
				w: newTensor(rng, tc.cout*tc.cin*tc.size*tc.size, 0.5), b: newTensor(rng, tc.cout, 0.5)}
			x := randVec(rng, tc.cin*n*h*w, 1)
			r := randVec(rng, tc.cout*n*l.outSize(h)*l.outSize(w), 1)
			loss := func() float64 { return dot(l.forward(nil, x, n, h, w), r) }
			loss()
			dx := l.backward(nil, r)
			checkGrad(t, "input", loss, x, dx)
			checkGrad(t, "weight", loss, l.w.w, l.w.g)
			checkGrad(t, "bias", loss, l.b.w, l.b.g)
		})
	}
}

func TestUpsampleGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const planes, h, w = 3, 2, 3
	x := randVec(rng, planes*h*w, 1)
	r := randVec(rng, 4*planes*h*w, 1)
	loss := func() float64 { return dot(upsample2(x, planes, h, w), r) }
	checkGrad(t, "upsample input", loss, x, upsample2Back(r, planes, h, w))
}

func TestSiLUGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randVec(rng, 20, 3) // spread over the curved part of SiLU
	r := randVec(rng, 20, 1)
	loss := func() float64 { return dot(silu(x), r) }
	checkGrad(t, "silu input", loss, x, siluBack(x, r))
}

func TestAdaNormGradients(t *testing.T) {
	// 4 channels in 2 groups, so that statistics are per group and per
	// image, with FiLM weights large enough that γ and β matter.
	rng := rand.New(rand.NewPCG(7, 8))
	const c, groups, n, hw, cd = 4, 2, 3, 5, 3
	l := adaNorm[float64]{c: c, groups: groups, film: dense[float64]{in: cd, out: 2 * c,
		w: newTensor(rng, 2*c*cd, 0.5), b: newTensor(rng, 2*c, 0.5)}}
	x := randVec(rng, c*n*hw, 2)
	cond := randVec(rng, n*cd, 1)
	r := randVec(rng, c*n*hw, 1)
	loss := func() float64 { return dot(l.forward(nil, x, n, hw, cond), r) }
	loss()
	dcond := make([]float64, len(cond))
	dx := l.backward(nil, r, dcond)
	checkGrad(t, "input", loss, x, dx)
	checkGrad(t, "cond", loss, cond, dcond)
	checkGrad(t, "film weight", loss, l.film.w.w, l.film.w.g)
	checkGrad(t, "film bias", loss, l.film.b.w, l.film.b.g)
}

func TestResBlockGradients(t *testing.T) {
	for _, widths := range [][2]int{{4, 4}, {2, 4}} { // identity skip, 1×1 projection
		rng := rand.New(rand.NewPCG(9, 10))
		cfg := Config{GroupSize: 2, CondDim: 4}
		var b layout[float64]
		var l resBlock[float64]
		b.res(&l, "res", cfg, widths[0], widths[1])
		params, grads := b.bind(rng)
		perturb(params, 0.3, rng)
		const n, s = 2, 4
		x := randVec(rng, widths[0]*n*s*s, 1)
		cond := randVec(rng, n*cfg.CondDim, 1)
		r := randVec(rng, widths[1]*n*s*s, 1)
		loss := func() float64 { return dot(l.forward(nil, x, n, s, cond), r) }
		loss()
		dcond := make([]float64, len(cond))
		dx := l.backward(nil, r, dcond)
		checkGrad(t, "input", loss, x, dx)
		checkGrad(t, "cond", loss, cond, dcond)
		checkGrad(t, "params", loss, params, grads)
	}
}

// perturb adds N(0, s²) to every parameter, so that the zero-initialised
// output conv and the FiLM maps are far from their init and no term is
// negligible.
func perturb[F Float](x []F, s float64, rng *rand.Rand) {
	for i := range x {
		x[i] += F(s * rng.NormFloat64())
	}
}

// tinyConfig is small enough to finite-difference every parameter: 8×8
// images, two cameras, two levels of 4 and 6 channels.
func tinyConfig() Config {
	return Config{ImageSize: 8, Cameras: 2, History: 2, ActionDim: 3, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
}

// randBatch returns n random samples in the network layout.
func randBatch(rng *rand.Rand, c Config, n int) Batch[float64] {
	p, fc := c.Pixels(), c.FrameChannels()
	return Batch[float64]{N: n, Past: randVec(rng, c.History*fc*n*p, 0.5),
		Action: randVec(rng, n*c.ActionDim, 1), Next: randVec(rng, fc*n*p, 0.5)}
}

func TestNetGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	c := tinyConfig()
	m := NewNet[float64](c, rng, nil)
	perturb(m.Params(), 0.2, rng)
	e := DefaultEDM()
	b := randBatch(rng, c, 2)
	sigma := []float64{0.05, 2} // both ends of the training noise levels
	eps := randVec(rng, len(b.Next), 1)
	loss := func() float64 { l, _ := m.lossForward(e, b, sigma, eps); return l }
	m.ZeroGrads()
	m.Loss(e, b, sigma, eps)
	for _, s := range m.Spans() {
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		checkGrad(t, s.Name, loss, m.Params()[s.Offset:s.Offset+n], m.Grads()[s.Offset:s.Offset+n])
	}
}

// TestFloat32MatchesFloat64 runs the same weights through the float32
// model on the CPU backend and through the float64 model: the outputs
// agree to float32 rounding (~6e-8 relative per operation, amplified by
// the depth; measured ≲ 1e-5 on outputs of order 1, so 1e-4 absolute).
func TestFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := tinyConfig()
	m64 := NewNet[float64](c, rng, nil)
	perturb(m64.Params(), 0.2, rng)
	m32 := NewNet[float32](c, nil, nil)
	for i, v := range m64.Params() {
		m32.Params()[i] = float32(v)
	}
	b := randBatch(rng, c, 3)
	b32 := Batch[float32]{N: b.N, Past: to32(b.Past), Action: to32(b.Action), Next: to32(b.Next)}
	cn := []float64{-1, 0, 0.3}
	noisy := randVec(rng, len(b.Next), 1)
	out64 := m64.forward(noisy, b.Past, cn, b.Action, b.N)
	out32 := m32.forward(to32(noisy), b32.Past, to32(cn), b32.Action, b.N)
	worst := 0.0
	for i := range out64 {
		worst = math.Max(worst, math.Abs(out64[i]-float64(out32[i])))
	}
	t.Logf("float32 vs float64 outputs: worst absolute difference %.3g", worst)
	if worst > 1e-4 {
		t.Errorf("float32 and float64 outputs differ by %g, want ≤ 1e-4", worst)
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
