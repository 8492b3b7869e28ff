package vla

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The gradient checks run the package's generic code instantiated at
// float64 (the float32 model is the same code; TestFloat32MatchesFloat64
// ties the two together). Central finite differences,
// f'(x) ≈ (f(x+h) − f(x−h))/2h, have truncation error h²·f⁽³⁾/6 and
// rounding error about ε·|f|/h with ε = 2.2e-16. The test losses here have
// |f| ≲ 10 and |f⁽³⁾| ≲ 100 (softmaxes of logits of order 1, layer norms of
// inputs of order 1), so with h = 1e-5 truncation is ≲ 2e-9 and rounding ≲
// 2e-10; gradTol = 1e-6 (relative to max(1, |analytic|)) leaves a margin of
// 500× while a wrong term would be off by at least ~1e-3 (the smallest
// weights in these tests are 0.1 and activations are of order 0.1-1).
const (
	fdStep  = 1e-5
	gradTol = 1e-6
)

func numGrad(f func() float64, x []float64, i int) float64 {
	orig := x[i]
	x[i] = orig + fdStep
	fp := f()
	x[i] = orig - fdStep
	fm := f()
	x[i] = orig
	return (fp - fm) / (2 * fdStep)
}

func checkGrad(t *testing.T, name string, f func() float64, x, analytic []float64) {
	t.Helper()
	bad := 0
	for i := range x {
		num := numGrad(f, x, i)
		if d := math.Abs(num - analytic[i]); d > gradTol*math.Max(1, math.Abs(analytic[i])) {
			t.Errorf("%s[%d]: analytic %.10g, numeric %.10g (diff %.3g)", name, i, analytic[i], num, d)
			if bad++; bad > 10 {
				t.Fatalf("%s: too many mismatches", name)
			}
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestLayerNormGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 3, 5
	x := randVec[float64](rng, n*d, 2)
	g := randVec[float64](rng, d, 1)
	b := randVec[float64](rng, d, 1)
	r := randVec[float64](rng, n*d, 1) // L = Σ y ⊙ r, so ∂L/∂y = r
	y, mu, rs := make([]float64, n*d), make([]float64, n), make([]float64, n)
	loss := func() float64 { layerNorm(x, n, d, g, b, y, mu, rs); return dot(y, r) }
	loss()
	dx, gg, gb := make([]float64, n*d), make([]float64, d), make([]float64, d)
	layerNormBack(x, r, n, d, g, mu, rs, dx, gg, gb)
	checkGrad(t, "layer norm input", loss, x, dx)
	checkGrad(t, "layer norm gain", loss, g, gg)
	checkGrad(t, "layer norm bias", loss, b, gb)
}

func TestGELUMLPGradients(t *testing.T) {
	// fc2(GELU(fc1(x))), the block's MLP, with inputs spread over the
	// curved part of GELU (|u| ≲ 3).
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d, hid = 4, 3, 6
	x := randVec[float64](rng, n*d, 1)
	w1, b1 := randVec[float64](rng, hid*d, 1), randVec[float64](rng, hid, 0.5)
	w2, b2 := randVec[float64](rng, d*hid, 1), randVec[float64](rng, d, 0.5)
	r := randVec[float64](rng, n*d, 1)
	u, g, y := make([]float64, n*hid), make([]float64, n*hid), make([]float64, n*d)
	loss := func() float64 {
		linear(nil, x, n, d, hid, w1, b1, u)
		gelu(u, g)
		linear(nil, g, n, hid, d, w2, b2, y)
		return dot(y, r)
	}
	loss()
	gw1, gb1 := make([]float64, len(w1)), make([]float64, len(b1))
	gw2, gb2 := make([]float64, len(w2)), make([]float64, len(b2))
	dg, dx := make([]float64, n*hid), make([]float64, n*d)
	linearBack(nil, g, r, n, hid, d, w2, gw2, gb2, dg)
	geluBack(u, g, dg, dg)
	linearBack(nil, x, dg, n, d, hid, w1, gw1, gb1, dx)
	checkGrad(t, "mlp input", loss, x, dx)
	checkGrad(t, "fc1 weight", loss, w1, gw1)
	checkGrad(t, "fc1 bias", loss, b1, gb1)
	checkGrad(t, "fc2 weight", loss, w2, gw2)
	checkGrad(t, "fc2 bias", loss, b2, gb2)
}

func TestAttentionGradients(t *testing.T) {
	// Two sequences of 6 positions, prefix 4 (bidirectional) then 2 causal
	// action positions, 2 heads of width 2; padding at position 2 of the
	// first sequence and position 1 of the second.
	rng := rand.New(rand.NewPCG(5, 6))
	const nb, tl, d, heads, tp = 2, 6, 4, 2, 4
	valid := make([]bool, nb*tl)
	for i := range valid {
		valid[i] = true
	}
	valid[2], valid[tl+1] = false, false
	qkv := randVec[float64](rng, nb*tl*3*d, 1)
	r := randVec[float64](rng, nb*tl*d, 1)
	const dh = d / heads
	probs, ctx := make([]float64, nb*heads*tl*tl), make([]float64, nb*tl*d)
	q, k, v, ctxh := make([]float64, nb*tl*d), make([]float64, nb*tl*d), make([]float64, nb*tl*d), make([]float64, nb*tl*d)
	loss := func() float64 {
		splitHeads(qkv, nb, tl, d, heads, tl, q, k, v)
		attnForward(nil, q, k, v, tl, nb, tl, heads, dh, tp, valid, tl, probs, ctxh)
		mergeHeads(ctxh, nb, tl, d, heads, tl, ctx, d, 0)
		return dot(ctx, r)
	}
	loss()
	for b := 0; b < nb; b++ {
		for h := 0; h < heads; h++ {
			p := probs[(b*heads+h)*tl*tl:]
			for i := 0; i < tl; i++ {
				for j := 0; j < tl; j++ {
					if !allowed(valid[b*tl:], tp, i, j) && p[i*tl+j] != 0 {
						t.Fatalf("sequence %d head %d: masked P[%d][%d] = %v, want exactly 0", b, h, i, j, p[i*tl+j])
					}
				}
			}
		}
	}
	dqkv := make([]float64, len(qkv))
	rh, dq, dk, dv, dp := make([]float64, len(r)), make([]float64, len(r)), make([]float64, len(r)), make([]float64, len(r)), make([]float64, len(probs))
	splitOne(r, nb, tl, d, heads, rh)
	attnBackward(nil, q, k, v, tl, probs, rh, nb, tl, heads, dh, dq, dk, dv, dp)
	mergeHeads(dq, nb, tl, d, heads, tl, dqkv, 3*d, 0)
	mergeHeads(dk, nb, tl, d, heads, tl, dqkv, 3*d, d)
	mergeHeads(dv, nb, tl, d, heads, tl, dqkv, 3*d, 2*d)
	checkGrad(t, "attention q|k|v", loss, qkv, dqkv)
	// Padded keys and values (and, since nothing reads them, the queries of
	// padded positions' outputs aside) get no gradient.
	for _, pos := range []int{2, tl + 1} {
		for c := d; c < 3*d; c++ {
			if g := dqkv[pos*3*d+c]; g != 0 {
				t.Errorf("padded position %d: key/value gradient %v, want 0", pos, g)
			}
		}
	}
}

func TestCategoricalGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const k = 5
	z := randVec[float64](rng, k, 2)
	const a = 3
	wlp, went := 0.7, -1.3
	lp := make([]float64, k)
	loss := func() float64 { logSoftmax(z, 1, k, lp); return wlp*lp[a] + went*entropy(lp) }
	loss()
	dz := make([]float64, k)
	categoricalBack(lp, entropy(lp), a, wlp, went, dz)
	checkGrad(t, "categorical logits", loss, z, dz)
}

// tinyConfig is small enough to finite-difference every parameter.
func tinyConfig(slim bool) Config {
	return Config{ImageSize: 4, Patch: 2, Cameras: 2, Dim: 8, Layers: 2, Heads: 2, MLPRatio: 2,
		MaxInstr: 3, WordVocab: 5, VocabSize: 16, ActionDims: 3, Bins: 6, ProprioDim: 2, SlimHead: slim}
}

func randObs(rng *rand.Rand, c Config, n int) []Obs {
	batch := make([]Obs, n)
	for i := range batch {
		o := Obs{Proprio: randVec[float32](rng, c.ProprioDim, 1)}
		for range c.Cameras {
			im := make([]uint8, c.ImageSize*c.ImageSize*3)
			for j := range im {
				im[j] = uint8(rng.IntN(256))
			}
			o.Images = append(o.Images, im)
		}
		// Instruction lengths vary, so some samples are padded.
		for j := 0; j < c.MaxInstr-i%2; j++ {
			o.Instr = append(o.Instr, rng.IntN(c.WordVocab))
		}
		batch[i] = o
	}
	return batch
}

func randTokens(rng *rand.Rand, c Config, n int) [][]int {
	tk := make([][]int, n)
	for i := range tk {
		for range c.ActionDims {
			tk[i] = append(tk[i], rng.IntN(c.Bins))
		}
	}
	return tk
}

// perturb adds N(0, s²) to every parameter, so that layer-norm gains,
// biases and the head are far from their init and no term is negligible.
func perturb[F Float](x []F, s float64, rng *rand.Rand) {
	for i := range x {
		x[i] += F(s * rng.NormFloat64())
	}
}

func TestModelGradients(t *testing.T) {
	// T ≠ 1 scales the logits by 1/T (SetTemperature); 0.4 makes the
	// tempered softmaxes sharper, so the loss's third derivatives grow by
	// up to 1/T³ ≈ 16: truncation h²·f⁽³⁾/6 stays ≲ 3e-8, inside gradTol.
	for _, tc := range []struct {
		slim bool
		temp float64
	}{{true, 1}, {false, 1}, {true, 0.4}, {false, 2.5}} {
		slim := tc.slim
		name := map[bool]string{true: "slim", false: "full"}[slim]
		if tc.temp != 1 {
			name += fmt.Sprintf("-T%g", tc.temp)
		}
		t.Run(name, func(t *testing.T) {
			rng, c, m, batch, tokens := tinyGradCase(slim, 9, 10)
			m.SetTemperature(tc.temp)
			const nb = gradCaseRows
			wlp := randVec[float64](rng, nb*c.ActionDims, 1)
			went := randVec[float64](rng, nb*c.ActionDims, 1)
			wv := randVec[float64](rng, nb, 1)
			loss := func() float64 {
				tp := m.Forward(batch, tokens)
				return dot(wlp, tp.Logp) + dot(went, tp.Entropy) + dot(wv, tp.Value)
			}
			m.ZeroGrads()
			m.Backward(m.Forward(batch, tokens), wlp, went, wv)
			grads := append([]float64(nil), m.Grads()...)
			if slim && len(grads) != c.ParamCount()-(c.VocabSize-c.Bins)*c.Dim {
				t.Fatalf("slim head: %d gradients for %d parameters, want the non-action LM-head rows left out", len(grads), c.ParamCount())
			}
			checkSpans(t, m, loss, grads) // the slim head's frozen rows are checked below
			// The pad token's embedding row is only ever read at masked
			// positions: its gradient is exactly 0.
			pad := m.w.tok.g[c.PadID()*c.Dim : (c.PadID()+1)*c.Dim]
			for j, g := range pad {
				if g != 0 {
					t.Errorf("pad embedding gradient [%d] = %v, want 0", j, g)
				}
			}
			if slim {
				// The slim head never reads the other LM-head rows.
				before := loss()
				perturb(m.w.headRest.w, 1, rng)
				if after := loss(); after != before {
					t.Errorf("slim head: loss moved from %v to %v when non-action LM-head rows changed", before, after)
				}
			}
		})
	}
}

// TestModelGradientsFloat32 finite-differences the float32 model itself on
// every fifth parameter. The loss is a float32 computation whose rounding
// error is about ε32·κ·|f| with ε32 = 6e-8, |f| ≲ 10 and an amplification
// κ ≲ 10 through two blocks (TestFloat32MatchesFloat64 measures ~1e-7
// absolute error on outputs of order 1-5): ≈ 6e-6, which the central
// difference divides by 2h; with h = 1e-2 that is 3e-4. The truncation term
// h²·f⁽³⁾/6 is ≲ 1e-4·|f⁽³⁾|/6 ≈ 2e-3 for |f⁽³⁾| ≲ 100. Hence the
// tolerance 5e-3·max(1, |analytic|) (measured worst: ~2e-4); a wrong term
// is off by ≥ 0.05 in these tests (see the float64 checks' failure
// messages).
func TestModelGradientsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	c := tinyConfig(false)
	m := NewNet[float32](c, rng)
	perturb(m.Params(), 0.3, rng)
	const nb = 2
	batch := randObs(rng, c, nb)
	tokens := randTokens(rng, c, nb)
	wlp := randVec[float32](rng, nb*c.ActionDims, 1)
	went := randVec[float32](rng, nb*c.ActionDims, 1)
	wv := randVec[float32](rng, nb, 1)
	loss := func() float64 {
		tp := m.Forward(batch, tokens)
		s := 0.0
		for i := range wlp {
			s += float64(wlp[i]*tp.Logp[i] + went[i]*tp.Entropy[i])
		}
		for i := range wv {
			s += float64(wv[i] * tp.Value[i])
		}
		return s
	}
	m.ZeroGrads()
	m.Backward(m.Forward(batch, tokens), wlp, went, wv)
	const h = 1e-2
	p := m.Params()
	worst := 0.0
	for i := 0; i < len(p); i += 5 {
		orig := p[i]
		hi, lo := orig+h, orig-h
		p[i] = hi
		fp := loss()
		p[i] = lo
		fm := loss()
		p[i] = orig
		num := (fp - fm) / float64(hi-lo) // the step float32 actually took
		g := float64(m.Grads()[i])
		d := math.Abs(num-g) / math.Max(1, math.Abs(g))
		worst = math.Max(worst, d)
		if d > 5e-3 {
			t.Errorf("float32 param %d: analytic %.6g, numeric %.6g", i, g, num)
		}
	}
	t.Logf("float32 finite differences: worst relative error %.3g", worst)
}

