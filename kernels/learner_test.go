package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// oneStepBatch turns n one-step episodes (observations, actions as
// sampled, their log-probs and values, rewards) into a Batch with pieces,
// advantages r − V and returns r, usable by every algorithm.
func oneStepBatch(n int, obs []float64, a Actions, logp, values, rewards []float64) *Batch {
	b := &Batch{N: n, Obs: obs, Actions: a.Tokens, ContActions: a.Continuous, LogProbs: logp, Values: values,
		Rewards: rewards, Advantages: make([]float64, n), Returns: make([]float64, n)}
	for i := 0; i < n; i++ {
		GAE(rewards[i:i+1], values[i:i+1], 0, 0.99, 0.95, b.Advantages[i:i+1], b.Returns[i:i+1])
		b.Pieces = append(b.Pieces, Piece{Start: i, Len: 1, Terminal: true})
	}
	return b
}

// policyBandit collects n samples of the k-armed contextual bandit: context
// c is uniform over k, the observation is one-hot(c), reward is 1 when the
// action equals c. Each sample is a one-step episode that terminates, so
// GAE with bootstrap 0 gives A = r − V and return r.
func policyBandit(p *Policy, k, n int, rng *rand.Rand) *Batch {
	obs := make([]float64, n*k)
	ctx := make([]int, n)
	for i := range ctx {
		ctx[i] = rng.IntN(k)
		obs[i*k+ctx[i]] = 1
	}
	a := Actions{Tokens: make([]int, n)}
	logp, values, rewards := make([]float64, n), make([]float64, n), make([]float64, n)
	p.ActActions(obs, n, rng, a, logp, values)
	for i := range ctx {
		if a.Tokens[i] == ctx[i] {
			rewards[i] = 1
		}
	}
	return oneStepBatch(n, obs, a, logp, values, rewards)
}

func policyBanditAccuracy(p *Policy, k int) float64 {
	obs := make([]float64, k*k)
	tokens := make([]int, k)
	for c := 0; c < k; c++ {
		obs[c*k+c] = 1
		tokens[c] = c
	}
	lp, ent, v := make([]float64, k), make([]float64, k), make([]float64, k)
	p.Evaluate(obs, k, Actions{Tokens: tokens}, lp, ent, v)
	acc := 0.0
	for _, l := range lp {
		acc += math.Exp(l)
	}
	return acc / float64(k)
}

func TestPolicyLearnerLearnsContextualBandit(t *testing.T) {
	// CleanRL's defaults (LR 2.5e-4, 4 epochs × 4 minibatches, per-minibatch
	// normalisation, clipped value loss): ~70 updates here.
	const k = 4
	rng := rand.New(rand.NewPCG(11, 12))
	p := NewPolicy(PolicyConfig{ObsDim: k, Head: HeadCategorical, NumActions: k, Hidden: []int{32}, Activation: ActTanh}, rng)
	l := NewPolicyLearner(p, DefaultLearnerConfig(AlgoPPO))
	if acc := policyBanditAccuracy(p, k); math.Abs(acc-0.25) > 0.05 {
		// Output gain 0.01 makes the initial policy nearly uniform.
		t.Fatalf("initial accuracy %v, want ≈ 1/4", acc)
	}
	var stats UpdateStats
	acc := 0.0
	updates := 0
	for ; updates < 300 && acc < 0.9; updates++ {
		var err error
		stats, err = l.Update(policyBandit(p, k, 64, rng), rng)
		if err != nil {
			t.Fatal(err)
		}
		acc = policyBanditAccuracy(p, k)
	}
	t.Logf("accuracy %.3f after %d updates; last stats %+v", acc, updates, stats)
	if acc < 0.9 {
		t.Fatalf("accuracy %.3f after %d updates, want ≥ 0.9", acc, updates)
	}
	// Learning signals: entropy fell below the uniform log 4 = 1.386 and the
	// optimizer stepped 4 epochs × 4 minibatches per update.
	if stats.Entropy >= math.Log(k) || l.Opt.T != 16*updates || l.Updates != updates {
		t.Errorf("entropy %v (want < ln 4), Adam steps %d (want %d), updates %d", stats.Entropy, l.Opt.T, 16*updates, l.Updates)
	}
}

