package vla

import (
	"fmt"
	"math"
)

// Obs is one observation: camera images, an instruction and proprio.
type Obs struct {
	// Images holds one ImageSize×ImageSize RGB image per camera, row-major
	// HWC (pixel (y, x) channel c at index (y·S + x)·3 + c). The stem maps
	// pixels to v/127.5 − 1 ∈ [−1, 1].
	Images [][]uint8
	// Instr is the instruction as word ids in [0, WordVocab), at most
	// MaxInstr of them; the rest of the MaxInstr positions are padded with
	// PadID, and PadID positions (also ones given explicitly) are masked
	// out of attention and of the value pooling.
	Instr []int
	// Proprio is the ProprioDim-vector of robot state.
	Proprio []float32
}

// Tape is a teacher-forced forward pass over a batch, kept for Backward.
// Its buffers are reused by [Net.ForwardInto].
type Tape[F Float] struct {
	B       int   // batch size
	Logp    []F   // B×ActionDims log π(token) per sample and position
	Entropy []F   // B×ActionDims entropy of each position's distribution
	Value   []F   // B value estimates
	Greedy  []int // B×ActionDims argmax bin per position given the expert tokens before it

	t, nAct int
	train   bool
	width   int // logits per action position (headWidth at Forward time)
	tokens  [][]int
	valid   []bool // B·t, false at instruction padding
	inTok   []int  // B·t row of the token embedding per position, −1 for image and proprio positions
	patches [][]F  // per camera: (B·patches) × P²·3 pixel values
	proprio []F    // B × ProprioDim
	layers  []layerTape[F]
	xf      []F // input of the final layer norm
	muf     []F
	rsf     []F
	hf      []F // final hidden states, B·t × Dim
	hact    []F // hf at the action positions, B·nAct × Dim
	// logp is the B·nAct × K log-softmax (K = headWidth). Its columns
	// follow the LM head's rows in the parameter layout: the Bins action
	// tokens first, then (full head only) tokens 0 … V−Bins−1.
	logp []F
	// rowScale, when not nil, is per sample the factor its logits were multiplied by after
	// the net's 1/T (ForwardIntoAt: 1/(T_i·logitScale); 1 at the net's own temperature).
	rowScale []F
	pool     []F // B × Dim mean of hf over the valid prefix positions
	nValid   []int

	// Scratch of the forward pass, kept so that ForwardInto reuses it.
	x0        []F // embed's output, the input of block 0
	emb, prop []F // stem and proprio projections of embed
	qkv       []F // q | k | v rows of the block being run
	ctxh      []F // head-major attention output of the block being run
	out       []F // Act's prefix pass: the other of two ping-pong hidden-state buffers
}

// layerTape holds one block's activations; q, k, v are head-major (see
// splitHeads) and probs the attention probabilities.
type layerTape[F Float] struct {
	x, ln1, mu1, rs1 []F
	q, k, v, probs   []F
	ctx              []F
	h, ln2, mu2, rs2 []F
	u, g             []F
}

// Forward scores the action tokens of a batch with teacher forcing: all
// ActionDims positions in one pass, position k's input being the embedding
// of tokens[i][k−1] (<act> for k = 0). tokens[i] holds ActionDims bins in
// [0, Bins). The tape holds per-token log-probabilities and entropies,
// values and the teacher-forced argmax, and what Backward needs.
//
// With the slim head, log π and the entropy are over the Bins action
// tokens; with the full head they are over all V tokens (log π(t) = z_t −
// logsumexp over V), so action tokens' probabilities sum to less than 1.
//
// Forward allocates a new tape (tens of MB at the default size and batch
// 16); a training loop reuses one with [Net.ForwardInto].
func (m *Net[F]) Forward(batch []Obs, tokens [][]int) *Tape[F] {
	return m.ForwardInto(nil, batch, tokens)
}

// ForwardInto is Forward writing into tape's buffers (growing them when the
// batch is larger than before) and returning it; tape nil allocates a new
// one. The tape's earlier contents, and slices taken from them (Logp,
// Entropy, Value, Greedy), are overwritten.
func (m *Net[F]) ForwardInto(tape *Tape[F], batch []Obs, tokens [][]int) *Tape[F] {
	return m.forwardAt(tape, batch, tokens, nil)
}

