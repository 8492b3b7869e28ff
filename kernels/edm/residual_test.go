package edm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestResidualIsTheChange: with EDM.Residual the loss of a batch is the direct loss of the
// same batch whose Next is replaced by Next − Past[k−1] (same noise), gradients included;
// and sampling returns that change plus the last context frame: wherever neither result is
// clipped, residual sample = direct sample + last frame, with the same random draws.
func TestResidualIsTheChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	c := tinyConfig()
	m := NewNet[float64](c, rng, nil)
	perturb(m.Params(), 0.2, rng)
	direct, res := DefaultEDM(), DefaultEDM()
	res.Residual = true
	b := randBatch(rng, c, 3)
	last := m.lastPast(b)
	shifted := b
	shifted.Next = make([]float64, len(b.Next))
	for j, v := range b.Next {
		shifted.Next[j] = v - last[j]
	}
	sigma := []float64{0.05, 0.7, 3}
	eps := randVec(rng, len(b.Next), 1)

	m.ZeroGrads()
	lr := m.Loss(res, b, sigma, eps)
	gr := append([]float64(nil), m.Grads()...)
	m.ZeroGrads()
	ld := m.Loss(direct, shifted, sigma, eps)
	// The same arithmetic on the same values in a different order of subtraction: equal to
	// float64 rounding.
	if math.Abs(lr-ld) > 1e-12*math.Max(1, math.Abs(ld)) {
		t.Errorf("residual loss %v, direct loss on the change %v", lr, ld)
	}
	for i, g := range m.Grads() {
		if math.Abs(g-gr[i]) > 1e-10*math.Max(1, math.Abs(g)) {
			t.Fatalf("gradient %d: residual %v, direct on the change %v", i, gr[i], g)
		}
	}

	xr := m.Sample(res, b, rand.New(rand.NewPCG(5, 6)))
	xd := m.Sample(direct, b, rand.New(rand.NewPCG(5, 6)))
	compared := 0
	for j := range xr {
		sum := xd[j] + last[j]
		if math.Abs(xd[j]) < 1 && math.Abs(sum) < 1 {
			compared++
			if math.Abs(xr[j]-sum) > 1e-12 {
				t.Fatalf("value %d: residual sample %v, direct sample + last frame %v", j, xr[j], sum)
			}
		}
	}
	if compared < len(xr)/4 {
		t.Errorf("only %d of %d values unclipped in both; the check saw too little", compared, len(xr))
	}
}