// banditLearner is a small categorical policy on the 3-armed bandit with
// its learner and one batch of 16 samples.
func banditLearner(cfg LearnerConfig, seed uint64) (*PolicyLearner, *Batch, *rand.Rand) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	p := NewPolicy(PolicyConfig{ObsDim: 3, Head: HeadCategorical, NumActions: 3, Hidden: []int{8}, Activation: ActTanh}, rng)
	return NewPolicyLearner(p, cfg), policyBandit(p, 3, 16, rng), rng
}

func TestPolicyLearnerNonFiniteLoss(t *testing.T) {
	l, b, rng := banditLearner(DefaultLearnerConfig(AlgoPPO), 13)
	for i := range b.Returns {
		b.Returns[i] = math.NaN()
	}
	before := append([]float64(nil), l.Model.Params()...)
	_, err := l.Update(b, rng)
	if err == nil || !strings.Contains(err.Error(), "value loss is NaN") {
		t.Fatalf("err = %v, want a value-loss NaN error", err)
	}
	assertUnchanged(t, l.Model.Params(), before)
	if l.Opt.T != 0 {
		t.Errorf("Adam took %d steps, want 0", l.Opt.T)
	}
}

func TestPolicyLearnerNonFiniteParams(t *testing.T) {
	// With LR = MaxFloat64 the first Adam step size LR/(1−0.9) overflows to
	// +Inf, so every updated parameter becomes ±Inf (or NaN for a zero
	// moment). The step must be undone, optimizer state included.
	cfg := DefaultLearnerConfig(AlgoPPO)
	cfg.Schedule.Base = math.MaxFloat64
	l, b, rng := banditLearner(cfg, 15)
	before := append([]float64(nil), l.Model.Params()...)
	_, err := l.Update(b, rng)
	if err == nil || !strings.Contains(err.Error(), "parameter actor.0.weight[") {
		t.Fatalf("err = %v, want an error naming parameter actor.0.weight[…]", err)
	}
	if !strings.Contains(err.Error(), "epoch 0, minibatch 0") {
		t.Errorf("err = %v, want it to locate epoch 0, minibatch 0", err)
	}
	assertUnchanged(t, l.Model.Params(), before)
	if l.Opt.T != 0 || L2Norm(l.Opt.M) != 0 || L2Norm(l.Opt.V) != 0 {
		t.Errorf("optimizer state not restored: T=%d |M|=%v |V|=%v", l.Opt.T, L2Norm(l.Opt.M), L2Norm(l.Opt.V))
	}
}

func TestPolicyLearnerGradientCheckNamesTensor(t *testing.T) {
	l := NewPolicyLearner(NewPolicy(cartpoleConfig(), rand.New(rand.NewPCG(17, 18))), DefaultLearnerConfig(AlgoPPO))
	if err := l.checkGrads(); err != nil {
		t.Fatalf("zero gradients reported: %v", err)
	}
	l.Model.Grads()[4930+65] = math.Inf(-1) // critic.2.weight row 1, column 1
	err := l.checkGrads()
	if err == nil || err.Error() != "gradient of critic.2.weight[65] is -Inf" {
		t.Fatalf("err = %v, want gradient of critic.2.weight[65] is -Inf", err)
	}
}

func TestPolicyLearnerRejectsBadConfig(t *testing.T) {
	cfg := DefaultLearnerConfig(AlgoPPO)
	cfg.Epochs = 0
	l, b, rng := banditLearner(cfg, 19)
	if _, err := l.Update(b, rng); err == nil || !strings.Contains(err.Error(), "epochs") {
		t.Errorf("err = %v, want an epochs error", err)
	}
}

func assertUnchanged(t *testing.T, got, want []float64) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("param %d changed from %v to %v", i, want[i], got[i])
		}
	}
}

