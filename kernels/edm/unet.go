package edm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// resBlock is DIAMOND's residual block (no attention):
//
//	h = conv1(SiLU(norm1(x, e))),   y = conv2(SiLU(norm2(h, e))) + proj(x)
//
// with 3×3 convs, adaptive group norms and proj a 1×1 conv when the
// widths differ (the identity otherwise).
type resBlock[F Float] struct {
	norm1, norm2 adaNorm[F]
	conv1, conv2 conv[F]
	proj         *conv[F]

	a, b []F // norm outputs (SiLU inputs), kept for backward
}

func (l *resBlock[F]) forward(be kernels.Backend, x []F, n, s int, cond []F) []F {
	l.a = l.norm1.forward(be, x, n, s*s, cond)
	h := l.conv1.forward(be, silu(l.a), n, s, s)
	l.b = l.norm2.forward(be, h, n, s*s, cond)
	y := l.conv2.forward(be, silu(l.b), n, s, s)
	skip := x
	if l.proj != nil {
		skip = l.proj.forward(be, x, n, s, s)
	}
	for i, v := range skip {
		y[i] += v
	}
	return y
}

// backward returns ∂L/∂x and adds ∂L/∂e to dcond.
func (l *resBlock[F]) backward(be kernels.Backend, dy, dcond []F) []F {
	d := l.conv2.backward(be, dy)
	d = l.norm2.backward(be, siluBack(l.b, d), dcond)
	d = l.conv1.backward(be, d)
	dx := l.norm1.backward(be, siluBack(l.a, d), dcond)
	skip := dy
	if l.proj != nil {
		skip = l.proj.backward(be, dy)
	}
	for i, v := range skip {
		dx[i] += v
	}
	return dx
}

// Net is the network F_θ inside the EDM denoiser (see the package doc): a
// U-Net over the noisy next frame and the k past frames, conditioned on
// c_noise and the action. Its parameters live in one flat slice (Params,
// laid out as Spans) with the gradients in a second one of the same layout
// (Grads); Backward accumulates into the gradients.
//
// A Net runs one forward and one backward pass at a time: forward keeps
// the activations the following backward reads.
type Net[F Float] struct {
	cfg           Config
	be            kernels.Backend
	params, grads []F
	spans         []Span

	actEmb, cond1, cond2 dense[F]
	convIn               conv[F]
	down                 []conv[F]     // stride-2 3×3 convs, one per level below the top
	enc, dec             []resBlock[F] // one block per level on each side
	normOut              adaNorm[F]
	convOut              conv[F]

	// forward state
	n                   int
	action, e, h1, cond []F
	outNorm             []F
}

// NewNet builds a model for c with weights drawn from rng (PyTorch's
// default initialisation; the output conv starts at zero, as DIAMOND's, so
// that the untrained denoiser is D(x; σ) = c_skip(σ)·x). A float32 model
// runs its matrix products on be ([kernels.NewCPU] when nil); the float64
// model ignores be. It panics on an invalid config (see
// [Config.Validate]).
func NewNet[F Float](c Config, rng *rand.Rand, be kernels.Backend) *Net[F] {
	if err := c.Validate(); err != nil {
		panic("edm: NewNet: " + err.Error())
	}
	m := &Net[F]{cfg: c}
	if _, ok := any(m.params).([]float32); ok {
		if be == nil {
			be = kernels.NewCPU(0)
		}
		m.be = be
	}
	var b layout[F]
	cd, ch, levels := c.CondDim, c.Channels, len(c.Channels)
	b.dense(&m.actEmb, "action_embed", c.ActionDim, cd)
	b.dense(&m.cond1, "cond_proj.0", cd, cd)
	b.dense(&m.cond2, "cond_proj.2", cd, cd)
	b.conv(&m.convIn, "conv_in", c.FrameChannels()*(1+c.History), ch[0], 3, 1)
	m.convIn.noInputGrad = true
	m.down = make([]conv[F], levels-1)
	m.enc, m.dec = make([]resBlock[F], levels), make([]resBlock[F], levels)
	for l := range levels {
		prev := ch[max(l-1, 0)]
		if l > 0 {
			b.conv(&m.down[l-1], fmt.Sprintf("down.%d", l-1), prev, prev, 3, 2)
		}
		b.res(&m.enc[l], fmt.Sprintf("enc.%d", l), c, prev, ch[l])
	}
	for l := levels - 1; l >= 0; l-- {
		below := ch[min(l+1, levels-1)]
		b.res(&m.dec[l], fmt.Sprintf("dec.%d", l), c, below+ch[l], ch[l])
	}
	b.norm(&m.normOut, "norm_out", ch[0], c.groups(ch[0]), cd)
	b.conv(&m.convOut, "conv_out", ch[0], c.FrameChannels(), 3, 1)
	b.fans[len(b.fans)-2] = 0 // conv_out.weight starts at zero
	m.params, m.grads = b.bind(rng)
	m.spans = b.spans
	return m
}

// Config returns the model's configuration.
func (m *Net[F]) Config() Config { return m.cfg }

// Params returns the flat parameter slice (a view: writes change the model).
func (m *Net[F]) Params() []F { return m.params }

// Grads returns the flat gradient slice, laid out as Params.
func (m *Net[F]) Grads() []F { return m.grads }

