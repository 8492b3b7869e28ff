package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// maxAbs returns max_i |x_i| (at least the smallest normal float32, so that
// normwise tolerances are never 0).
func maxAbs(x []float32) float64 {
	m := float64(math.SmallestNonzeroFloat32)
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// absOf returns |x| elementwise.
func absOf(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(math.Abs(float64(v)))
	}
	return y
}

// expectClose fails unless |got_i − want_i| ≤ tol_i for every i; tol is one
// value (normwise) or one per element.
func expectClose(t *testing.T, what string, got, want []float32, tol ...float64) {
	t.Helper()
	for i := range want {
		ti := tol[0]
		if len(tol) == len(want) {
			ti = tol[i]
		}
		if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= ti) {
			t.Fatalf("%s: element %d = %v, want %v (|diff| %.3g > tol %.3g)", what, i, got[i], want[i], d, ti)
		}
	}
}

// opCase runs one backend operation on fresh guarded copies of its outputs
// for the backend under test and for the reference, and compares them.
type opCase struct {
	be, ref Backend
	t       *testing.T
}

// outputs returns guarded copies of init for be and plain copies for ref.
func (o opCase) outputs(init ...[]float32) (full, got, want [][]float32) {
	for _, x := range init {
		f, v := withGuard(x)
		full, got, want = append(full, f), append(got, v), append(want, append([]float32(nil), x...))
	}
	return
}

func (o opCase) guards(what string, full, got [][]float32) {
	o.t.Helper()
	for i := range full {
		checkGuard(o.t, fmt.Sprintf("%s %s output %d", o.be.Name(), what, i), full[i], len(got[i]))
	}
}

