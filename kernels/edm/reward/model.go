package reward

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// The two outputs of the model, in logit order.
const (
	// Success is the index of p_success: the goal holds at this frame or
	// held at an earlier frame of the episode.
	Success = 0
	// End is the index of p_end: the episode has ended at or before this
	// frame.
	End = 1
	// Outputs is the number of logits.
	Outputs = 2
)

// Config sizes a [Model].
type Config struct {
	// ImageSize is the side S of the square camera frames in pixels.
	ImageSize int
	// Patch is the side P of the square patches; it must divide ImageSize.
	Patch int
	// Cameras is the number of frames per time step, each with its own
	// stem (tabletop: agentview, wrist).
	Cameras int
	// Dim is the width D of a patch token (vla.SmallConfig: 64). It must
	// equal the VLA's to copy its stem.
	Dim int
	// Hidden is the width of the head's hidden layer.
	Hidden int
}

// DefaultConfig is the size of vla.SmallConfig's stem — two 32×32 cameras
// in 8×8 patches, 64-wide tokens — with a 64-wide head: 31,042
// parameters.
func DefaultConfig() Config {
	return Config{ImageSize: 32, Patch: 8, Cameras: 2, Dim: 64, Hidden: 64}
}

// Validate reports every size that cannot build a model.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"image size", c.ImageSize}, {"patch", c.Patch}, {"cameras", c.Cameras}, {"dim", c.Dim}, {"hidden", c.Hidden}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", f.name, f.v))
		}
	}
	if c.ImageSize >= 1 && c.Patch >= 1 && c.ImageSize%c.Patch != 0 {
		errs = append(errs, fmt.Errorf("patch %d does not divide the image size %d; choose a divisor such as 8", c.Patch, c.ImageSize))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reward model config: %w", err)
	}
	return nil
}

// PatchesPerCamera is np = (ImageSize/Patch)².
func (c Config) PatchesPerCamera() int { g := c.ImageSize / c.Patch; return g * g }

// PatchDim is P·P·3, the values of one flattened patch.
func (c Config) PatchDim() int { return c.Patch * c.Patch * 3 }

// FrameBytes is S·S·3, the bytes of one camera frame.
func (c Config) FrameBytes() int { return c.ImageSize * c.ImageSize * 3 }

// Span names one parameter tensor inside the flat parameter slice. Shapes
// are PyTorch's: a linear weight is out × in.
type Span struct {
	Name   string
	Offset int
	Shape  []int
}

// Model is the reward model M_rew. It keeps no scratch between calls, so
// Predict may run on several goroutines at once; Loss and Backward write
// the gradients and must not.
type Model struct {
	cfg           Config
	params, grads []float64
	spans         []Span

	// Views into params (w) and grads (g).
	stemW, stemB, pos []view // per camera: D × PatchDim, D, np × D
	fc1W, fc1B        view   // Hidden × D, Hidden
	fc2W, fc2B        view   // Outputs × Hidden, Outputs
}

// view is one parameter tensor: w in the parameters, g in the gradients.
type view struct{ w, g []float64 }

