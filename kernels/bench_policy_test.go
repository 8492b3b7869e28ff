package kernels

import (
	"math/rand/v2"
	"testing"
)

// vlaConfig is a VLA-sized tokens head on a small trunk: 7 action
// dimensions (a 6-DoF arm and a gripper) of 256 bins each.
func vlaConfig() PolicyConfig {
	lo, hi := make([]float64, 7), make([]float64, 7)
	for i := range lo {
		lo[i], hi[i] = -1, 1
	}
	return PolicyConfig{ObsDim: 32, Head: HeadTokens, ActionDims: 7, Low: lo, High: hi, Hidden: []int{64, 64}, Activation: ActTanh}
}

func BenchmarkPolicyActTokens(b *testing.B) {
	b.Run("64", func(b *testing.B) { benchmarkActTokens(b, 64) })
	b.Run("256", func(b *testing.B) { benchmarkActTokens(b, 256) })
}

// benchmarkActTokens times one autoregressive decode of n observations.
func benchmarkActTokens(b *testing.B, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := NewPolicy(vlaConfig(), rng)
	obs := randSlice(rng, n*32, 1)
	tokens, logp, values := make([]int, n*7), make([]float64, n*7), make([]float64, n)
	p.Act(obs, n, rng, tokens, logp, values) // size the scratch buffers
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p.Act(obs, n, rng, tokens, logp, values)
	}
	sinkActions = tokens
}

func BenchmarkPolicyLearnerUpdate(b *testing.B) {
	b.Run("tokens/gipo", func(b *testing.B) { benchmarkLearnerUpdate(b, vlaConfig(), AlgoGIPO) })
	b.Run("gaussian/ppo", func(b *testing.B) {
		cfg := vlaConfig()
		cfg.Head, cfg.Low, cfg.High = HeadGaussian, nil, nil
		benchmarkLearnerUpdate(b, cfg, AlgoPPO)
	})
}

// benchmarkLearnerUpdate times one Update (4 epochs × 4 minibatches) on a
// batch of 512 one-step samples.
func benchmarkLearnerUpdate(b *testing.B, cfg PolicyConfig, algo string) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := NewPolicy(cfg, rng)
	const n = 512
	batch := continuousBanditBatch(p, n, rng, func(x []float64) float64 { return -x[0] * x[0] })
	for i := range batch.Obs {
		batch.Obs[i] = rng.NormFloat64()
	}
	l := NewPolicyLearner(p, DefaultLearnerConfig(algo))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := l.Update(batch, rng)
		if err != nil {
			b.Fatal(err)
		}
		sinkStats = s
	}
}