// testBackendOps compares every non-GEMM operation of be with the reference
// on odd sizes. Tolerances are normwise, c·eps32·scale, where scale bounds
// the magnitudes entering the longest sum and c the number of roundings
// along it; comments give each c.
func testBackendOps(t *testing.T, be Backend) {
	ref := NewReference()
	o := opCase{be: be, ref: ref, t: t}
	rng := rand.New(rand.NewPCG(11, 12))
	name := be.Name()

	for _, sz := range [][2]int{{1, 1}, {3, 7}, {5, 63}, {4, 257}, {2, 1000}} {
		rows, cols := sz[0], sz[1]
		n := rows * cols
		x := backendRand(rng, n)
		for i := range x {
			x[i] *= 4 // softmax inputs in [-4, 4): exponents differ by e^8
		}

		// Softmax: y_j = e_j/s with exp accurate to 2 ulp (CUDA's expf; 0.5
		// ulp on the CPU) and s a sum of cols positive terms: relative error
		// ≤ (cols + 4)·eps32 in float32 accumulation, and y ≤ 1.
		full, got, want := o.outputs(make([]float32, n))
		be.Softmax(rows, cols, x, got[0])
		ref.Softmax(rows, cols, x, want[0])
		o.guards("Softmax", full, got)
		expectClose(t, name+" Softmax", got[0], want[0], float64(cols+4)*eps32)
		y := want[0]

		// SoftmaxBackward: dx = y(dy − Σ dy·y): a dot product of length cols
		// of terms ≤ max|dy|, times y ≤ 1.
		dy := backendRand(rng, n)
		full, got, want = o.outputs(make([]float32, n))
		be.SoftmaxBackward(rows, cols, y, dy, got[0])
		ref.SoftmaxBackward(rows, cols, y, dy, want[0])
		o.guards("SoftmaxBackward", full, got)
		expectClose(t, name+" SoftmaxBackward", got[0], want[0], 2*float64(cols+4)*eps32*maxAbs(dy))

		// LayerNorm: |x̂| ≤ sqrt(cols); the mean and variance are sums of
		// cols terms; y = x̂γ+β adds three roundings.
		gamma, beta := backendRand(rng, cols), backendRand(rng, cols)
		full, got, want = o.outputs(make([]float32, n), make([]float32, rows), make([]float32, rows))
		be.LayerNorm(rows, cols, 1e-5, x, gamma, beta, got[0], got[1], got[2])
		ref.LayerNorm(rows, cols, 1e-5, x, gamma, beta, want[0], want[1], want[2])
		o.guards("LayerNorm", full, got)
		scale := math.Sqrt(float64(cols)) + 1
		expectClose(t, name+" LayerNorm y", got[0], want[0], 4*float64(cols+4)*eps32*scale)
		expectClose(t, name+" LayerNorm mean", got[1], want[1], float64(cols+4)*eps32*maxAbs(x))
		expectClose(t, name+" LayerNorm rstd", got[2], want[2], float64(cols+4)*eps32*maxAbs(want[2]))
		mean, rstd := want[1], want[2]

		// LayerNormBackward: dx = rstd(g − mean g − x̂ mean(g x̂)) with
		// |g x̂| ≤ max|dy|·sqrt(cols); dgamma, dbeta sum rows terms onto
		// their initial values.
		dg0, db0 := backendRand(rng, cols), backendRand(rng, cols)
		full, got, want = o.outputs(make([]float32, n), dg0, db0)
		be.LayerNormBackward(rows, cols, x, gamma, mean, rstd, dy, got[0], got[1], got[2])
		ref.LayerNormBackward(rows, cols, x, gamma, mean, rstd, dy, want[0], want[1], want[2])
		o.guards("LayerNormBackward", full, got)
		expectClose(t, name+" LayerNormBackward dx", got[0], want[0], 4*float64(cols+4)*eps32*scale*maxAbs(rstd)*maxAbs(dy))
		expectClose(t, name+" LayerNormBackward dgamma", got[1], want[1], 2*float64(rows+4)*eps32*(scale*maxAbs(dy)*float64(rows)+1))
		expectClose(t, name+" LayerNormBackward dbeta", got[2], want[2], 2*float64(rows+4)*eps32*(maxAbs(dy)*float64(rows)+1))
		full, got, _ = o.outputs(make([]float32, n))
		be.LayerNormBackward(rows, cols, x, gamma, mean, rstd, dy, got[0], nil, nil) // nil parameter grads
		o.guards("LayerNormBackward(nil)", full, got)

		// Elementwise ops: one or two roundings each (2 eps32 relative on
		// values ≤ 4·max|x|); GELU and its derivative add tanh's 2 ulp and
		// a handful of float32 operations (16 eps32).
		xs := backendRand(rng, n)
		for _, op := range []struct {
			name string
			tol  float64
			run  func(b Backend, out []float32)
			init []float32
		}{
			{"Add", 2, func(b Backend, out []float32) { b.Add(x, xs, out) }, nil},
			{"Mul", 2, func(b Backend, out []float32) { b.Mul(x, xs, out) }, nil},
			{"Scale", 2, func(b Backend, out []float32) { b.Scale(-1.5, out) }, x},
			{"Axpy", 3, func(b Backend, out []float32) { b.Axpy(0.75, x, out) }, xs},
			{"AddBias", 2, func(b Backend, out []float32) { b.AddBias(rows, cols, gamma, out) }, x},
			{"ReLU", 0, func(b Backend, out []float32) { b.ReLU(x, out) }, nil},
			{"ReLUBackward", 0, func(b Backend, out []float32) { b.ReLUBackward(x, dy, out) }, nil},
			{"GELU", 16, func(b Backend, out []float32) { b.GELU(x, out) }, nil},
			{"GELUBackward", 16, func(b Backend, out []float32) { b.GELUBackward(x, dy, out) }, nil},
		} {
			init := op.init
			if init == nil {
				init = make([]float32, n)
			}
			full, got, want := o.outputs(init)
			op.run(be, got[0])
			op.run(ref, want[0])
			o.guards(op.name, full, got)
			expectClose(t, name+" "+op.name, got[0], want[0], op.tol*eps32*4*maxAbs(want[0]))
		}

		// SumRows accumulates rows terms onto dst; Sum adds n terms (float64
		// on the CPU, double on CUDA): one final rounding plus n·eps64.
		d0 := backendRand(rng, cols)
		full, got, want = o.outputs(d0)
		be.SumRows(rows, cols, x, got[0])
		ref.SumRows(rows, cols, x, want[0])
		o.guards("SumRows", full, got)
		expectClose(t, name+" SumRows", got[0], want[0], float64(rows+2)*eps32*(4*float64(rows)+1))
		s, sr := be.Sum(x), ref.Sum(x)
		if d := math.Abs(float64(s - sr)); d > 2*eps32*4*float64(n) {
			t.Fatalf("%s Sum = %v, want %v", name, s, sr)
		}

		// AdamStep: about ten float32 operations per element on values of
		// order 1 (the update is at most LR/(1−β1)·sqrt(1−β2) in size).
		p0, g, m0, v0 := backendRand(rng, n), backendRand(rng, n), backendRand(rng, n), absOf(backendRand(rng, n))
		for _, step := range []int{1, 7} {
			opt := AdamOptions{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: step}
			full, got, want = o.outputs(p0, m0, v0)
			be.AdamStep(opt, got[0], g, got[1], got[2])
			ref.AdamStep(opt, want[0], g, want[1], want[2])
			o.guards("AdamStep", full, got)
			expectClose(t, name+" AdamStep params", got[0], want[0], 32*eps32*(maxAbs(p0)+1))
			expectClose(t, name+" AdamStep m", got[1], want[1], 4*eps32*(maxAbs(m0)+1))
			expectClose(t, name+" AdamStep v", got[2], want[2], 4*eps32*(maxAbs(v0)+1))
		}
	}

	for _, g := range []ConvGeom{
		{N: 2, C: 3, H: 9, W: 7, K: 4, R: 3, S: 3, SH: 1, SW: 1, PH: 1, PW: 1},
		{N: 1, C: 2, H: 11, W: 8, K: 5, R: 3, S: 2, SH: 2, SW: 3, PH: 0, PW: 1},
		{N: 3, C: 5, H: 6, W: 6, K: 3, R: 1, S: 1, SH: 1, SW: 1},
		{N: 1, C: 1, H: 4, W: 5, K: 1, R: 4, S: 5, SH: 1, SW: 1, PH: 2, PW: 2},
	} {
		testConvOps(t, be, rng, g)
	}
}