// New returns a model with PyTorch's default initialisation for linear
// layers (weights U(−1/√fan_in, 1/√fan_in)), zero biases and position
// embeddings N(0, 0.02²) as vla's. It panics on an invalid cfg (see
// [Config.Validate]).
func New(cfg Config, rng *rand.Rand) *Model {
	if err := cfg.Validate(); err != nil {
		panic("reward: New: " + err.Error())
	}
	m := &Model{cfg: cfg}
	type tensor struct {
		v     *view
		fan   int     // > 0: uniform weight init with this fan-in
		std   float64 // > 0: normal init
		shape []int
	}
	d, np, pd := cfg.Dim, cfg.PatchesPerCamera(), cfg.PatchDim()
	m.stemW, m.stemB, m.pos = make([]view, cfg.Cameras), make([]view, cfg.Cameras), make([]view, cfg.Cameras)
	var ts []tensor
	var names []string
	for c := range cfg.Cameras {
		ts = append(ts, tensor{&m.stemW[c], pd, 0, []int{d, pd}}, tensor{&m.stemB[c], 0, 0, []int{d}}, tensor{&m.pos[c], 0, 0.02, []int{np, d}})
		names = append(names, fmt.Sprintf("stem.%d.weight", c), fmt.Sprintf("stem.%d.bias", c), fmt.Sprintf("stem.%d.pos", c))
	}
	ts = append(ts, tensor{&m.fc1W, d, 0, []int{cfg.Hidden, d}}, tensor{&m.fc1B, 0, 0, []int{cfg.Hidden}},
		tensor{&m.fc2W, cfg.Hidden, 0, []int{Outputs, cfg.Hidden}}, tensor{&m.fc2B, 0, 0, []int{Outputs}})
	names = append(names, "head.fc1.weight", "head.fc1.bias", "head.fc2.weight", "head.fc2.bias")
	total := 0
	for i, t := range ts {
		n := 1
		for _, s := range t.shape {
			n *= s
		}
		m.spans = append(m.spans, Span{Name: names[i], Offset: total, Shape: t.shape})
		total += n
	}
	m.params, m.grads = make([]float64, total), make([]float64, total)
	for i, t := range ts {
		s := m.spans[i]
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		t.v.w, t.v.g = m.params[s.Offset:s.Offset+n:s.Offset+n], m.grads[s.Offset:s.Offset+n:s.Offset+n]
		for j := range t.v.w {
			switch {
			case t.fan > 0:
				t.v.w[j] = (2*rng.Float64() - 1) / math.Sqrt(float64(t.fan))
			case t.std > 0:
				t.v.w[j] = t.std * rng.NormFloat64()
			}
		}
	}
	return m
}

// Config returns the model's sizes.
func (m *Model) Config() Config { return m.cfg }

// Params is the flat parameter slice (layout in [Model.Spans]).
func (m *Model) Params() []float64 { return m.params }

// Grads is the flat gradient slice, laid out as Params.
func (m *Model) Grads() []float64 { return m.grads }

// ZeroGrads clears the gradients (backward passes accumulate).
func (m *Model) ZeroGrads() { clear(m.grads) }

// Spans lists the parameter tensors in layout order.
func (m *Model) Spans() []Span { return append([]Span(nil), m.spans...) }

// tape holds what the backward pass needs from a forward pass over n
// steps.
type tape struct {
	n       int
	patches [][]float64 // per camera: (n·np) × PatchDim pixel values
	pre     [][]float64 // per camera: (n·np) × D stem outputs a before the SiLU
	pooled  []float64   // n × D
	u1      []float64   // n × Hidden before the SiLU
	hidden  []float64   // n × Hidden after it
	logits  []float64   // n × Outputs
}

// forward runs the network on steps (each Cameras frames of FrameBytes
// bytes) and returns the tape; its logits are row-major n × Outputs.
func (m *Model) forward(steps [][][]uint8) *tape {
	c := m.cfg
	n, np, pd, d := len(steps), c.PatchesPerCamera(), c.PatchDim(), c.Dim
	tp := &tape{n: n, patches: make([][]float64, c.Cameras), pre: make([][]float64, c.Cameras)}
	tokens := make([][]float64, c.Cameras)
	for cam := range c.Cameras {
		tp.patches[cam] = patchify(c, steps, cam)
		a := linearForward(tp.patches[cam], n*np, pd, d, m.stemW[cam].w, m.stemB[cam].w)
		addPositions(a, m.pos[cam].w, n, np, d)
		tp.pre[cam] = a
		tokens[cam] = silu(a)
	}
	tp.pooled = meanPool(tokens, n, np, d)
	tp.u1 = linearForward(tp.pooled, n, d, c.Hidden, m.fc1W.w, m.fc1B.w)
	tp.hidden = silu(tp.u1)
	tp.logits = linearForward(tp.hidden, n, c.Hidden, Outputs, m.fc2W.w, m.fc2B.w)
	return tp
}