func TestPolicyLearnerLagIsZeroOnFreshData(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 80))
	p := NewPolicy(tokensConfig(), rng)
	l := NewPolicyLearner(p, DefaultLearnerConfig(AlgoGIPO))
	b := continuousBanditBatch(p, 32, rng, func(x []float64) float64 { return -x[0] * x[0] })
	s, err := l.Update(b, rng)
	if err != nil {
		t.Fatal(err)
	}
	// Act and Evaluate compute the same log-probabilities: log r = 0 exactly.
	if s.Lag.Tokens != 64 || s.Lag.ESS != 1 || s.Lag.ClipFrac != 0 || s.Lag.MaxAbsLogRatio != 0 {
		t.Errorf("lag of fresh data %+v, want 64 tokens on policy", s.Lag)
	}
	// A second update on the same (now stale) batch sees the first update's drift.
	s, err = l.Update(b, rng)
	if err != nil {
		t.Fatal(err)
	}
	if !(s.Lag.MaxAbsLogRatio > 0) || !(s.Lag.ESS < 1) {
		t.Errorf("lag of reused data %+v, want non-zero drift", s.Lag)
	}
}

// learnerFixture builds a learner for cfg on a small model and a batch
// whose tokens have chosen log-ratios against the current parameters.
func learnerFixture(t *testing.T, pcfg PolicyConfig, cfg LearnerConfig, logRatio func(k int) float64) (*PolicyLearner, *Batch) {
	t.Helper()
	rng := rand.New(rand.NewPCG(81, 82))
	p := NewPolicy(pcfg, rng)
	perturb(p.Params(), 0.3, rng)
	const n = 6
	obs := randSlice(rng, n*pcfg.ObsDim, 1)
	a := Actions{}
	tps := p.TokensPerStep()
	if pcfg.Head == HeadGaussian {
		a.Continuous = randSlice(rng, n*pcfg.ActionDims, 0.5)
	} else {
		a.Tokens = make([]int, n*tps)
		for i := range a.Tokens {
			a.Tokens[i] = rng.IntN(3)
		}
	}
	lp, ent, v := make([]float64, n*tps), make([]float64, n*tps), make([]float64, n)
	p.Evaluate(obs, n, a, lp, ent, v)
	for k := range lp {
		lp[k] -= logRatio(k) // old log-prob: exp(new − old) = exp(logRatio)
	}
	rewards := randSlice(rng, n, 1)
	b := oneStepBatch(n, obs, a, lp, v, rewards)
	for i := range b.Values {
		b.Values[i] += 0.05 * rng.NormFloat64() // old values near V, inside the value clip
	}
	b.Pieces = []Piece{{Start: 0, Len: 3, NextObs: randSlice(rng, pcfg.ObsDim, 1)}, {Start: 3, Len: 3, Terminal: true}}
	return NewPolicyLearner(p, cfg), b
}

func TestPolicyLearnerGradients(t *testing.T) {
	// End-to-end: ∂(total loss)/∂params through Loss, the head, the trunk
	// and the critic, against central differences. Log-ratios of ±0.05
	// keep PPO inside its clip range; GIPO is checked at log-ratio 0, where
	// its stop-gradient weight has zero derivative (exp(−½z²)' = 0 at z = 0),
	// so the true and the stop-gradient loss agree to first order (the
	// weight itself is checked away from 0 in TestLossGradientsGIPO).
	small := func(k int) float64 { return 0.05 * math.Sin(float64(k)+0.5) }
	zero := func(int) float64 { return 0 }
	heads := map[string]PolicyConfig{
		HeadCategorical: {ObsDim: 3, Head: HeadCategorical, NumActions: 3, Hidden: []int{5}, Activation: ActTanh},
		HeadTokens:      {ObsDim: 3, Head: HeadTokens, ActionDims: 2, Low: []float64{-1, -1}, High: []float64{1, 1}, Bins: 3, EmbedDim: 2, Hidden: []int{5}, Activation: ActTanh},
		HeadGaussian:    gaussianConfig(),
	}
	for _, head := range []string{HeadCategorical, HeadTokens, HeadGaussian} {
		for _, algo := range Algos() {
			cfg := DefaultLearnerConfig(algo)
			cfg.KLCoef = 0.1
			cfg.AdvNorm = AdvNormBatch
			lr := small
			if algo == AlgoGIPO {
				lr = zero
			}
			l, b := learnerFixture(t, heads[head], cfg, lr)
			l.prepare(b)
			idx := []int{4, 0, 2, 5}
			l.lossAndGrad(b, idx)
			grads := append([]float64(nil), l.Model.Grads()...)
			checkGrad(t, head+"/"+algo, func() float64 { return l.lossAndGrad(b, idx).Total }, l.Model.Params(), grads)
		}
	}
}

