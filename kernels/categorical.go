package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Categorical is the action head for a discrete action space with K choices:
// the actor's K outputs per row are logits z, and
//
//	log π(j) = z_j − log Σ_l exp z_l,   H = −Σ_j π(j) log π(j).
//
// It holds no state; all methods work on row-major n×K slices.
type Categorical struct {
	K int // number of actions
}

// LogProbs sets logp[i][j] = log softmax(logits[i])[j], computed with the row
// maximum subtracted so that large logits do not overflow.
func (c Categorical) LogProbs(logits []float64, n int, logp []float64) {
	c.check("LogProbs", logits, n)
	c.check("LogProbs", logp, n)
	for i := 0; i < n; i++ {
		z := logits[i*c.K : (i+1)*c.K]
		out := logp[i*c.K : (i+1)*c.K]
		mx := math.Inf(-1)
		for _, v := range z {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range z {
			s += math.Exp(v - mx)
		}
		// (v − max) − log s keeps full precision even for large logits.
		ls := math.Log(s)
		for j, v := range z {
			out[j] = (v - mx) - ls
		}
	}
}

// Eval reads, for each row i, the log-probability of actions[i],
// lp[i] = logp[i][actions[i]], and the entropy ent[i] = −Σ_j p_ij logp_ij.
func (c Categorical) Eval(logp []float64, n int, actions []int, lp, ent []float64) {
	c.check("Eval", logp, n)
	checkN("Categorical.Eval", n, len(actions), len(lp), len(ent))
	for i := 0; i < n; i++ {
		row := logp[i*c.K : (i+1)*c.K]
		a := actions[i]
		if a < 0 || a >= c.K {
			panic(fmt.Sprintf("kernels: Categorical.Eval: action %d at row %d out of range [0, %d)", a, i, c.K))
		}
		lp[i] = row[a]
		h := 0.0
		for _, l := range row {
			h -= math.Exp(l) * l
		}
		ent[i] = h
	}
}

// Sample draws actions[i] from row i by inverting the cumulative distribution
// at one rng.Float64() per row, and sets lp[i] to its log-probability.
func (c Categorical) Sample(logp []float64, n int, rng *rand.Rand, actions []int, lp []float64) {
	c.check("Sample", logp, n)
	checkN("Categorical.Sample", n, len(actions), len(lp))
	for i := 0; i < n; i++ {
		row := logp[i*c.K : (i+1)*c.K]
		u := rng.Float64()
		a, cum := -1, 0.0
		for j, l := range row {
			p := math.Exp(l)
			if p == 0 {
				continue
			}
			a = j // the last action with p > 0 absorbs rounding of the sum
			cum += p
			if u < cum {
				break
			}
		}
		actions[i] = a
		lp[i] = row[a]
	}
}

// Backward turns per-row gradients of a loss with respect to the sampled
// action's log-probability (dlp) and to the entropy (dent) into the gradient
// with respect to the logits:
//
//	∂ log π(a)/∂z_j = δ_ja − p_j
//	∂ H/∂z_j        = −p_j (log p_j + H)
//	dlogits[i][j]   = dlp[i]·(δ_ja − p_j) − dent[i]·p_j·(log p_j + H_i)
//
// logp and ent must be the values LogProbs and Eval produced for the same
// rows; dlogits is overwritten.
func (c Categorical) Backward(logp []float64, n int, actions []int, ent, dlp, dent, dlogits []float64) {
	c.check("Backward", logp, n)
	c.check("Backward", dlogits, n)
	checkN("Categorical.Backward", n, len(actions), len(ent), len(dlp), len(dent))
	for i := 0; i < n; i++ {
		row := logp[i*c.K : (i+1)*c.K]
		out := dlogits[i*c.K : (i+1)*c.K]
		g, gh, h := dlp[i], dent[i], ent[i]
		for j, l := range row {
			p := math.Exp(l)
			out[j] = -g*p - gh*p*(l+h)
		}
		out[actions[i]] += g
	}
}

func (c Categorical) check(op string, x []float64, n int) {
	if len(x) != n*c.K {
		panic(fmt.Sprintf("kernels: Categorical.%s: slice has %d values, want n*K = %d", op, len(x), n*c.K))
	}
}

// checkN panics unless every length equals n.
func checkN(op string, n int, lens ...int) {
	for _, l := range lens {
		if l != n {
			panic(fmt.Sprintf("kernels: %s: slice has %d values, want %d", op, l, n))
		}
	}
}