// ForwardIntoAt is ForwardInto with sample i's action-token distribution at temperature
// temps[i] instead of the net's own (SetTemperature) where temps[i] > 0: its logits are
// divided by temps[i], in its log-probabilities, entropies and their gradients (Backward).
// Samples at 0 are evaluated exactly as by ForwardInto. An RL learner uses it for actions
// that were sampled at another temperature than the policy acts at (the pixel world
// model's imagined rollouts), so that their log-probabilities and ratios are those of the
// distribution they were drawn from. It panics unless len(temps) is the batch's and every
// temperature is a non-negative number.
func (m *Net[F]) ForwardIntoAt(tape *Tape[F], batch []Obs, tokens [][]int, temps []float64) *Tape[F] {
	if len(temps) != len(batch) {
		panic(fmt.Sprintf("vla: ForwardIntoAt: %d temperatures for %d samples", len(temps), len(batch)))
	}
	for i, t := range temps {
		if !(t >= 0) || math.IsInf(t, 0) {
			panic(fmt.Sprintf("vla: ForwardIntoAt: sample %d's temperature %v must be a positive number (0: the net's own)", i, t))
		}
	}
	return m.forwardAt(tape, batch, tokens, temps)
}

// forwardAt checks the tokens and runs the training pass of ForwardInto (temps nil) or
// ForwardIntoAt, recording each sample's logit factor in the tape for Backward.
func (m *Net[F]) forwardAt(tape *Tape[F], batch []Obs, tokens [][]int, temps []float64) *Tape[F] {
	if len(tokens) != len(batch) {
		panic(fmt.Sprintf("vla: Forward: %d observations but %d token rows", len(batch), len(tokens)))
	}
	for i, tk := range tokens {
		if len(tk) != m.cfg.ActionDims {
			panic(fmt.Sprintf("vla: Forward: sample %d has %d tokens, want %d", i, len(tk), m.cfg.ActionDims))
		}
		for k, b := range tk {
			if b < 0 || b >= m.cfg.Bins {
				panic(fmt.Sprintf("vla: Forward: token %d of sample %d at position %d out of range [0, %d)", b, i, k, m.cfg.Bins))
			}
		}
	}
	if tape == nil {
		tape = new(Tape[F])
	}
	tape.rowScale = tape.rowScale[:0]
	for _, t := range temps {
		s := F(1)
		if t > 0 {
			s = F(1 / (t * float64(m.logitScale)))
		}
		tape.rowScale = append(tape.rowScale, s)
	}
	m.run(tape, batch, tokens, m.cfg.ActionDims, nil)
	return tape
}

// scaleRows multiplies row i of x (rows of width values) by scale[i] where it is not 1:
// the per-sample logit factors of ForwardIntoAt, on the logits and on their gradients.
func scaleRows[F Float](x, scale []F, width int) {
	for i, s := range scale {
		if s != 1 {
			for j := range x[i*width : (i+1)*width] {
				x[i*width+j] *= s
			}
		}
	}
}

// run is the forward pass over the prefix and nAct action positions into
// tape. With cache nil it is a training pass that keeps every layer's
// activations. Otherwise it is Act's prefix pass (nAct = 0): the layers
// share one set of buffers, attention probabilities are not kept, and layer
// l's keys and values are written head-major into cache[l] (nb·heads ×
// tmax × dh each, the first PrefixLen rows of every problem).
func (m *Net[F]) run(tape *Tape[F], batch []Obs, tokens [][]int, nAct int, cache []kvCache[F]) {
	c := m.cfg
	nb, d := len(batch), c.Dim
	tp := c.PrefixLen()
	t := tp + nAct
	n := nb * t
	train := cache == nil
	tape.B, tape.t, tape.nAct, tape.train, tape.width, tape.tokens = nb, t, nAct, train, m.headWidth(), tokens
	if len(tape.layers) != c.Layers {
		tape.layers = make([]layerTape[F], c.Layers)
	}
	x := m.embed(batch, tokens, nAct, tape)
	tape.xf = grow(tape.xf, n*d)
	for l := range tape.layers {
		lt, ts := &tape.layers[l], t
		out := tape.xf
		if train {
			if l+1 < c.Layers {
				tape.layers[l+1].x = grow(tape.layers[l+1].x, n*d)
				out = tape.layers[l+1].x
			}
			lt.k, lt.v = grow(lt.k, n*d), grow(lt.v, n*d)
		} else {
			lt, ts = &tape.layers[0], c.SeqLen()
			lt.k, lt.v = cache[l].k, cache[l].v
			if (c.Layers-1-l)%2 == 1 {
				// Ping-pong so that the last layer writes tape.xf.
				tape.out = grow(tape.out, n*d)
				out = tape.out
			}
		}
		m.block(l, x, out, nb, t, tp, ts, tape, lt)
		x = out
	}
	tape.muf, tape.rsf, tape.hf = grow(tape.muf, n), grow(tape.rsf, n), grow(tape.hf, n*d)
	layerNorm(x, n, d, m.w.lnfG.w, m.w.lnfB.w, tape.hf, tape.muf, tape.rsf)
	m.valueForward(tape)
	if nAct > 0 {
		m.headForward(tape)
	}
}

