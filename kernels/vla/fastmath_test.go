package vla

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFastMath measures the float32 model's exp and GELU against the
// float64 library functions on dense grids.
func TestFastMath(t *testing.T) {
	const ulp = 0x1p-23 // float32's relative spacing at 1
	worst := 0.0
	for x := -87.0; x < 88.7; x += 1e-3 {
		xf := float32(x)
		want := math.Exp(float64(xf))
		worst = max(worst, math.Abs(float64(exp32(xf))-want)/want)
	}
	// Truncation 5.7e-10 plus one float32 rounding (half an ulp).
	if worst > ulp {
		t.Errorf("exp32: worst relative error %.3g, want ≤ 1 ulp = %.3g", worst, ulp)
	}
	for _, tc := range []struct{ x, want float32 }{
		{-100, 0}, {float32(math.Inf(-1)), 0}, {100, float32(math.Inf(1))}, {0, 1},
	} {
		if got := exp32(tc.x); got != tc.want {
			t.Errorf("exp32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if v := exp32(float32(math.NaN())); v == v {
		t.Errorf("exp32(NaN) = %v, want NaN", v)
	}
	worstErf, worstGelu, worstGrad := 0.0, 0.0, 0.0
	for x := -10.0; x < 10; x += 1e-4 {
		worstErf = max(worstErf, math.Abs(erf32(x)-math.Erf(x)))
		xf := float32(x)
		u := float64(xf)
		g := 0.5 * u * (1 + math.Erf(u/math.Sqrt2))
		dg := 0.5*(1+math.Erf(u/math.Sqrt2)) + u*math.Exp(-0.5*u*u)/math.Sqrt(2*math.Pi)
		// Errors relative to max(1, |x|): GELU's output is of the order of
		// its input, and an activation error is what matters downstream.
		s := math.Max(1, math.Abs(u))
		worstGelu = max(worstGelu, math.Abs(float64(gelu32(xf))-g)/s)
		worstGrad = max(worstGrad, math.Abs(float64(geluGrad32(xf))-dg)/s)
		worstGrad = max(worstGrad, math.Abs(float64(geluGradFromOutput32(xf, gelu32(xf)))-dg)/s)
	}
	t.Logf("exp32 %.3g relative; erf32 %.3g, GELU %.3g, GELU' %.3g absolute (per max(1, |x|))", worst, worstErf, worstGelu, worstGrad)
	// Eigen's fit is good to ≈ 6.5e-8 in float64; GELU halves it and adds
	// one float32 rounding of a value ≤ max(1, |x|): 1e-7 + ulp/2 ≤ 1.6e-7.
	// GELU' from the output y/x inherits y's error (≤ 1.6e-7 relative to
	// max(1, |x|), divided by |x|) plus a rounding: below 2.5e-7 wherever
	// |x| ≥ 1, and Φ's own 1.2e-7 below.
	if worstErf > 1e-7 {
		t.Errorf("erf32: worst absolute error %.3g, want ≤ 1e-7", worstErf)
	}
	if worstGelu > 1.6e-7 || worstGrad > 2.5e-7 {
		t.Errorf("GELU: worst error %.3g, GELU' %.3g, want ≤ 1.6e-7 and 2.5e-7", worstGelu, worstGrad)
	}
}

var sinkElem float32

func benchElem(b *testing.B, f func([]float32, []float32)) {
	x := randVec[float32](rand.New(rand.NewPCG(1, 1)), 4096, 2)
	y := make([]float32, len(x))
	b.ResetTimer()
	for range b.N {
		f(x, y)
	}
	sinkElem = y[0]
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
}

func BenchmarkExp32(b *testing.B) {
	benchElem(b, func(x, y []float32) {
		for i, v := range x {
			y[i] = exp32(-v * v)
		}
	})
}

func BenchmarkExpMath(b *testing.B) {
	benchElem(b, func(x, y []float32) {
		for i, v := range x {
			y[i] = float32(math.Exp(float64(-v * v)))
		}
	})
}

func BenchmarkGELU32(b *testing.B) {
	benchElem(b, func(x, y []float32) {
		for i, v := range x {
			y[i] = gelu32(v)
		}
	})
}

func BenchmarkGELUMath(b *testing.B) {
	benchElem(b, func(x, y []float32) {
		for i, v := range x {
			u := float64(v)
			y[i] = float32(0.5 * u * (1 + math.Erf(u/math.Sqrt2)))
		}
	})
}

func BenchmarkGELUGrad32(b *testing.B) {
	benchElem(b, func(x, y []float32) {
		for i, v := range x {
			y[i] = geluGrad32(v)
		}
	})
}