// Spans lists the parameter tensors in layout order.
func (m *Net[F]) Spans() []Span { return m.spans }

// ZeroGrads clears the gradients.
func (m *Net[F]) ZeroGrads() { clear(m.grads) }

// noiseEmbedding returns the Fourier features of c_noise for n images
// (n × CondDim): with h = CondDim/2 frequencies ω_j = π·16^{j/(h−1)} (π to
// 16π; c_noise spans about −1.6 … 0.4 over σ ∈ [2e-3, 5], so the lowest
// frequency is monotone over the whole range and the highest resolves
// differences of ~0.03),
//
//	emb[j] = cos(ω_j·c_noise),  emb[h+j] = sin(ω_j·c_noise)
//
// (DIAMOND's FourierFeatures use random frequencies; fixed ones need no
// stored buffer.)
func noiseEmbedding[F Float](cnoise []F, dim int) []F {
	h := dim / 2
	out := make([]F, len(cnoise)*dim)
	for i, c := range cnoise {
		for j := 0; j < h; j++ {
			w := math.Pi
			if h > 1 {
				w *= math.Pow(16, float64(j)/float64(h-1))
			}
			out[i*dim+j] = F(math.Cos(w * float64(c)))
			out[i*dim+h+j] = F(math.Sin(w * float64(c)))
		}
	}
	return out
}

// forward computes F_θ for n images: noisy is the scaled noisy frame c_in·x
// (3C × n·S², CNHW), past the k conditioning frames (3Ck × n·S², oldest
// first, cameras inner), cnoise the n noise levels c_noise(σ) and action
// the n × ActionDim actions. It returns the 3C × n·S² output.
func (m *Net[F]) forward(noisy, past, cnoise, action []F, n int) []F {
	c := m.cfg
	s, fc := c.ImageSize, c.FrameChannels()
	if len(noisy) != fc*n*s*s || len(past) != c.History*fc*n*s*s || len(cnoise) != n || len(action) != n*c.ActionDim {
		panic(fmt.Sprintf("edm: Net.forward: noisy %d, past %d, cnoise %d, action %d values for %d images of %+v",
			len(noisy), len(past), len(cnoise), len(action), n, c))
	}
	be := m.be
	m.n, m.action = n, action
	// Conditioning: e = Fourier(c_noise) + A·action + a, cond = W₂·SiLU(W₁e + b₁) + b₂.
	m.e = noiseEmbedding(cnoise, c.CondDim)
	for i, v := range m.actEmb.forward(be, action, n) {
		m.e[i] += v
	}
	m.h1 = m.cond1.forward(be, m.e, n)
	m.cond = m.cond2.forward(be, silu(m.h1), n)

	in := make([]F, 0, len(noisy)+len(past))
	in = append(append(in, noisy...), past...)
	h := m.convIn.forward(be, in, n, s, s)
	skips := make([][]F, len(c.Channels))
	for l := range c.Channels {
		if l > 0 {
			h = m.down[l-1].forward(be, h, n, s, s)
			s /= 2
		}
		h = m.enc[l].forward(be, h, n, s, m.cond)
		skips[l] = h
	}
	for l := len(c.Channels) - 1; l >= 0; l-- {
		h = m.dec[l].forward(be, append(h[:len(h):len(h)], skips[l]...), n, s, m.cond)
		if l > 0 {
			h = upsample2(h, c.Channels[l]*n, s, s)
			s *= 2
		}
	}
	m.outNorm = m.normOut.forward(be, h, n, s*s, m.cond)
	return m.convOut.forward(be, silu(m.outNorm), n, s, s)
}

// backward accumulates the parameter gradients for ∂L/∂out = dout.
func (m *Net[F]) backward(dout []F) {
	c, be, n := m.cfg, m.be, m.n
	s := c.ImageSize
	dcond := make([]F, n*c.CondDim)
	d := m.convOut.backward(be, dout)
	d = m.normOut.backward(be, siluBack(m.outNorm, d), dcond)
	dskips := make([][]F, len(c.Channels))
	for l := 0; l < len(c.Channels); l++ {
		if l > 0 {
			s /= 2
			d = upsample2Back(d, c.Channels[l]*n, s, s)
		}
		dcat := m.dec[l].backward(be, d, dcond)
		split := len(dcat) - c.Channels[l]*n*s*s
		d, dskips[l] = dcat[:split], dcat[split:]
	}
	// d is now the gradient at the output of the deepest encoder block
	// (the deepest decoder block reads that output twice: as its input and
	// as its skip); each level adds the gradient of its skip.
	for l := len(c.Channels) - 1; l >= 0; l-- {
		for i, v := range dskips[l] {
			d[i] += v
		}
		d = m.enc[l].backward(be, d, dcond)
		if l > 0 {
			d = m.down[l-1].backward(be, d)
		}
	}
	m.convIn.backward(be, d)
	// Conditioning MLP.
	dh := make([]F, n*c.CondDim)
	m.cond2.backward(be, silu(m.h1), dcond, n, dh)
	de := make([]F, n*c.CondDim)
	m.cond1.backward(be, m.e, siluBack(m.h1, dh), n, de)
	m.actEmb.backward(be, m.action, de, n, nil)
}
