package vla

import (
	"fmt"
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
	logp    []F // B·nAct × K log-softmax (K = Bins slim, V full)
	pool    []F // B × Dim mean of hf over the valid prefix positions
	nValid  []int
}

type layerTape[F Float] struct {
	x, ln1, mu1, rs1 []F
	qkv, probs, ctx  []F
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
func (m *Net[F]) Forward(batch []Obs, tokens [][]int) *Tape[F] {
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
	return m.run(batch, tokens, m.cfg.ActionDims, true)
}

// run is the forward pass over the prefix and nAct action positions (0 for
// Act's prefix pass). With train false, the per-layer activations other
// than q|k|v share one buffer and attention probabilities are not kept.
func (m *Net[F]) run(batch []Obs, tokens [][]int, nAct int, train bool) *Tape[F] {
	c := m.cfg
	nb, d := len(batch), c.Dim
	tp := c.PrefixLen()
	t := tp + nAct
	n := nb * t
	tape := &Tape[F]{B: nb, t: t, nAct: nAct, train: train, width: m.headWidth(), tokens: tokens}
	x := m.embed(batch, tokens, nAct, tape)
	tape.layers = make([]layerTape[F], c.Layers)
	var scratch layerTape[F] // shared by all layers when not training
	for l := range tape.layers {
		lt := &tape.layers[l]
		if !train {
			lt = &scratch
		}
		x = m.block(l, x, nb, t, tp, tape.valid, lt, train)
		if !train {
			// Act keeps each layer's q|k|v for the KV cache.
			tape.layers[l].qkv, scratch.qkv = scratch.qkv, nil
		}
	}
	tape.xf = x
	tape.muf, tape.rsf, tape.hf = make([]F, n), make([]F, n), make([]F, n*d)
	layerNorm(x, n, d, m.w.lnfG.w, m.w.lnfB.w, tape.hf, tape.muf, tape.rsf)
	m.valueForward(tape)
	if nAct > 0 {
		m.headForward(tape)
	}
	return tape
}

// block runs transformer block l (pre-norm, GPT-2 order) on x (nb·t × d)
// and returns its output:
//
//	h = x + W_o·attn(LN₁(x)) + b_o,  out = h + W₂·GELU(W₁·LN₂(h) + b₁) + b₂
func (m *Net[F]) block(l int, x []F, nb, t, tp int, valid []bool, lt *layerTape[F], train bool) []F {
	c, w := m.cfg, m.w.blocks[l]
	d, hid, n := c.Dim, c.MLPRatio*c.Dim, nb*t
	lt.x = x
	lt.ln1 = grow(lt.ln1, n*d)
	lt.mu1, lt.rs1 = grow(lt.mu1, n), grow(lt.rs1, n)
	layerNorm(x, n, d, w.ln1g.w, w.ln1b.w, lt.ln1, lt.mu1, lt.rs1)
	lt.qkv = grow(lt.qkv, n*3*d)
	linear(lt.ln1, n, d, 3*d, w.qkvW.w, w.qkvB.w, lt.qkv)
	lt.ctx = grow(lt.ctx, n*d)
	if train {
		lt.probs = grow(lt.probs, nb*c.Heads*t*t)
	}
	attnForward(lt.qkv, nb, t, d, c.Heads, tp, valid, lt.probs, lt.ctx)
	lt.h = grow(lt.h, n*d)
	linear(lt.ctx, n, d, d, w.oW.w, w.oB.w, lt.h)
	for i := range lt.h {
		lt.h[i] += x[i]
	}
	lt.ln2 = grow(lt.ln2, n*d)
	lt.mu2, lt.rs2 = grow(lt.mu2, n), grow(lt.rs2, n)
	layerNorm(lt.h, n, d, w.ln2g.w, w.ln2b.w, lt.ln2, lt.mu2, lt.rs2)
	lt.u, lt.g = grow(lt.u, n*hid), grow(lt.g, n*hid)
	linear(lt.ln2, n, d, hid, w.fc1W.w, w.fc1B.w, lt.u)
	gelu(lt.u, lt.g)
	out := make([]F, n*d)
	linear(lt.g, n, hid, d, w.fc2W.w, w.fc2B.w, out)
	for i := range out {
		out[i] += lt.h[i]
	}
	return out
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
	x := make([]F, nb*t*d)
	tape.valid = make([]bool, nb*t)
	tape.inTok = make([]int, nb*t)
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
	tmp := make([]F, nb*np*d)
	tape.patches = make([][]F, c.Cameras)
	for cam := 0; cam < c.Cameras; cam++ {
		pt := make([]F, nb*np*pd)
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
		linear(pt, nb*np, pd, d, m.w.stemW[cam].w, m.w.stemB[cam].w, tmp)
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
	tape.proprio = make([]F, nb*c.ProprioDim)
	for i, o := range batch {
		for j, v := range o.Proprio {
			tape.proprio[i*c.ProprioDim+j] = F(v)
		}
	}
	prop := make([]F, nb*d)
	linear(tape.proprio, nb, c.ProprioDim, d, m.w.propW.w, m.w.propB.w, prop)
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
	tape.pool = make([]F, tape.B*d)
	tape.nValid = make([]int, tape.B)
	tape.Value = make([]F, tape.B)
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

// actionCol is the logit column of bin b: b (slim) or V−Bins+b (full).
func (m *Net[F]) actionCol(b int) int {
	if m.cfg.SlimHead {
		return b
	}
	return m.cfg.ActionTokenID(b)
}

// headLogits writes the LM-head logits of n hidden rows (n × headWidth):
// the slim head multiplies by the Bins action rows only; the full head also
// by the V−Bins other rows, into the columns of their token ids.
func (m *Net[F]) headLogits(h []F, n int, logits []F) {
	c := m.cfg
	d := c.Dim
	if c.SlimHead {
		gemm(false, true, n, c.Bins, d, 1, h, d, m.w.headAct.w, d, 0, logits, c.Bins)
		return
	}
	v, rest := c.VocabSize, c.VocabSize-c.Bins
	gemm(false, true, n, rest, d, 1, h, d, m.w.headRest.w, d, 0, logits, v)
	gemm(false, true, n, c.Bins, d, 1, h, d, m.w.headAct.w, d, 0, logits[rest:], v)
}

// headForward evaluates the head at the action positions of the tape.
func (m *Net[F]) headForward(tape *Tape[F]) {
	c := m.cfg
	d, nb, na, k := c.Dim, tape.B, tape.nAct, m.headWidth()
	tp := c.PrefixLen()
	tape.hact = make([]F, nb*na*d)
	for i := 0; i < nb; i++ {
		copy(tape.hact[i*na*d:(i+1)*na*d], tape.hf[(i*tape.t+tp)*d:(i*tape.t+tp+na)*d])
	}
	tape.logp = make([]F, nb*na*k)
	m.headLogits(tape.hact, nb*na, tape.logp)
	logSoftmax(tape.logp, nb*na, k, tape.logp)
	tape.Logp, tape.Entropy = make([]F, nb*na), make([]F, nb*na)
	tape.Greedy = make([]int, nb*na)
	for i := 0; i < nb; i++ {
		for j := 0; j < na; j++ {
			r := i*na + j
			row := tape.logp[r*k : (r+1)*k]
			tape.Logp[r] = row[m.actionCol(tape.tokens[i][j])]
			tape.Entropy[r] = entropy(row)
			tape.Greedy[r] = argmaxBin(row[m.actionCol(0):])
		}
	}
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
