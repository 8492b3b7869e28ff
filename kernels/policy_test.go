package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func tokensConfig() PolicyConfig {
	return PolicyConfig{ObsDim: 3, Head: HeadTokens, ActionDims: 2, Low: []float64{-1, 0}, High: []float64{1, 2},
		Bins: 4, EmbedDim: 2, Hidden: []int{5}, Activation: ActTanh}
}

func gaussianConfig() PolicyConfig {
	return PolicyConfig{ObsDim: 3, Head: HeadGaussian, ActionDims: 2, Low: []float64{-1, -1}, High: []float64{1, 1},
		Hidden: []int{4}, Activation: ActTanh, InitLogStd: -0.5}
}

// perturb adds Gaussian noise of the given scale to every parameter, so
// that output layers initialised at gain 0.01 give non-trivial gradients.
func perturb(p []float64, scale float64, rng *rand.Rand) {
	for i := range p {
		p[i] += scale * rng.NormFloat64()
	}
}

// cartpoleConfig is CleanRL's CartPole agent: 4 → 64 → 64 → 2 actor and
// 4 → 64 → 64 → 1 critic, tanh.
func cartpoleConfig() PolicyConfig {
	return PolicyConfig{ObsDim: 4, Head: HeadCategorical, NumActions: 2, Hidden: []int{64, 64}, Activation: ActTanh}
}

func TestPolicyCategoricalLayout(t *testing.T) {
	// CleanRL's CartPole agent: actor 4·64+64 + 64·64+64 + 2·64+2 = 320 + 4160 + 130
	// = 4610, critic 320 + 4160 + 64+1 = 4545, total 9155.
	m := NewPolicy(cartpoleConfig(), rand.New(rand.NewPCG(1, 1)))
	if m.NumParams() != 9155 || len(m.Grads()) != 9155 {
		t.Fatalf("NumParams = %d, len(Grads) = %d, want 9155", m.NumParams(), len(m.Grads()))
	}
	want := []struct {
		name   string
		offset int
		shape  []int
	}{
		{"actor.0.weight", 0, []int{64, 4}}, {"actor.0.bias", 256, []int{64}},
		{"actor.2.weight", 320, []int{64, 64}}, {"actor.2.bias", 4416, []int{64}},
		{"actor.4.weight", 4480, []int{2, 64}}, {"actor.4.bias", 4608, []int{2}},
		{"critic.0.weight", 4610, []int{64, 4}}, {"critic.0.bias", 4866, []int{64}},
		{"critic.2.weight", 4930, []int{64, 64}}, {"critic.2.bias", 9026, []int{64}},
		{"critic.4.weight", 9090, []int{1, 64}}, {"critic.4.bias", 9154, []int{1}},
	}
	got := m.Layout()
	if len(got) != len(want) {
		t.Fatalf("layout has %d tensors, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Offset != w.offset || len(g.Shape) != len(w.shape) || g.Shape[0] != w.shape[0] {
			t.Errorf("span %d = %+v, want %s at %d shape %v", i, g, w.name, w.offset, w.shape)
		}
	}
	if name := m.paramName(9090 + 3); name != "critic.4.weight[3]" {
		t.Errorf("paramName(9093) = %q, want critic.4.weight[3]", name)
	}
}

func TestPolicyCategoricalInit(t *testing.T) {
	m := NewPolicy(cartpoleConfig(), rand.New(rand.NewPCG(2, 2)))
	p := m.Params()
	for _, s := range m.Layout() {
		vals := p[s.Offset : s.Offset+s.Size()]
		if strings.HasSuffix(s.Name, "bias") {
			for _, v := range vals {
				if v != 0 {
					t.Fatalf("%s has non-zero bias %v", s.Name, v)
				}
			}
			continue
		}
		gain := math.Sqrt2
		switch s.Name {
		case "actor.4.weight":
			gain = 0.01
		case "critic.4.weight":
			gain = 1
		}
		// The smaller side is orthonormal·gain: WWᵀ = gain²I when rows ≤
		// cols, WᵀW = gain²I otherwise. Householder QR is backward stable:
		// entries are exact to a few hundred ulps for 64-wide matrices, so
		// 1e-12·gain² is a safe bound.
		rows, cols := s.Shape[0], s.Shape[1]
		small, large := rows, cols
		at := func(i, k int) float64 { return vals[i*cols+k] } // row i, col k
		if rows > cols {
			small, large = cols, rows
			at = func(i, k int) float64 { return vals[k*cols+i] } // col i, row k
		}
		for i := 0; i < small; i++ {
			for j := 0; j < small; j++ {
				dotij := 0.0
				for k := 0; k < large; k++ {
					dotij += at(i, k) * at(j, k)
				}
				want := 0.0
				if i == j {
					want = gain * gain
				}
				if math.Abs(dotij-want) > 1e-12*gain*gain {
					t.Fatalf("%s: Gram[%d][%d] = %v, want %v", s.Name, i, j, dotij, want)
				}
			}
		}
	}
}

func TestActEmpiricalFrequencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := NewPolicy(PolicyConfig{ObsDim: 4, Head: HeadCategorical, NumActions: 3, Hidden: []int{16}, Activation: ActReLU}, rng)
	// Spread the policy so the three probabilities differ clearly.
	for i := range m.Params() {
		m.Params()[i] = 0.3 * rng.NormFloat64()
	}
	obs := []float64{0.3, -1.2, 0.8, 0.1}
	// π(j | obs) for j = 0, 1, 2: evaluate the three actions on three
	// copies of obs.
	lp, ent, v3 := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	m.Evaluate(append(append(append([]float64(nil), obs...), obs...), obs...), 3, Actions{Tokens: []int{0, 1, 2}}, lp, ent, v3)
	probs := make([]float64, 3)
	for j, l := range lp {
		probs[j] = math.Exp(l)
	}
	const n = 20000
	batch := make([]float64, 0, n*4)
	for i := 0; i < n; i++ {
		batch = append(batch, obs...)
	}
	actions, logp, values := make([]int, n), make([]float64, n), make([]float64, n)
	m.Act(batch, n, rand.New(rand.NewPCG(4, 4)), actions, logp, values)
	v := make([]float64, 1)
	m.Values(obs, 1, v)
	counts := make([]int, 3)
	for i, a := range actions {
		counts[a]++
		// probs exponentiates the same log-probabilities; exp then log
		// loses a few ulps of numbers of order 1: 1e-13.
		if math.Abs(logp[i]-math.Log(probs[a])) > 1e-13 {
			t.Fatalf("logp[%d] = %v, want log %v", i, logp[i], probs[a])
		}
		if values[i] != v[0] {
			t.Fatalf("values[%d] = %v, want V(obs) = %v", i, values[i], v[0])
		}
	}
	for j, p := range probs {
		if p < 0.05 {
			t.Fatalf("probs %v: want every action reasonably likely for this test", probs)
		}
		// Count ~ Binomial(n, p): std sqrt(n p (1−p)); 4.5 std has a
		// two-sided false-alarm rate below 1e-5 per action.
		std := math.Sqrt(n * p * (1 - p))
		if d := math.Abs(float64(counts[j]) - n*p); d > 4.5*std {
			t.Errorf("action %d: %d draws, want %.0f ± %.0f (p = %.4f)", j, counts[j], n*p, 4.5*std, p)
		}
	}
}

func TestCloneAndSetParams(t *testing.T) {
	m := NewPolicy(cartpoleConfig(), rand.New(rand.NewPCG(5, 5)))
	c := m.Clone()
	obs := []float64{0.01, -0.02, 0.03, 0.04, 0.1, 0.2, -0.1, 0.0}
	vm, vc := make([]float64, 2), make([]float64, 2)
	m.Values(obs, 2, vm)
	c.Values(obs, 2, vc)
	if vm[0] != vc[0] || vm[1] != vc[1] {
		t.Fatalf("clone values %v differ from original %v", vc, vm)
	}
	m.Params()[m.NumParams()-1] += 1 // critic output bias: V shifts by exactly 1
	c.Values(obs, 2, vc)
	m.Values(obs, 2, vm)
	if vc[0] == vm[0] {
		t.Fatalf("clone shares parameters with the original")
	}
	c.SetParams(m.Params())
	c.Values(obs, 2, vc)
	if vc[0] != vm[0] || vc[1] != vm[1] {
		t.Fatalf("after SetParams clone values %v, want %v", vc, vm)
	}
	defer func() {
		if r, ok := recover().(string); !ok || !strings.HasPrefix(r, "kernels: ") {
			t.Errorf("SetParams with the wrong length: recovered %v, want a kernels: panic", r)
		}
	}()
	c.SetParams(make([]float64, 3))
}

