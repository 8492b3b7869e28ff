package vla

import (
	"fmt"
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
	rule := DecodeSample
	if greedy {
		rule = DecodeArgmax
	}
	return m.act(batch, rng, nil, rule, nil)
}

// DecodeRule is how [Net.ActDecode] picks each action position's bin from
// its distribution π over the Bins action tokens (renormalised over them
// with the full head). The chosen bin is the next position's input, as in
// [Net.Act].
type DecodeRule int

const (
	// DecodeSample draws the bin from π (Act with greedy false).
	DecodeSample DecodeRule = iota
	// DecodeArgmax takes the most probable bin (Act with greedy true).
	DecodeArgmax
	// DecodeMean takes the bin nearest the mean bin index Σ_b π_b·b: the
	// decoded value is then (up to half a bin) the mean of the binned value
	// under π, the minimiser of the expected squared error, what a
	// regression head predicts.
	DecodeMean
	// DecodeMedian takes the first bin at which π's cumulative mass reaches
	// ½: the minimiser of the expected absolute error.
	DecodeMedian
)

// String names the rule as the bench flags do.
func (r DecodeRule) String() string {
	switch r {
	case DecodeSample:
		return "sample"
	case DecodeArgmax:
		return "argmax"
	case DecodeMean:
		return "mean"
	case DecodeMedian:
		return "median"
	}
	return fmt.Sprintf("DecodeRule(%d)", int(r))
}

// ParseDecodeRule is the inverse of DecodeRule.String.
func ParseDecodeRule(s string) (DecodeRule, error) {
	for _, r := range []DecodeRule{DecodeSample, DecodeArgmax, DecodeMean, DecodeMedian} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("unknown decode rule %q (known: sample, argmax, mean, median)", s)
}

// ActDecode is [Net.Act] with each position's bin picked by rule; rng is
// only read by DecodeSample. logp holds the chosen bins' log-probabilities.
func (m *Net[F]) ActDecode(batch []Obs, rng *rand.Rand, rule DecodeRule) (tokens [][]int, logp [][]F, value []F) {
	return m.act(batch, rng, nil, rule, nil)
}

// ActRows is [Net.Act] with sample i drawing from rngs[i] alone (one Float64 per position),
// so that a batch decodes exactly what each of its samples decodes alone with ActRows, with
// the same generators: every product runs on the backend whatever its number of rows (which
// accumulates each output over K in the same order for any number of rows, as
// TestActRowsMatchesSingle checks), and each row's draws come from its own stream. (Act of one
// or two samples takes a faster pure-Go path whose last bits differ.) Sync-mode rollout batches its requests with
// it and stays independent of how they are batched.
func (m *Net[F]) ActRows(batch []Obs, rngs []*rand.Rand, greedy bool) (tokens [][]int, logp [][]F, value []F) {
	rule := DecodeSample
	if greedy {
		rule = DecodeArgmax
	}
	return m.ActRowsDecode(batch, rngs, rule)
}

// ActRowsDecode is [Net.ActRows] with each position's bin picked by rule (rngs is only read
// by DecodeSample).
func (m *Net[F]) ActRowsDecode(batch []Obs, rngs []*rand.Rand, rule DecodeRule) (tokens [][]int, logp [][]F, value []F) {
	if len(rngs) != len(batch) && rule == DecodeSample {
		panic(fmt.Sprintf("vla: ActRows: %d generators for %d samples", len(rngs), len(batch)))
	}
	if m.be != nil {
		be := m.be
		m.be = uniformRows{be}
		defer func() { m.be = be }()
	}
	return m.act(batch, nil, rngs, rule, nil)
}

// actWork is Act's scratch, kept by the model between calls: the prefix
// pass's tape, the KV caches and the decode step's activations.
type actWork[F Float] struct {
	pre                   Tape[F]
	cache                 []kvCache[F]
	valid                 []bool
	x, ln, mu, rs, qkv, q []F
	ctx, h, u, g, s       []F
	logits                []F
}

