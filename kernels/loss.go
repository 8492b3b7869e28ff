package kernels

import (
	"fmt"
	"math"
)

// LossInput holds one minibatch of B samples as a policy-gradient loss sees
// them. The current-parameter quantities come from [ActorCritic.Evaluate]
// or [Policy.Evaluate]; the old ones were recorded when the samples were
// collected. For [PPOLoss] every slice has B entries; [Loss] also accepts
// T tokens per sample, with LogProbs, OldLogProbs and Entropy of length B·T.
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
// to each sample's LogProbs, Entropy and Values, ready for
// [ActorCritic.Backward].
type LossGrad struct {
	LogProbs, Entropy, Values []float64
}

// LossTerms are the scalar pieces of one loss evaluation.
type LossTerms struct {
	Total    float64 // the minimised loss
	Policy   float64 // clipped surrogate term (a loss: lower is better)
	Value    float64 // value-function loss
	Entropy  float64 // mean entropy
	ApproxKL float64 // mean((ratio − 1) − log ratio), Schulman's k3 estimator of KL(old‖new)
	ClipFrac float64 // fraction of samples with |ratio − 1| > ClipCoef

	// Filled by [Loss] only (zero from PPOLoss):
	LowWeightFrac float64 // fraction of tokens whose GIPO weight is below GIPOLowWeight
	ESS           float64 // effective sample size (Σr)²/(N Σr²) of the ratios
}

// PPOLoss is the clipped PPO objective of Schulman et al. 2017, "Proximal
// Policy Optimization Algorithms", eq. 7 (clipped surrogate) and eq. 9
// (combined loss), written as a loss to minimise with CleanRL's value clipping.
// With ratio r_t = exp(log π_θ − log π_θold) and ε = ClipCoef:
//
//	L_clip  = mean_t max(−Â_t r_t, −Â_t clip(r_t, 1−ε, 1+ε))
//	L_V     = mean_t ½ max((V_t − R_t)², (V_old,t + clip(V_t − V_old,t, −ε, ε) − R_t)²)   if ClipValueLoss
//	L_V     = mean_t ½ (V_t − R_t)²                                                       otherwise
//	L       = L_clip − EntropyCoef · mean_t H_t + ValueCoef · L_V
//
// It writes ∂L/∂log π_θ, ∂L/∂H and ∂L/∂V per sample into grad. Where the two
// branches of a max tie (inside the clip range) their gradients agree, so
// the choice at ties does not matter.
func PPOLoss(cfg PPOConfig, in LossInput, grad LossGrad) LossTerms {
	b := len(in.LogProbs)
	checkN("PPOLoss", b, len(in.OldLogProbs), len(in.Entropy), len(in.Values), len(in.OldValues),
		len(in.Advantages), len(in.Returns), len(grad.LogProbs), len(grad.Entropy), len(grad.Values))
	if b == 0 {
		panic("kernels: PPOLoss: empty minibatch")
	}
	eps, inv := cfg.ClipCoef, 1/float64(b)
	var t LossTerms
	for i := 0; i < b; i++ {
		// Policy: clipped surrogate.
		logRatio := in.LogProbs[i] - in.OldLogProbs[i]
		ratio := math.Exp(logRatio)
		adv := in.Advantages[i]
		unclipped := -adv * ratio
		clipped := -adv * clamp(ratio, 1-eps, 1+eps)
		if unclipped >= clipped {
			t.Policy += unclipped
			grad.LogProbs[i] = -adv * ratio * inv // ∂(−Â r)/∂log π = −Â r
		} else {
			t.Policy += clipped
			grad.LogProbs[i] = 0 // the clipped ratio is constant in θ
		}
		t.ApproxKL += (ratio - 1) - logRatio
		if math.Abs(ratio-1) > eps {
			t.ClipFrac++
		}

		// Value: squared error, optionally clipped around the old value.
		v, ret := in.Values[i], in.Returns[i]
		sq := (v - ret) * (v - ret)
		dv := v - ret // ∂(½(V−R)²)/∂V
		if cfg.ClipValueLoss {
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
		grad.Values[i] = cfg.ValueCoef * dv * inv

		// Entropy bonus.
		t.Entropy += in.Entropy[i]
		grad.Entropy[i] = -cfg.EntropyCoef * inv
	}
	t.Policy *= inv
	t.Value *= inv
	t.Entropy *= inv
	t.ApproxKL *= inv
	t.ClipFrac *= inv
	t.Total = t.Policy - cfg.EntropyCoef*t.Entropy + cfg.ValueCoef*t.Value
	return t
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
