package vla

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftTargets: each row is a normalised Gaussian around its bin, cut at
// ±⌈3σ⌉ and at the ends.
func TestSoftTargets(t *testing.T) {
	s := NewSoftTargets(16, 1.5)
	for b := range 16 {
		row := s.Row(b)
		sum := 0.0
		for j, q := range row {
			sum += q
			if d := math.Abs(float64(j - b)); d > 5 && q != 0 {
				t.Errorf("bin %d: weight %v at %d, beyond ⌈3σ⌉ = 5", b, q, j)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("bin %d: weights sum to %v", b, sum)
		}
		if row[b] <= 0 || (b > 0 && row[b-1] >= row[b]) || (b < 15 && row[b+1] >= row[b]) {
			t.Errorf("bin %d: not peaked at its own bin: %v", b, row)
		}
	}
	mid := s.Row(8)
	if want := math.Exp(-1/(2*1.5*1.5)) * mid[8]; math.Abs(mid[9]-want) > 1e-12 {
		t.Errorf("neighbour weight %v, want exp(−1/2σ²)·peak = %v", mid[9], want)
	}
}

// TestSoftCrossEntropyGradients finite-differences BackwardSoft's gradient
// of SoftCrossEntropy's loss (float64, tolerances as TestModelGradients'),
// and checks that a one-hot-like σ reproduces the hard cross-entropy.
func TestSoftCrossEntropyGradients(t *testing.T) {
	for _, slim := range []bool{true, false} {
		name := map[bool]string{true: "slim", false: "full"}[slim]
		t.Run(name, func(t *testing.T) {
			_, c, m, batch, tokens := tinyGradCase(slim, 29, 30)
			targets := NewSoftTargets(c.Bins, 1.2)
			loss := func() float64 {
				l, _, _ := SoftCrossEntropy(m.Forward(batch, tokens), targets)
				return l
			}
			m.ZeroGrads()
			m.BackwardSoft(m.Forward(batch, tokens), targets)
			grads := append([]float64(nil), m.Grads()...)
			checkSpans(t, m, loss, grads)
			// σ → 0: the targets are one-hot and L is the hard cross-entropy.
			tape := m.Forward(batch, tokens)
			l, hard, acc := SoftCrossEntropy(tape, NewSoftTargets(c.Bins, 1e-3))
			ce, acc2, _ := CrossEntropy(tape)
			if math.Abs(l-ce) > 1e-12 || math.Abs(hard-ce) > 1e-12 || acc != acc2 {
				t.Errorf("one-hot targets: loss %v, hard %v, accuracy %v; CrossEntropy %v, %v", l, hard, acc, ce, acc2)
			}
		})
	}
}

// TestDecodeRules: mean and median bins of known distributions, and
// ActDecode's argmax and sample rules are Act's.
func TestDecodeRules(t *testing.T) {
	logp := func(p ...float64) []float64 {
		out := make([]float64, len(p))
		for i, v := range p {
			out[i] = math.Log(v)
		}
		return out
	}
	// Bimodal: mean between the modes, median at the heavier side.
	lp := logp(0.4, 1e-9, 1e-9, 1e-9, 0.6)
	if b := meanBin(lp); b != 2 {
		t.Errorf("mean bin %d, want 2 (0.6·4 = 2.4)", b)
	}
	if b := medianBin(lp); b != 4 {
		t.Errorf("median bin %d, want 4", b)
	}
	if b := argmaxBin(lp); b != 4 {
		t.Errorf("argmax bin %d, want 4", b)
	}
	// Unnormalised (a full head's slice): renormalised first.
	lp = logp(0.05, 0.1, 0.1, 0.05)
	if b := meanBin(lp); b != 2 { // mean 1.5 rounds to 2
		t.Errorf("mean bin of a slice %d, want 2", b)
	}
	if b := medianBin(lp); b != 1 {
		t.Errorf("median bin of a slice %d, want 1", b)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	c := tinyConfig(true)
	m := New(c, rng)
	perturb(m.Params(), 0.3, rng)
	batch := randObs(rng, c, 4)
	g1, _, _ := m.Act(batch, nil, true)
	g2, _, _ := m.ActDecode(batch, nil, DecodeArgmax)
	s1, _, _ := m.Act(batch, rand.New(rand.NewPCG(1, 1)), false)
	s2, _, _ := m.ActDecode(batch, rand.New(rand.NewPCG(1, 1)), DecodeSample)
	for i := range batch {
		for j := range c.ActionDims {
			if g1[i][j] != g2[i][j] || s1[i][j] != s2[i][j] {
				t.Fatalf("row %d position %d: ActDecode differs from Act", i, j)
			}
		}
	}
	// The mean rule feeds its own picks forward: each pick is the mean bin
	// of the distribution given the picks before it.
	mt, _, _ := m.ActDecode(batch, nil, DecodeMean)
	tape := m.Forward(batch, mt)
	k := m.headWidth()
	for i := range batch {
		for j := range c.ActionDims {
			r := i*c.ActionDims + j
			if want := meanBin(tape.logp[r*k : r*k+c.Bins]); mt[i][j] != want {
				t.Errorf("row %d position %d: mean decode %d, teacher-forced mean bin %d", i, j, mt[i][j], want)
			}
		}
	}
	for _, r := range []DecodeRule{DecodeSample, DecodeArgmax, DecodeMean, DecodeMedian} {
		if got, err := ParseDecodeRule(r.String()); err != nil || got != r {
			t.Errorf("ParseDecodeRule(%q) = %v, %v", r.String(), got, err)
		}
	}
	if _, err := ParseDecodeRule("mode"); err == nil {
		t.Error("ParseDecodeRule accepted an unknown name")
	}
}
