package engine

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
)

// constCriticTrainer returns a trainer whose model (one observation value,
// two actions, one hidden layer of 3) has all parameters zero except the
// critic's output bias, so V(o) = v for every observation and the policy is
// uniform.
func constCriticTrainer(t *testing.T, cfg Config, v float64) *trainer {
	t.Helper()
	model := kernels.NewPolicy(kernels.PolicyConfig{ObsDim: 1, Head: kernels.HeadCategorical, NumActions: 2,
		Hidden: []int{3}, Activation: kernels.ActTanh}, rand.New(rand.NewPCG(1, 1)))
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
	return newTrainer(cfg, model, rand.NewPCG(2, 2))
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

// exactConfig has γ = 0.5, λ = 1, one minibatch and no advantage
// normalisation, so that advantages are short sums of binary fractions.
func exactConfig() Config {
	cfg := smallConfig(ModeSync)
	cfg.Learner.Gamma, cfg.GAELambda = 0.5, 1
	cfg.Learner.Minibatches = 1
	cfg.Learner.AdvNorm = kernels.AdvNormNone
	return cfg
}

func TestTrainerAdvantagesAndBootstrap(t *testing.T) {
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
			c := exactConfig()
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
			// One piece per chunk, in batch order, with its bootstrap.
			p := b.Pieces
			if len(p) != 2 || p[0].Start != 0 || p[0].Len != 2 || p[0].Terminal || len(p[0].NextObs) != 1 || p[0].NextObs[0] != 9 ||
				p[1].Start != 2 || p[1].Len != 2 || !p[1].Terminal || len(b.Rewards) != 4 {
				t.Fatalf("pieces %+v rewards %v, want [0,2) cut with next obs 9 and [2,4) terminal", p, b.Rewards)
			}
			if info.steps != 4 || info.meanStale != 0.5 || len(info.staleness) != 2 || info.staleness[0] != 2 || info.staleness[1] != 2 {
				t.Fatalf("batch info %+v, want 4 steps, staleness hist [2 2], mean 0.5", info)
			}
			if tr.version != 1 || tr.updates != 1 || tr.learner.Updates != 1 {
				t.Fatalf("after one update: version %d, updates %d, learner updates %d", tr.version, tr.updates, tr.learner.Updates)
			}
		})
	}
}

func TestTrainerGlobalAdvNormUsesBatchStats(t *testing.T) {
	// With a single trainer, global normalisation hands the learner this
	// batch's own statistics: it must train exactly like batch
	// normalisation.
	run := func(mode string) (*trainer, kernels.UpdateStats) {
		c := exactConfig()
		c.Learner.AdvNorm = mode
		tr := constCriticTrainer(t, c, 2)
		st, _, err := tr.update([]*Chunk{twoStepChunk(1, 4, true), twoStepChunk(0, 3, false)})
		if err != nil {
			t.Fatal(err)
		}
		return tr, st
	}
	g, gs := run(kernels.AdvNormGlobal)
	b, bs := run(kernels.AdvNormBatch)
	// Advantages [2, 2, 1.5, 1] (see TestTrainerAdvantagesAndBootstrap):
	// sum 6.5, sum of squares 4+4+2.25+1 = 11.25, all exact.
	st := g.batch.AdvStats
	if st == nil || st.Sum != 6.5 || st.SumSq != 11.25 || st.N != 4 {
		t.Fatalf("global adv stats %+v, want sum 6.5, sum sq 11.25, n 4", st)
	}
	if b.batch.AdvStats != nil {
		t.Fatal("batch normalisation passed shard statistics")
	}
	for i, p := range g.model().Params() {
		if p != b.model().Params()[i] {
			t.Fatalf("parameter %d: global %v, batch %v; want identical", i, p, b.model().Params()[i])
		}
	}
	if gs.PolicyLoss != bs.PolicyLoss || gs.ValueLoss != bs.ValueLoss {
		t.Fatalf("global stats %+v, batch stats %+v", gs, bs)
	}
}