func TestPolicyLayouts(t *testing.T) {
	type span struct {
		name   string
		offset int
		shape  []int
	}
	cases := []struct {
		cfg   PolicyConfig
		total int
		want  []span
	}{
		{
			// Trunk 3→5: 15 + 5; embedding 4×2 = 8; head 0: 5→4 = 20 + 4;
			// head 1: (5+2)→4 = 28 + 4; critic 3→5→1: 15 + 5 + 5 + 1. Total 110.
			tokensConfig(), 110, []span{
				{"actor.0.weight", 0, []int{5, 3}}, {"actor.0.bias", 15, []int{5}},
				{"token_embed.weight", 20, []int{4, 2}},
				{"token_head.0.weight", 28, []int{4, 5}}, {"token_head.0.bias", 48, []int{4}},
				{"token_head.1.weight", 52, []int{4, 7}}, {"token_head.1.bias", 80, []int{4}},
				{"critic.0.weight", 84, []int{5, 3}}, {"critic.0.bias", 99, []int{5}},
				{"critic.2.weight", 104, []int{1, 5}}, {"critic.2.bias", 109, []int{1}},
			},
		},
		{
			// Trunk 3→4: 12 + 4; mean 4→2: 8 + 2; log std 2; critic 12 + 4 + 4 + 1. Total 49.
			gaussianConfig(), 49, []span{
				{"actor_mean.0.weight", 0, []int{4, 3}}, {"actor_mean.0.bias", 12, []int{4}},
				{"actor_mean.2.weight", 16, []int{2, 4}}, {"actor_mean.2.bias", 24, []int{2}},
				{"actor_logstd", 26, []int{1, 2}},
				{"critic.0.weight", 28, []int{4, 3}}, {"critic.0.bias", 40, []int{4}},
				{"critic.2.weight", 44, []int{1, 4}}, {"critic.2.bias", 48, []int{1}},
			},
		},
	}
	for _, tc := range cases {
		p := NewPolicy(tc.cfg, rand.New(rand.NewPCG(1, 2)))
		got := p.Layout()
		if p.NumParams() != tc.total || len(got) != len(tc.want) {
			t.Fatalf("%s: %d params in %d tensors, want %d in %d", tc.cfg.Head, p.NumParams(), len(got), tc.total, len(tc.want))
		}
		for i, w := range tc.want {
			g := got[i]
			if g.Name != w.name || g.Offset != w.offset || len(g.Shape) != len(w.shape) || g.Shape[0] != w.shape[0] || g.Shape[len(g.Shape)-1] != w.shape[len(w.shape)-1] {
				t.Errorf("%s span %d = %+v, want %s at %d shape %v", tc.cfg.Head, i, g, w.name, w.offset, w.shape)
			}
		}
	}
	p := NewPolicy(gaussianConfig(), rand.New(rand.NewPCG(1, 2)))
	for d := 0; d < 2; d++ {
		if v := p.Params()[26+d]; v != -0.5 {
			t.Errorf("initial log std[%d] = %v, want InitLogStd -0.5", d, v)
		}
	}
	if name := p.paramName(27); name != "actor_logstd[1]" {
		t.Errorf("paramName(27) = %q, want actor_logstd[1]", name)
	}
}

// policyGradCheck checks Policy.Backward against central differences of
// L = Σ wlp·logp + Σ went·entropy + Σ wv·V over every parameter.
func policyGradCheck(t *testing.T, name string, p *Policy, obs []float64, n int, a Actions, rng *rand.Rand) {
	t.Helper()
	tps := p.TokensPerStep()
	wlp, went, wv := randSlice(rng, n*tps, 1), randSlice(rng, n*tps, 1), randSlice(rng, n, 1)
	lp, ent, v := make([]float64, n*tps), make([]float64, n*tps), make([]float64, n)
	loss := func() float64 {
		p.Evaluate(obs, n, a, lp, ent, v)
		return dot(wlp, lp) + dot(went, ent) + dot(wv, v)
	}
	loss()
	p.ZeroGrads()
	p.Backward(wlp, went, wv)
	grads := append([]float64(nil), p.Grads()...)
	checkGrad(t, name, loss, p.Params(), grads)
}

func TestPolicyHeadGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	const n = 5
	noHidden := tokensConfig()
	noHidden.Hidden = nil
	for _, tc := range []struct {
		name string
		cfg  PolicyConfig
	}{
		{"categorical", PolicyConfig{ObsDim: 3, Head: HeadCategorical, NumActions: 4, Hidden: []int{6, 5}, Activation: ActTanh}},
		{"tokens", tokensConfig()},
		{"tokens without hidden layers", noHidden},
		{"gaussian", gaussianConfig()},
	} {
		p := NewPolicy(tc.cfg, rng)
		perturb(p.Params(), 0.3, rng)
		obs := randSlice(rng, n*3, 1)
		var a Actions
		switch tc.cfg.Head {
		case HeadGaussian:
			a.Continuous = randSlice(rng, n*2, 1)
		default:
			a.Tokens = make([]int, n*p.TokensPerStep())
			for i := range a.Tokens {
				a.Tokens[i] = rng.IntN(4)
			}
		}
		policyGradCheck(t, tc.name, p, obs, n, a, rng)
	}
}

func TestGaussianHeadByHand(t *testing.T) {
	// No hidden layers: μ = W o + b. With W = [[0.5, −0.25], [1, 0]],
	// b = [0.1, −1], o = (1, 2): μ = (0.5 − 0.5 + 0.1, 1 − 1) = (0.1, 0).
	// log σ = (ln 2, 0), a = (1.1, −1): z = (0.5, −1),
	//   log π = (−0.125 − ln 2 − ½ ln 2π) + (−0.5 − 0 − ½ ln 2π)
	//         = −0.625 − 0.6931472 − 1.8378771 = −3.1560243
	//   H = (½ + ½ ln 2π + ln 2) + (½ + ½ ln 2π) = 1 + 1.8378771 + 0.6931472 = 3.5310243
	cfg := PolicyConfig{ObsDim: 2, Head: HeadGaussian, ActionDims: 2, Activation: ActTanh}
	p := NewPolicy(cfg, rand.New(rand.NewPCG(1, 1)))
	copy(p.Params(), []float64{0.5, -0.25, 1, 0, 0.1, -1, math.Log(2), 0})
	lp, ent, v := make([]float64, 1), make([]float64, 1), make([]float64, 1)
	p.Evaluate([]float64{1, 2}, 1, Actions{Continuous: []float64{1.1, -1}}, lp, ent, v)
	wantLP := -0.625 - math.Log(2) - math.Log(2*math.Pi)
	wantH := 1 + math.Log(2*math.Pi) + math.Log(2)
	// A dozen float64 operations on values of order 1: 1e-14.
	if math.Abs(lp[0]-wantLP) > 1e-14 || math.Abs(ent[0]-wantH) > 1e-14 {
		t.Errorf("log π = %.17g, H = %.17g; want %.17g, %.17g", lp[0], ent[0], wantLP, wantH)
	}
	a := Actions{Continuous: make([]float64, 2)}
	p.Greedy([]float64{1, 2}, 1, a)
	if a.Continuous[0] != 0.1 || a.Continuous[1] != 0 {
		t.Errorf("greedy action %v, want the mean (0.1, 0)", a.Continuous)
	}
}

func TestGaussianSampling(t *testing.T) {
	// Samples of a 1-d head with μ = 0.3 (bias only), σ = e^−1 = 0.3679:
	// the sample mean of 20000 draws has std σ/sqrt(20000) = 0.0026, the
	// sample variance has relative std sqrt(2/20000) = 1%. Bounds of 5 std
	// fail by chance with probability below 1e-6.
	cfg := PolicyConfig{ObsDim: 1, Head: HeadGaussian, ActionDims: 1, Activation: ActTanh}
	p := NewPolicy(cfg, rand.New(rand.NewPCG(1, 1)))
	copy(p.Params(), []float64{0, 0.3, -1})
	const n = 20000
	obs := make([]float64, n)
	a := Actions{Continuous: make([]float64, n)}
	lp, v := make([]float64, n), make([]float64, n)
	p.ActContinuous(obs, n, rand.New(rand.NewPCG(47, 48)), a.Continuous, lp, v)
	sigma := math.Exp(-1)
	mean, sq := 0.0, 0.0
	for i, x := range a.Continuous {
		mean += x
		sq += (x - 0.3) * (x - 0.3)
		z := (x - 0.3) / sigma
		if want := -0.5*z*z + 1 - 0.5*math.Log(2*math.Pi); math.Abs(lp[i]-want) > 1e-13 { // order-1 values: 1e-13
			t.Fatalf("log π of sample %d = %v, want %v", i, lp[i], want)
		}
	}
	mean /= n
	if math.Abs(mean-0.3) > 5*sigma/math.Sqrt(n) || math.Abs(sq/n/(sigma*sigma)-1) > 5*math.Sqrt(2.0/n) {
		t.Errorf("sample mean %v, variance %v; want 0.3 and %v", mean, sq/n, sigma*sigma)
	}
}