// gradCaseRows is the batch size of tinyGradCase.
const gradCaseRows = 3

// tinyGradCase is the setup of the model's gradient checks: a tiny float64 network (slim or
// full head) with perturbed weights, and gradCaseRows random observations and action tokens,
// all drawn from the returned generator seeded (s1, s2), which the caller goes on drawing from.
func tinyGradCase(slim bool, s1, s2 uint64) (*rand.Rand, Config, *Net[float64], []Obs, [][]int) {
	rng := rand.New(rand.NewPCG(s1, s2))
	c := tinyConfig(slim)
	m := NewNet[float64](c, rng)
	perturb(m.Params(), 0.3, rng)
	batch := randObs(rng, c, gradCaseRows)
	tokens := randTokens(rng, c, gradCaseRows)
	return rng, c, m, batch, tokens
}

// checkSpans finite-differences loss against grads over every parameter span of m that has
// gradients (a slim head has none for the LM-head rows it never reads).
func checkSpans(t *testing.T, m *Net[float64], loss func() float64, grads []float64) {
	t.Helper()
	for _, s := range m.Spans() {
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		if s.Offset+n > len(grads) {
			continue
		}
		checkGrad(t, s.Name, loss, m.Params()[s.Offset:s.Offset+n], grads[s.Offset:s.Offset+n])
	}
}

