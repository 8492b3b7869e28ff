package vla

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/kernels"
)

// TestPolicyTemperatureRatios: with PolicyConfig.Temperature the log-probs
// the policy reports when it samples (ActActions, what the inference
// service stores) are the ones the learner recomputes (Evaluate), so PPO's
// first ratios are 1; a clone (the inference service's copy) samples at the
// same temperature; and the tempered log-probs differ from T = 1's.
func TestPolicyTemperatureRatios(t *testing.T) {
	c := tinyConfig(true)
	const n = 5
	rng := rand.New(rand.NewPCG(41, 42))
	base := PolicyConfig{Model: c, ObsDim: c.ProprioDim + 1, InstrTokens: c.MaxInstr, InstrPad: c.PadID(),
		Low: []float64{-1, -1, -1}, High: []float64{1, 1, 1}}
	frames := randFrames(rng, c, n)
	obs := randVec[float64](rng, n*base.ObsDim, 1)
	t1 := NewPolicy(base, rand.New(rand.NewPCG(1, 2)))
	perturb(t1.Params(), 0.3, rng)
	t1.SetParams(t1.Params())
	hot := base
	hot.Temperature = 0.5
	tp := NewPolicy(hot, rand.New(rand.NewPCG(1, 2)))
	tp.SetParams(t1.Params())
	tk := n * c.ActionDims
	for name, p := range map[string]*Policy{"policy": tp, "clone": tp.Clone()} {
		p.SetFrames(frames)
		a := kernels.Actions{Tokens: make([]int, tk)}
		lp, v := make([]float64, tk), make([]float64, n)
		p.ActActions(obs, n, rand.New(rand.NewPCG(7, 8)), a, lp, v)
		elp, ent, ev := make([]float64, tk), make([]float64, tk), make([]float64, n)
		p.Evaluate(obs, n, a, elp, ent, ev)
		t1.SetFrames(frames)
		lp1, ent1, ev1 := make([]float64, tk), make([]float64, tk), make([]float64, n)
		t1.Evaluate(obs, n, a, lp1, ent1, ev1)
		moved := 0.0
		for i := range lp {
			// float32 decode vs teacher forcing: TestKVCacheMatchesTeacherForcing
			// measures ≤ 2e-6 on log-probs of order 1; 1e-5 leaves a margin.
			if d := math.Abs(lp[i] - elp[i]); d > 1e-5 {
				t.Errorf("%s: token %d: sampled log-prob %.6f, learner's %.6f at T = 0.5", name, i, lp[i], elp[i])
			}
			moved = math.Max(moved, math.Abs(lp[i]-lp1[i]))
		}
		// perturbed logits of order 1 over 6 bins: halving T moves log-probs by O(1).
		if moved < 0.1 {
			t.Errorf("%s: log-probs at T = 0.5 are within %.3g of T = 1's: the temperature is not applied", name, moved)
		}
	}
	bad := base
	bad.Temperature = -1
	if err := bad.Validate(); err == nil {
		t.Error("Validate accepted a negative temperature")
	}
}

// randFrames is n policy frames of c: random camera bytes, then MaxInstr word ids
// (little-endian uint16) that differ between the frames.
func randFrames(rng *rand.Rand, c Config, n int) [][]byte {
	frames := make([][]byte, n)
	for i := range frames {
		for range c.Cameras * c.ImageSize * c.ImageSize * 3 {
			frames[i] = append(frames[i], byte(rng.IntN(256)))
		}
		for j := range c.MaxInstr {
			frames[i] = binary.LittleEndian.AppendUint16(frames[i], uint16((i+j)%c.WordVocab))
		}
	}
	return frames
}
