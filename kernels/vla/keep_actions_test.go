package vla

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
)

// TestKeepActions: the model cut to its first n action tokens scores those n tokens, and
// values the observation, as the whole model does; the cut model's parameter count is its
// config's; n outside 1 … ActionDims and a parameter slice of another model are refused.
//
// Tolerance: the reference (float64, pure-Go) path; the cut model computes the same sums
// over fewer rows, so they agree to float64 rounding, ≲ 1e-12 relative to outputs of order
// 1–5. A seq_pos row dropped from the wrong end would move the outputs by ≥ 1e-2.
func TestKeepActions(t *testing.T) {
	c := parityConfig(true)
	c.ActionDims = 6
	rng := rand.New(rand.NewPCG(7, 8))
	full := NewNet[float64](c, rng)
	perturb(full.Params(), 0.2, rng)
	const n, nb = 2, 5
	params, kc, err := KeepActions(c, full.Params(), n)
	if err != nil {
		t.Fatal(err)
	}
	if kc.ActionDims != n || len(params) != kc.ParamCount() {
		t.Fatalf("cut config has %d action tokens and %d parameters, want %d and %d", kc.ActionDims, len(params), n, kc.ParamCount())
	}
	cut := NewNet[float64](kc, rng)
	copy(cut.Params(), params)
	batch := randObs(rng, c, nb)
	tokens := randTokens(rng, c, nb)
	short := make([][]int, nb)
	for i := range tokens {
		short[i] = tokens[i][:n]
	}
	a, b := full.Forward(batch, tokens), cut.Forward(batch, short)
	for i := range nb {
		for k := range n {
			x, y := a.Logp[i*c.ActionDims+k], b.Logp[i*n+k]
			if math.Abs(x-y) > 1e-12*math.Max(1, math.Abs(x)) {
				t.Errorf("sample %d token %d: log π %v whole, %v cut", i, k, x, y)
			}
			if g, h := a.Greedy[i*c.ActionDims+k], b.Greedy[i*n+k]; g != h {
				t.Errorf("sample %d token %d: greedy bin %d whole, %d cut", i, k, g, h)
			}
		}
		if x, y := a.Value[i], b.Value[i]; math.Abs(x-y) > 1e-12*math.Max(1, math.Abs(x)) {
			t.Errorf("sample %d: value %v whole, %v cut", i, x, y)
		}
	}
	for _, bad := range []int{0, c.ActionDims + 1} {
		if _, _, err := KeepActions(c, full.Params(), bad); err == nil || !strings.Contains(err.Error(), "want 1 ≤ n") {
			t.Errorf("n = %d: error %v, want the allowed range", bad, err)
		}
	}
	if _, _, err := KeepActions(c, params, n); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Errorf("the cut model's parameters as the whole model's: error %v, want a parameter-count error", err)
	}
}

// TestKeepActionsPolicy: a policy built on the cut parameters (the engine's VLA acting with
// a chunk's executed actions alone) takes the whole policy's greedy actions for them, through
// the float32 KV-cache decode and the bins' decoding to action values, and values the
// observations alike. Tolerance: float32 values of order 1 from products over fewer rows,
// ≲ 1e-5 (TestKVCacheMatchesTeacherForcing's bound on the decode).
func TestKeepActionsPolicy(t *testing.T) {
	c := tinyConfig(true)
	c.ActionDims = 6
	const n, keep = 4, 3
	rng := rand.New(rand.NewPCG(43, 44))
	bounds := func(k int) ([]float64, []float64) {
		lo, hi := make([]float64, k), make([]float64, k)
		for i := range k {
			lo[i], hi[i] = -1, float64(i+1)
		}
		return lo, hi
	}
	lo, hi := bounds(c.ActionDims)
	base := PolicyConfig{Model: c, ObsDim: c.ProprioDim + 1, InstrTokens: c.MaxInstr, InstrPad: c.PadID(), Low: lo, High: hi}
	frames := randFrames(rng, c, n)
	obs := randVec[float64](rng, n*base.ObsDim, 1)
	whole := NewPolicy(base, rand.New(rand.NewPCG(1, 2)))
	perturb(whole.Params(), 0.3, rng)
	whole.SetParams(whole.Params())
	params, kc, err := KeepActions(c, whole.Params(), keep)
	if err != nil {
		t.Fatal(err)
	}
	cc := base
	cc.Model = kc
	cc.Low, cc.High = lo[:keep], hi[:keep]
	cut := NewPolicy(cc, rand.New(rand.NewPCG(3, 4)))
	cut.SetParams(params)
	act := func(p *Policy, k int) ([]float64, []float64) {
		p.SetFrames(frames)
		a := kernels.Actions{Tokens: make([]int, n*k)}
		p.Greedy(obs, n, a)
		out, v := make([]float64, n*k), make([]float64, n)
		p.EnvActions(a, n, out)
		p.Values(obs, n, v)
		return out, v
	}
	wa, wv := act(whole, c.ActionDims)
	ca, cv := act(cut, keep)
	for i := range n {
		for k := range keep {
			if x, y := wa[i*c.ActionDims+k], ca[i*keep+k]; x != y {
				t.Errorf("observation %d action value %d: %v whole, %v cut", i, k, x, y)
			}
		}
		if math.Abs(wv[i]-cv[i]) > 1e-5 {
			t.Errorf("observation %d: value %v whole, %v cut", i, wv[i], cv[i])
		}
	}
}

// TestPolicyGreedyMean: with PolicyConfig.GreedyMean the policy's greedy decoding takes the
// mean bin of each position's tempered distribution (the net's DecodeMean at the policy's
// temperature), and it differs from the argmax somewhere on a perturbed model.
func TestPolicyGreedyMean(t *testing.T) {
	c := tinyConfig(true)
	const n = 6
	rng := rand.New(rand.NewPCG(45, 46))
	lo, hi := make([]float64, c.ActionDims), make([]float64, c.ActionDims)
	for i := range lo {
		lo[i], hi[i] = -1, 1
	}
	base := PolicyConfig{Model: c, ObsDim: c.ProprioDim + 1, InstrTokens: c.MaxInstr, InstrPad: c.PadID(), Low: lo, High: hi,
		Temperature: 3, GreedyMean: true} // hot, so that means and argmaxes part
	frames := randFrames(rng, c, n)
	obs := randVec[float64](rng, n*base.ObsDim, 1)
	p := NewPolicy(base, rand.New(rand.NewPCG(1, 2)))
	perturb(p.Params(), 0.3, rng)
	p.SetParams(p.Params())
	p.SetFrames(frames)
	a := kernels.Actions{Tokens: make([]int, n*c.ActionDims)}
	p.Greedy(obs, n, a)
	batch := p.observations("test", obs, n)
	mean, _, _ := p.net.ActRowsDecode(batch, nil, DecodeMean)
	arg, _, _ := p.net.ActRowsDecode(batch, nil, DecodeArgmax)
	differs := false
	for i := range n {
		for k := range c.ActionDims {
			if got := a.Tokens[i*c.ActionDims+k]; got != mean[i][k] {
				t.Errorf("row %d token %d: greedy %d, the mean rule %d", i, k, got, mean[i][k])
			}
			differs = differs || mean[i][k] != arg[i][k]
		}
	}
	if !differs {
		t.Error("the mean and argmax decodings agree everywhere: the test does not tell them apart")
	}
}
