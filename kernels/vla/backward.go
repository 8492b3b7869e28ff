package vla

import "fmt"

// Backward accumulates into Grads the gradient of a scalar loss L given
// its derivatives with respect to the tape's outputs: dLogp and dEntropy
// (B×ActionDims, ∂L/∂Logp and ∂L/∂Entropy) and dValue (B, ∂L/∂Value). Any
// of them may be nil for zero. With the slim head, only the action rows of
// the LM head receive gradient; with the full head every row does.
func (m *Net[F]) Backward(tape *Tape[F], dLogp, dEntropy, dValue []F) {
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
	n := nb * t
	dhf := make([]F, n*d)
	m.headBackward(tape, dLogp, dEntropy, dhf)
	if dValue != nil {
		m.valueBackward(tape, dValue, dhf)
	}
	dx := make([]F, n*d)
	layerNormBack(tape.xf, dhf, n, d, m.w.lnfG.w, tape.muf, tape.rsf, dx, m.w.lnfG.g, m.w.lnfB.g)
	for l := c.Layers - 1; l >= 0; l-- {
		dx = m.blockBack(l, &tape.layers[l], dx, nb, t)
	}
	m.embedBack(tape, dx)
}

// headBackward sends each action position's ∂L/∂log π and ∂L/∂H through
// the log-softmax and the LM head into dhf.
func (m *Net[F]) headBackward(tape *Tape[F], dLogp, dEntropy, dhf []F) {
	c := m.cfg
	nb, na, d, k := tape.B, tape.nAct, c.Dim, m.headWidth()
	tp := c.PrefixLen()
	dz := make([]F, nb*na*k)
	for r := 0; r < nb*na; r++ {
		var wlp, went F
		if dLogp != nil {
			wlp = dLogp[r]
		}
		if dEntropy != nil {
			went = dEntropy[r]
		}
		i, j := r/na, r%na
		categoricalBack(tape.logp[r*k:(r+1)*k], tape.Entropy[r], m.actionCol(tape.tokens[i][j]), wlp, went, dz[r*k:(r+1)*k])
	}
	dh := make([]F, nb*na*d)
	if c.SlimHead {
		linearBack(tape.hact, dz, nb*na, d, c.Bins, m.w.headAct.w, m.w.headAct.g, nil, dh)
	} else {
		v, rest := c.VocabSize, c.VocabSize-c.Bins
		// Two column blocks of the V-wide dz: rows 0 … V−Bins−1 of the
		// head, then the action rows.
		gemm(true, false, rest, d, nb*na, 1, dz, v, tape.hact, d, 1, m.w.headRest.g, d)
		gemm(true, false, c.Bins, d, nb*na, 1, dz[rest:], v, tape.hact, d, 1, m.w.headAct.g, d)
		gemm(false, false, nb*na, d, rest, 1, dz, v, m.w.headRest.w, d, 0, dh, d)
		gemm(false, false, nb*na, d, c.Bins, 1, dz[rest:], v, m.w.headAct.w, d, 1, dh, d)
	}
	for i := 0; i < nb; i++ {
		dst := dhf[(i*tape.t+tp)*d : (i*tape.t+tp+na)*d]
		for j, g := range dh[i*na*d : (i+1)*na*d] {
			dst[j] += g
		}
	}
}

// valueBackward: ∂L/∂w += Σ dV·pool, ∂L/∂b += Σ dV, and each valid prefix
// position receives dV·w/count.
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

// blockBack is block's backward pass: given ∂L/∂out it accumulates the
// block's parameter gradients and returns ∂L/∂x.
func (m *Net[F]) blockBack(l int, lt *layerTape[F], dout []F, nb, t int) []F {
	c, w := m.cfg, m.w.blocks[l]
	d, hid, n := c.Dim, c.MLPRatio*c.Dim, nb*t
	// out = h + fc2(GELU(fc1(LN₂(h))))
	dg := make([]F, n*hid)
	linearBack(lt.g, dout, n, hid, d, w.fc2W.w, w.fc2W.g, w.fc2B.g, dg)
	geluBack(lt.u, dg, dg)
	dln := make([]F, n*d)
	linearBack(lt.ln2, dg, n, d, hid, w.fc1W.w, w.fc1W.g, w.fc1B.g, dln)
	dh := dout // the residual passes dout through; dout is ours to reuse
	layerNormBack(lt.h, dln, n, d, w.ln2g.w, lt.mu2, lt.rs2, dh, w.ln2g.g, w.ln2b.g)
	// h = x + out_proj(attn(LN₁(x)))
	dctx := make([]F, n*d)
	linearBack(lt.ctx, dh, n, d, d, w.oW.w, w.oW.g, w.oB.g, dctx)
	dqkv := make([]F, n*3*d)
	attnBackward(lt.qkv, lt.probs, dctx, nb, t, d, c.Heads, dqkv)
	linearBack(lt.ln1, dqkv, n, d, 3*d, w.qkvW.w, w.qkvW.g, w.qkvB.g, dln)
	layerNormBack(lt.x, dln, n, d, w.ln1g.w, lt.mu1, lt.rs1, dh, w.ln1g.g, w.ln1b.g)
	return dh
}

// embedBack accumulates the gradients of the input embeddings: patch
// stems, image and sequence positions, camera embeddings, token rows and
// the proprio map.
func (m *Net[F]) embedBack(tape *Tape[F], dx []F) {
	c := m.cfg
	nb, d, t := tape.B, c.Dim, tape.t
	np, pd := c.PatchesPerCamera(), c.Patch*c.Patch*3
	dy := make([]F, nb*np*d)
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
		linearBack(tape.patches[cam], dy, nb*np, pd, d, nil, m.w.stemW[cam].g, m.w.stemB[cam].g, nil)
	}
	img := c.Cameras * np
	dprop := make([]F, nb*d)
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
	linearBack(tape.proprio, dprop, nb, c.ProprioDim, d, nil, m.w.propW.g, m.w.propB.g, nil)
}