// TestDetachValue: with SetDetachValue a value-only loss trains the value
// head exactly as without it and sends nothing into the rest of the model,
// while a policy loss's gradients do not change.
func TestDetachValue(t *testing.T) {
	rng, c, m, batch, tokens := tinyGradCase(true, 21, 22)
	wlp := randVec[float64](rng, gradCaseRows*c.ActionDims, 1)
	wv := randVec[float64](rng, gradCaseRows, 1)
	grads := func(detach bool, dLogp, dValue []float64) []float64 {
		m.SetDetachValue(detach)
		m.ZeroGrads()
		m.Backward(m.Forward(batch, tokens), dLogp, nil, dValue)
		return append([]float64(nil), m.Grads()...)
	}
	full, detached := grads(false, nil, wv), grads(true, nil, wv)
	for _, s := range m.Spans() {
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		if s.Offset+n > len(full) {
			continue
		}
		head := strings.HasPrefix(s.Name, "value")
		for i := s.Offset; i < s.Offset+n; i++ {
			switch {
			case head && detached[i] != full[i]:
				t.Fatalf("%s[%d]: detached value gradient %v, attached %v: the head's own gradient must not change", s.Name, i-s.Offset, detached[i], full[i])
			case !head && detached[i] != 0:
				t.Fatalf("%s[%d]: gradient %v from a value-only loss with the value detached, want 0", s.Name, i-s.Offset, detached[i])
			}
		}
	}
	if p0, p1 := grads(false, wlp, nil), grads(true, wlp, nil); !slices.Equal(p0, p1) {
		t.Error("detaching the value changed a policy loss's gradients")
	}
}