// kvCache is one layer's keys and values for Act, head-major nb·heads ×
// tmax × dh.
type kvCache[F Float] struct{ k, v []F }

// block runs transformer block l (pre-norm, GPT-2 order) on x (nb·t × d)
// into out:
//
//	h = x + W_o·attn(LN₁(x)) + b_o,  out = h + W₂·GELU(W₁·LN₂(h) + b₁) + b₂
//
// lt.k and lt.v must hold nb·heads·ts·dh values (ts ≥ t rows per head).
func (m *Net[F]) block(l int, x, out []F, nb, t, tp, ts int, tape *Tape[F], lt *layerTape[F]) {
	c, w, be := m.cfg, m.w.blocks[l], m.be
	d, hid, n := c.Dim, c.MLPRatio*c.Dim, nb*t
	lt.x = x
	lt.ln1 = grow(lt.ln1, n*d)
	lt.mu1, lt.rs1 = grow(lt.mu1, n), grow(lt.rs1, n)
	layerNorm(x, n, d, w.ln1g.w, w.ln1b.w, lt.ln1, lt.mu1, lt.rs1)
	tape.qkv = grow(tape.qkv, n*3*d)
	linear(be, lt.ln1, n, d, 3*d, w.qkvW.w, w.qkvB.w, tape.qkv)
	lt.q = grow(lt.q, n*d)
	splitHeads(tape.qkv, nb, t, d, c.Heads, ts, lt.q, lt.k, lt.v)
	lt.probs = grow(lt.probs, nb*c.Heads*t*t)
	tape.ctxh = grow(tape.ctxh, n*d)
	attnForward(be, lt.q, lt.k, lt.v, ts, nb, t, c.Heads, d/c.Heads, tp, tape.valid, t, lt.probs, tape.ctxh)
	lt.ctx = grow(lt.ctx, n*d)
	mergeHeads(tape.ctxh, nb, t, d, c.Heads, t, lt.ctx, d, 0)
	lt.h = grow(lt.h, n*d)
	linear(be, lt.ctx, n, d, d, w.oW.w, w.oB.w, lt.h)
	addTo(lt.h, x)
	lt.ln2 = grow(lt.ln2, n*d)
	lt.mu2, lt.rs2 = grow(lt.mu2, n), grow(lt.rs2, n)
	layerNorm(lt.h, n, d, w.ln2g.w, w.ln2b.w, lt.ln2, lt.mu2, lt.rs2)
	lt.u, lt.g = grow(lt.u, n*hid), grow(lt.g, n*hid)
	linear(be, lt.ln2, n, d, hid, w.fc1W.w, w.fc1B.w, lt.u)
	gelu(lt.u, lt.g)
	linear(be, lt.g, n, hid, d, w.fc2W.w, w.fc2B.w, out)
	addTo(out, lt.h)
}

// addTo sets dst += src elementwise (the residual connections).
func addTo[F Float](dst, src []F) {
	parallelRange(len(dst), parGrain, func(lo, hi int) {
		s := src[lo:hi]
		for i := range dst[lo:hi] {
			dst[lo+i] += s[i]
		}
	})
}

// grow returns x resliced to n elements if its capacity allows, else a new
// slice; the contents are not cleared.
func grow[F any](x []F, n int) []F {
	if cap(x) >= n {
		return x[:n]
	}
	return make([]F, n)
}

