package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// banditBatch collects n samples of the contextual bandit: context c is
// uniform over k, the observation is one-hot(c), reward is 1 when the action
// equals c. Each sample is a one-step episode that terminates, so GAE with
// bootstrap 0 gives A = r − V and return r.
func banditBatch(m *ActorCritic, k, n int, rng *rand.Rand) *Batch {
	b := &Batch{N: n, Obs: make([]float64, n*k), Actions: make([]int, n), LogProbs: make([]float64, n),
		Advantages: make([]float64, n), Returns: make([]float64, n), Values: make([]float64, n)}
	ctx := make([]int, n)
	for i := range ctx {
		ctx[i] = rng.IntN(k)
		b.Obs[i*k+ctx[i]] = 1
	}
	m.Act(b.Obs, n, rng, b.Actions, b.LogProbs, b.Values)
	for i := range ctx {
		r := 0.0
		if b.Actions[i] == ctx[i] {
			r = 1
		}
		GAE([]float64{r}, b.Values[i:i+1], 0, 0.99, 0.95, b.Advantages[i:i+1], b.Returns[i:i+1])
	}
	return b
}

// banditAccuracy is the mean over contexts of π(correct action | context).
func banditAccuracy(m *ActorCritic, k int) float64 {
	obs := make([]float64, k*k)
	for c := 0; c < k; c++ {
		obs[c*k+c] = 1
	}
	probs := make([]float64, k*k)
	m.Probs(obs, k, probs)
	acc := 0.0
	for c := 0; c < k; c++ {
		acc += probs[c*k+c]
	}
	return acc / float64(k)
}

func TestPPOLearnsContextualBandit(t *testing.T) {
	const k = 4
	rng := rand.New(rand.NewPCG(11, 12))
	m := NewActorCritic(ActorCriticConfig{ObsDim: k, NumActions: k, Hidden: []int{32}, Activation: ActTanh}, rng)
	p := NewPPO(m, DefaultPPOConfig()) // CleanRL's defaults, LR 2.5e-4: ~70 updates here
	if acc := banditAccuracy(m, k); math.Abs(acc-0.25) > 0.05 {
		// Output gain 0.01 makes the initial policy nearly uniform.
		t.Fatalf("initial accuracy %v, want ≈ 1/4", acc)
	}
	var stats UpdateStats
	acc := 0.0
	updates := 0
	for ; updates < 300 && acc < 0.9; updates++ {
		var err error
		stats, err = p.Update(banditBatch(m, k, 64, rng), rng)
		if err != nil {
			t.Fatal(err)
		}
		acc = banditAccuracy(m, k)
	}
	t.Logf("accuracy %.3f after %d updates; last stats %+v", acc, updates, stats)
	if acc < 0.9 {
		t.Fatalf("accuracy %.3f after %d updates, want ≥ 0.9", acc, updates)
	}
	// Learning signals: entropy fell below the uniform log 4 = 1.386 and the
	// optimizer stepped 4 epochs × 4 minibatches per update.
	if stats.Entropy >= math.Log(k) || p.Opt.T != 16*updates {
		t.Errorf("entropy %v (want < ln 4), Adam steps %d (want %d)", stats.Entropy, p.Opt.T, 16*updates)
	}
}

func TestPPOUpdateNonFiniteLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m := NewActorCritic(ActorCriticConfig{ObsDim: 3, NumActions: 3, Hidden: []int{8}, Activation: ActTanh}, rng)
	p := NewPPO(m, DefaultPPOConfig())
	b := banditBatch(m, 3, 16, rng)
	for i := range b.Returns {
		b.Returns[i] = math.NaN()
	}
	before := append([]float64(nil), m.Params()...)
	_, err := p.Update(b, rng)
	if err == nil || !strings.Contains(err.Error(), "value loss is NaN") {
		t.Fatalf("err = %v, want a value-loss NaN error", err)
	}
	assertUnchanged(t, m.Params(), before)
	if p.Opt.T != 0 {
		t.Errorf("Adam took %d steps, want 0", p.Opt.T)
	}
}

