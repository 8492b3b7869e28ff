package kernels

import (
	"fmt"
	"math/rand/v2"
)

// categoricalHead is a linear layer from the features to K logits and a
// [Categorical] distribution over them: CleanRL's discrete actor output.
type categoricalHead struct {
	out  *Dense
	dist Categorical

	n       int
	feat    []float64
	tokens  []int
	logits  []float64
	logp    []float64 // n×K
	ent     []float64
	dlogits []float64
}

func newCategoricalHead(featDim, k int) *categoricalHead {
	return &categoricalHead{out: NewDense(featDim, k), dist: Categorical{K: k}}
}

func (h *categoricalHead) numParams() int               { return h.out.NumParams() }
func (h *categoricalHead) bind(params, grads []float64) { h.out.Bind(params, grads) }
func (h *categoricalHead) init(rng *rand.Rand)          { h.out.InitOrthogonal(0.01, rng) }
func (h *categoricalHead) tokensPerStep() int           { return 1 }
func (h *categoricalHead) envActionDims() int           { return 1 }

func (h *categoricalHead) spans(off, trunkLayers int) []ParamSpan {
	return denseSpans(fmt.Sprintf("actor.%d.", 2*trunkLayers), h.out, off)
}

func (h *categoricalHead) checkActions(op string, a Actions, n int) {
	checkN("Policy."+op+" (categorical actions)", n, len(a.Tokens))
}

// logProbs runs the output layer and the log-softmax for n rows.
func (h *categoricalHead) logProbs(feat []float64, n int) {
	h.logits = grow(h.logits, n*h.dist.K)
	h.logp = grow(h.logp, n*h.dist.K)
	h.out.Forward(feat, n, h.logits)
	h.dist.LogProbs(h.logits, n, h.logp)
}

func (h *categoricalHead) evaluate(feat []float64, n int, a Actions, logp, ent []float64) {
	h.logProbs(feat, n)
	h.dist.Eval(h.logp, n, a.Tokens, logp, ent)
	h.n, h.feat, h.tokens = n, feat, a.Tokens
	h.ent = append(h.ent[:0], ent...)
}

func (h *categoricalHead) backward(dlogp, dent, dfeat []float64) {
	h.dlogits = grow(h.dlogits, h.n*h.dist.K)
	h.dist.Backward(h.logp, h.n, h.tokens, h.ent, dlogp, dent, h.dlogits)
	h.out.Backward(h.feat, h.dlogits, h.n, dfeat)
}

func (h *categoricalHead) sample(feat []float64, n int, rng *rand.Rand, a Actions, logp []float64) {
	h.logProbs(feat, n)
	h.dist.Sample(h.logp, n, rng, a.Tokens, logp)
}

func (h *categoricalHead) mode(feat []float64, n int, a Actions) {
	h.logProbs(feat, n)
	argmaxRows(h.logp, n, h.dist.K, a.Tokens, 1)
}

func (h *categoricalHead) envActions(a Actions, n int, out []float64) {
	for i, t := range a.Tokens[:n] {
		if t < 0 || t >= h.dist.K {
			panic(fmt.Sprintf("kernels: Policy.EnvActions: action %d at row %d out of range [0, %d)", t, i, h.dist.K))
		}
		out[i] = float64(t)
	}
}

// argmaxRows writes the index of the largest value of each k-wide row of x
// (n rows) to dst[i*stride], the lowest index on ties.
func argmaxRows(x []float64, n, k int, dst []int, stride int) {
	for i := 0; i < n; i++ {
		row := x[i*k : (i+1)*k]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		dst[i*stride] = best
	}
}
