package reward

import (
	"fmt"
	"math"
)

// Focal holds the focal-loss hyper-parameters (Lin et al. 2017, eq. 5).
type Focal struct {
	// Gamma is the focusing exponent γ ≥ 0 (the paper's: 2; 0 is the
	// cross-entropy).
	Gamma float64
	// Alpha in (0, 1) weighs the positive class by α and the negative one
	// by 1 − α; 0 turns the balancing off (α_t = 1 for both).
	Alpha float64
}

// Validate reports a γ or α the loss is not defined for.
func (f Focal) Validate() error {
	if !(f.Gamma >= 0) || math.IsInf(f.Gamma, 0) {
		return fmt.Errorf("focal gamma must be a finite number ≥ 0 (the paper's is 2), got %v", f.Gamma)
	}
	if !(f.Alpha >= 0 && f.Alpha < 1) {
		return fmt.Errorf("focal alpha must be in [0, 1) (0 turns class balancing off), got %v", f.Alpha)
	}
	return nil
}

// Loss returns the focal loss of n rows of logits z (n × k, row-major)
// against 0/1 labels y of the same shape — the mean over the rows of the
// sum over the k columns — and its gradient with respect to z.
//
//	p_t = σ(s·z),  s = +1 if y = 1 else −1
//	FL  = −α_t (1 − p_t)^γ log p_t
//	∂FL/∂z = α_t s (1 − p_t)^γ (γ p_t log p_t − (1 − p_t))
//
// log p_t = −softplus(−s·z) is computed without overflow for logits of any
// size.
func (f Focal) Loss(z, y []float64, n int) (float64, []float64) {
	if len(z) != len(y) || n < 1 || len(z)%n != 0 {
		panic(fmt.Sprintf("reward: focal loss: %d logits, %d labels, %d rows", len(z), len(y), n))
	}
	dz := make([]float64, len(z))
	total := 0.0
	for i, zi := range z {
		s, at := -1.0, 1.0
		if y[i] > 0.5 {
			s = 1
		}
		if f.Alpha > 0 {
			at = 1 - f.Alpha
			if s > 0 {
				at = f.Alpha
			}
		}
		x := s * zi
		logPt := -softplus(-x)
		pt := math.Exp(logPt)
		q := 1 - pt // = σ(−x), computed directly where p_t is close to 1
		if x > 0 {
			q = math.Exp(-softplus(x))
		}
		w := math.Pow(q, f.Gamma)
		total += -at * w * logPt
		dz[i] = at * s * w * (f.Gamma*pt*logPt - q) / float64(n)
	}
	return total / float64(n), dz
}

// softplus returns log(1 + eˣ) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
