package vla

import (
	"math"
	"math/rand/v2"
)

// Act decodes the ActionDims tokens of every observation autoregressively
// and returns them (bins in [0, Bins)), their log-probabilities and the
// value estimates. The observation prefix runs once; its keys and values
// are cached per layer, and each action position then runs only its own
// token through the blocks, attending to the cache (a KV cache: ActionDims
// single-position steps instead of ActionDims full passes).
//
// Tokens are drawn from each position's distribution over the action
// tokens with one rng.Float64() per sample and position (positions outer,
// samples inner), or taken as the argmax when greedy is set (rng may then
// be nil). With the full head the draw is from the V-softmax renormalised
// over the action tokens (non-action tokens are never emitted), while logp
// is the V-normalised log π that Forward reports, so the two agree for PPO
// ratios; they differ from the sampling distribution's log-probs by log Z,
// Z the V-softmax mass of the action tokens (near 1 once trained).
func (m *Net[F]) Act(batch []Obs, rng *rand.Rand, greedy bool) (tokens [][]int, logp [][]F, value []F) {
	return m.act(batch, rng, greedy, nil)
}

// act is Act; onLogp, when not nil, sees each position's nb × headWidth
// log-softmax (for the tests that compare it with Forward's).
func (m *Net[F]) act(batch []Obs, rng *rand.Rand, greedy bool, onLogp func(pos int, logp []F)) (tokens [][]int, logp [][]F, value []F) {
	c := m.cfg
	nb, d, hid := len(batch), c.Dim, c.MLPRatio*c.Dim
	tp, tmax, na := c.PrefixLen(), c.SeqLen(), c.ActionDims
	pre := m.run(batch, nil, 0, false)
	value = pre.Value
	// Caches nb × tmax × d per layer; the prefix part from the prefix pass.
	kc := make([][]F, c.Layers)
	vc := make([][]F, c.Layers)
	valid := make([]bool, nb*tmax)
	for l := range kc {
		kc[l], vc[l] = make([]F, nb*tmax*d), make([]F, nb*tmax*d)
		qkv := pre.layers[l].qkv
		for i := 0; i < nb; i++ {
			for p := 0; p < tp; p++ {
				src := qkv[(i*tp+p)*3*d:]
				copy(kc[l][(i*tmax+p)*d:(i*tmax+p+1)*d], src[d:2*d])
				copy(vc[l][(i*tmax+p)*d:(i*tmax+p+1)*d], src[2*d:3*d])
			}
		}
	}
	for i := 0; i < nb; i++ {
		for p := 0; p < tmax; p++ {
			valid[i*tmax+p] = p >= tp || pre.valid[i*tp+p]
		}
	}
	pre = nil

	tokens = make([][]int, nb)
	logp = make([][]F, nb)
	for i := range tokens {
		tokens[i] = make([]int, na)
		logp[i] = make([]F, na)
	}
	k := m.headWidth()
	x := make([]F, nb*d)
	ln, mu, rs := make([]F, nb*d), make([]F, nb), make([]F, nb)
	qkv, ctx, h := make([]F, nb*3*d), make([]F, nb*d), make([]F, nb*d)
	u, g := make([]F, nb*hid), make([]F, nb*hid)
	logits := make([]F, nb*k)
	for j := 0; j < na; j++ {
		pos := tp + j
		sp := m.w.seqPos.w[(c.MaxInstr+1+j)*d:]
		for i := 0; i < nb; i++ {
			id := c.ActID()
			if j > 0 {
				id = c.ActionTokenID(tokens[i][j-1])
			}
			e := m.w.tok.w[id*d:]
			row := x[i*d : (i+1)*d]
			for q := range row {
				row[q] = e[q] + sp[q]
			}
		}
		for l, w := range m.w.blocks {
			layerNorm(x, nb, d, w.ln1g.w, w.ln1b.w, ln, mu, rs)
			linear(ln, nb, d, 3*d, w.qkvW.w, w.qkvB.w, qkv)
			for i := 0; i < nb; i++ {
				copy(kc[l][(i*tmax+pos)*d:(i*tmax+pos+1)*d], qkv[i*3*d+d:i*3*d+2*d])
				copy(vc[l][(i*tmax+pos)*d:(i*tmax+pos+1)*d], qkv[i*3*d+2*d:i*3*d+3*d])
				copy(ctx[i*d:(i+1)*d], qkv[i*3*d:i*3*d+d]) // the query, read before ctx is written
			}
			q := append([]F(nil), ctx...)
			attnDecode(q, kc[l], vc[l], nb, tmax, d, c.Heads, pos, tp, valid, ctx)
			linear(ctx, nb, d, d, w.oW.w, w.oB.w, h)
			for q := range h {
				h[q] += x[q]
			}
			layerNorm(h, nb, d, w.ln2g.w, w.ln2b.w, ln, mu, rs)
			linear(ln, nb, d, hid, w.fc1W.w, w.fc1B.w, u)
			gelu(u, g)
			linear(g, nb, hid, d, w.fc2W.w, w.fc2B.w, x)
			for q := range x {
				x[q] += h[q]
			}
		}
		layerNorm(x, nb, d, m.w.lnfG.w, m.w.lnfB.w, ln, mu, rs)
		m.headLogits(ln, nb, logits)
		logSoftmax(logits, nb, k, logits)
		if onLogp != nil {
			onLogp(j, logits)
		}
		base := m.actionCol(0)
		for i := 0; i < nb; i++ {
			row := logits[i*k : (i+1)*k]
			act := row[base : base+c.Bins]
			var b int
			if greedy {
				b = argmaxBin(act)
			} else {
				b = sampleBin(act, rng.Float64())
			}
			tokens[i][j] = b
			logp[i][j] = act[b]
		}
	}
	return tokens, logp, value
}

// sampleBin draws from the distribution ∝ exp(logp) (renormalised, so a
// full head's action slice works too) with the uniform number r ∈ [0, 1)
// by inverse CDF.
func sampleBin[F Float](logp []F, r float64) int {
	z := 0.0
	for _, l := range logp {
		z += math.Exp(float64(l))
	}
	target := r * z
	cum := 0.0
	for b, l := range logp {
		cum += math.Exp(float64(l))
		if target < cum {
			return b
		}
	}
	return len(logp) - 1
}