func TestPolicyLearnerVTraceTargets(t *testing.T) {
	// The learner's v-trace targets are VTrace on each piece with the
	// current values, joint step ratios (sum of the token log-ratios) and
	// V(NextObs) as the bootstrap of the cut piece.
	cfg := DefaultLearnerConfig(AlgoVTrace)
	pcfg := PolicyConfig{ObsDim: 3, Head: HeadTokens, ActionDims: 2, Low: []float64{-1, -1}, High: []float64{1, 1}, Bins: 3, EmbedDim: 2, Hidden: []int{5}, Activation: ActTanh}
	l, b := learnerFixture(t, pcfg, cfg, func(k int) float64 { return 0.3 * float64(k%3-1) })
	l.prepare(b)
	v := make([]float64, 6)
	l.Model.Values(b.Obs, 6, v)
	boot := make([]float64, 1)
	l.Model.Values(b.Pieces[0].NextObs, 1, boot)
	logRho := make([]float64, 6)
	for i := range logRho {
		logRho[i] = 0.3*float64((2*i)%3-1) + 0.3*float64((2*i+1)%3-1)
	}
	vs, adv := make([]float64, 6), make([]float64, 6)
	VTrace(logRho[:3], b.Rewards[:3], v[:3], boot[0], 0.99, 1, 1, vs[:3], adv[:3])
	VTrace(logRho[3:], b.Rewards[3:], v[3:], 0, 0.99, 1, 1, vs[3:], adv[3:])
	for i := range vs {
		// The learner sums the same token log-ratios recovered from
		// log-probs of order 1: 1e-14.
		if math.Abs(l.ret[i]-vs[i]) > 1e-14 || math.Abs(l.adv[i]-adv[i]) > 1e-14 {
			t.Errorf("step %d: learner (%v, %v), VTrace (%v, %v)", i, l.ret[i], l.adv[i], vs[i], adv[i])
		}
	}
}

