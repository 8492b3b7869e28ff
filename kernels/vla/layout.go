package vla

import "fmt"

// Span names one parameter tensor inside the flat parameter slice, for
// checkpoints and debugging. Shapes are PyTorch's: a linear layer's weight
// is out × in.
type Span struct {
	Name   string
	Offset int
	Shape  []int
}

// tensor is one parameter tensor: w views the parameters, g the gradients
// (nil for frozen tensors, which lie past the end of the gradient slice).
type tensor[F Float] struct{ w, g []F }

type blockWeights[F Float] struct {
	ln1g, ln1b tensor[F] // Dim
	qkvW, qkvB tensor[F] // 3Dim × Dim, 3Dim: rows q | k | v, heads contiguous inside each
	oW, oB     tensor[F] // Dim × Dim, Dim
	ln2g, ln2b tensor[F]
	fc1W, fc1B tensor[F] // Hidden × Dim, Hidden
	fc2W, fc2B tensor[F] // Dim × Hidden, Dim
}

type weights[F Float] struct {
	stemW, stemB []tensor[F] // per camera: Dim × P²·3, Dim
	posImg       []tensor[F] // per camera: patches × Dim
	cam          tensor[F]   // Cameras × Dim camera-type embedding
	tok          tensor[F]   // V × Dim token embedding
	seqPos       tensor[F]   // (MaxInstr + 1 + ActionDims) × Dim positions of the non-image tokens
	propW, propB tensor[F]   // Dim × ProprioDim, Dim
	blocks       []blockWeights[F]
	lnfG, lnfB   tensor[F] // final layer norm
	valW, valB   tensor[F] // Dim, 1
	headAct      tensor[F] // Bins × Dim: LM-head rows of the action tokens V−Bins … V−1
	headRest     tensor[F] // (V−Bins) × Dim: LM-head rows 0 … V−Bins−1, last in the slice
	// head views headAct and headRest together, the V × Dim matrix whose
	// first Bins rows are the action tokens' (g is nil with the slim head).
	head tensor[F]
}

// buildLayout lays the parameters out in one flat slice and returns views
// into params and grads (either may be nil to only count). The non-action
// LM-head rows come last, so that with the slim head the gradient slice
// (and the optimizer state) can simply be shorter than the parameter slice
// by frozen = (V−Bins)·Dim.
func buildLayout[F Float](c Config, params, grads []F) (w weights[F], spans []Span, total, frozen int) {
	off := 0
	take := func(name string, shape ...int) tensor[F] {
		n := 1
		for _, s := range shape {
			n *= s
		}
		var t tensor[F]
		if params != nil {
			t.w = params[off : off+n : off+n]
		}
		if off+n <= len(grads) {
			t.g = grads[off : off+n : off+n]
		}
		spans = append(spans, Span{Name: name, Offset: off, Shape: shape})
		off += n
		return t
	}
	d, pd, hid := c.Dim, c.Patch*c.Patch*3, c.MLPRatio*c.Dim
	for i := 0; i < c.Cameras; i++ {
		w.stemW = append(w.stemW, take(fmt.Sprintf("stem.%d.weight", i), d, pd))
		w.stemB = append(w.stemB, take(fmt.Sprintf("stem.%d.bias", i), d))
		w.posImg = append(w.posImg, take(fmt.Sprintf("stem.%d.pos", i), c.PatchesPerCamera(), d))
	}
	w.cam = take("camera_embed", c.Cameras, d)
	w.tok = take("token_embed", c.VocabSize, d)
	w.seqPos = take("seq_pos", c.MaxInstr+1+c.ActionDims, d)
	w.propW = take("proprio.weight", d, c.ProprioDim)
	w.propB = take("proprio.bias", d)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("blocks.%d.", l)
		var b blockWeights[F]
		b.ln1g, b.ln1b = take(p+"ln1.weight", d), take(p+"ln1.bias", d)
		b.qkvW, b.qkvB = take(p+"attn.qkv.weight", 3*d, d), take(p+"attn.qkv.bias", 3*d)
		b.oW, b.oB = take(p+"attn.out.weight", d, d), take(p+"attn.out.bias", d)
		b.ln2g, b.ln2b = take(p+"ln2.weight", d), take(p+"ln2.bias", d)
		b.fc1W, b.fc1B = take(p+"mlp.fc1.weight", hid, d), take(p+"mlp.fc1.bias", hid)
		b.fc2W, b.fc2B = take(p+"mlp.fc2.weight", d, hid), take(p+"mlp.fc2.bias", d)
		w.blocks = append(w.blocks, b)
	}
	w.lnfG, w.lnfB = take("ln_f.weight", d), take("ln_f.bias", d)
	w.valW, w.valB = take("value.weight", 1, d), take("value.bias", 1)
	headOff := off
	w.headAct = take("lm_head.action_rows", c.Bins, d)
	frozen = (c.VocabSize - c.Bins) * d
	w.headRest = take("lm_head.other_rows", c.VocabSize-c.Bins, d)
	if params != nil {
		w.head.w = params[headOff:off:off]
	}
	if off <= len(grads) {
		w.head.g = grads[headOff:off:off]
	}
	return w, spans, off, frozen
}
