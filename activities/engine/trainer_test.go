package engine

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
)

// constCriticTrainer returns a trainer whose model has all parameters zero
// except the critic's output bias, so V(o) = v for every observation and
// the policy is uniform.
func constCriticTrainer(t *testing.T, cfg Config, v float64) *trainer {
	t.Helper()
	model := kernels.NewActorCritic(kernels.ActorCriticConfig{ObsDim: 1, NumActions: 2, Hidden: []int{3}, Activation: "tanh"},
		rand.New(rand.NewPCG(1, 1)))
	p := make([]float64, model.NumParams())
	found := false
	for _, s := range model.Layout() {
		if strings.HasPrefix(s.Name, "critic.") && strings.HasSuffix(s.Name, ".bias") && s.Size() == 1 {
			p[s.Offset] = v
			found = true
		}
	}
	if !found {
		t.Fatal("no critic output bias in the model layout")
	}
	model.SetParams(p)
	src := rand.NewPCG(2, 2)
	return &trainer{cfg: cfg, ppo: kernels.NewPPO(model, cfg.PPO), src: src, rng: rand.New(src)}
}

// twoStepChunk has rewards [1, 1], behaviour values [0, 0] and observations
// [seq, seq] (so the batch order is visible in Obs).
func twoStepChunk(env int, seq int64, terminated bool) *Chunk {
	c := chunkOf(env, seq, 2, 0)
	c.Obs = []float64{float64(seq), float64(seq)}
	c.Terminated = terminated
	if !terminated {
		c.NextObs = []float64{9}
	}
	c.Staleness = []int64{0, 1}
	return c
}

func TestTrainerAdvantagesAndBootstrap(t *testing.T) {
	cfg := smallConfig(ModeSync)
	cfg.Gamma, cfg.GAELambda = 0.5, 1
	cfg.PPO.Minibatches = 1
	cfg.PPO.NormAdv = false
	for _, tc := range []struct {
		name      string
		recompute bool
		// Advantages of the batch ordered as env 0 seq 3 (cut), env 1 seq 4
		// (terminated), with V ≡ 2 from the critic.
		adv, ret []float64
	}{
		// Behaviour values 0. Cut: bootstrap V(next) = 2, δ1 = 1+0.5·2 = 2,
		// A1 = 2, δ0 = 1, A0 = 1+0.5·2 = 2. Terminated: bootstrap 0, A1 = 1,
		// A0 = 1+0.5·1 = 1.5. Returns = A + V = A.
		{"behaviour values", false, []float64{2, 2, 1.5, 1}, []float64{2, 2, 1.5, 1}},
		// Recomputed values 2. Cut: δ1 = 1+0.5·2−2 = 0, δ0 = 0, A = 0.
		// Terminated: δ1 = 1−2 = −1, A1 = −1, δ0 = 1+0.5·2−2 = 0,
		// A0 = 0+0.5·(−1) = −0.5. Returns = A + 2.
		{"recomputed values", true, []float64{0, 0, -0.5, -1}, []float64{2, 2, 1.5, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.RecomputeValues = tc.recompute
			tr := constCriticTrainer(t, c, 2)
			// Handed over out of order: the trainer sorts by (Env, Seq).
			chunks := []*Chunk{twoStepChunk(1, 4, true), twoStepChunk(0, 3, false)}
			_, info, err := tr.update(chunks)
			if err != nil {
				t.Fatal(err)
			}
			b := &tr.batch
			if b.N != 4 || b.Obs[0] != 3 || b.Obs[2] != 4 {
				t.Fatalf("batch N=%d obs %v, want 4 steps ordered env 0 (obs 3) then env 1 (obs 4)", b.N, b.Obs)
			}
			for i := range tc.adv {
				// Every number here is a short sum of exact binary
				// fractions, so float64 results are exact.
				if b.Advantages[i] != tc.adv[i] || b.Returns[i] != tc.ret[i] {
					t.Fatalf("advantages %v returns %v, want %v and %v", b.Advantages, b.Returns, tc.adv, tc.ret)
				}
			}
			if info.steps != 4 || info.meanStale != 0.5 || len(info.staleness) != 2 || info.staleness[0] != 2 || info.staleness[1] != 2 {
				t.Fatalf("batch info %+v, want 4 steps, staleness hist [2 2], mean 0.5", info)
			}
			if tr.version != 1 || tr.updates != 1 {
				t.Fatalf("after one update: version %d, updates %d", tr.version, tr.updates)
			}
		})
	}
}

func TestGlobalAdvantageNormalization(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	normalize(a)
	// mean 2.5, population variance 1.25: (x−2.5)/sqrt(1.25+1e-8).
	s := math.Sqrt(1.25 + 1e-8)
	for i, x := range []float64{1, 2, 3, 4} {
		if want := (x - 2.5) / s; math.Abs(a[i]-want) > 1e-15 { // one rounding per operation
			t.Fatalf("normalize = %v, want (x-2.5)/%v", a, s)
		}
	}
}

func TestLearningRateAnneal(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PPO.LR = 1
	cfg.AnnealLR, cfg.TotalUpdates = true, 4
	// CleanRL: update u (from 0) uses LR·(1−u/T); past the plan LR/T.
	for u, want := range []float64{1, 0.75, 0.5, 0.25, 0.25, 0.25} {
		if got := cfg.learningRate(int64(u)); got != want {
			t.Errorf("learning rate after %d updates = %v, want %v", u, got, want)
		}
	}
	cfg.AnnealLR = false
	if got := cfg.learningRate(3); got != 1 {
		t.Errorf("without annealing: %v, want 1", got)
	}
}
