package kernels

import (
	"math"
	"testing"
)

func TestAdamTwoStepsByHand(t *testing.T) {
	// lr = 0.1, β1 = 0.9, β2 = 0.999, eps = 1e-5, p0 = 1; second parameter has
	// zero gradient and must not move.
	//
	// Step 1, g = 0.5: m = 0.1·0.5 = 0.05, v = 0.001·0.25 = 0.00025,
	//   bc1 = 1−0.9 = 0.1, bc2 = 1−0.999 = 0.001, step size = 0.1/0.1 = 1,
	//   denom = sqrt(0.00025)/sqrt(0.001) + 1e-5 = 0.5 + 1e-5 = 0.50001,
	//   p1 = 1 − 0.05/0.50001 = 1 − 0.0999980000399992 = 0.9000019999600008.
	// Step 2, g = −1: m = 0.9·0.05 + 0.1·(−1) = −0.055,
	//   v = 0.999·0.00025 + 0.001·1 = 0.00124975,
	//   bc1 = 1−0.81 = 0.19, bc2 = 1−0.998001 = 0.001999,
	//   step size = 0.1/0.19 = 0.526315789473684,
	//   denom = sqrt(0.00124975/0.001999) + 1e-5 = 0.790688050875253 + 1e-5 = 0.790698050875253,
	//   p2 = p1 + 0.526315789473684·0.055/0.790698050875253 = p1 + 0.0366098896905205
	//      = 0.9366118896505213.
	a := NewAdam(2, 0.1)
	p := []float64{1, 3}
	a.Step(p, []float64{0.5, 0})
	// Rounding of ~10 operations on order-1 values, and of the decimal
	// expansions above (16 digits): 1e-14.
	const tol = 1e-14
	if math.Abs(p[0]-0.9000019999600008) > tol || p[1] != 3 {
		t.Fatalf("after step 1: p = %v, want [0.9000019999600008 3]", p)
	}
	a.Step(p, []float64{-1, 0})
	if math.Abs(p[0]-0.9366118896505213) > tol || p[1] != 3 {
		t.Fatalf("after step 2: p = %v, want [0.9366118896505213 3]", p)
	}
	if a.T != 2 || math.Abs(a.M[0]+0.055) > tol || math.Abs(a.V[0]-0.00124975) > tol {
		t.Errorf("state T=%d M=%v V=%v, want T=2 M[0]=-0.055 V[0]=0.00124975", a.T, a.M, a.V)
	}
}

func TestAdamStepSparseKeepsZeroGradientEntries(t *testing.T) {
	// After one dense step both entries carry momentum. A dense step with a
	// zero gradient moves entry 1 by its momentum; a sparse step leaves its
	// parameter and both moments exactly as they were, and treats entry 0
	// (non-zero gradient) exactly as the dense step does.
	dense, sparse := NewAdam(2, 0.1), NewAdam(2, 0.1)
	pd, ps := []float64{1, 3}, []float64{1, 3}
	dense.Step(pd, []float64{0.5, 0.25})
	sparse.Step(ps, []float64{0.5, 0.25})
	kept := []float64{ps[1], sparse.M[1], sparse.V[1]}
	dense.Step(pd, []float64{-1, 0})
	sparse.StepSparse(ps, []float64{-1, 0})
	if pd[0] != ps[0] || dense.M[0] != sparse.M[0] || dense.V[0] != sparse.V[0] || sparse.T != 2 {
		t.Errorf("entry 0: sparse p %v M %v V %v T %d, dense p %v M %v V %v; want identical and T 2",
			ps[0], sparse.M[0], sparse.V[0], sparse.T, pd[0], dense.M[0], dense.V[0])
	}
	if got := []float64{ps[1], sparse.M[1], sparse.V[1]}; got[0] != kept[0] || got[1] != kept[1] || got[2] != kept[2] {
		t.Errorf("entry 1 (zero gradient): p, M, V = %v after the sparse step, want %v", got, kept)
	}
	if pd[1] == kept[0] {
		t.Errorf("the dense step did not move entry 1 (p %v); the test does not exercise momentum", pd[1])
	}
}

func TestClipGradNorm(t *testing.T) {
	// [3, 4] has norm 5; with max 1 the scale is 1/(5 + 1e-6), giving
	// [0.6, 0.8]·5/(5+1e-6) = [0.59999988, 0.79999984].
	g := []float64{3, 4}
	norm := ClipGradNorm(g, 1)
	if norm != 5 { // 3-4-5 is exact in float64 with the scaled sum
		t.Errorf("norm = %v, want 5", norm)
	}
	c := 1 / (5 + 1e-6)
	// One multiplication each: a few ulps of 1.
	if math.Abs(g[0]-3*c) > 1e-15 || math.Abs(g[1]-4*c) > 1e-15 {
		t.Errorf("clipped = %v, want [%v %v]", g, 3*c, 4*c)
	}
	if n := L2Norm(g); math.Abs(n-1) > 1e-6 {
		// 5c = 1 − 2e-7: within 1e-6 of max.
		t.Errorf("norm after clipping = %v, want ≈ 1", n)
	}

	// Below the limit nothing changes.
	g = []float64{3, 4}
	if norm := ClipGradNorm(g, 10); norm != 5 || g[0] != 3 || g[1] != 4 {
		t.Errorf("max 10: norm %v grads %v, want 5 and unchanged", norm, g)
	}

	// Huge finite values do not overflow the norm: sqrt(2)·1e200.
	if n := L2Norm([]float64{1e200, 1e200}); math.Abs(n/1e200-math.Sqrt2) > 1e-15 {
		t.Errorf("L2Norm of [1e200 1e200] = %v, want sqrt(2)e200", n)
	}
}

func TestClipGradNormOf(t *testing.T) {
	// float32 [3, 4]: norm 5 exactly (squares summed in float64); with max 1 each value is
	// multiplied by float32(1/(5 + 1e-6)), one rounding: within 1 ulp of 3c and 4c.
	g := []float32{3, 4}
	if norm := ClipGradNormOf(g, 1); norm != 5 {
		t.Errorf("norm = %v, want 5", norm)
	}
	c := float32(1 / (5 + 1e-6))
	if g[0] != 3*c || g[1] != 4*c {
		t.Errorf("clipped = %v, want [%v %v]", g, 3*c, 4*c)
	}
	// maxNorm ≤ 0 only measures; below the limit nothing changes.
	for _, mx := range []float64{0, -1, 10} {
		g = []float32{3, 4}
		if norm := ClipGradNormOf(g, mx); norm != 5 || g[0] != 3 || g[1] != 4 {
			t.Errorf("max %v: norm %v grads %v, want 5 and unchanged", mx, norm, g)
		}
	}
	// A NaN gradient reports a NaN norm and is left as it is.
	g = []float32{float32(math.NaN()), 1}
	if norm := ClipGradNormOf(g, 1); !math.IsNaN(norm) || g[1] != 1 {
		t.Errorf("NaN gradient: norm %v, grads %v; want NaN and untouched", norm, g)
	}
}
