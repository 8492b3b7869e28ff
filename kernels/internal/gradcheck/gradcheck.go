// Package gradcheck holds the finite-difference helpers that the kernels'
// gradient tests share: every backward pass is compared with central
// differences of its loss,
//
//	∂L/∂x_i ≈ (L(x + h·e_i) − L(x − h·e_i)) / 2h,
//
// in float64. Each caller states its step h and tolerance and why (the
// truncation error h²·|L⁽³⁾|/6 plus the rounding error ≈ 2.2e-16·|L|/h).
package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Check compares the analytic gradient of f with respect to x with its
// central differences at step h, failing t for every value (the first ten
// reported) whose error exceeds tol relative to max(1, |analytic|), and
// logs the worst relative error when the test runs verbosely. x is
// perturbed in place and restored.
func Check(t testing.TB, name string, f func() float64, x, analytic []float64, h, tol float64) {
	t.Helper()
	if len(x) != len(analytic) {
		t.Fatalf("%s: %d values, %d gradients", name, len(x), len(analytic))
	}
	worst, bad := 0.0, 0
	for i, g := range analytic {
		xi := x[i]
		x[i] = xi + h
		up := f()
		x[i] = xi - h
		down := f()
		x[i] = xi
		num := (up - down) / (2 * h)
		rel := math.Abs(num-g) / math.Max(1, math.Abs(g))
		worst = math.Max(worst, rel)
		if rel > tol && bad < 10 {
			bad++
			t.Errorf("%s[%d]: analytic %.10g, numeric %.10g", name, i, g, num)
		}
	}
	if testing.Verbose() {
		t.Logf("%s: %d values, worst relative error %.2g", name, len(x), worst)
	}
}

// RandVec returns n values drawn from N(0, scale²).
func RandVec(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

// Dot returns Σ a_i b_i: the test loss L = Σ y ⊙ r has ∂L/∂y = r.
func Dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
