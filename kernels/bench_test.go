package kernels

import (
	"math/rand/v2"
	"testing"
)

// Sinks keep the compiler from discarding benchmarked work.
var (
	sinkActions []int
	sinkStats   UpdateStats
)

func BenchmarkActBatch(b *testing.B) {
	b.Run("64", func(b *testing.B) { benchmarkAct(b, 64) })
	b.Run("256", func(b *testing.B) { benchmarkAct(b, 256) })
}

// benchmarkAct times one policy call on n CartPole-sized observations with
// CleanRL's 4 → 64 → 64 → 2 actor and critic.
func benchmarkAct(b *testing.B, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewPolicy(cartpoleConfig(), rng)
	obs := randSlice(rng, n*4, 0.05)
	actions, logp, values := make([]int, n), make([]float64, n), make([]float64, n)
	m.Act(obs, n, rng, actions, logp, values) // size the scratch buffers
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Act(obs, n, rng, actions, logp, values)
	}
	sinkActions = actions
}

// BenchmarkCartPoleUpdate times one PolicyLearner.Update with CleanRL's
// CartPole settings ("ppo"): a batch of 4 envs × 128 steps = 512 samples,
// 4 epochs × 4 minibatches.
func BenchmarkCartPoleUpdate(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := NewPolicy(cartpoleConfig(), rng)
	const n = 512
	batch := &Batch{N: n, Obs: randSlice(rng, n*4, 0.05), Actions: make([]int, n), LogProbs: make([]float64, n),
		Advantages: randSlice(rng, n, 1), Returns: randSlice(rng, n, 1), Values: make([]float64, n)}
	m.Act(batch.Obs, n, rng, batch.Actions, batch.LogProbs, batch.Values)
	l := NewPolicyLearner(m, DefaultLearnerConfig(AlgoPPO))
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
