package kernels

import (
	"errors"
	"fmt"
	"math"
)

// Policy-loss names accepted by [LossConfig].Algo.
const (
	AlgoPPO    = "ppo"    // clipped surrogate, Schulman et al. 2017
	AlgoGIPO   = "gipo"   // Gaussian importance-sampling policy optimisation (AcceRL)
	AlgoSAPO   = "sapo"   // soft adaptive policy optimisation, Gao et al. 2025
	AlgoVTrace = "vtrace" // IMPALA's v-trace actor-critic loss, Espeholt et al. 2018
)

// Algos returns the policy-loss names, sorted.
func Algos() []string { return []string{AlgoGIPO, AlgoPPO, AlgoSAPO, AlgoVTrace} }

// Defaults of the algorithm-specific coefficients.
const (
	DefaultGIPOSigma  = 0.5  // σ of the GIPO weight (AcceRL)
	DefaultSAPOTauPos = 1.0  // SAPO temperature for positive advantages (Gao et al. 2025)
	DefaultSAPOTauNeg = 1.05 // SAPO temperature for negative advantages (Gao et al. 2025)
	// GIPOLowWeight is the threshold below which a GIPO weight counts as
	// vanished in the LowWeightFrac diagnostic.
	GIPOLowWeight = 1e-3
)

// LossConfig selects the policy loss and weighs the terms of the total loss
//
//	L = L_policy + ValueCoef·L_V − EntropyCoef·mean(H) + KLCoef·KL
//
// where every mean runs over tokens (policy, entropy, KL) or steps (value).
type LossConfig struct {
	Algo string // AlgoPPO, AlgoGIPO, AlgoSAPO or AlgoVTrace
	// ClipCoef is PPO's ε (how far a ratio may move before its gradient is
	// cut) and, with ClipValueLoss, how far V may move per update; the
	// ClipFrac diagnostic uses it for every algorithm.
	ClipCoef float64
	// ClipValueLoss takes the larger of the plain and the clipped value
	// error (CleanRL); v-trace never clips.
	ClipValueLoss bool
	GIPOSigma     float64 // GIPO's σ: smaller suppresses stale tokens sooner
	SAPOTauPos    float64 // SAPO temperature where Â > 0: larger closes the gate faster
	SAPOTauNeg    float64 // SAPO temperature where Â ≤ 0: larger closes the gate faster
	ValueCoef     float64 // weight of the value loss
	EntropyCoef   float64 // weight of the entropy bonus; larger keeps the policy more random
	KLCoef        float64 // weight of the KL(π_old‖π_θ) penalty; 0 disables it
	// ValueOnly makes this a critic-only step: the policy, entropy and KL terms
	// are still computed and reported but contribute no gradient (and no
	// Total), so only the value loss moves the parameters, and the learner
	// steps with Adam.StepSparse (no momentum for parameters it does not
	// reach; a value head sharing a trunk still moves it). The engine sets it
	// per update (critic warm-up, batches without reward); it is never part of
	// a stored configuration.
	ValueOnly bool `json:"-"`
	// PositiveAdvantages lets only samples with a positive (normalised)
	// advantage move the policy: the policy term uses max(Â, 0), as
	// self-imitation learning does (Oh et al. 2018). On a sparse success reward
	// it reinforces what succeeded and no longer pushes down the tokens of
	// failed episodes, most of which are the cloned policy's own most likely
	// ones. The value loss is unchanged.
	PositiveAdvantages bool `json:",omitempty"`
}

