package vla

import "fmt"

// backWork is Backward's scratch, kept by the model between calls.
type backWork[F Float] struct {
	dhf, dx, dz, dh      []F
	dg, dln, dctx, dctxh []F
	dq, dk, dv, dp, dqkv []F
	dy, dprop            []F
}

// Backward accumulates into Grads the gradient of a scalar loss L given
// its derivatives with respect to the tape's outputs: dLogp and dEntropy
// (B×ActionDims, ∂L/∂Logp and ∂L/∂Entropy) and dValue (B, ∂L/∂Value). Any
// of them may be nil for zero. With the slim head, only the action rows of
// the LM head receive gradient; with the full head every row does. The
// tape is left intact.
func (m *Net[F]) Backward(tape *Tape[F], dLogp, dEntropy, dValue []F) {
	m.backward(tape, dLogp, dEntropy, dValue, nil)
}

// BackwardSoft accumulates into Grads the gradient of [SoftCrossEntropy]'s
// loss L = −(1/n) Σ_r Σ_b q_rb log π_rb (n = B·ActionDims positions r,
// q_r = targets' row of the expert bin at r): ∂L/∂z_rj = (π_rj − q_rj)/n
// at every logit column j of the head (q is 0 off the action bins).
func (m *Net[F]) BackwardSoft(tape *Tape[F], targets *SoftTargets) {
	if targets == nil || targets.bins != m.cfg.Bins {
		panic("vla: BackwardSoft: targets are not over this model's bins")
	}
	m.backward(tape, nil, nil, nil, targets)
}

// backward is Backward, or with soft set BackwardSoft (dLogp and dEntropy
// then unused).
func (m *Net[F]) backward(tape *Tape[F], dLogp, dEntropy, dValue []F, soft *SoftTargets) {
	c := m.cfg
	if !tape.train || len(tape.layers) != c.Layers || tape.nAct != c.ActionDims || tape.width != m.headWidth() {
		panic("vla: Backward: tape is not a Forward pass of this model with its current head")
	}
	nb, na, d, t := tape.B, tape.nAct, c.Dim, tape.t
	for _, s := range []struct {
		name string
		n    int
	}{{"dLogp", len(dLogp)}, {"dEntropy", len(dEntropy)}} {
		if s.n != 0 && s.n != nb*na {
			panic(fmt.Sprintf("vla: Backward: %s has %d values, want %d", s.name, s.n, nb*na))
		}
	}
	if len(dValue) != 0 && len(dValue) != nb {
		panic(fmt.Sprintf("vla: Backward: dValue has %d values, want %d", len(dValue), nb))
	}
	ws := &m.backWS
	n := nb * t
	ws.dhf = grow(ws.dhf, n*d)
	clear(ws.dhf)
	m.headBackward(tape, dLogp, dEntropy, soft, ws.dhf)
	if dValue != nil {
		m.valueBackward(tape, dValue, ws.dhf)
	}
	ws.dx = grow(ws.dx, n*d)
	clear(ws.dx)
	layerNormBack(tape.xf, ws.dhf, n, d, m.w.lnfG.w, tape.muf, tape.rsf, ws.dx, m.w.lnfG.g, m.w.lnfB.g)
	for l := c.Layers - 1; l >= 0; l-- {
		m.blockBack(l, &tape.layers[l], ws.dx, nb, t)
	}
	m.embedBack(tape, ws.dx)
}

// headBackward sends each action position's ∂L/∂log π and ∂L/∂H (or,
// with soft set, the soft cross-entropy's ∂L/∂z) through the log-softmax
// and the LM head into dhf.
func (m *Net[F]) headBackward(tape *Tape[F], dLogp, dEntropy []F, soft *SoftTargets, dhf []F) {
	c, ws := m.cfg, &m.backWS
	nb, na, d, k := tape.B, tape.nAct, c.Dim, m.headWidth()
	tp := c.PrefixLen()
	ws.dz = grow(ws.dz, nb*na*k)
	dz := ws.dz
	parallelRange(nb*na, rowGrain(k), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			if soft != nil {
				softLogitGrad(soft, tape.logp[r*k:(r+1)*k], tape.tokens[r/na][r%na], F(1/float64(nb*na)), dz[r*k:(r+1)*k])
				continue
			}
			var wlp, went F
			if dLogp != nil {
				wlp = dLogp[r]
			}
			if dEntropy != nil {
				went = dEntropy[r]
			}
			categoricalBack(tape.logp[r*k:(r+1)*k], tape.Entropy[r], tape.tokens[r/na][r%na], wlp, went, dz[r*k:(r+1)*k])
		}
	})
	// The logits are (h·Wᵀ)/T: ∂L/∂(h·Wᵀ) = (∂L/∂z)/T, with a sample's own factor after
	// it (ForwardIntoAt).
	if s := m.logitScale; s != 1 {
		for i := range dz[:nb*na*k] {
			dz[i] *= s
		}
	}
	scaleRows(dz, tape.rowScale, na*k)
	ws.dh = grow(ws.dh, nb*na*d)
	// The logit columns are the rows of the V × Dim head (action rows
	// first), of which the slim head uses the first Bins.
	gw := m.w.head.g
	if c.SlimHead {
		gw = m.w.headAct.g
	}
	linearBack(m.be, tape.hact, dz, nb*na, d, k, m.w.head.w[:k*d], gw, nil, ws.dh)
	for i := 0; i < nb; i++ {
		dst := dhf[(i*tape.t+tp)*d : (i*tape.t+tp+na)*d]
		for j, g := range ws.dh[i*na*d : (i+1)*na*d] {
			dst[j] += g
		}
	}
}