// testConvOps compares Conv2D and Conv2DBackward with the reference. The
// bounds are GEMM's (gemmBound) with the absolute-value products computed
// by the reference on |x|, |w|, |dy|.
func testConvOps(t *testing.T, be Backend, rng *rand.Rand, g ConvGeom) {
	ref := NewReference()
	o := opCase{be: be, ref: ref, t: t}
	what := fmt.Sprintf("%s Conv2D %+v", be.Name(), g)
	x, w, bias, dy := backendRand(rng, g.XLen()), backendRand(rng, g.WLen()), backendRand(rng, g.K), backendRand(rng, g.YLen())

	full, got, want := o.outputs(make([]float32, g.YLen()))
	be.Conv2D(g, x, w, bias, got[0])
	ref.Conv2D(g, x, w, bias, want[0])
	o.guards("Conv2D", full, got)
	absY := make([]float32, g.YLen())
	ref.Conv2D(g, absOf(x), absOf(w), absOf(bias), absY)
	tol := make([]float64, len(absY))
	for i, v := range absY {
		tol[i] = gemmBound(g.C*g.R*g.S+1, 1, 0, float64(v), 0)
	}
	expectClose(t, what, got[0], want[0], tol...)
	be.Conv2D(g, x, w, nil, got[0]) // no bias
	ref.Conv2D(g, x, w, nil, want[0])
	expectClose(t, what+" (no bias)", got[0], want[0], tol...)

	dw0, db0 := backendRand(rng, g.WLen()), backendRand(rng, g.K)
	full, got, want = o.outputs(make([]float32, g.XLen()), dw0, db0)
	be.Conv2DBackward(g, x, w, dy, got[0], got[1], got[2])
	ref.Conv2DBackward(g, x, w, dy, want[0], want[1], want[2])
	o.guards("Conv2DBackward", full, got)
	absDX, absDW, absDB := make([]float32, g.XLen()), absOf(dw0), absOf(db0)
	ref.Conv2DBackward(g, absOf(x), absOf(w), absOf(dy), absDX, absDW, absDB)
	bound := func(n int, abs []float32) []float64 {
		tol := make([]float64, len(abs))
		for i, v := range abs {
			tol[i] = gemmBound(n+1, 1, 1, float64(v), 0)
		}
		return tol
	}
	p := g.OH() * g.OW()
	expectClose(t, what+" dx", got[0], want[0], bound(g.K*g.R*g.S, absDX)...)
	expectClose(t, what+" dw", got[1], want[1], bound(g.N*p, absDW)...)
	expectClose(t, what+" db", got[2], want[2], bound(g.N*p, absDB)...)

	// Each gradient alone, the others nil.
	full, got, _ = o.outputs(make([]float32, g.XLen()))
	be.Conv2DBackward(g, x, w, dy, got[0], nil, nil)
	o.guards("Conv2DBackward(dx only)", full, got)
	expectClose(t, what+" dx only", got[0], want[0], bound(g.K*g.R*g.S, absDX)...)
	full, got, _ = o.outputs(dw0)
	be.Conv2DBackward(g, x, w, dy, nil, got[0], nil)
	o.guards("Conv2DBackward(dw only)", full, got)
	expectClose(t, what+" dw only", got[0], want[1], bound(g.N*p, absDW)...)
}

