package vla

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/accerl/accerl/kernels"
)

// parityConfig is mid-sized so that the fast path's products take the
// backend's blocked, packed and parallel routes (k beyond one 256-deep
// slice in fc2, row counts that are not multiples of the 6-row tile).
func parityConfig(slim bool) Config {
	return Config{ImageSize: 16, Patch: 4, Cameras: 2, Dim: 72, Layers: 2, Heads: 3, MLPRatio: 4,
		MaxInstr: 5, WordVocab: 50, VocabSize: 400, ActionDims: 4, Bins: 40, ProprioDim: 3, SlimHead: slim}
}

// TestFastPathMatchesReference runs the float32 model on its fast path
// (AVX2 backend, float32 exp/erf fits) and the float64 model on the
// reference path (pure-Go gemm, math.Exp, math.Erf) with the same
// parameters, and compares Act's log-probabilities and values, Forward's
// outputs and Backward's gradients.
//
// Tolerance: every float32 operation rounds with relative error ε32 =
// 6e-8; a dot product of length k ≤ 288 accumulates ≲ √k·ε32 ≈ 1e-6
// relative (random-walk rounding; the backend's FMAs only reduce it), the
// fits add ≤ 1.6e-7 absolute per activation (TestFastMath), and two blocks
// with their layer norms (which rescale by up to 1/σ) and softmaxes
// amplify by ≲ 10-30. Outputs of order 1-5 and gradients of order 1-10
// therefore carry ≲ 3e-5 relative error: the tolerance is 3e-5 relative to
// max(1, the largest magnitude) (measured worst: ~1e-6). A wrong kernel
// (a missed term, a transposed operand) would be off by ≥ 1e-2.
func TestFastPathMatchesReference(t *testing.T) {
	for _, slim := range []bool{true, false} {
		c := parityConfig(slim)
		rng := rand.New(rand.NewPCG(31, 32))
		m64 := NewNet[float64](c, rng)
		perturb(m64.Params(), 0.2, rng)
		m32 := NewNet[float32](c, rng)
		for i, v := range m64.Params() {
			m32.Params()[i] = float32(v)
		}
		if name := m32.Backend().Name(); name != "cpu-avx2" && name != "cpu-go" {
			t.Fatalf("float32 model runs on %q, want the CPU backend", name)
		}
		const nb = 7
		batch := randObs(rng, c, nb)
		tokens := randTokens(rng, c, nb)
		cmp := func(name string, a []float64, b []float32) {
			t.Helper()
			scale, worst := 1.0, 0.0
			for i := range a {
				scale = math.Max(scale, math.Abs(a[i]))
				worst = math.Max(worst, math.Abs(a[i]-float64(b[i])))
			}
			t.Logf("slim=%v %s: max |fast − reference| %.3g (scale %.3g)", slim, name, worst, scale)
			if worst > 3e-5*scale {
				t.Errorf("slim=%v %s: fast path and reference differ by %.3g (scale %.3g)", slim, name, worst, scale)
			}
		}
		// Act (prefix pass and KV-cached decode): greedy decoding, compared
		// wherever both models picked the same tokens so far.
		tk32, lp32, v32 := m32.Act(batch, nil, true)
		tk64, lp64, v64 := m64.Act(batch, nil, true)
		var a64 []float64
		var a32 []float32
		for i := range tk32 {
			for j := range tk32[i] {
				if tk32[i][j] != tk64[i][j] {
					// A near-tie between two bins; the log-probs of different
					// tokens are not comparable from here on.
					t.Logf("slim=%v: greedy token %d of sample %d differs (%d vs %d), a near tie", slim, j, i, tk32[i][j], tk64[i][j])
					break
				}
				a64, a32 = append(a64, lp64[i][j]), append(a32, lp32[i][j])
			}
		}
		cmp("Act log-probs", a64, a32)
		cmp("Act values", v64, v32)

		t64, t32 := m64.Forward(batch, tokens), m32.Forward(batch, tokens)
		cmp("log-probs", t64.Logp, t32.Logp)
		cmp("entropies", t64.Entropy, t32.Entropy)
		cmp("values", t64.Value, t32.Value)
		w := randVec[float64](rng, nb*c.ActionDims, 1)
		wv := randVec[float64](rng, nb, 1)
		m64.Backward(t64, w, w, wv)
		m32.Backward(t32, toF32(w), toF32(w), toF32(wv))
		cmp("gradients", m64.Grads(), m32.Grads())

		// The float32 model on the reference backend (float64 accumulation)
		// and on the pure-Go path agree with the fast path to the same
		// tolerance.
		for _, be := range []kernels.Backend{kernels.NewReference(), nil} {
			m32.SetBackend(be)
			name := "pure Go"
			if be != nil {
				name = be.Name()
			}
			cmp("log-probs, float32 on "+name, t64.Logp, m32.Forward(batch, tokens).Logp)
		}
	}
}

func toF32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// TestHotPathAllocations: once warmed up, Act, ForwardInto and Backward
// allocate only their small results (tokens, log-probs, values, the
// batch-sized loss gradient), not the activations.
func TestHotPathAllocations(t *testing.T) {
	c := SmallConfig()
	rng := rand.New(rand.NewPCG(33, 34))
	m := New(c, rng)
	const nb = 8
	batch := randObs(rng, c, nb)
	tokens := randTokens(rng, c, nb)
	var tape *Tape[float32]
	step := func() {
		m.Act(batch, rng, false)
		tape = m.ForwardInto(tape, batch, tokens)
		m.Backward(tape, tape.Logp, nil, nil)
	}
	step()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	step()
	runtime.ReadMemStats(&after)
	// The activations of one Forward at this size are ≈ 3 MB; the results
	// are a few KB, plus goroutine and closure overhead of the parallel
	// loops: 64 KiB is far below the one and far above the other.
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes in a warm Act + ForwardInto + Backward at batch %d", got, nb)
	if got > 64<<10 {
		t.Errorf("Act + ForwardInto + Backward allocated %d bytes after warm-up, want ≤ 64 KiB", got)
	}
}