// valueBackward: ∂L/∂w += Σ dV·pool, ∂L/∂b += Σ dV, and each valid prefix
// position receives dV·w/count (nothing with SetDetachValue).
func (m *Net[F]) valueBackward(tape *Tape[F], dValue, dhf []F) {
	d, tp := m.cfg.Dim, m.cfg.PrefixLen()
	for i, dv := range dValue {
		if dv == 0 {
			continue
		}
		pool := tape.pool[i*d : (i+1)*d]
		m.w.valB.g[0] += dv
		for j, p := range pool {
			m.w.valW.g[j] += dv * p
		}
		if m.detachValue {
			continue
		}
		s := dv / F(tape.nValid[i])
		for p := 0; p < tp; p++ {
			if !tape.valid[i*tape.t+p] {
				continue
			}
			dst := dhf[(i*tape.t+p)*d : (i*tape.t+p+1)*d]
			for j, w := range m.w.valW.w {
				dst[j] += s * w
			}
		}
	}
}

// blockBack is block's backward pass: given ∂L/∂out in dx it accumulates
// the block's parameter gradients and overwrites dx with ∂L/∂x.
func (m *Net[F]) blockBack(l int, lt *layerTape[F], dx []F, nb, t int) {
	c, w, be, ws := m.cfg, m.w.blocks[l], m.be, &m.backWS
	d, hid, n := c.Dim, c.MLPRatio*c.Dim, nb*t
	heads, dh := c.Heads, c.Dim/c.Heads
	// out = h + fc2(GELU(fc1(LN₂(h))))
	ws.dg = grow(ws.dg, n*hid)
	linearBack(be, lt.g, dx, n, hid, d, w.fc2W.w, w.fc2W.g, w.fc2B.g, ws.dg)
	geluBack(lt.u, lt.g, ws.dg, ws.dg)
	ws.dln = grow(ws.dln, n*d)
	linearBack(be, lt.ln2, ws.dg, n, d, hid, w.fc1W.w, w.fc1W.g, w.fc1B.g, ws.dln)
	// The residual passes dout through: dx becomes ∂L/∂h.
	layerNormBack(lt.h, ws.dln, n, d, w.ln2g.w, lt.mu2, lt.rs2, dx, w.ln2g.g, w.ln2b.g)
	// h = x + out_proj(attn(LN₁(x)))
	ws.dctx = grow(ws.dctx, n*d)
	linearBack(be, lt.ctx, dx, n, d, d, w.oW.w, w.oW.g, w.oB.g, ws.dctx)
	ws.dctxh = grow(ws.dctxh, n*d)
	splitOne(ws.dctx, nb, t, d, heads, ws.dctxh)
	ws.dq, ws.dk, ws.dv = grow(ws.dq, n*d), grow(ws.dk, n*d), grow(ws.dv, n*d)
	ws.dp = grow(ws.dp, nb*heads*t*t)
	attnBackward(be, lt.q, lt.k, lt.v, t, lt.probs, ws.dctxh, nb, t, heads, dh, ws.dq, ws.dk, ws.dv, ws.dp)
	ws.dqkv = grow(ws.dqkv, n*3*d)
	mergeHeads(ws.dq, nb, t, d, heads, t, ws.dqkv, 3*d, 0)
	mergeHeads(ws.dk, nb, t, d, heads, t, ws.dqkv, 3*d, d)
	mergeHeads(ws.dv, nb, t, d, heads, t, ws.dqkv, 3*d, 2*d)
	linearBack(be, lt.ln1, ws.dqkv, n, d, 3*d, w.qkvW.w, w.qkvW.g, w.qkvB.g, ws.dln)
	layerNormBack(lt.x, ws.dln, n, d, w.ln1g.w, lt.mu1, lt.rs1, dx, w.ln1g.g, w.ln1b.g)
}

// embedBack accumulates the gradients of the input embeddings: patch
// stems, image and sequence positions, camera embeddings, token rows and
// the proprio map.
func (m *Net[F]) embedBack(tape *Tape[F], dx []F) {
	c, ws := m.cfg, &m.backWS
	nb, d, t := tape.B, c.Dim, tape.t
	np, pd := c.PatchesPerCamera(), c.Patch*c.Patch*3
	ws.dy = grow(ws.dy, nb*np*d)
	dy := ws.dy
	for cam := 0; cam < c.Cameras; cam++ {
		gpos := m.w.posImg[cam].g
		gcam := m.w.cam.g[cam*d : (cam+1)*d]
		for i := 0; i < nb; i++ {
			src := dx[(i*t+cam*np)*d : (i*t+(cam+1)*np)*d]
			copy(dy[i*np*d:(i+1)*np*d], src)
			for j, g := range src {
				gpos[j] += g
				gcam[j%d] += g
			}
		}
		linearBack(m.be, tape.patches[cam], dy, nb*np, pd, d, nil, m.w.stemW[cam].g, m.w.stemB[cam].g, nil)
	}
	img := c.Cameras * np
	ws.dprop = grow(ws.dprop, nb*d)
	dprop := ws.dprop
	for i := 0; i < nb; i++ {
		for p := img; p < t; p++ {
			g := dx[(i*t+p)*d : (i*t+p+1)*d]
			seq := p - img
			gs := m.w.seqPos.g[seq*d : (seq+1)*d]
			for j, v := range g {
				gs[j] += v
			}
			if id := tape.inTok[i*t+p]; id >= 0 {
				ge := m.w.tok.g[id*d : (id+1)*d]
				for j, v := range g {
					ge[j] += v
				}
			} else {
				copy(dprop[i*d:(i+1)*d], g)
			}
		}
	}
	linearBack(m.be, tape.proprio, dprop, nb, c.ProprioDim, d, nil, m.w.propW.g, m.w.propB.g, nil)
}