func TestPPOUpdateNonFiniteParams(t *testing.T) {
	// With LR = MaxFloat64 the first Adam step size LR/(1−0.9) overflows to
	// +Inf, so every updated parameter becomes ±Inf (or NaN for a zero
	// moment). The step must be undone, optimizer state included.
	rng := rand.New(rand.NewPCG(15, 16))
	m := NewActorCritic(ActorCriticConfig{ObsDim: 3, NumActions: 3, Hidden: []int{8}, Activation: ActTanh}, rng)
	cfg := DefaultPPOConfig()
	cfg.LR = math.MaxFloat64
	p := NewPPO(m, cfg)
	b := banditBatch(m, 3, 16, rng)
	before := append([]float64(nil), m.Params()...)
	_, err := p.Update(b, rng)
	if err == nil || !strings.Contains(err.Error(), "parameter actor.0.weight[") {
		t.Fatalf("err = %v, want an error naming parameter actor.0.weight[…]", err)
	}
	if !strings.Contains(err.Error(), "epoch 0, minibatch 0") {
		t.Errorf("err = %v, want it to locate epoch 0, minibatch 0", err)
	}
	assertUnchanged(t, m.Params(), before)
	if p.Opt.T != 0 || L2Norm(p.Opt.M) != 0 || L2Norm(p.Opt.V) != 0 {
		t.Errorf("optimizer state not restored: T=%d |M|=%v |V|=%v", p.Opt.T, L2Norm(p.Opt.M), L2Norm(p.Opt.V))
	}
}

func TestPPOGradientCheckNamesTensor(t *testing.T) {
	m := NewActorCritic(cartpoleConfig(), rand.New(rand.NewPCG(17, 18)))
	p := NewPPO(m, DefaultPPOConfig())
	if err := p.checkGrads(); err != nil {
		t.Fatalf("zero gradients reported: %v", err)
	}
	m.Grads()[4930+65] = math.Inf(-1) // critic.2.weight row 1, column 1
	err := p.checkGrads()
	if err == nil || err.Error() != "gradient of critic.2.weight[65] is -Inf" {
		t.Fatalf("err = %v, want gradient of critic.2.weight[65] is -Inf", err)
	}
}

func TestPPOUpdateRejectsBadConfig(t *testing.T) {
	m := NewActorCritic(cartpoleConfig(), rand.New(rand.NewPCG(19, 20)))
	cfg := DefaultPPOConfig()
	cfg.Minibatches = 8
	p := NewPPO(m, cfg)
	b := &Batch{N: 4, Obs: make([]float64, 16), Actions: make([]int, 4), LogProbs: make([]float64, 4),
		Advantages: make([]float64, 4), Returns: make([]float64, 4), Values: make([]float64, 4)}
	if _, err := p.Update(b, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "4 samples cannot fill 8 minibatches") {
		t.Errorf("err = %v, want a minibatch-count error", err)
	}
	p.Cfg.Epochs = 0
	if _, err := p.Update(b, rand.New(rand.NewPCG(1, 2))); err == nil || !strings.Contains(err.Error(), "epochs") {
		t.Errorf("err = %v, want an epochs error", err)
	}
}

func TestNormalizeAdvantages(t *testing.T) {
	// [1, 2, 3, 6]: mean 3, deviations [−2, −1, 0, 3], unbiased variance
	// (4+1+0+9)/3 = 14/3, std 2.1602469; result = deviation/(std + 1e-8).
	a := []float64{1, 2, 3, 6}
	normalizeAdvantages(a)
	std := math.Sqrt(14.0 / 3)
	for i, d := range []float64{-2, -1, 0, 3} {
		if want := d / (std + 1e-8); math.Abs(a[i]-want) > 1e-15 { // a few ulps of order-1 values
			t.Errorf("a[%d] = %v, want %v", i, a[i], want)
		}
	}
	one := []float64{5}
	normalizeAdvantages(one)
	if one[0] != 0 {
		t.Errorf("single advantage normalised to %v, want 0", one[0])
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