func TestBackendOpsCPU(t *testing.T) {
	testBackendOps(t, NewCPU(1))
	testBackendOps(t, NewCPU(2))
}

func TestBackendOpsReferenceSelf(t *testing.T) {
	// The reference against itself: exercises the suite's plumbing
	// (guards, nil gradients) on the reference's own code paths.
	testBackendOps(t, NewReference())
}

func TestAdamStepByHand(t *testing.T) {
	// Hyper-parameters exactly representable in float32, so the only
	// roundings are the arithmetic's: p = 1, LR = 1/8, β1 = 7/8,
	// β2 = 1 − 2⁻¹⁰, Eps = 2⁻²⁰, gradients 0.5 then −1.
	// Step 1: m = 1/16, v = 2⁻¹², p = 1 − (1/8)/(1/8)·(1/16)/(2⁻⁶/2⁻⁵ + 2⁻²⁰)
	//         = 1 − 0.125/(1 + 2⁻¹⁹) = 0.87500023841812.
	// Step 2: m = 7/8·1/16 − 1/8 = −0.0703125,
	//         v = (1−2⁻¹⁰)·2⁻¹² + 2⁻¹⁰ = 0.0012204647064208984,
	//         p = p₁ + (1/8)/(1 − 49/64)·0.0703125/(sqrt(v/(1 − (1−2⁻¹⁰)²)) + 2⁻²⁰)
	//           = 0.92242739588647.
	want := [][3]float64{{0.8750002384181244, 0.0625, 0.000244140625}, {0.9224273958864735, -0.0703125, 0.0012204647064208984}}
	for _, be := range []Backend{NewReference(), NewCPU(1)} {
		p, m, v := []float32{1}, []float32{0}, []float32{0}
		for i, g := range []float32{0.5, -1} {
			be.AdamStep(AdamOptions{LR: 0.125, Beta1: 0.875, Beta2: 1 - 1.0/1024, Eps: 1.0 / (1 << 20), Step: i + 1}, p, []float32{g}, m, v)
			// float32 storage and arithmetic: a few eps32 relative per step.
			for j, got := range []float32{p[0], m[0], v[0]} {
				if d := math.Abs(float64(got) - want[i][j]); d > 8*eps32*math.Abs(want[i][j]) {
					t.Fatalf("%s step %d value %d = %v, want %v", be.Name(), i+1, j, got, want[i][j])
				}
			}
		}
	}
}

func TestBackendPanicsOnShortSlices(t *testing.T) {
	for _, be := range []Backend{NewReference(), NewCPU(1)} {
		for name, f := range map[string]func(){
			"Gemm": func() {
				be.Gemm(false, false, 2, 2, 2, 1, make([]float32, 3), make([]float32, 4), 0, make([]float32, 4))
			},
			"Softmax": func() { be.Softmax(2, 3, make([]float32, 6), make([]float32, 5)) },
			"LayerNorm": func() {
				be.LayerNorm(2, 3, 1e-5, make([]float32, 6), make([]float32, 3), make([]float32, 2), make([]float32, 6), make([]float32, 2), make([]float32, 2))
			},
			"Conv2D": func() {
				g := ConvGeom{N: 1, C: 1, H: 3, W: 3, K: 1, R: 3, S: 3, SH: 1, SW: 1}
				be.Conv2D(g, make([]float32, 9), make([]float32, 8), nil, make([]float32, 1))
			},
			"Add": func() { be.Add(make([]float32, 2), make([]float32, 3), make([]float32, 3)) },
			"AdamStep": func() {
				be.AdamStep(AdamOptions{LR: 1, Beta1: 0.9, Beta2: 0.9, Step: 1}, make([]float32, 2), make([]float32, 2), make([]float32, 1), make([]float32, 2))
			},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: want a panic", be.Name(), name)
					}
				}()
				f()
			}()
		}
	}
}
