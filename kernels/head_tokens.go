package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// BinCenter returns the continuous value of token b when [low, high] is cut
// into bins equal bins: low + (b + ½)(high − low)/bins.
func BinCenter(b, bins int, low, high float64) float64 {
	return low + (float64(b)+0.5)*(high-low)/float64(bins)
}

// BinOf returns the token whose bin contains x, the inverse of BinCenter:
// ⌊(x − low)/(high − low) · bins⌋ clamped to [0, bins−1], so values outside
// [low, high] map to the end bins. NaN maps to bin 0.
func BinOf(x float64, bins int, low, high float64) int {
	f := math.Floor((x - low) / (high - low) * float64(bins))
	if !(f >= 0) { // also NaN
		return 0
	}
	if f >= float64(bins) {
		return bins - 1
	}
	return int(f)
}

// tokensHead decodes D action tokens per step autoregressively. Token k is
// drawn from
//
//	π(t_k | o, t_<k) = softmax(W_k [f(o); e(t_0); …; e(t_{k−1})] + b_k)
//
// where f(o) are the actor trunk's features (width F), e is a learned
// embedding table of Bins rows of width E shared by all positions, and
// W_k (Bins × (F + kE)), b_k are position k's output layer. The output
// layers produce only the Bins action-token logits ("vocabulary slimming":
// a VLA's head restricted to the action-token slice of its vocabulary).
// Log-probabilities and entropies are per token.
type tokensHead struct {
	d, k, e, f int
	low, high  []float64
	embed      []float64 // Bins×E, view of the parameters
	gEmbed     []float64 // view of the gradients
	heads      []*Dense  // heads[j]: F + jE → Bins
	dist       Categorical

	n       int
	tokens  []int       // n×D, the caller's
	xs      [][]float64 // xs[j]: n×(F + jE) inputs of head j
	logp    [][]float64 // logp[j]: n×Bins log-probabilities at position j
	ent     []float64   // n×D, copy of Evaluate's entropies
	col     []int       // one position's tokens, n
	lpCol   []float64
	entCol  []float64
	dlpCol  []float64
	dentCol []float64
	logits  []float64
	dlogits []float64
	dx      []float64
}

func newTokensHead(featDim int, cfg PolicyConfig) *tokensHead {
	h := &tokensHead{d: cfg.ActionDims, k: cfg.Bins, e: cfg.EmbedDim, f: featDim,
		low: cfg.Low, high: cfg.High, dist: Categorical{K: cfg.Bins}}
	for j := 0; j < h.d; j++ {
		h.heads = append(h.heads, NewDense(featDim+j*h.e, h.k))
	}
	h.xs = make([][]float64, h.d)
	h.logp = make([][]float64, h.d)
	return h
}

func (h *tokensHead) numParams() int {
	n := h.k * h.e
	for _, d := range h.heads {
		n += d.NumParams()
	}
	return n
}

func (h *tokensHead) tokensPerStep() int { return h.d }
func (h *tokensHead) envActionDims() int { return h.d }

func (h *tokensHead) bind(params, grads []float64) {
	ne := h.k * h.e
	h.embed, h.gEmbed = params[:ne:ne], grads[:ne:ne]
	off := ne
	for _, d := range h.heads {
		m := d.NumParams()
		d.Bind(params[off:off+m:off+m], grads[off:off+m:off+m])
		off += m
	}
}

// init draws the embedding from N(0, 1) (PyTorch's nn.Embedding default)
// and each output layer orthogonally with gain 0.01, so that the initial
// token distributions are near uniform.
func (h *tokensHead) init(rng *rand.Rand) {
	for i := range h.embed {
		h.embed[i] = rng.NormFloat64()
	}
	for _, d := range h.heads {
		d.InitOrthogonal(0.01, rng)
	}
}

func (h *tokensHead) spans(off, _ int) []ParamSpan {
	s := []ParamSpan{{Name: "token_embed.weight", Offset: off, Shape: []int{h.k, h.e}}}
	off += h.k * h.e
	for j, d := range h.heads {
		s = append(s, denseSpans(fmt.Sprintf("token_head.%d.", j), d, off)...)
		off += d.NumParams()
	}
	return s
}

func (h *tokensHead) checkActions(op string, a Actions, n int) {
	checkN("Policy."+op+" (token actions)", n*h.d, len(a.Tokens))
}