func TestPolicyLearnerGlobalNormalisation(t *testing.T) {
	// "global" with statistics merged from three shards of this batch
	// equals "batch"; with nil statistics it is "batch" exactly.
	run := func(mode string, stats *AdvStats) []float64 {
		cfg := DefaultLearnerConfig(AlgoGIPO)
		cfg.AdvNorm = mode
		l, b := learnerFixture(t, gaussianConfig(), cfg, func(k int) float64 { return 0.1 * float64(k%2) })
		b.AdvStats = stats
		if _, err := l.Update(b, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		return l.Model.Params()
	}
	_, b := learnerFixture(t, gaussianConfig(), DefaultLearnerConfig(AlgoGIPO), func(int) float64 { return 0 })
	var merged AdvStats
	for _, sh := range [][]float64{b.Advantages[:1], b.Advantages[1:4], b.Advantages[4:]} {
		var s AdvStats
		s.Add(sh)
		merged.Merge(s)
	}
	batch, global, nilStats := run(AdvNormBatch, nil), run(AdvNormGlobal, &merged), run(AdvNormGlobal, nil)
	for i := range batch {
		// Shard sums differ from the batch sum by rounding (1e-16 relative);
		// after 4 Adam steps of size ≤ 2.5e-4 the parameters differ by far
		// less than 1e-12.
		if math.Abs(global[i]-batch[i]) > 1e-12 || nilStats[i] != batch[i] {
			t.Fatalf("param %d: batch %v, global %v, global without stats %v", i, batch[i], global[i], nilStats[i])
		}
	}
	// Statistics of other shards change the result.
	other := merged
	other.Sum += 3
	if moved := run(AdvNormGlobal, &other); moved[0] == batch[0] && moved[len(moved)-1] == batch[len(batch)-1] {
		t.Error("global statistics from other shards had no effect")
	}
}

func TestRecomputeGAE(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	p := NewPolicy(gaussianConfig(), rng)
	obs := randSlice(rng, 5*3, 1)
	next := randSlice(rng, 3, 1)
	b := &Batch{N: 5, Obs: obs, Rewards: []float64{1, 0, -1, 2, 0.5}, Values: []float64{9, 9, 9, 9, 9},
		Pieces: []Piece{{Start: 0, Len: 2, Terminal: true}, {Start: 2, Len: 3, NextObs: next}}}
	RecomputeGAE(p, b, 0.9, 0.8)
	v := make([]float64, 5)
	p.Values(obs, 5, v)
	boot := make([]float64, 1)
	p.Values(next, 1, boot)
	adv, ret := make([]float64, 5), make([]float64, 5)
	GAE(b.Rewards[:2], v[:2], 0, 0.9, 0.8, adv[:2], ret[:2])
	GAE(b.Rewards[2:], v[2:], boot[0], 0.9, 0.8, adv[2:], ret[2:])
	for i := range v {
		// Same calls on the same inputs: identical.
		if b.Values[i] != v[i] || b.Advantages[i] != adv[i] || b.Returns[i] != ret[i] {
			t.Errorf("step %d: (%v, %v, %v), want (%v, %v, %v)", i, b.Values[i], b.Advantages[i], b.Returns[i], v[i], adv[i], ret[i])
		}
	}
}

func TestPolicyLearnerNonFinite(t *testing.T) {
	cfg := DefaultLearnerConfig(AlgoSAPO)
	cfg.Schedule.Base = math.MaxFloat64 // first Adam step overflows
	l, b := learnerFixture(t, tokensConfig(), cfg, func(int) float64 { return 0 })
	before := append([]float64(nil), l.Model.Params()...)
	_, err := l.Update(b, rand.New(rand.NewPCG(1, 2)))
	if err == nil || !strings.Contains(err.Error(), "learner update (sapo, epoch 0, minibatch 0): parameter ") {
		t.Fatalf("err = %v, want a parameter error at epoch 0, minibatch 0", err)
	}
	assertUnchanged(t, l.Model.Params(), before)
	if l.Opt.T != 0 || l.Updates != 0 {
		t.Errorf("Adam steps %d, updates %d after a failed update; want 0, 0", l.Opt.T, l.Updates)
	}

	l, b = learnerFixture(t, tokensConfig(), DefaultLearnerConfig(AlgoPPO), func(int) float64 { return 0 })
	b.Returns[2] = math.Inf(1)
	if _, err := l.Update(b, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "value loss is +Inf") {
		t.Errorf("err = %v, want a value-loss error", err)
	}
	l.Cfg.Minibatches = 7
	if _, err := l.Update(b, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "6 samples cannot fill 7 minibatches") {
		t.Errorf("err = %v, want a minibatch-count error", err)
	}
	l.Cfg.Algo = "a2c"
	if _, err := l.Update(b, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), `"a2c"`) {
		t.Errorf("err = %v, want an unknown-algorithm error", err)
	}
}

