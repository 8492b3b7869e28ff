package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lossFixture returns B steps of T tokens with log-ratios drawn from
// ±logRatioScale, advantages of both signs, and values near the returns.
func lossFixture(rng *rand.Rand, b, tps int, logRatioScale float64) LossInput {
	in := LossInput{
		LogProbs: randSlice(rng, b*tps, 1), OldLogProbs: make([]float64, b*tps), Entropy: randSlice(rng, b*tps, 0.5),
		Values: randSlice(rng, b, 1), OldValues: make([]float64, b), Advantages: randSlice(rng, b, 1), Returns: randSlice(rng, b, 1),
	}
	for i := range in.LogProbs {
		in.LogProbs[i] = -1 - math.Abs(in.LogProbs[i])
		in.OldLogProbs[i] = in.LogProbs[i] - logRatioScale*(2*rng.Float64()-1)
	}
	for i := range in.OldValues {
		in.OldValues[i] = in.Values[i] + 0.1*rng.NormFloat64()
	}
	return in
}

func newGrad(b, tps int) LossGrad {
	return LossGrad{LogProbs: make([]float64, b*tps), Entropy: make([]float64, b*tps), Values: make([]float64, b)}
}

func TestLossPPOByHand(t *testing.T) {
	// One sample, ε = 0.2, c_v = 0.5, c_e = 0.01, value clipping on, no KL.
	// ratio = exp(ln 1.5) = 1.5, Â = 2: max(−2·1.5, −2·1.2) = max(−3, −2.4) = −2.4
	// (clipped, zero gradient). V = 1, V_old = 0.5, R = 2: (V−R)² = 1,
	// V_clip = 0.5 + 0.2 = 0.7, (0.7−2)² = 1.69 > 1, so L_V = ½·1.69 = 0.845 and
	// ∂L_V/∂V = 0 (clip active). H = 0.6. approx_kl = (1.5−1) − ln 1.5 = 0.0945349.
	// L = −2.4 − 0.01·0.6 + 0.5·0.845 = −1.9835.
	cfg := DefaultLearnerConfig(AlgoPPO).LossConfig
	g := newGrad(1, 1)
	terms := Loss(cfg, LossInput{
		LogProbs: []float64{math.Log(1.5)}, OldLogProbs: []float64{0}, Entropy: []float64{0.6},
		Values: []float64{1}, OldValues: []float64{0.5}, Advantages: []float64{2}, Returns: []float64{2},
	}, g)
	// Each value is a handful of float64 operations on numbers of order 1: 1e-14.
	const tol = 1e-14
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"policy", terms.Policy, -2.4}, {"value", terms.Value, 0.845}, {"entropy", terms.Entropy, 0.6},
		{"approx kl", terms.ApproxKL, 0.5 - math.Log(1.5)}, {"clip frac", terms.ClipFrac, 1},
		{"total", terms.Total, -1.9835}, {"dL/dlogp", g.LogProbs[0], 0}, {"dL/dV", g.Values[0], 0},
		{"dL/dH", g.Entropy[0], -0.01},
	} {
		if math.Abs(c.got-c.want) > tol {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
}

// lossGradCheck compares grad with central differences of f over every
// entry of in.LogProbs, in.Entropy and in.Values.
func lossGradCheck(t *testing.T, name string, f func() float64, in LossInput, g LossGrad) {
	t.Helper()
	checkGrad(t, name+" d/dlogp", f, in.LogProbs, g.LogProbs)
	checkGrad(t, name+" d/dentropy", f, in.Entropy, g.Entropy)
	checkGrad(t, name+" d/dvalue", f, in.Values, g.Values)
}

func TestLossGradients(t *testing.T) {
	// Two tokens per step, KL penalty on. Log-ratios within ±0.1 keep PPO
	// inside its clip range and ±0.5 exercise SAPO's and v-trace's
	// curvature; old values within ~0.1 of V can activate the value clip,
	// so it is off here (TestPPOLossGradientsClipActive covers it). A
	// perturbation of 1e-5 cannot reach a kink of PPO's clip from ratios at
	// least ~1e-3 inside.
	for _, tc := range []struct {
		algo  string
		scale float64
	}{{AlgoPPO, 0.1}, {AlgoSAPO, 0.5}, {AlgoVTrace, 0.5}} {
		rng := rand.New(rand.NewPCG(63, 64))
		in := lossFixture(rng, 6, 2, tc.scale)
		cfg := DefaultLearnerConfig(tc.algo).LossConfig
		cfg.ClipValueLoss = false
		cfg.KLCoef = 0.3
		g := newGrad(6, 2)
		Loss(cfg, in, g)
		f := func() float64 { return Loss(cfg, in, newGrad(6, 2)).Total }
		lossGradCheck(t, tc.algo, f, in, g)
	}
}

func TestLossGradientsSAPONegativeTemperature(t *testing.T) {
	// Negative advantages select τ_neg; a distinct value (2) would show a
	// wrong temperature in the derivative.
	rng := rand.New(rand.NewPCG(65, 66))
	in := lossFixture(rng, 5, 3, 0.8)
	for i := range in.Advantages {
		in.Advantages[i] = -math.Abs(in.Advantages[i])
	}
	cfg := DefaultLearnerConfig(AlgoSAPO).LossConfig
	cfg.SAPOTauNeg = 2
	g := newGrad(5, 3)
	Loss(cfg, in, g)
	checkGrad(t, "sapo τ_neg", func() float64 { return Loss(cfg, in, newGrad(5, 3)).Total }, in.LogProbs, g.LogProbs)
}

func TestLossGradientsGIPO(t *testing.T) {
	// GIPO's weight is a stop-gradient, so the loss value is not the
	// function whose gradient Loss returns. The reference is the surrogate
	// with the weights frozen at the evaluation point:
	//   L_frozen(lp) = mean −Â r(lp) w̄ + (all non-policy terms of Loss),
	// differentiated numerically. Log-ratios up to ±1 with σ = 0.5 give
	// weights from 1 down to e^−2 = 0.135.
	rng := rand.New(rand.NewPCG(67, 68))
	const b, tps = 6, 2
	in := lossFixture(rng, b, tps, 1)
	cfg := DefaultLearnerConfig(AlgoGIPO).LossConfig
	cfg.KLCoef = 0.2
	g := newGrad(b, tps)
	Loss(cfg, in, g)
	w := make([]float64, b*tps)
	for k := range w {
		w[k] = GIPOWeight(in.LogProbs[k]-in.OldLogProbs[k], cfg.GIPOSigma)
	}
	frozen := func() float64 {
		terms := Loss(cfg, in, newGrad(b, tps))
		pol := 0.0
		for k := range w {
			pol += -in.Advantages[k/tps] * math.Exp(in.LogProbs[k]-in.OldLogProbs[k]) * w[k]
		}
		return terms.Total - terms.Policy + pol/float64(b*tps)
	}
	lossGradCheck(t, "gipo", frozen, in, g)
}

func TestGIPOWeightByHand(t *testing.T) {
	// w = exp(−½ (log ρ/σ)²): ρ = 1 → 1; log ρ = ±0.5 = ±σ → e^−½;
	// log ρ = −1 = −2σ → e^−2; σ = 1, log ρ = 3 → e^−4.5.
	for _, c := range []struct{ logRatio, sigma, want float64 }{
		{0, 0.5, 1}, {0.5, 0.5, math.Exp(-0.5)}, {-0.5, 0.5, math.Exp(-0.5)},
		{-1, 0.5, math.Exp(-2)}, {3, 1, math.Exp(-4.5)},
	} {
		// One division, one square, one exp: 2 ulps.
		if got := GIPOWeight(c.logRatio, c.sigma); math.Abs(got-c.want) > 4e-16*c.want {
			t.Errorf("GIPOWeight(%v, %v) = %.17g, want %.17g", c.logRatio, c.sigma, got, c.want)
		}
	}
	// One token, Â = 2, log ρ = 0.5, σ = 0.5: policy loss = −2·e^0.5·e^−0.5 = −2,
	// ∂/∂log π = −2 (the stop-gradient keeps w out of the derivative).
	// ApproxKL = (e^0.5 − 1) − 0.5 = 0.1487213.
	cfg := DefaultLearnerConfig(AlgoGIPO).LossConfig
	g := newGrad(1, 1)
	terms := Loss(cfg, LossInput{LogProbs: []float64{-1}, OldLogProbs: []float64{-1.5}, Entropy: []float64{0},
		Values: []float64{0}, OldValues: []float64{0}, Advantages: []float64{2}, Returns: []float64{0}}, g)
	// exp(0.5 − 0.5) = 1 exactly; the other values round a few times: 1e-15.
	if math.Abs(terms.Policy+2) > 1e-15 || math.Abs(g.LogProbs[0]+2) > 1e-15 ||
		math.Abs(terms.ApproxKL-(math.Exp(0.5)-1.5)) > 1e-15 {
		t.Errorf("policy %v, dL/dlogp %v, approx kl %v; want −2, −2, %v", terms.Policy, g.LogProbs[0], terms.ApproxKL, math.Exp(0.5)-1.5)
	}
	// Far off-policy (log ρ = 800) the weight vanishes instead of r·w = ∞·0.
	terms = Loss(cfg, LossInput{LogProbs: []float64{0}, OldLogProbs: []float64{-800}, Entropy: []float64{0},
		Values: []float64{0}, OldValues: []float64{0}, Advantages: []float64{1}, Returns: []float64{0}}, g)
	if terms.Policy != 0 || g.LogProbs[0] != 0 || terms.LowWeightFrac != 1 {
		t.Errorf("log ρ = 800: policy %v, gradient %v, low-weight share %v; want 0, 0, 1", terms.Policy, g.LogProbs[0], terms.LowWeightFrac)
	}
}

func TestSAPOByHand(t *testing.T) {
	// f(r) = (4/τ) sigmoid(τ(r − 1)). At r = 1: f = 2/τ and the gradient of
	// −Â f with respect to log π is −Â·4·¼·1 = −Â (PPO's on-policy gradient).
	// τ = 1, r = 2: sigmoid(1) = 0.7310585786, f = 2.9242343146,
	//   ∂f/∂log π = 4·sigmoid(1)(1 − sigmoid(1))·2 = 4·0.1966119332·2 = 1.5728954659.
	s1 := 1 / (1 + math.Exp(-1))
	for _, c := range []struct{ ratio, tau, want float64 }{
		{1, 1, 2}, {1, 1.05, 2 / 1.05}, {2, 1, 4 * s1}, {0, 1, 4 * (1 - s1)},
	} {
		if got := SAPOGate(c.ratio, c.tau); math.Abs(got-c.want) > 1e-15 { // a few roundings of order-1 values
			t.Errorf("SAPOGate(%v, %v) = %.17g, want %.17g", c.ratio, c.tau, got, c.want)
		}
	}
	cfg := DefaultLearnerConfig(AlgoSAPO).LossConfig
	g := newGrad(2, 1)
	// Step 0: r = 1, Â = 3 (τ_pos = 1): loss −3·2 = −6, gradient −3/2 (mean over 2 tokens).
	// Step 1: r = 2, Â = −1 (τ_neg = 1.05): loss (4/1.05) sigmoid(1.05), gradient
	//   −(−1)·4·s(1−s)·2/2 with s = sigmoid(1.05).
	terms := Loss(cfg, LossInput{LogProbs: []float64{-1, math.Log(2) - 1}, OldLogProbs: []float64{-1, -1},
		Entropy: []float64{0, 0}, Values: []float64{0, 0}, OldValues: []float64{0, 0},
		Advantages: []float64{3, -1}, Returns: []float64{0, 0}}, g)
	s := 1 / (1 + math.Exp(-1.05))
	wantPolicy := (-6 + 4/1.05*s) / 2
	wantG1 := 4 * s * (1 - s) * 2 / 2
	// exp(log 2) = 2 to within 1 ulp; the rest are a few roundings: 1e-14.
	if math.Abs(terms.Policy-wantPolicy) > 1e-14 || math.Abs(g.LogProbs[0]+1.5) > 1e-14 || math.Abs(g.LogProbs[1]-wantG1) > 1e-14 {
		t.Errorf("policy %v, gradients %v; want %v, [−1.5 %v]", terms.Policy, g.LogProbs, wantPolicy, wantG1)
	}
}

func TestKLTermByHand(t *testing.T) {
	// One token with log ρ = ln 2 and Â = 0 (no policy term): k3 = (2 − 1) − ln 2
	// = 0.3068528; with KLCoef 0.5 the total is 0.5·0.3068528 and
	// ∂L/∂log π = 0.5·(2 − 1) = 0.5 for every algorithm.
	for _, algo := range Algos() {
		cfg := DefaultLearnerConfig(algo).LossConfig
		cfg.KLCoef, cfg.EntropyCoef, cfg.ValueCoef = 0.5, 0, 0
		g := newGrad(1, 1)
		terms := Loss(cfg, LossInput{LogProbs: []float64{math.Log(2) - 3}, OldLogProbs: []float64{-3}, Entropy: []float64{1},
			Values: []float64{0}, OldValues: []float64{0}, Advantages: []float64{0}, Returns: []float64{0}}, g)
		want := 1 - math.Log(2)
		// exp(ln 2 − 3 + 3) is 2 within 2 ulps: 1e-15.
		if math.Abs(terms.ApproxKL-want) > 1e-15 || math.Abs(terms.Total-0.5*want) > 1e-15 || math.Abs(g.LogProbs[0]-0.5) > 1e-15 {
			t.Errorf("%s: kl %v, total %v, gradient %v; want %v, %v, 0.5", algo, terms.ApproxKL, terms.Total, g.LogProbs[0], want, 0.5*want)
		}
	}
}

func TestVTraceLossByHand(t *testing.T) {
	// v-trace: policy = mean −Â log π, value ½(V − v_s)² never clipped.
	// Â = (2, −1), log π = (−0.5, −2): policy = (1 − 2)/2 = −0.5,
	// gradients (−2/2, 1/2) = (−1, 0.5). V = (1, 0), v_s = (2, 0.5), V_old far
	// off (would clip): value = (½·1 + ½·0.25)/2 = 0.3125, dV = c_v (V − v_s)/2.
	cfg := DefaultLearnerConfig(AlgoVTrace).LossConfig
	cfg.ClipValueLoss = true // ignored by vtrace
	g := newGrad(2, 1)
	terms := Loss(cfg, LossInput{LogProbs: []float64{-0.5, -2}, OldLogProbs: []float64{-0.5, -2}, Entropy: []float64{0, 0},
		Values: []float64{1, 0}, OldValues: []float64{5, 5}, Advantages: []float64{2, -1}, Returns: []float64{2, 0.5}}, g)
	// Exact binary fractions throughout.
	if terms.Policy != -0.5 || terms.Value != 0.3125 || g.LogProbs[0] != -1 || g.LogProbs[1] != 0.5 ||
		g.Values[0] != 0.5*-1/2 || g.Values[1] != 0.5*-0.5/2 {
		t.Errorf("policy %v value %v, gradients %v %v", terms.Policy, terms.Value, g.LogProbs, g.Values)
	}
}

func TestVTraceByHand(t *testing.T) {
	// γ = 0.9, ρ̄ = c̄ = 1, ratios (2, 0.5, 1), rewards (1, 0, 2),
	// V = (0.5, 1.0, 1.5), bootstrap V(x_3) = 2. Truncated: ρ = c = (1, 0.5, 1).
	//   δ_2 = 1·(2 + 0.9·2 − 1.5) = 2.3
	//   δ_1 = 0.5·(0 + 0.9·1.5 − 1.0) = 0.5·0.35 = 0.175
	//   δ_0 = 1·(1 + 0.9·1.0 − 0.5) = 1.4
	//   v_2 = 1.5 + 2.3 = 3.8
	//   v_1 = 1.0 + 0.175 + 0.9·0.5·(3.8 − 1.5) = 1.175 + 1.035 = 2.21
	//   v_0 = 0.5 + 1.4 + 0.9·1·(2.21 − 1.0) = 1.9 + 1.089 = 2.989
	//   A_2 = 1·(2 + 0.9·2 − 1.5) = 2.3            (v_3 = bootstrap)
	//   A_1 = 0.5·(0 + 0.9·3.8 − 1.0) = 0.5·2.42 = 1.21
	//   A_0 = 1·(1 + 0.9·2.21 − 0.5) = 2.489
	vs, adv := make([]float64, 3), make([]float64, 3)
	VTrace([]float64{math.Log(2), math.Log(0.5), 0}, []float64{1, 0, 2}, []float64{0.5, 1.0, 1.5}, 2, 0.9, 1, 1, vs, adv)
	wantVs, wantAdv := []float64{2.989, 2.21, 3.8}, []float64{2.489, 1.21, 2.3}
	for i := range vs {
		// exp(log 0.5) and exp(log 2) are exact to an ulp, and the recursion
		// takes ~10 operations on values of order 1: 1e-14.
		if math.Abs(vs[i]-wantVs[i]) > 1e-14 || math.Abs(adv[i]-wantAdv[i]) > 1e-14 {
			t.Errorf("step %d: v = %.17g, A = %.17g; want %v, %v", i, vs[i], adv[i], wantVs[i], wantAdv[i])
		}
	}
}

func TestVTraceOnPolicyIsDiscountedReturn(t *testing.T) {
	// With π = μ every ρ and c is 1, and v_s is the n-step discounted return
	// Σ_k γ^k r_{s+k} + γ^{T−s} bootstrap — GAE's return with λ = 1.
	rng := rand.New(rand.NewPCG(69, 70))
	const n = 7
	rewards, values := randSlice(rng, n, 1), randSlice(rng, n, 1)
	vs, adv := make([]float64, n), make([]float64, n)
	VTrace(make([]float64, n), rewards, values, 0.7, 0.95, 1, 1, vs, adv)
	gaeAdv, gaeRet := make([]float64, n), make([]float64, n)
	GAE(rewards, values, 0.7, 0.95, 1, gaeAdv, gaeRet)
	for i := range vs {
		// Two recursions of 7 steps on order-1 values: 1e-14.
		if math.Abs(vs[i]-gaeRet[i]) > 1e-14 {
			t.Errorf("v_%d = %v, discounted return %v", i, vs[i], gaeRet[i])
		}
		// A_s = r_s + γ v_{s+1} − V_s, the one-step TD error of the targets.
		next := 0.7
		if i+1 < n {
			next = vs[i+1]
		}
		if want := rewards[i] + 0.95*next - values[i]; math.Abs(adv[i]-want) > 1e-14 {
			t.Errorf("A_%d = %v, want %v", i, adv[i], want)
		}
	}
}

func TestRatioStatsByHand(t *testing.T) {
	// Ratios (1, 2, 0.5, 10), ε = 0.2, σ = 0.5:
	//   clipped: 2, 0.5 and 10 leave [0.8, 1.2] → 3/4
	//   GIPO weights: 1, exp(−½(ln 2/0.5)²) = 0.3825, the same, exp(−½(ln 10/0.5)²) = 2.5e−5 → 1/4 below 1e−3
	//   ESS = (1 + 2 + 0.5 + 10)²/(4·(1 + 4 + 0.25 + 100)) = 182.25/421 = 0.4328979
	//   k3 = [0 + (1 − ln 2) + (−0.5 + ln 2) + (9 − ln 10)]/4 = (9.5 − ln 10)/4 = 1.8493537
	old := []float64{-1, -1, -1, -1}
	lp := []float64{-1, math.Log(2) - 1, math.Log(0.5) - 1, math.Log(10) - 1}
	s := ComputeRatioStats(lp, old, 0.2, 0.5)
	// Sums of four terms of order 1-100 with exp/log round trips: 1e-14 relative.
	if s.Tokens != 4 || s.ClipFrac != 0.75 || s.LowWeightFrac != 0.25 ||
		math.Abs(s.ESS-182.25/421) > 1e-14 || math.Abs(s.ApproxKL-(9.5-math.Log(10))/4) > 1e-14 ||
		math.Abs(s.MaxAbsLogRatio-math.Log(10)) > 1e-14 {
		t.Errorf("stats %+v", s)
	}
	// On-policy: ESS exactly 1, nothing clipped; huge log-ratios do not overflow.
	if s := ComputeRatioStats(old, old, 0.2, 0.5); s.ESS != 1 || s.ClipFrac != 0 || s.ApproxKL != 0 {
		t.Errorf("on-policy stats %+v", s)
	}
	if s := ComputeRatioStats([]float64{0, 0}, []float64{-900, 0}, 0.2, 0.5); math.Abs(s.ESS-0.5) > 1e-15 {
		t.Errorf("one dominant weight: ESS %v, want 1/N = 0.5", s.ESS)
	}
}

func TestLossConfigValidate(t *testing.T) {
	for _, algo := range Algos() {
		if err := DefaultLearnerConfig(algo).Validate(); err != nil {
			t.Errorf("default %s config: %v", algo, err)
		}
	}
	bad := DefaultLearnerConfig("trpo")
	bad.ClipCoef, bad.KLCoef, bad.AdvNorm, bad.Epochs = 0, -1, "layer", 0
	bad.Schedule.Kind = "step"
	err := bad.Validate()
	for _, w := range []string{`"trpo"`, "clip coefficient", "kl", `"layer"`, "epochs", `"step"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not mention %s", err, w)
		}
	}
	for _, c := range []struct {
		mod  func(*LearnerConfig)
		want string
	}{
		{func(c *LearnerConfig) { c.Algo, c.GIPOSigma = AlgoGIPO, 0 }, "gipo sigma"},
		{func(c *LearnerConfig) { c.Algo, c.SAPOTauNeg = AlgoSAPO, -1 }, "sapo temperatures"},
		{func(c *LearnerConfig) { c.Algo, c.Gamma = AlgoVTrace, 1.5 }, "gamma"},
		{func(c *LearnerConfig) { c.Algo, c.CBar = AlgoVTrace, 0 }, "c-bar"},
		{func(c *LearnerConfig) { c.AdvNorm, c.AdvEps = AdvNormGlobal, 0 }, "epsilon"},
	} {
		cfg := DefaultLearnerConfig(AlgoPPO)
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want it to mention %s", err, c.want)
		}
	}
}

func TestLossValueOnly(t *testing.T) {
	// A critic-only step keeps every reported term and the value gradient of
	// the full loss, and gives the policy nothing to follow: no log-prob or
	// entropy gradient (from the policy term, the entropy bonus or the KL
	// penalty), and a Total that is the weighted value loss alone.
	for _, algo := range []string{AlgoPPO, AlgoGIPO, AlgoSAPO, AlgoVTrace} {
		rng := rand.New(rand.NewPCG(65, 66))
		in := lossFixture(rng, 5, 3, 0.3)
		cfg := DefaultLearnerConfig(algo).LossConfig
		cfg.KLCoef = 0.2
		full, vo := newGrad(5, 3), newGrad(5, 3)
		ft := Loss(cfg, in, full)
		cfg.ValueOnly = true
		vt := Loss(cfg, in, vo)
		if vt.Policy != ft.Policy || vt.Value != ft.Value || vt.Entropy != ft.Entropy || vt.ApproxKL != ft.ApproxKL || vt.ClipFrac != ft.ClipFrac {
			t.Errorf("%s: value-only terms %+v differ from the full loss's %+v", algo, vt, ft)
		}
		// The same float64 product, c_v·L_V, either way: exact.
		if want := cfg.ValueCoef * ft.Value; vt.Total != want {
			t.Errorf("%s: value-only total %v, want c_v·L_V = %v", algo, vt.Total, want)
		}
		for k := range vo.LogProbs {
			if vo.LogProbs[k] != 0 || vo.Entropy[k] != 0 {
				t.Fatalf("%s: token %d has gradients %v (log-prob) and %v (entropy), want 0", algo, k, vo.LogProbs[k], vo.Entropy[k])
			}
			if full.LogProbs[k] == 0 {
				t.Fatalf("%s: token %d has no log-prob gradient in the full loss; the fixture does not test anything", algo, k)
			}
		}
		for i := range vo.Values {
			if vo.Values[i] != full.Values[i] {
				t.Errorf("%s: value gradient %d is %v, want the full loss's %v", algo, i, vo.Values[i], full.Values[i])
			}
		}
	}
}

func TestLossPositiveAdvantages(t *testing.T) {
	// With PositiveAdvantages every term is the full loss's on advantages max(Â, 0): the
	// same computation on a copy of the input with the negative advantages set to 0,
	// exactly. The fixture must hold both signs for this to test anything.
	for _, algo := range []string{AlgoPPO, AlgoGIPO, AlgoSAPO, AlgoVTrace} {
		rng := rand.New(rand.NewPCG(67, 68))
		in := lossFixture(rng, 6, 2, 0.3)
		neg := 0
		clamped := in
		clamped.Advantages = append([]float64(nil), in.Advantages...)
		for i, a := range clamped.Advantages {
			if a < 0 {
				clamped.Advantages[i] = 0
				neg++
			}
		}
		if neg == 0 || neg == len(in.Advantages) {
			t.Fatalf("fixture advantages %v: want both signs", in.Advantages)
		}
		cfg := DefaultLearnerConfig(algo).LossConfig
		want, got := newGrad(6, 2), newGrad(6, 2)
		wt := Loss(cfg, clamped, want)
		cfg.PositiveAdvantages = true
		gt := Loss(cfg, in, got)
		if gt != wt || !slices.Equal(got.LogProbs, want.LogProbs) || !slices.Equal(got.Values, want.Values) {
			t.Errorf("%s: positive-only loss %+v differs from the loss on clamped advantages %+v", algo, gt, wt)
		}
	}
}