// backward accumulates the parameter gradients of a loss whose gradient
// with respect to tp.logits is dz (n × Outputs).
func (m *Model) backward(tp *tape, dz []float64) {
	c := m.cfg
	n, np, pd, d := tp.n, c.PatchesPerCamera(), c.PatchDim(), c.Dim
	dh := linearBackward(tp.hidden, dz, n, c.Hidden, Outputs, m.fc2W.w, m.fc2W.g, m.fc2B.g, true)
	du := siluBack(tp.u1, dh)
	dp := linearBackward(tp.pooled, du, n, d, c.Hidden, m.fc1W.w, m.fc1W.g, m.fc1B.g, true)
	dtok := meanPoolBack(dp, n, np, d, c.Cameras)
	for cam := range c.Cameras {
		da := siluBack(tp.pre[cam], dtok)
		addPositionsBack(da, m.pos[cam].g, n, np, d)
		linearBackward(tp.patches[cam], da, n*np, pd, d, m.stemW[cam].w, m.stemW[cam].g, m.stemB[cam].g, false)
	}
}

// Predict returns p_success and p_end of every step (Cameras frames each,
// in the order the model was trained on).
func (m *Model) Predict(steps [][][]uint8) (pSuccess, pEnd []float64) {
	tp := m.forward(steps)
	pSuccess, pEnd = make([]float64, tp.n), make([]float64, tp.n)
	for i := range tp.n {
		pSuccess[i] = sigmoid(tp.logits[i*Outputs+Success])
		pEnd[i] = sigmoid(tp.logits[i*Outputs+End])
	}
	return pSuccess, pEnd
}

// Rewards returns the imagined rewards of a trajectory of n+1 steps (an
// imagined rollout from its real start frame): r̂_t = p_success(o_{t+1}) −
// p_success(o_t) for t < n ([Increments] of Predict's p_success).
func (m *Model) Rewards(steps [][][]uint8) []float64 {
	p, _ := m.Predict(steps)
	return Increments(p)
}

// Increments returns the imagined rewards of a trajectory of n+1 frames
// from their success probabilities p: r̂_t = p[t+1] − p[t], t < n. They sum
// to p[n] − p[0].
func Increments(p []float64) []float64 {
	if len(p) < 2 {
		return nil
	}
	r := make([]float64, len(p)-1)
	for t := range r {
		r[t] = p[t+1] - p[t]
	}
	return r
}

// patchify cuts camera cam of every step into np patches of PatchDim
// values in [−1, 1], as vla's stem does: rows (step, patch), patch p at
// grid position (p / (S/P), p mod (S/P)), flattened as (row, column,
// channel).
func patchify(c Config, steps [][][]uint8, cam int) []float64 {
	np, pd, g := c.PatchesPerCamera(), c.PatchDim(), c.ImageSize/c.Patch
	out := make([]float64, len(steps)*np*pd)
	for i, st := range steps {
		if len(st) != c.Cameras {
			panic(fmt.Sprintf("reward: step %d has %d frames, want %d cameras", i, len(st), c.Cameras))
		}
		im := st[cam]
		if len(im) != c.FrameBytes() {
			panic(fmt.Sprintf("reward: step %d camera %d: frame has %d bytes, want %d×%d×3 = %d",
				i, cam, len(im), c.ImageSize, c.ImageSize, c.FrameBytes()))
		}
		for p := range np {
			py, px := p/g, p%g
			dst := out[(i*np+p)*pd:]
			q := 0
			for dy := range c.Patch {
				row := ((py*c.Patch+dy)*c.ImageSize + px*c.Patch) * 3
				for _, v := range im[row : row+c.Patch*3] {
					dst[q] = float64(v)/127.5 - 1
					q++
				}
			}
		}
	}
	return out
}

