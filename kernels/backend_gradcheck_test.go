package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// backendGradCheck compares analytic[i] = ∂L/∂x[i] with the central
// difference (L(x+h) − L(x−h))/(x₊ − x₋), where x₊, x₋ are the float32
// values actually stored, for every i (at most 48 of them, spread out).
//
// The backward passes are checked on the reference backend, which computes
// in float64 and rounds each output once. With h = 2⁻⁷ the truncation error
// is h²/6·|L”'| ≈ 1e-5 for these O(1) functions; the rounding of the
// outputs (eps32 relative) enters the difference quotient as
// eps32·Σ|w||y|/(2h) ≈ 4e-6·Σ|w||y|/n·n — a few 1e-4 for the ~100 outputs
// here. The tolerance 2e-3·max(1, max|∂L/∂x|) is ten times that, and far
// below the O(1) error of a wrong formula.
func backendGradCheck(t *testing.T, what string, x []float32, loss func() float64, analytic []float32) {
	t.Helper()
	const h = 1.0 / 128
	tol := 2e-3 * math.Max(1, maxAbs(analytic))
	step := max(1, len(x)/48)
	for i := 0; i < len(x); i += step {
		x0 := x[i]
		x[i] = x0 + h
		xp, lp := float64(x[i]), loss()
		x[i] = x0 - h
		xm, lm := float64(x[i]), loss()
		x[i] = x0
		num := (lp - lm) / (xp - xm)
		if d := math.Abs(num - float64(analytic[i])); d > tol {
			t.Fatalf("%s: ∂L/∂x[%d] analytic %v, numerical %v (|diff| %.3g > %.3g)", what, i, analytic[i], num, d, tol)
		}
	}
}

// weighted returns Σ w_i y_i in float64: a scalar loss whose gradient with
// respect to y is w.
func weighted(w, y []float32) float64 {
	s := 0.0
	for i := range w {
		s += float64(w[i]) * float64(y[i])
	}
	return s
}

func TestSoftmaxGradient(t *testing.T) {
	ref := NewReference()
	rng := rand.New(rand.NewPCG(21, 22))
	rows, cols := 3, 9
	x, w := backendRand(rng, rows*cols), backendRand(rng, rows*cols)
	y := make([]float32, rows*cols)
	loss := func() float64 { ref.Softmax(rows, cols, x, y); return weighted(w, y) }
	loss()
	dx := make([]float32, rows*cols)
	ref.SoftmaxBackward(rows, cols, y, w, dx)
	backendGradCheck(t, "Softmax", x, loss, dx)
}

func TestLayerNormGradient(t *testing.T) {
	ref := NewReference()
	rng := rand.New(rand.NewPCG(23, 24))
	rows, cols := 4, 11
	x, gamma, beta, w := backendRand(rng, rows*cols), backendRand(rng, cols), backendRand(rng, cols), backendRand(rng, rows*cols)
	y, mean, rstd := make([]float32, rows*cols), make([]float32, rows), make([]float32, rows)
	loss := func() float64 { ref.LayerNorm(rows, cols, 1e-5, x, gamma, beta, y, mean, rstd); return weighted(w, y) }
	loss()
	dx, dg, db := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
	ref.LayerNormBackward(rows, cols, x, gamma, mean, rstd, w, dx, dg, db)
	backendGradCheck(t, "LayerNorm dx", x, loss, dx)
	backendGradCheck(t, "LayerNorm dgamma", gamma, loss, dg)
	backendGradCheck(t, "LayerNorm dbeta", beta, loss, db)
}

func TestConv2DGradient(t *testing.T) {
	ref := NewReference()
	rng := rand.New(rand.NewPCG(25, 26))
	for _, g := range []ConvGeom{
		{N: 2, C: 2, H: 5, W: 6, K: 3, R: 3, S: 3, SH: 1, SW: 1, PH: 1, PW: 1},
		{N: 1, C: 3, H: 7, W: 5, K: 2, R: 3, S: 2, SH: 2, SW: 2, PH: 1, PW: 0},
	} {
		x, wt, bias, w := backendRand(rng, g.XLen()), backendRand(rng, g.WLen()), backendRand(rng, g.K), backendRand(rng, g.YLen())
		y := make([]float32, g.YLen())
		loss := func() float64 { ref.Conv2D(g, x, wt, bias, y); return weighted(w, y) }
		dx, dw, db := make([]float32, g.XLen()), make([]float32, g.WLen()), make([]float32, g.K)
		ref.Conv2DBackward(g, x, wt, w, dx, dw, db)
		backendGradCheck(t, "Conv2D dx", x, loss, dx)
		backendGradCheck(t, "Conv2D dw", wt, loss, dw)
		backendGradCheck(t, "Conv2D db", bias, loss, db)
	}
}

func TestActivationGradientsF32(t *testing.T) {
	ref := NewReference()
	rng := rand.New(rand.NewPCG(27, 28))
	x, w := backendRand(rng, 40), backendRand(rng, 40)
	for i := range x {
		x[i] *= 3
		if math.Abs(float64(x[i])) < 0.05 {
			x[i] = 0.5 // keep ReLU's kink out of the difference quotient
		}
	}
	y, dx := make([]float32, len(x)), make([]float32, len(x))
	gelu := func() float64 { ref.GELU(x, y); return weighted(w, y) }
	ref.GELUBackward(x, w, dx)
	backendGradCheck(t, "GELU", x, gelu, dx)
	relu := func() float64 { ref.ReLU(x, y); return weighted(w, y) }
	ref.ReLUBackward(x, w, dx)
	backendGradCheck(t, "ReLU", x, relu, dx)
}

// TestGELUValues pins the tanh approximation at a few points against
// ½x(1 + tanh(√(2/π)(x + 0.044715x³))) evaluated by hand.
func TestGELUValues(t *testing.T) {
	// x = 1: u = 0.7978845608·1.044715 = 0.8335620, tanh u = 0.6823840, y = 0.8411920.
	// x = −2: u = −0.7978845608·2.35772 = −1.8811883, tanh u = −0.9545977, y = −0.0454023.
	x := []float32{1, -2, 0}
	want := []float64{0.8411919906082768, -0.04540230591222, 0}
	for _, be := range []Backend{NewReference(), NewCPU(1)} {
		y := make([]float32, 3)
		be.GELU(x, y)
		for i := range y {
			if d := math.Abs(float64(y[i]) - want[i]); d > 1e-6 {
				t.Fatalf("%s GELU(%v) = %v, want %v", be.Name(), x[i], y[i], want[i])
			}
		}
	}
}