// embed builds the input sequence of every sample (positions in this
// order):
//
//	camera c patch p:        W_c·patch + b_c + posImg_c[p] + cam[c]
//	instruction position j:  tok[id_j] + seqPos[j]          (id_j = PadID past the end)
//	proprio:                 W_p·proprio + b_p + seqPos[MaxInstr]
//	action position k:       tok[in_k] + seqPos[MaxInstr+1+k]  (in_0 = <act>, in_k = action token of bin t_{k−1})
//
// It fills the tape's masks, token rows, patches and proprio.
func (m *Net[F]) embed(batch []Obs, tokens [][]int, nAct int, tape *Tape[F]) []F {
	c := m.cfg
	nb, d, t := len(batch), c.Dim, tape.t
	np, pd, g := c.PatchesPerCamera(), c.Patch*c.Patch*3, c.ImageSize/c.Patch
	tape.x0 = grow(tape.x0, nb*t*d)
	x := tape.x0
	tape.valid = grow(tape.valid, nb*t)
	tape.inTok = grow(tape.inTok, nb*t)
	for i := range tape.inTok {
		tape.valid[i] = true
		tape.inTok[i] = -1
	}
	for i, o := range batch {
		if len(o.Images) != c.Cameras {
			panic(fmt.Sprintf("vla: sample %d has %d images, want %d", i, len(o.Images), c.Cameras))
		}
		for cam, im := range o.Images {
			if len(im) != c.ImageSize*c.ImageSize*3 {
				panic(fmt.Sprintf("vla: sample %d camera %d: image has %d bytes, want %d×%d×3 = %d",
					i, cam, len(im), c.ImageSize, c.ImageSize, c.ImageSize*c.ImageSize*3))
			}
		}
		if len(o.Instr) > c.MaxInstr {
			panic(fmt.Sprintf("vla: sample %d: instruction has %d tokens, more than MaxInstr %d", i, len(o.Instr), c.MaxInstr))
		}
		if len(o.Proprio) != c.ProprioDim {
			panic(fmt.Sprintf("vla: sample %d: proprio has %d values, want %d", i, len(o.Proprio), c.ProprioDim))
		}
	}
	tape.emb = grow(tape.emb, nb*np*d)
	tmp := tape.emb
	if len(tape.patches) != c.Cameras {
		tape.patches = make([][]F, c.Cameras)
	}
	for cam := 0; cam < c.Cameras; cam++ {
		pt := grow(tape.patches[cam], nb*np*pd)
		for i, o := range batch {
			im := o.Images[cam]
			for p := 0; p < np; p++ {
				py, px := p/g, p%g
				dst := pt[(i*np+p)*pd:]
				q := 0
				for dy := 0; dy < c.Patch; dy++ {
					row := ((py*c.Patch+dy)*c.ImageSize + px*c.Patch) * 3
					for _, v := range im[row : row+c.Patch*3] {
						dst[q] = F(v)/127.5 - 1
						q++
					}
				}
			}
		}
		tape.patches[cam] = pt
		linear(m.be, pt, nb*np, pd, d, m.w.stemW[cam].w, m.w.stemB[cam].w, tmp)
		camEmb := m.w.cam.w[cam*d : (cam+1)*d]
		for i := 0; i < nb; i++ {
			for p := 0; p < np; p++ {
				dst := x[(i*t+cam*np+p)*d : (i*t+cam*np+p+1)*d]
				src := tmp[(i*np+p)*d:]
				pos := m.w.posImg[cam].w[p*d:]
				for j := range dst {
					dst[j] = src[j] + pos[j] + camEmb[j]
				}
			}
		}
	}
	img := c.Cameras * np
	tape.proprio = grow(tape.proprio, nb*c.ProprioDim)
	for i, o := range batch {
		for j, v := range o.Proprio {
			tape.proprio[i*c.ProprioDim+j] = F(v)
		}
	}
	tape.prop = grow(tape.prop, nb*d)
	prop := tape.prop
	linear(m.be, tape.proprio, nb, c.ProprioDim, d, m.w.propW.w, m.w.propB.w, prop)
	for i, o := range batch {
		setTok := func(pos, id, seq int) {
			tape.inTok[i*t+pos] = id
			dst := x[(i*t+pos)*d : (i*t+pos+1)*d]
			e, sp := m.w.tok.w[id*d:], m.w.seqPos.w[seq*d:]
			for j := range dst {
				dst[j] = e[j] + sp[j]
			}
		}
		for j := 0; j < c.MaxInstr; j++ {
			id := c.PadID()
			if j < len(o.Instr) {
				id = o.Instr[j]
			}
			if id != c.PadID() && (id < 0 || id >= c.WordVocab) {
				panic(fmt.Sprintf("vla: sample %d: instruction token %d at position %d is neither a word id in [0, %d) nor PadID %d",
					i, id, j, c.WordVocab, c.PadID()))
			}
			setTok(img+j, id, j)
			tape.valid[i*t+img+j] = id != c.PadID()
		}
		pp := img + c.MaxInstr
		dst := x[(i*t+pp)*d : (i*t+pp+1)*d]
		sp := m.w.seqPos.w[c.MaxInstr*d:]
		for j := range dst {
			dst[j] = prop[i*d+j] + sp[j]
		}
		for k := 0; k < nAct; k++ {
			id := c.ActID()
			if k > 0 {
				id = c.ActionTokenID(tokens[i][k-1])
			}
			setTok(pp+1+k, id, c.MaxInstr+1+k)
		}
	}
	return x
}

