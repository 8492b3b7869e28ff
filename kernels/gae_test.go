package kernels

import (
	"math"
	"testing"
)

func TestGAEHandComputed(t *testing.T) {
	// rewards [1, 0, 2], values [0.5, 1.0, 1.5], γ = 0.9, λ = 0.8, γλ = 0.72.
	//
	// Terminated (bootstrap 0):
	//   δ2 = 2 + 0.9·0   − 1.5 = 0.5
	//   δ1 = 0 + 0.9·1.5 − 1.0 = 0.35
	//   δ0 = 1 + 0.9·1.0 − 0.5 = 1.4
	//   A2 = 0.5;  A1 = 0.35 + 0.72·0.5 = 0.71;  A0 = 1.4 + 0.72·0.71 = 1.9112
	//   ret = A + V = [2.4112, 1.71, 2.0]
	//
	// Cut or truncated with bootstrap V(o_3) = 2:
	//   δ2 = 2 + 0.9·2 − 1.5 = 2.3
	//   A2 = 2.3;  A1 = 0.35 + 0.72·2.3 = 2.006;  A0 = 1.4 + 0.72·2.006 = 2.84432
	//   ret = [3.34432, 3.006, 3.8]
	rewards := []float64{1, 0, 2}
	values := []float64{0.5, 1.0, 1.5}
	for _, c := range []struct {
		name      string
		bootstrap float64
		adv, ret  []float64
	}{
		{"terminated", 0, []float64{1.9112, 0.71, 0.5}, []float64{2.4112, 1.71, 2.0}},
		{"bootstrapped", 2, []float64{2.84432, 2.006, 2.3}, []float64{3.34432, 3.006, 3.8}},
	} {
		adv, ret := make([]float64, 3), make([]float64, 3)
		GAE(rewards, values, c.bootstrap, 0.9, 0.8, adv, ret)
		for i := range adv {
			// About ten float64 operations on values of order 1, and the
			// decimal constants above are themselves rounded: 1e-12.
			if math.Abs(adv[i]-c.adv[i]) > 1e-12 || math.Abs(ret[i]-c.ret[i]) > 1e-12 {
				t.Errorf("%s: t=%d adv %.15g ret %.15g, want %.15g %.15g", c.name, i, adv[i], ret[i], c.adv[i], c.ret[i])
			}
		}
	}
}

func TestGAELambdaLimits(t *testing.T) {
	// λ = 0 gives the one-step TD error; λ = 1 gives the discounted return
	// minus the value (Monte Carlo). rewards [1, 1], values [0, 0], γ = 0.5,
	// terminated: λ=0 → A = [1, 1]; λ=1 → A = [1 + 0.5·1, 1] = [1.5, 1].
	rewards, values := []float64{1, 1}, []float64{0, 0}
	adv, ret := make([]float64, 2), make([]float64, 2)
	GAE(rewards, values, 0, 0.5, 0, adv, ret)
	if adv[0] != 1 || adv[1] != 1 { // exact: sums of small dyadic numbers
		t.Errorf("λ=0: adv = %v, want [1 1]", adv)
	}
	GAE(rewards, values, 0, 0.5, 1, adv, ret)
	if adv[0] != 1.5 || adv[1] != 1 {
		t.Errorf("λ=1: adv = %v, want [1.5 1]", adv)
	}
}