func TestPolicyLearnerBatchMisuse(t *testing.T) {
	l, b := learnerFixture(t, tokensConfig(), DefaultLearnerConfig(AlgoVTrace), func(int) float64 { return 0 })
	for _, c := range []struct {
		name string
		mod  func(b *Batch)
		want string
	}{
		{"short log-probs", func(b *Batch) { b.LogProbs = b.LogProbs[:6] }, "log-probs"},
		{"gap in pieces", func(b *Batch) { b.Pieces[1].Start = 4 }, "piece 1"},
		{"missing next obs", func(b *Batch) { b.Pieces[0].NextObs = nil }, "NextObs"},
		{"pieces too short", func(b *Batch) { b.Pieces = b.Pieces[:1] }, "cover 3 samples"},
		{"short temperatures", func(b *Batch) { b.Temperatures = []float64{1} }, "temperatures"},
		{"temperatures for a network without them", func(b *Batch) { b.Temperatures = make([]float64, b.N) }, "per-sample temperatures"},
	} {
		bb := *b
		bb.Pieces = append([]Piece(nil), b.Pieces...)
		c.mod(&bb)
		func() {
			defer func() {
				r, ok := recover().(string)
				if !ok || !strings.HasPrefix(r, "kernels: PolicyLearner.Update") || !strings.Contains(r, c.want) {
					t.Errorf("%s: recovered %v, want a kernels: PolicyLearner.Update panic mentioning %s", c.name, r, c.want)
				}
			}()
			l.Update(&bb, rand.New(rand.NewPCG(1, 2)))
		}()
	}
}

// temperedRecorder is a categorical Policy that takes per-row temperatures and checks, at
// every Evaluate, that row i's is 1 + its one-hot observation's index (policyBandit's
// context): the learner hands each minibatch the temperatures of its own rows.
type temperedRecorder struct {
	*Policy
	t      *testing.T
	temps  []float64
	calls  int // Evaluate calls with temperatures
	rows   int // rows checked
	latest bool
}

func (r *temperedRecorder) SetTemperatures(temps []float64) { r.temps, r.latest = temps, temps != nil }

func (r *temperedRecorder) Evaluate(obs []float64, n int, a Actions, logp, ent, val []float64) {
	if r.temps != nil {
		if len(r.temps) != n {
			r.t.Fatalf("Evaluate of %d rows with %d temperatures", n, len(r.temps))
		}
		d := len(obs) / n
		for i := range n {
			ctx := 0
			for j, v := range obs[i*d : (i+1)*d] {
				if v == 1 {
					ctx = j
				}
			}
			if r.temps[i] != float64(1+ctx) {
				r.t.Fatalf("row %d (context %d) evaluated at temperature %v, want its own %d", i, ctx, r.temps[i], 1+ctx)
			}
		}
		r.calls++
		r.rows += n
	}
	r.Policy.Evaluate(obs, n, a, logp, ent, val)
}

// A batch with per-sample temperatures reaches a TemperedNetwork row by row: the lag pass
// over the whole batch and every shuffled minibatch get their rows' own, and after the
// update the network evaluates at its own temperature again (nil).
func TestPolicyLearnerTemperatures(t *testing.T) {
	l, b, rng := banditLearner(DefaultLearnerConfig(AlgoPPO), 5)
	rec := &temperedRecorder{Policy: l.Model.(*Policy), t: t}
	l.Model = rec
	b.Temperatures = make([]float64, b.N)
	for i := range b.N {
		for j, v := range b.Obs[i*3 : (i+1)*3] {
			if v == 1 {
				b.Temperatures[i] = float64(1 + j)
			}
		}
	}
	if _, err := l.Update(b, rng); err != nil {
		t.Fatal(err)
	}
	// 4 epochs × 4 minibatches of the 16 rows, and the lag pass over them all.
	if cfg := l.Cfg; rec.rows != (cfg.Epochs+1)*b.N || rec.calls < cfg.Epochs*cfg.Minibatches+1 {
		t.Fatalf("%d rows in %d evaluations with temperatures, want %d rows (every epoch and the lag pass)", rec.rows, rec.calls, (cfg.Epochs+1)*b.N)
	}
	if rec.latest {
		t.Fatal("the network keeps the batch's temperatures after the update")
	}
}