// Validate reports coefficients the loss cannot run with.
func (c LossConfig) Validate() error {
	var errs []error
	switch c.Algo {
	case AlgoPPO, AlgoVTrace:
	case AlgoGIPO:
		if !(c.GIPOSigma > 0) {
			errs = append(errs, fmt.Errorf("gipo sigma must be positive, got %v", c.GIPOSigma))
		}
	case AlgoSAPO:
		if !(c.SAPOTauPos > 0) || !(c.SAPOTauNeg > 0) {
			errs = append(errs, fmt.Errorf("sapo temperatures must be positive, got %v and %v", c.SAPOTauPos, c.SAPOTauNeg))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown algorithm %q (want one of %v)", c.Algo, Algos()))
	}
	if !(c.ClipCoef > 0) {
		errs = append(errs, fmt.Errorf("clip coefficient must be positive, got %v", c.ClipCoef))
	}
	if !(c.ValueCoef >= 0) || !(c.EntropyCoef >= 0) || !(c.KLCoef >= 0) {
		errs = append(errs, fmt.Errorf("value, entropy and kl coefficients must not be negative, got %v, %v, %v",
			c.ValueCoef, c.EntropyCoef, c.KLCoef))
	}
	return errors.Join(errs...)
}

// GIPOWeight returns the GIPO weight of a token with log-ratio
// log ρ = log π_θ − log π_old:
//
//	w = exp(−½ (log ρ / σ)²)
//
// 1 on-policy, e^−½ at log ρ = ±σ, and below [GIPOLowWeight] beyond
// |log ρ| ≈ 3.72σ.
func GIPOWeight(logRatio, sigma float64) float64 {
	z := logRatio / sigma
	return math.Exp(-0.5 * z * z)
}

// SAPOGate returns SAPO's soft gate of a ratio r at temperature τ,
//
//	f(r) = (4/τ) · sigmoid(τ (r − 1)),
//
// whose derivative 4·sigmoid(x)(1 − sigmoid(x)) with x = τ(r − 1) is 1 at
// r = 1 (the on-policy gradient is kept) and decays smoothly as r leaves 1.
func SAPOGate(ratio, tau float64) float64 {
	return 4 / tau * sigmoid(tau*(ratio-1))
}

// sigmoid is 1/(1 + e^−x), evaluated without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// sigmoidSlope is sigmoid(x)(1 − sigmoid(x)) = e^−|x| / (1 + e^−|x|)²,
// which underflows to 0 instead of forming ∞·0 for large |x|.
func sigmoidSlope(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	return e / ((1 + e) * (1 + e))
}

// LossInput holds one minibatch of B steps as a policy-gradient loss sees
// them. The current-parameter quantities come from [Policy.Evaluate]; the
// old ones were recorded when the samples were collected. LogProbs,
// OldLogProbs and Entropy hold T tokens per step (B·T entries), the other
// slices B.
type LossInput struct {
	LogProbs    []float64 // log π_θ(a_t|s_t) under the current parameters
	OldLogProbs []float64 // log π_θold(a_t|s_t) recorded at collection
	Entropy     []float64 // H[π_θ(·|s_t)]
	Values      []float64 // V_θ(s_t)
	OldValues   []float64 // V_θold(s_t) recorded at collection (value clipping)
	Advantages  []float64 // Â_t, already normalised if wanted
	Returns     []float64 // value targets R_t = Â_t + V_θold(s_t)
}

// LossGrad receives the partial derivatives of the total loss with respect
// to each token's LogProbs and Entropy and each step's Values, ready for
// [Policy.Backward].
type LossGrad struct {
	LogProbs, Entropy, Values []float64
}

// LossTerms are the scalar pieces of one loss evaluation.
type LossTerms struct {
	Total         float64 // the minimised loss
	Policy        float64 // policy term (a loss: lower is better)
	Value         float64 // value-function loss
	Entropy       float64 // mean entropy
	ApproxKL      float64 // mean((ratio − 1) − log ratio), Schulman's k3 estimator of KL(old‖new)
	ClipFrac      float64 // fraction of tokens with |ratio − 1| > ClipCoef
	LowWeightFrac float64 // fraction of tokens whose GIPO weight is below GIPOLowWeight
	ESS           float64 // effective sample size (Σr)²/(N Σr²) of the ratios
}

// Loss evaluates the total loss of one minibatch for cfg.Algo and writes
// its partial derivatives into grad. in holds B steps with T ≥ 1 tokens
// each: LogProbs, OldLogProbs and Entropy have B·T entries (step i's
// tokens at [i*T:(i+1)*T]), Values, OldValues, Advantages and Returns have
// B (OldValues may be nil when the value loss is not clipped). Every token
// of step i uses Â_i. With r = exp(log π_θ − log π_old) per
// token and means over the B·T tokens, the policy term is:
//
//	ppo:    mean max(−Â r, −Â clip(r, 1−ε, 1+ε))
//	        (Schulman et al. 2017, "Proximal Policy Optimization Algorithms", eq. 7)
//	gipo:   mean −Â · r · w,  w = exp(−½ (log r̄/σ)²),  r̄ = stop-grad(r)
//	        (AcceRL's Gaussian importance-sampling policy optimisation; no hard clip;
//	        r·w is evaluated as exp(log r − ½(log r/σ)²), finite for any log r)
//	sapo:   mean −Â · (4/τ) · sigmoid(τ (r − 1)),  τ = τ_pos if Â > 0 else τ_neg
//	        (Gao et al. 2025, "Soft Adaptive Policy Optimization", arXiv:2511.20347,
//	        the token-level soft gate, their eq. for f_{i,t}, with asymmetric τ)
//	vtrace: mean −Â · log π_θ
//	        (Espeholt et al. 2018, "IMPALA", eq. 4's policy-gradient term; Â must
//	        be the v-trace advantage ρ_s (r_s + γ v_{s+1} − V(x_s)) from [VTrace])
//
// The value term, a mean over steps, is ½ (V − R)², or with ClipValueLoss
// (ignored by vtrace) ½ max((V − R)², (V_old + clip(V − V_old, −ε, ε) − R)²)
// as in CleanRL's ppo.py. The KL term is Schulman's k3 estimator of KL(π_old‖π_θ)
// on the sampled tokens, mean((r − 1) − log r), whose gradient
// (r − 1)∇log π_θ is unbiased for samples from π_old (J. Schulman 2020,
// "Approximating KL Divergence"); it is reported as ApproxKL for every
// algorithm and enters the total only through KLCoef.
//
// Gradients: ∂/∂log π_θ of the per-token policy terms are −Â r (ppo inside
// the clip range or on the unclipped side, 0 otherwise), −Â r w (gipo),
// −Â · 4 sigmoid(x)(1 − sigmoid(x)) · r with x = τ(r − 1) (sapo) and −Â
// (vtrace), each divided by B·T; the KL term adds KLCoef (r − 1)/(B·T).
// Loss panics on inconsistent lengths or an unknown algorithm (validate
// with [LossConfig.Validate]).
func Loss(cfg LossConfig, in LossInput, grad LossGrad) LossTerms {
	b := len(in.Values)
	if b == 0 || len(in.LogProbs)%b != 0 || len(in.LogProbs) == 0 {
		panic(fmt.Sprintf("kernels: Loss: %d log-probs for %d steps, want a positive multiple", len(in.LogProbs), b))
	}
	nt := len(in.LogProbs)
	tps := nt / b
	checkN("Loss tokens", nt, len(in.OldLogProbs), len(in.Entropy), len(grad.LogProbs), len(grad.Entropy))
	checkN("Loss steps", b, len(in.Advantages), len(in.Returns), len(grad.Values))
	clipV := cfg.ClipValueLoss && cfg.Algo != AlgoVTrace
	if clipV {
		checkN("Loss old values", b, len(in.OldValues))
	}
	inv := 1 / float64(nt)
	eps := cfg.ClipCoef
	var t LossTerms
	for k := 0; k < nt; k++ {
		adv := in.Advantages[k/tps]
		if cfg.PositiveAdvantages {
			adv = math.Max(adv, 0)
		}
		logRatio := in.LogProbs[k] - in.OldLogProbs[k]
		ratio := math.Exp(logRatio)
		var term, g float64 // per-token policy loss and ∂term/∂log π_θ
		switch cfg.Algo {
		case AlgoPPO:
			unclipped := -adv * ratio
			clipped := -adv * clamp(ratio, 1-eps, 1+eps)
			if unclipped >= clipped {
				term, g = unclipped, -adv*ratio
			} else {
				term, g = clipped, 0 // the clipped ratio is constant in θ
			}
		case AlgoGIPO:
			z := logRatio / cfg.GIPOSigma
			rw := math.Exp(logRatio - 0.5*z*z) // r·w without ∞·0
			term, g = -adv*rw, -adv*rw         // w is a constant (stop-gradient)
		case AlgoSAPO:
			tau := cfg.SAPOTauNeg
			if adv > 0 {
				tau = cfg.SAPOTauPos
			}
			x := tau * (ratio - 1)
			term = -adv * 4 / tau * sigmoid(x)
			if s := sigmoidSlope(x); s != 0 {
				g = -adv * 4 * s * ratio // d gate/d log π = 4 σ(1−σ) r
			}
		case AlgoVTrace:
			term, g = -adv*in.LogProbs[k], -adv
		default:
			panic(fmt.Sprintf("kernels: Loss: unknown algorithm %q", cfg.Algo))
		}
		t.Policy += term
		t.ApproxKL += (ratio - 1) - logRatio
		t.Entropy += in.Entropy[k]
		if cfg.ValueOnly {
			grad.LogProbs[k], grad.Entropy[k] = 0, 0
			continue
		}
		grad.LogProbs[k] = g * inv
		if cfg.KLCoef != 0 {
			grad.LogProbs[k] += cfg.KLCoef * (ratio - 1) * inv
		}
		grad.Entropy[k] = -cfg.EntropyCoef * inv
	}

	invB := 1 / float64(b)
	for i := 0; i < b; i++ {
		v, ret := in.Values[i], in.Returns[i]
		sq := (v - ret) * (v - ret)
		dv := v - ret
		if clipV {
			diff := v - in.OldValues[i]
			vClipped := in.OldValues[i] + clamp(diff, -eps, eps)
			sqClipped := (vClipped - ret) * (vClipped - ret)
			if sqClipped > sq {
				sq = sqClipped
				dv = 0
				if diff > -eps && diff < eps {
					dv = vClipped - ret
				}
			}
		}
		t.Value += 0.5 * sq
		grad.Values[i] = cfg.ValueCoef * dv * invB
	}

	t.Policy *= inv
	t.Value *= invB
	t.Entropy *= inv
	t.ApproxKL *= inv
	t.Total = t.Policy - cfg.EntropyCoef*t.Entropy + cfg.ValueCoef*t.Value + cfg.KLCoef*t.ApproxKL
	if cfg.ValueOnly {
		t.Total = cfg.ValueCoef * t.Value
	}
	rs := ComputeRatioStats(in.LogProbs, in.OldLogProbs, eps, cfg.gipoSigma())
	t.ClipFrac, t.LowWeightFrac, t.ESS = rs.ClipFrac, rs.LowWeightFrac, rs.ESS
	return t
}

// gipoSigma is the σ the LowWeightFrac diagnostic uses: GIPOSigma when set,
// DefaultGIPOSigma otherwise, so that the diagnostic is comparable across
// algorithms.
func (c LossConfig) gipoSigma() float64 {
	if c.GIPOSigma > 0 {
		return c.GIPOSigma
	}
	return DefaultGIPOSigma
}

// RatioStats summarise the per-token importance ratios r = π_θ/π_old of a
// set of tokens; with π_θ the learner's current parameters and π_old the
// policy that collected the data they measure the policy lag.
type RatioStats struct {
	Tokens        int     // number of tokens
	ClipFrac      float64 // share with |r − 1| > ε, the tokens PPO's clip would cut
	LowWeightFrac float64 // share whose GIPO weight exp(−½(log r/σ)²) is below GIPOLowWeight
	// ESS is the normalised effective sample size of the ratios as
	// importance weights, (Σr)²/(N Σr²): 1 when all ratios are equal (on
	// policy), 1/N when one token carries all the weight.
	ESS            float64
	ApproxKL       float64 // mean((r − 1) − log r), the k3 estimate of KL(π_old‖π_θ)
	MaxAbsLogRatio float64 // largest |log r|
}

// ComputeRatioStats returns the [RatioStats] of tokens with log π_θ = logp
// and log π_old = oldLogp, using PPO's clip ε and GIPO's σ for the two
// shares. ESS is computed from exp(log r − max log r), which cancels in the
// ratio and cannot overflow.
func ComputeRatioStats(logp, oldLogp []float64, clipCoef, sigma float64) RatioStats {
	checkN("ComputeRatioStats", len(logp), len(oldLogp))
	n := len(logp)
	s := RatioStats{Tokens: n}
	if n == 0 {
		return s
	}
	maxLR := math.Inf(-1)
	for i, lp := range logp {
		lr := lp - oldLogp[i]
		maxLR = math.Max(maxLR, lr)
		r := math.Exp(lr)
		if math.Abs(r-1) > clipCoef {
			s.ClipFrac++
		}
		if GIPOWeight(lr, sigma) < GIPOLowWeight {
			s.LowWeightFrac++
		}
		s.ApproxKL += (r - 1) - lr
		s.MaxAbsLogRatio = math.Max(s.MaxAbsLogRatio, math.Abs(lr))
	}
	var sw, sww float64
	for i, lp := range logp {
		w := math.Exp(lp - oldLogp[i] - maxLR)
		sw += w
		sww += w * w
	}
	inv := 1 / float64(n)
	s.ClipFrac *= inv
	s.LowWeightFrac *= inv
	s.ApproxKL *= inv
	s.ESS = sw * sw / (float64(n) * sww)
	return s
}

func clamp(x, lo, hi float64) float64 {
	return math.Min(math.Max(x, lo), hi)
}

// checkLossFinite names the first non-finite term of t.
func checkLossFinite(t LossTerms) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"policy loss", t.Policy}, {"value loss", t.Value}, {"entropy", t.Entropy}, {"total loss", t.Total}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s is %v", f.name, f.v)
		}
	}
	return nil
}