// input builds xs[j] from the features and the tokens at positions < j,
// which must already be in tokens (n×D).
func (h *tokensHead) input(j int, feat []float64, n int, tokens []int) []float64 {
	w := h.f + j*h.e
	x := grow(h.xs[j], n*w)
	h.xs[j] = x
	for i := 0; i < n; i++ {
		row := x[i*w : (i+1)*w]
		copy(row[:h.f], feat[i*h.f:(i+1)*h.f])
		for m := 0; m < j; m++ {
			t := tokens[i*h.d+m]
			if t < 0 || t >= h.k {
				panic(fmt.Sprintf("kernels: tokens head: token %d at row %d, position %d out of range [0, %d)", t, i, m, h.k))
			}
			copy(row[h.f+m*h.e:h.f+(m+1)*h.e], h.embed[t*h.e:(t+1)*h.e])
		}
	}
	return x
}

// position runs head j on xs[j] and leaves its log-probabilities in
// logp[j].
func (h *tokensHead) position(j int, feat []float64, n int, tokens []int) []float64 {
	x := h.input(j, feat, n, tokens)
	h.logits = grow(h.logits, n*h.k)
	h.logp[j] = grow(h.logp[j], n*h.k)
	h.heads[j].Forward(x, n, h.logits)
	h.dist.LogProbs(h.logits, n, h.logp[j])
	return h.logp[j]
}

func (h *tokensHead) scratch(n int) {
	h.col = growInts(h.col, n)
	for _, s := range []*[]float64{&h.lpCol, &h.entCol, &h.dlpCol, &h.dentCol} {
		*s = grow(*s, n)
	}
}

func (h *tokensHead) evaluate(feat []float64, n int, a Actions, logp, ent []float64) {
	h.scratch(n)
	for j := 0; j < h.d; j++ {
		lp := h.position(j, feat, n, a.Tokens)
		for i := 0; i < n; i++ {
			h.col[i] = a.Tokens[i*h.d+j]
		}
		h.dist.Eval(lp, n, h.col, h.lpCol, h.entCol)
		for i := 0; i < n; i++ {
			logp[i*h.d+j] = h.lpCol[i]
			ent[i*h.d+j] = h.entCol[i]
		}
	}
	h.n, h.tokens = n, a.Tokens
	h.ent = append(h.ent[:0], ent...)
}

// backward sends each position's logit gradients through its output layer;
// the input gradient splits into the features part (summed over positions)
// and one E-wide part per earlier token, added to that token's embedding
// row.
func (h *tokensHead) backward(dlogp, dent, dfeat []float64) {
	n := h.n
	clear(dfeat)
	h.dlogits = grow(h.dlogits, n*h.k)
	for j := 0; j < h.d; j++ {
		for i := 0; i < n; i++ {
			h.col[i] = h.tokens[i*h.d+j]
			h.entCol[i] = h.ent[i*h.d+j]
			h.dlpCol[i] = dlogp[i*h.d+j]
			h.dentCol[i] = dent[i*h.d+j]
		}
		h.dist.Backward(h.logp[j], n, h.col, h.entCol, h.dlpCol, h.dentCol, h.dlogits)
		w := h.f + j*h.e
		h.dx = grow(h.dx, n*w)
		h.heads[j].Backward(h.xs[j], h.dlogits, n, h.dx)
		for i := 0; i < n; i++ {
			row := h.dx[i*w : (i+1)*w]
			df := dfeat[i*h.f : (i+1)*h.f]
			for c, g := range row[:h.f] {
				df[c] += g
			}
			for m := 0; m < j; m++ {
				t := h.tokens[i*h.d+m]
				ge := h.gEmbed[t*h.e : (t+1)*h.e]
				for c, g := range row[h.f+m*h.e : h.f+(m+1)*h.e] {
					ge[c] += g
				}
			}
		}
	}
}

// sample draws the tokens position by position, rows batched, each
// position conditioned on the tokens just drawn; one rng.Float64() per row
// and position, positions in the outer loop.
func (h *tokensHead) sample(feat []float64, n int, rng *rand.Rand, a Actions, logp []float64) {
	h.scratch(n)
	for j := 0; j < h.d; j++ {
		lp := h.position(j, feat, n, a.Tokens)
		h.dist.Sample(lp, n, rng, h.col, h.lpCol)
		for i := 0; i < n; i++ {
			a.Tokens[i*h.d+j] = h.col[i]
			logp[i*h.d+j] = h.lpCol[i]
		}
	}
	h.n = 0
}

func (h *tokensHead) mode(feat []float64, n int, a Actions) {
	for j := 0; j < h.d; j++ {
		lp := h.position(j, feat, n, a.Tokens)
		argmaxRows(lp, n, h.k, a.Tokens[j:], h.d)
	}
	h.n = 0
}

func (h *tokensHead) envActions(a Actions, n int, out []float64) {
	for i, t := range a.Tokens[:n*h.d] {
		if t < 0 || t >= h.k {
			panic(fmt.Sprintf("kernels: Policy.EnvActions: token %d at index %d out of range [0, %d)", t, i, h.k))
		}
		d := i % h.d
		out[i] = BinCenter(t, h.k, h.low[d], h.high[d])
	}
}