func TestPolicyLearnerSchedule(t *testing.T) {
	cfg := DefaultLearnerConfig(AlgoPPO)
	cfg.Schedule = LRSchedule{Base: 1e-3, Warmup: 2, Total: 4, Kind: LRLinear}
	l, b := learnerFixture(t, gaussianConfig(), cfg, func(int) float64 { return 0 })
	// Rates 0.5e-3, 1e-3 (warmup), then 1e-3·(1 − 0/2), 1e-3·(1 − 1/2).
	for u, want := range []float64{0.5e-3, 1e-3, 1e-3, 0.5e-3} {
		s, err := l.Update(b, rand.New(rand.NewPCG(1, uint64(u))))
		if err != nil {
			t.Fatal(err)
		}
		if s.LR != want || l.Opt.LR != want { // products of exact small integers and 1e-3: exact
			t.Errorf("update %d: LR %v (Adam %v), want %v", u, s.LR, l.Opt.LR, want)
		}
	}
}

func TestPolicyLearnerLearnsCategoricalBandit(t *testing.T) {
	// The 4-armed contextual bandit of
	// TestPolicyLearnerLearnsContextualBandit with every loss. LR 1e-3 (4×
	// CleanRL's) keeps the test short; v-trace takes 1 step per batch
	// instead of 16, so it gets a larger rate.
	for _, algo := range Algos() {
		const k = 4
		rng := rand.New(rand.NewPCG(85, 86))
		p := NewPolicy(PolicyConfig{ObsDim: k, Head: HeadCategorical, NumActions: k, Hidden: []int{32}, Activation: ActTanh}, rng)
		cfg := DefaultLearnerConfig(algo)
		cfg.Schedule.Base = 1e-3
		if algo == AlgoVTrace {
			cfg.Schedule.Base = 1e-2
		}
		l := NewPolicyLearner(p, cfg)
		acc, updates := 0.0, 0
		for ; updates < 200 && acc < 0.9; updates++ {
			if _, err := l.Update(policyBandit(p, k, 64, rng), rng); err != nil {
				t.Fatal(err)
			}
			acc = policyBanditAccuracy(p, k)
		}
		t.Logf("%s: accuracy %.3f after %d updates", algo, acc, updates)
		if acc < 0.9 {
			t.Errorf("%s: accuracy %.3f after %d updates, want ≥ 0.9", algo, acc, updates)
		}
	}
}

// continuousBanditBatch collects n one-step episodes with a constant
// observation 1 and reward(action) for the environment action.
func continuousBanditBatch(p *Policy, n int, rng *rand.Rand, reward func(x []float64) float64) *Batch {
	cfg := p.Config()
	obs := make([]float64, n*cfg.ObsDim)
	for i := range obs {
		obs[i] = 1
	}
	tps, d := p.TokensPerStep(), p.EnvActionDims()
	a := Actions{}
	if cfg.Head == HeadGaussian {
		a.Continuous = make([]float64, n*d)
	} else {
		a.Tokens = make([]int, n*tps)
	}
	logp, values, rewards := make([]float64, n*tps), make([]float64, n), make([]float64, n)
	p.ActActions(obs, n, rng, a, logp, values)
	env := make([]float64, n*d)
	p.EnvActions(a, n, env)
	for i := range rewards {
		rewards[i] = reward(env[i*d : (i+1)*d])
	}
	return oneStepBatch(n, obs, a, logp, values, rewards)
}