// linearForward returns y = x·Wᵀ + b for n rows x of in values, W out × in.
func linearForward(x []float64, n, in, out int, w, b []float64) []float64 {
	y := make([]float64, n*out)
	for i := range n {
		xi := x[i*in : (i+1)*in]
		for o := range out {
			wo := w[o*in : (o+1)*in]
			s := b[o]
			for j, v := range xi {
				s += v * wo[j]
			}
			y[i*out+o] = s
		}
	}
	return y
}

// linearBackward accumulates ∂L/∂W += dyᵀ·x and ∂L/∂b += Σ_rows dy into dw
// and db and returns ∂L/∂x = dy·W, or nil without computing it when
// wantInput is false (the pixels need none).
func linearBackward(x, dy []float64, n, in, out int, w, dw, db []float64, wantInput bool) []float64 {
	var dx []float64
	if wantInput {
		dx = make([]float64, n*in)
	}
	for i := range n {
		xi := x[i*in : (i+1)*in]
		for o := range out {
			g := dy[i*out+o]
			if g == 0 {
				continue
			}
			db[o] += g
			dwo := dw[o*in : (o+1)*in]
			for j, v := range xi {
				dwo[j] += g * v
			}
			if wantInput {
				wo, dxi := w[o*in:(o+1)*in], dx[i*in:(i+1)*in]
				for j, v := range wo {
					dxi[j] += g * v
				}
			}
		}
	}
	return dx
}

// addPositions adds the position embedding pos[p] (np × d) to row (i, p)
// of a, for every step i of n.
func addPositions(a, pos []float64, n, np, d int) {
	for i := range n {
		row := a[i*np*d : (i+1)*np*d]
		for j := range row {
			row[j] += pos[j]
		}
	}
}

// addPositionsBack accumulates ∂L/∂pos = Σ_i ∂L/∂a(i, ·) into dpos.
func addPositionsBack(da, dpos []float64, n, np, d int) {
	for i := range n {
		row := da[i*np*d : (i+1)*np*d]
		for j, v := range row {
			dpos[j] += v
		}
	}
}

// meanPool averages, for each of n steps, its np tokens (d values) of
// every camera: h_i = 1/(C·np) Σ_c Σ_p tok_c[i·np + p].
func meanPool(tok [][]float64, n, np, d int) []float64 {
	h := make([]float64, n*d)
	scale := 1 / float64(len(tok)*np)
	for _, t := range tok {
		for i := range n {
			hi := h[i*d : (i+1)*d]
			for p := range np {
				for j, v := range t[(i*np+p)*d : (i*np+p+1)*d] {
					hi[j] += v
				}
			}
		}
	}
	for j := range h {
		h[j] *= scale
	}
	return h
}

// meanPoolBack returns ∂L/∂tok for one camera (every camera's is the
// same): each token of step i gets dh_i/(C·np).
func meanPoolBack(dh []float64, n, np, d, cameras int) []float64 {
	dt := make([]float64, n*np*d)
	scale := 1 / float64(cameras*np)
	for i := range n {
		for p := range np {
			row := dt[(i*np+p)*d : (i*np+p+1)*d]
			for j := range row {
				row[j] = dh[i*d+j] * scale
			}
		}
	}
	return dt
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// silu returns x·σ(x) elementwise.
func silu(x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * sigmoid(v)
	}
	return y
}

// siluBack returns dy ⊙ SiLU'(x), SiLU'(x) = σ(x)(1 + x(1 − σ(x))).
func siluBack(x, dy []float64) []float64 {
	dx := make([]float64, len(x))
	for i, v := range x {
		s := sigmoid(v)
		dx[i] = dy[i] * s * (1 + v*(1-s))
	}
	return dx
}