// softmaxAt returns softmax(z)[j], written out independently of Categorical.
func softmaxAt(z []float64, j int) float64 {
	s := 0.0
	for _, v := range z {
		s += math.Exp(v)
	}
	return math.Exp(z[j]) / s
}

// tensor returns the values of the named tensor of p.
func tensor(t *testing.T, p *Policy, name string) []float64 {
	t.Helper()
	for _, s := range p.Layout() {
		if s.Name == name {
			return p.Params()[s.Offset : s.Offset+s.Size()]
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

func TestTokensLogProbChain(t *testing.T) {
	// The per-token log-probabilities of a step must add up to the log of
	// the product of the conditionals π(t_0|o) π(t_1|o, t_0), computed here
	// from the named tensors with plain loops: features f = tanh(W0 o + b0),
	// input of head k = [f; e(t_0); …; e(t_{k−1})], p_k = softmax(W_k x + b_k)[t_k].
	rng := rand.New(rand.NewPCG(49, 50))
	cfg := tokensConfig()
	cfg.ActionDims = 3
	cfg.Low, cfg.High = []float64{-1, -1, -1}, []float64{1, 1, 1}
	p := NewPolicy(cfg, rng)
	perturb(p.Params(), 0.5, rng)
	const n = 6
	obs := randSlice(rng, n*3, 1)
	tokens := make([]int, n*3)
	for i := range tokens {
		tokens[i] = rng.IntN(4)
	}
	lp, ent, v := make([]float64, n*3), make([]float64, n*3), make([]float64, n)
	p.Evaluate(obs, n, Actions{Tokens: tokens}, lp, ent, v)

	w0, b0 := tensor(t, p, "actor.0.weight"), tensor(t, p, "actor.0.bias")
	emb := tensor(t, p, "token_embed.weight")
	for i := 0; i < n; i++ {
		x := make([]float64, 5)
		for h := range x {
			s := b0[h]
			for j := 0; j < 3; j++ {
				s += w0[h*3+j] * obs[i*3+j]
			}
			x[h] = math.Tanh(s)
		}
		prod, sum := 1.0, 0.0
		for k := 0; k < 3; k++ {
			wk := tensor(t, p, fmt.Sprintf("token_head.%d.weight", k))
			bk := tensor(t, p, fmt.Sprintf("token_head.%d.bias", k))
			z := make([]float64, 4)
			for o := range z {
				z[o] = bk[o]
				for c, xc := range x {
					z[o] += wk[o*len(x)+c] * xc
				}
			}
			prod *= softmaxAt(z, tokens[i*3+k])
			sum += lp[i*3+k]
			tok := tokens[i*3+k]
			x = append(x, emb[tok*2:(tok+1)*2]...)
		}
		// Sums and products of a few dozen terms of order 1: 1e-13 relative.
		if math.Abs(sum-math.Log(prod)) > 1e-13 {
			t.Errorf("row %d: Σ log π(t_k|…) = %.15g, log Π π = %.15g", i, sum, math.Log(prod))
		}
	}
}

func TestTokensJointDistribution(t *testing.T) {
	// For one observation, the joint probabilities of all 4² token pairs
	// must sum to 1, and Act's samples must follow them. 40000 samples: a
	// cell of probability p has count std sqrt(n p (1−p)); 4.5 std bounds
	// fail by chance with probability below 1e-4 over all 16 cells.
	rng := rand.New(rand.NewPCG(51, 52))
	p := NewPolicy(tokensConfig(), rng)
	perturb(p.Params(), 0.7, rng)
	obs := []float64{0.2, -0.4, 0.9}
	joint := make([]float64, 16)
	total := 0.0
	rows := make([]float64, 16*3)
	pairs := make([]int, 32)
	for c := 0; c < 16; c++ {
		copy(rows[c*3:], obs)
		pairs[2*c], pairs[2*c+1] = c/4, c%4
	}
	lp, ent, v := make([]float64, 32), make([]float64, 32), make([]float64, 16)
	p.Evaluate(rows, 16, Actions{Tokens: pairs}, lp, ent, v)
	for c := range joint {
		joint[c] = math.Exp(lp[2*c] + lp[2*c+1])
		total += joint[c]
	}
	// 16 exp/log round trips of order-1 values: 1e-14.
	if math.Abs(total-1) > 1e-14 {
		t.Fatalf("joint probabilities sum to %.17g, want 1", total)
	}
	const n = 40000
	batch := make([]float64, 0, n*3)
	for i := 0; i < n; i++ {
		batch = append(batch, obs...)
	}
	tokens, slp, sv := make([]int, 2*n), make([]float64, 2*n), make([]float64, n)
	p.Act(batch, n, rand.New(rand.NewPCG(53, 54)), tokens, slp, sv)
	counts := make([]int, 16)
	for i := 0; i < n; i++ {
		c := tokens[2*i]*4 + tokens[2*i+1]
		counts[c]++
		// Act's per-token log-probs equal Evaluate's: same arithmetic.
		if slp[2*i] != lp[2*c] || slp[2*i+1] != lp[2*c+1] {
			t.Fatalf("sample %d (%d, %d): log-probs %v, %v; Evaluate gives %v, %v",
				i, tokens[2*i], tokens[2*i+1], slp[2*i], slp[2*i+1], lp[2*c], lp[2*c+1])
		}
	}
	for c, pc := range joint {
		std := math.Sqrt(n * pc * (1 - pc))
		if d := math.Abs(float64(counts[c]) - n*pc); d > 4.5*std+1 {
			t.Errorf("pair (%d, %d): %d draws, want %.0f ± %.0f", c/4, c%4, counts[c], n*pc, 4.5*std)
		}
	}
}

func TestTokensGreedyAndEnvActions(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	p := NewPolicy(tokensConfig(), rng)
	perturb(p.Params(), 0.7, rng)
	obs := []float64{0.5, 0.1, -0.3}
	a := Actions{Tokens: make([]int, 2)}
	p.Greedy(obs, 1, a)
	// Greedy decoding: t_0 maximises π(·|o), t_1 maximises π(·|o, t_0).
	rows := append(append(append(append([]float64(nil), obs...), obs...), obs...), obs...)
	cand := make([]int, 8)
	lp, ent, v := make([]float64, 8), make([]float64, 8), make([]float64, 4)
	for c := 0; c < 4; c++ {
		cand[2*c], cand[2*c+1] = c, 0
	}
	p.Evaluate(rows, 4, Actions{Tokens: cand}, lp, ent, v)
	best := 0
	for c := 1; c < 4; c++ {
		if lp[2*c] > lp[2*best] {
			best = c
		}
	}
	for c := 0; c < 4; c++ {
		cand[2*c], cand[2*c+1] = best, c
	}
	p.Evaluate(rows, 4, Actions{Tokens: cand}, lp, ent, v)
	best1 := 0
	for c := 1; c < 4; c++ {
		if lp[2*c+1] > lp[2*best1+1] {
			best1 = c
		}
	}
	if a.Tokens[0] != best || a.Tokens[1] != best1 {
		t.Errorf("greedy tokens %v, want (%d, %d)", a.Tokens, best, best1)
	}

	// Bins of [−1, 1] and [0, 2] cut into 4: centres −0.75, −0.25, 0.25, 0.75
	// and 0.25, 0.75, 1.25, 1.75 (exact binary fractions).
	out := make([]float64, 4)
	p.EnvActions(Actions{Tokens: []int{0, 3, 2, 1}}, 2, out)
	if want := []float64{-0.75, 1.75, 0.25, 0.75}; out[0] != want[0] || out[1] != want[1] || out[2] != want[2] || out[3] != want[3] {
		t.Errorf("env actions %v, want %v", out, want)
	}
}

func TestBins(t *testing.T) {
	// 256 bins of [−1, 1] have width 1/128: bin 0 centres at −1 + 1/256,
	// bin 255 at 1 − 1/256; BinOf inverts BinCenter and clamps outside values.
	if c := BinCenter(0, 256, -1, 1); c != -1+1.0/256 {
		t.Errorf("BinCenter(0) = %v", c)
	}
	if c := BinCenter(255, 256, -1, 1); c != 1-1.0/256 {
		t.Errorf("BinCenter(255) = %v", c)
	}
	for b := 0; b < 256; b++ {
		if got := BinOf(BinCenter(b, 256, -1, 1), 256, -1, 1); got != b {
			t.Fatalf("BinOf(BinCenter(%d)) = %d", b, got)
		}
	}
	for _, c := range []struct {
		x    float64
		want int
	}{{-1, 0}, {1, 255}, {-5, 0}, {5, 255}, {0, 128}, {-1e-9, 127}, {math.NaN(), 0}} {
		if got := BinOf(c.x, 256, -1, 1); got != c.want {
			t.Errorf("BinOf(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

func TestGaussianEnvActionsClip(t *testing.T) {
	p := NewPolicy(gaussianConfig(), rand.New(rand.NewPCG(1, 1)))
	out := make([]float64, 4)
	p.EnvActions(Actions{Continuous: []float64{-3, 0.5, 1.5, -0.25}}, 2, out)
	if want := []float64{-1, 0.5, 1, -0.25}; out[0] != want[0] || out[1] != want[1] || out[2] != want[2] || out[3] != want[3] {
		t.Errorf("clipped env actions %v, want %v", out, want)
	}
	unbounded := gaussianConfig()
	unbounded.Low, unbounded.High = nil, nil
	q := NewPolicy(unbounded, rand.New(rand.NewPCG(1, 1)))
	q.EnvActions(Actions{Continuous: []float64{-3, 0.5, 1.5, -0.25}}, 2, out)
	if out[0] != -3 || out[2] != 1.5 {
		t.Errorf("unbounded env actions %v, want the samples unchanged", out)
	}
}

func TestPolicyCloneAndValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 58))
	p := NewPolicy(tokensConfig(), rng)
	c := p.Clone()
	c.Params()[0] += 1
	if p.Params()[0] == c.Params()[0] {
		t.Fatal("clone shares parameters")
	}
	c.SetParams(p.Params())
	if c.Params()[0] != p.Params()[0] || c.Config().Bins != 4 {
		t.Fatal("SetParams did not copy")
	}
	def := tokensConfig()
	def.Bins, def.EmbedDim = 0, 0
	if got := NewPolicy(def, rng).Config(); got.Bins != DefaultBins || got.EmbedDim != DefaultEmbedDim {
		t.Errorf("defaults: bins %d embed %d, want %d and %d", got.Bins, got.EmbedDim, DefaultBins, DefaultEmbedDim)
	}
	for _, tc := range []struct {
		cfg  PolicyConfig
		want []string
	}{
		{PolicyConfig{ObsDim: 0, Head: "beta", Activation: "gelu", Hidden: []int{0}}, []string{"obs dim", `"beta"`, `"gelu"`, "hidden layer 0"}},
		{PolicyConfig{ObsDim: 2, Head: HeadCategorical, NumActions: 1, Activation: ActTanh}, []string{"num actions"}},
		{PolicyConfig{ObsDim: 2, Head: HeadTokens, ActionDims: 2, Low: []float64{0}, High: []float64{1}, Activation: ActTanh}, []string{"low and high need 2"}},
		{PolicyConfig{ObsDim: 2, Head: HeadTokens, ActionDims: 1, Low: []float64{1}, High: []float64{1}, Bins: 1, Activation: ActTanh}, []string{"bins", "low < high"}},
		{PolicyConfig{ObsDim: 2, Head: HeadGaussian, ActionDims: 0, InitLogStd: math.NaN(), Activation: ActTanh}, []string{"action dims", "log std"}},
	} {
		err := tc.cfg.Validate()
		if err == nil {
			t.Errorf("%+v accepted", tc.cfg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %s", err, w)
			}
		}
	}
	func() {
		defer func() {
			if r, ok := recover().(string); !ok || !strings.HasPrefix(r, "kernels: Policy.Evaluate") {
				t.Errorf("short token slice: recovered %v, want a kernels: Policy.Evaluate panic", r)
			}
		}()
		v := make([]float64, 2)
		p.Evaluate(make([]float64, 3), 1, Actions{Tokens: []int{0}}, v, v, v[:1])
	}()
}