// act is Act (ActRows when rngs is not nil: sample i draws from rngs[i]); onLogp, when not nil, sees each position's nb × headWidth
// log-softmax (for the tests that compare it with Forward's).
func (m *Net[F]) act(batch []Obs, rng *rand.Rand, rngs []*rand.Rand, rule DecodeRule, onLogp func(pos int, logp []F)) (tokens [][]int, logp [][]F, value []F) {
	c, be := m.cfg, m.be
	nb, d, hid := len(batch), c.Dim, c.MLPRatio*c.Dim
	tp, tmax, na := c.PrefixLen(), c.SeqLen(), c.ActionDims
	heads, dh := c.Heads, c.Dim/c.Heads
	ws := &m.actWS
	// Caches nb·heads × tmax × dh per layer; the prefix part is written by
	// the prefix pass.
	if len(ws.cache) != c.Layers {
		ws.cache = make([]kvCache[F], c.Layers)
	}
	for l := range ws.cache {
		ws.cache[l].k, ws.cache[l].v = grow(ws.cache[l].k, nb*tmax*d), grow(ws.cache[l].v, nb*tmax*d)
	}
	pre := &ws.pre
	m.run(pre, batch, nil, 0, ws.cache)
	value = append([]F(nil), pre.Value...)
	ws.valid = grow(ws.valid, nb*tmax)
	for i := 0; i < nb; i++ {
		for p := 0; p < tmax; p++ {
			ws.valid[i*tmax+p] = p >= tp || pre.valid[i*tp+p]
		}
	}

	tokens = make([][]int, nb)
	logp = make([][]F, nb)
	for i := range tokens {
		tokens[i] = make([]int, na)
		logp[i] = make([]F, na)
	}
	k := m.headWidth()
	x := grow(ws.x, nb*d)
	ln, mu, rs := grow(ws.ln, nb*d), grow(ws.mu, nb), grow(ws.rs, nb)
	qkv, q, ctx, h := grow(ws.qkv, nb*3*d), grow(ws.q, nb*d), grow(ws.ctx, nb*d), grow(ws.h, nb*d)
	u, g := grow(ws.u, nb*hid), grow(ws.g, nb*hid)
	s := grow(ws.s, nb*heads*tmax)
	logits := grow(ws.logits, nb*k)
	ws.x, ws.ln, ws.mu, ws.rs, ws.qkv, ws.q, ws.ctx, ws.h, ws.u, ws.g, ws.s, ws.logits =
		x, ln, mu, rs, qkv, q, ctx, h, u, g, s, logits
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
			for jj := range row {
				row[jj] = e[jj] + sp[jj]
			}
		}
		for l, w := range m.w.blocks {
			layerNorm(x, nb, d, w.ln1g.w, w.ln1b.w, ln, mu, rs)
			linear(be, ln, nb, d, 3*d, w.qkvW.w, w.qkvB.w, qkv)
			kc, vc := ws.cache[l].k, ws.cache[l].v
			for i := 0; i < nb; i++ {
				row := qkv[i*3*d : (i+1)*3*d]
				copy(q[i*d:(i+1)*d], row[:d])
				for hh := 0; hh < heads; hh++ {
					at := ((i*heads+hh)*tmax + pos) * dh
					copy(kc[at:at+dh], row[d+hh*dh:d+(hh+1)*dh])
					copy(vc[at:at+dh], row[2*d+hh*dh:2*d+(hh+1)*dh])
				}
			}
			attnDecode(q, kc, vc, nb, tmax, d, heads, pos, tp, ws.valid, ctx, s)
			linear(be, ctx, nb, d, d, w.oW.w, w.oB.w, h)
			addTo(h, x)
			layerNorm(h, nb, d, w.ln2g.w, w.ln2b.w, ln, mu, rs)
			linear(be, ln, nb, d, hid, w.fc1W.w, w.fc1B.w, u)
			gelu(u, g)
			linear(be, g, nb, hid, d, w.fc2W.w, w.fc2B.w, x)
			addTo(x, h)
		}
		layerNorm(x, nb, d, m.w.lnfG.w, m.w.lnfB.w, ln, mu, rs)
		m.headLogits(ln, nb, logits)
		logSoftmax(logits, nb, k, logits)
		if onLogp != nil {
			onLogp(j, logits)
		}
		for i := 0; i < nb; i++ {
			act := logits[i*k : i*k+c.Bins]
			var b int
			switch rule {
			case DecodeArgmax:
				b = argmaxBin(act)
			case DecodeMean:
				b = meanBin(act)
			case DecodeMedian:
				b = medianBin(act)
			default:
				r := rng
				if rngs != nil {
					r = rngs[i]
				}
				b = sampleBin(act, r.Float64())
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
		z += float64(expNeg(l))
	}
	target := r * z
	cum := 0.0
	for b, l := range logp {
		cum += float64(expNeg(l))
		if target < cum {
			return b
		}
	}
	return len(logp) - 1
}

// meanBin returns the bin nearest Σ_b p_b·b under p ∝ exp(logp)
// (renormalised).
func meanBin[F Float](logp []F) int {
	z, s := 0.0, 0.0
	for b, l := range logp {
		p := float64(expNeg(l))
		z += p
		s += p * float64(b)
	}
	return min(max(int(math.Round(s/z)), 0), len(logp)-1)
}

// medianBin returns the first bin at which the cumulative mass of p ∝
// exp(logp) (renormalised) reaches ½.
func medianBin[F Float](logp []F) int {
	z := 0.0
	for _, l := range logp {
		z += float64(expNeg(l))
	}
	cum := 0.0
	for b, l := range logp {
		cum += float64(expNeg(l))
		if cum >= z/2 {
			return b
		}
	}
	return len(logp) - 1
}