func TestPolicyLearnerLearnsTokenBandit(t *testing.T) {
	// Two action dimensions on [−1, 1] with 8 bins each (centres ±0.125,
	// ±0.375, ±0.625, ±0.875), reward −Σ(x − g)² with g = (0.3, −0.6): the
	// best bins are 5 (0.375) and 1 (−0.625). GIPO with batch normalisation
	// must concentrate the greedy decode on (5, 1).
	rng := rand.New(rand.NewPCG(87, 88))
	p := NewPolicy(PolicyConfig{ObsDim: 1, Head: HeadTokens, ActionDims: 2, Low: []float64{-1, -1}, High: []float64{1, 1},
		Bins: 8, Hidden: []int{16}, Activation: ActTanh}, rng)
	cfg := DefaultLearnerConfig(AlgoGIPO)
	cfg.Schedule.Base = 1e-3
	cfg.AdvNorm = AdvNormBatch
	l := NewPolicyLearner(p, cfg)
	reward := func(x []float64) float64 { return -(x[0]-0.3)*(x[0]-0.3) - (x[1]+0.6)*(x[1]+0.6) }
	greedy := Actions{Tokens: make([]int, 2)}
	joint := 0.0
	updates := 0
	for ; updates < 200; updates++ {
		if _, err := l.Update(continuousBanditBatch(p, 64, rng, reward), rng); err != nil {
			t.Fatal(err)
		}
		p.Greedy([]float64{1}, 1, greedy)
		lp, ent, v := make([]float64, 2), make([]float64, 2), make([]float64, 1)
		p.Evaluate([]float64{1}, 1, Actions{Tokens: []int{5, 1}}, lp, ent, v)
		joint = math.Exp(lp[0] + lp[1])
		if greedy.Tokens[0] == 5 && greedy.Tokens[1] == 1 && joint > 0.8 {
			break
		}
	}
	t.Logf("greedy %v, π(5, 1) = %.3f after %d updates", greedy.Tokens, joint, updates)
	if greedy.Tokens[0] != 5 || greedy.Tokens[1] != 1 || joint <= 0.8 {
		t.Errorf("greedy tokens %v with π(5, 1) = %.3f after %d updates, want (5, 1) with probability > 0.8", greedy.Tokens, joint, updates)
	}
}

func TestPolicyLearnerLearnsGaussianBandit(t *testing.T) {
	// One dimension, reward −(a − 0.5)²: PPO must move the mean from ≈ 0
	// (output gain 0.01) to within 0.05 of 0.5 and shrink σ from 1, since
	// the expected reward −(μ − 0.5)² − σ² also rewards a narrower policy.
	rng := rand.New(rand.NewPCG(89, 90))
	p := NewPolicy(PolicyConfig{ObsDim: 1, Head: HeadGaussian, ActionDims: 1, Hidden: []int{16}, Activation: ActTanh}, rng)
	cfg := DefaultLearnerConfig(AlgoPPO)
	cfg.Schedule.Base = 1e-3
	l := NewPolicyLearner(p, cfg)
	reward := func(x []float64) float64 { return -(x[0] - 0.5) * (x[0] - 0.5) }
	mean := Actions{Continuous: make([]float64, 1)}
	logStd := tensor(t, p, "actor_logstd")
	updates := 0
	for ; updates < 200; updates++ {
		if _, err := l.Update(continuousBanditBatch(p, 64, rng, reward), rng); err != nil {
			t.Fatal(err)
		}
		p.Greedy([]float64{1}, 1, mean)
		if math.Abs(mean.Continuous[0]-0.5) < 0.05 && logStd[0] < -0.1 {
			break
		}
	}
	t.Logf("mean %.3f, log σ %.3f after %d updates", mean.Continuous[0], logStd[0], updates)
	if math.Abs(mean.Continuous[0]-0.5) >= 0.05 || logStd[0] >= -0.1 {
		t.Errorf("mean %.3f, log σ %.3f after %d updates; want within 0.05 of 0.5 and below −0.1", mean.Continuous[0], logStd[0], updates)
	}
}

func TestPolicyLearnerValueClipUsesBatchValues(t *testing.T) {
	// Old values V_old = V + 0.5 and returns R = V − 2 with ε = 0.2:
	// V_clip = V_old − 0.2 = V + 0.3, (V_clip − R)² = 2.3² = 5.29 > (V − R)² = 4,
	// so every sample takes the clipped branch: value loss ½·5.29 = 2.645.
	l, b := learnerFixture(t, gaussianConfig(), DefaultLearnerConfig(AlgoGIPO), func(int) float64 { return 0 })
	v := make([]float64, b.N)
	l.Model.Values(b.Obs, b.N, v)
	for i := range v {
		b.Values[i] = v[i] + 0.5
		b.Returns[i] = v[i] - 2
	}
	l.prepare(b)
	terms := l.lossAndGrad(b, []int{0, 1, 2, 3, 4, 5})
	// Differences of values of order 1 squared: 1e-14.
	if math.Abs(terms.Value-2.645) > 1e-14 {
		t.Errorf("value loss %.17g, want 2.645 from the clipped branch", terms.Value)
	}
}