func TestTrainerVTraceUsesRewardsNotGAE(t *testing.T) {
	c := exactConfig()
	c.Learner = kernels.DefaultLearnerConfig(kernels.AlgoVTrace)
	tr := constCriticTrainer(t, c, 2)
	st, _, err := tr.update([]*Chunk{twoStepChunk(1, 4, true), twoStepChunk(0, 3, false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.batch.Advantages) != 0 {
		t.Fatalf("v-trace batch got GAE advantages %v; the learner computes its own", tr.batch.Advantages)
	}
	// chunkOf records behaviour log-probabilities 0, while the model's
	// zero logits give log ½ to both actions: every one of the 4 ratios
	// is ½, so |log ratio| = ln 2 (up to the last bit of the log-softmax).
	if st.Lag.Tokens != 4 || math.Abs(st.Lag.MaxAbsLogRatio-math.Ln2) > 1e-15 || st.LR != c.Learner.Schedule.Base || math.IsNaN(st.ValueLoss) {
		t.Fatalf("stats %+v, want lag over 4 tokens with |log ratio| ln 2 and the base learning rate", st)
	}
}

func TestTrainerRejectsNonFiniteRewardWithoutChanges(t *testing.T) {
	for _, algo := range []string{kernels.AlgoPPO, kernels.AlgoVTrace} {
		cfg := exactConfig()
		cfg.Learner.Algo = algo
		tr := constCriticTrainer(t, cfg, 0)
		before := append([]float64(nil), tr.model().Params()...)
		c := twoStepChunk(0, 0, true)
		c.Rewards[1] = math.Inf(1)
		_, _, err := tr.update([]*Chunk{c})
		if err == nil || !strings.Contains(err.Error(), "update 1: reward of sample 1 is +Inf") || tr.version != 0 || tr.updates != 0 {
			t.Fatalf("%s: update on an infinite reward: err %v, version %d; want the reward error and version 0", algo, err, tr.version)
		}
		for i, p := range tr.model().Params() {
			if p != before[i] {
				t.Fatalf("%s: parameter %d changed from %v to %v", algo, i, before[i], p)
			}
		}
	}
}

func TestScheduleFollowsUpdatesAcrossResume(t *testing.T) {
	// Warmup 2, then linear decay to 0 at update 6: update u (from 0) uses
	// 1e-3·(u+1)/2 for u < 2, then 1e-3·(1 − (u−2)/4).
	want := []float64{0.5e-3, 1e-3, 1e-3, 0.75e-3}
	cfg := smallConfig(ModeSync)
	cfg.Learner.Schedule = kernels.LRSchedule{Base: 1e-3, Warmup: 2, Total: 6, Kind: kernels.LRLinear}
	var got []float64
	rec := func(u UpdateReport) { got = append(got, u.LR) }
	e := mustNew(t, cfg, nil)
	mustRun(t, e, 2, rec)
	// The resumed engine must continue the schedule at update 2, not
	// restart it.
	f := mustNew(t, cfg, snapshot(t, e))
	mustRun(t, f, 2, rec)
	for i := range want {
		// At most one rounding in Base·fraction.
		if i >= len(got) || math.Abs(got[i]-want[i]) > 1e-18 {
			t.Fatalf("learning rates %v, want %v", got, want)
		}
	}
	if f.tr.learner.Opt.LR != got[3] {
		t.Fatalf("optimiser LR %v after the last update, want %v", f.tr.learner.Opt.LR, got[3])
	}
}

func TestTrainerValueOnlyUpdates(t *testing.T) {
	// A critic-only update (critic warm-up, or a batch without reward under
	// SkipRewardless) moves the critic and leaves every actor parameter
	// exactly as it was; the next update with a policy step moves the actor.
	var model *kernels.Policy
	newT := func(cfg Config) *trainer {
		model = kernels.NewPolicy(kernels.PolicyConfig{ObsDim: 1, Head: kernels.HeadCategorical, NumActions: 2,
			Hidden: []int{3}, Activation: kernels.ActTanh}, rand.New(rand.NewPCG(3, 3)))
		return newTrainer(cfg, model, rand.NewPCG(2, 2))
	}
	// moved reports whether any parameter whose name starts with prefix changed.
	moved := func(tr *trainer, before []float64, prefix string) bool {
		for _, s := range model.Layout() {
			if !strings.HasPrefix(s.Name, prefix) {
				continue
			}
			for i := s.Offset; i < s.Offset+s.Size(); i++ {
				if tr.model().Params()[i] != before[i] {
					return true
				}
			}
		}
		return false
	}
	chunk := func(seq int64, reward float64) *Chunk {
		c := twoStepChunk(0, seq, true)
		c.Rewards = []float64{0, reward}
		c.Obs = []float64{0.3, -0.7}
		return c
	}
	for _, tc := range []struct {
		name    string
		cfg     func(*Config)
		rewards []float64 // reward in each successive update's batch
		want    []bool    // each update value-only?
	}{
		{"critic warmup", func(c *Config) { c.CriticWarmup = 2 }, []float64{1, 1, 1}, []bool{true, true, false}},
		{"skip rewardless", func(c *Config) { c.SkipRewardless = true }, []float64{0, 1, 0}, []bool{true, false, true}},
		{"off", func(c *Config) {}, []float64{0, 1}, []bool{false, false}},
	} {
		cfg := exactConfig()
		tc.cfg(&cfg)
		tr := newT(cfg)
		for i, r := range tc.rewards {
			before := append([]float64(nil), tr.model().Params()...)
			st, _, err := tr.update([]*Chunk{chunk(int64(i), r)})
			if err != nil {
				t.Fatalf("%s: update %d: %v", tc.name, i+1, err)
			}
			actor, critic := moved(tr, before, "actor."), moved(tr, before, "critic.")
			if st.ValueOnly != tc.want[i] || !critic || actor == tc.want[i] {
				t.Errorf("%s: update %d (reward %v): ValueOnly %v, actor moved %v, critic moved %v; want value-only %v",
					tc.name, i+1, r, st.ValueOnly, actor, critic, tc.want[i])
			}
		}
	}
}

// TestTrainerGRPO: with AdvGRPO the trainer groups the batch's ended episodes by the task
// values of their first observation (TaskObs), across the pieces of one environment's
// episode, and hands the learner GroupAdvantages' outcomes un-normalised, while the
// critic's targets stay GAE's returns. Batch (sorted by env, seq; obs = task id):
//
//	env 0 seq 0–1: task 0, cut then ended, rewards 0 0 | 0 1 → R 1
//	env 1 seq 5:   task 0, ended, rewards 0 0          → R 0
//	env 2 seq 2:   task 1, ended, R 1; seq 3 cut        → task 1 has one ended episode
//
// Task 0: mean ½, std (G−1) √½, A = ±½/√½ = ±0.70711 (+1e-6 in the divisor); task 1: 0.
func TestTrainerGRPO(t *testing.T) {
	c := exactConfig()
	c.AdvEstimator, c.TaskObs = AdvGRPO, [2]int{0, 1}
	c.Learner.AdvNorm = kernels.AdvNormGlobal // not applied on top of the groups'
	tr := constCriticTrainer(t, c, 2)
	ch := func(env int, seq int64, task float64, ended bool, r1 float64) *Chunk {
		x := twoStepChunk(env, seq, ended)
		x.Obs = []float64{task, task}
		x.Rewards = []float64{0, r1}
		return x
	}
	chunks := []*Chunk{ch(2, 3, 1, false, 0), ch(1, 5, 0, true, 0), ch(0, 1, 0, true, 1), ch(2, 2, 1, true, 1), ch(0, 0, 0, false, 0)}
	if _, _, err := tr.update(chunks); err != nil {
		t.Fatal(err)
	}
	b := &tr.batch
	a := 0.5 / (math.Sqrt(0.5) + 1e-6)
	want := []float64{a, a, a, a, -a, -a, 0, 0, 0, 0}
	for i := range want {
		// One mean and one square root of exact binary fractions: 1e-12.
		if math.Abs(b.Advantages[i]-want[i]) > 1e-12 {
			t.Fatalf("advantages %v, want %v", b.Advantages, want)
		}
	}
	if b.AdvStats != nil {
		t.Error("global advantage statistics were handed to the learner on top of GRPO's groups")
	}
	// Returns: GAE with V ≡ 2, γ ½, λ 1. Env 0 seq 0 (cut, bootstrap 2): 0+½·(0+½·2) = ½;
	// the step after: 0+½·2 = 1. Its seq 1 (terminated, reward 1 at the end): ½, 1.
	if b.Returns[0] != 0.5 || b.Returns[1] != 1 || b.Returns[2] != 0.5 || b.Returns[3] != 1 {
		t.Errorf("returns %v, want GAE's ½ 1 ½ 1 for env 0's two pieces", b.Returns[:4])
	}
}