// valueForward pools the final hidden states over each sample's valid
// prefix positions (image patches, non-padding instruction words, proprio)
// and applies the value head: V = w·mean(h) + b.
func (m *Net[F]) valueForward(tape *Tape[F]) {
	c := m.cfg
	d, tp := c.Dim, c.PrefixLen()
	tape.pool = grow(tape.pool, tape.B*d)
	clear(tape.pool)
	tape.nValid = grow(tape.nValid, tape.B)
	tape.Value = grow(tape.Value, tape.B)
	for i := 0; i < tape.B; i++ {
		pool := tape.pool[i*d : (i+1)*d]
		cnt := 0
		for p := 0; p < tp; p++ {
			if !tape.valid[i*tape.t+p] {
				continue
			}
			cnt++
			for j, v := range tape.hf[(i*tape.t+p)*d : (i*tape.t+p+1)*d] {
				pool[j] += v
			}
		}
		inv := 1 / F(cnt)
		v := m.w.valB.w[0]
		for j := range pool {
			pool[j] *= inv
			v += pool[j] * m.w.valW.w[j]
		}
		tape.nValid[i], tape.Value[i] = cnt, v
	}
}

// headWidth is the number of logits per action position: Bins with the
// slim head, V with the full one.
func (m *Net[F]) headWidth() int {
	if m.cfg.SlimHead {
		return m.cfg.Bins
	}
	return m.cfg.VocabSize
}

// headLogits writes the LM-head logits of n hidden rows (n × headWidth):
// the slim head multiplies by the Bins action rows only, the full head by
// all V rows, which the parameter layout stores as one V × Dim matrix with
// the action rows first. Column b < Bins is therefore action bin b with
// either head, and (full head) column Bins + r is token r < V−Bins. The
// logits are divided by the temperature (SetTemperature).
func (m *Net[F]) headLogits(h []F, n int, logits []F) {
	k := m.headWidth()
	matmul(m.be, false, true, n, k, m.cfg.Dim, m.logitScale, h, m.w.head.w[:k*m.cfg.Dim], 0, logits)
}

// headForward evaluates the head at the action positions of the tape.
func (m *Net[F]) headForward(tape *Tape[F]) {
	c := m.cfg
	d, nb, na, k := c.Dim, tape.B, tape.nAct, m.headWidth()
	tp := c.PrefixLen()
	tape.hact = grow(tape.hact, nb*na*d)
	for i := 0; i < nb; i++ {
		copy(tape.hact[i*na*d:(i+1)*na*d], tape.hf[(i*tape.t+tp)*d:(i*tape.t+tp+na)*d])
	}
	tape.logp = grow(tape.logp, nb*na*k)
	m.headLogits(tape.hact, nb*na, tape.logp)
	scaleRows(tape.logp, tape.rowScale, na*k)
	logSoftmax(tape.logp, nb*na, k, tape.logp)
	tape.Logp, tape.Entropy = grow(tape.Logp, nb*na), grow(tape.Entropy, nb*na)
	tape.Greedy = grow(tape.Greedy, nb*na)
	parallelRange(nb*na, rowGrain(2*k), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := tape.logp[r*k : (r+1)*k]
			tape.Logp[r] = row[tape.tokens[r/na][r%na]]
			tape.Entropy[r] = entropy(row)
			tape.Greedy[r] = argmaxBin(row[:c.Bins])
		}
	})
}

// argmaxBin returns the index of the largest of the Bins action-token
// entries (the first on ties).
func argmaxBin[F Float](row []F) int {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return best
}
