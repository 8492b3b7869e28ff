package proprio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Float is the element type of a [Model]: float32 for the model that
// trains, float64 for the mirror the gradient checks run on.
type Float interface{ ~float32 | ~float64 }

// Config sizes a [Model].
type Config struct {
	// History is k, the number of past proprioception vectors the next
	// one is predicted from (the current one and k−1 before it). The
	// pixel world model uses M_obs's k, 4, so that both models start from
	// the same step.
	History int `json:"history"`
	// ProprioDim is D, the length of a proprioception vector (tabletop: 8).
	ProprioDim int `json:"proprio_dim"`
	// ActionDim is A, the length of the action (tabletop: 7).
	ActionDim int `json:"action_dim"`
	// Hidden are the widths of the hidden SiLU layers, input side first.
	Hidden []int `json:"hidden"`
}

// DefaultConfig is k = 4 and two hidden layers of 64.
func DefaultConfig(proprioDim, actionDim int) Config {
	return Config{History: 4, ProprioDim: proprioDim, ActionDim: actionDim, Hidden: []int{64, 64}}
}

// Validate reports every field that cannot build a model.
func (c Config) Validate() error {
	var errs []error
	if c.History < 1 {
		errs = append(errs, fmt.Errorf("history must be at least 1 past vector, got %d", c.History))
	}
	if c.ProprioDim < 1 || c.ActionDim < 1 {
		errs = append(errs, fmt.Errorf("proprio dim (%d) and action dim (%d) must be at least 1", c.ProprioDim, c.ActionDim))
	}
	for _, h := range c.Hidden {
		if h < 1 {
			errs = append(errs, fmt.Errorf("hidden widths must be positive, got %v", c.Hidden))
			break
		}
	}
	if len(c.Hidden) > 16 {
		errs = append(errs, fmt.Errorf("at most 16 hidden layers, got %d", len(c.Hidden)))
	}
	return errors.Join(errs...)
}

// In is k·D + A, the length of the feature vector.
func (c Config) In() int { return c.History*c.ProprioDim + c.ActionDim }

// Sample is one transition of a proprioception trajectory.
type Sample struct {
	// Past are the k = History vectors, oldest first; the last is the
	// current one.
	Past [][]float64
	// Action is the action taken after the last past vector.
	Action []float64
	// Next is the vector one step later (the target; nil when predicting).
	Next []float64
}

// Features returns the network's raw input for past (k vectors, oldest
// first) and action: [p_k, p_k − p_{k−1}, …, p_2 − p_1, a].
func (c Config) Features(past [][]float64, action []float64) []float64 {
	if len(past) != c.History || len(action) != c.ActionDim {
		panic(fmt.Sprintf("proprio: %d past vectors and a %d-D action, want %d and %d", len(past), len(action), c.History, c.ActionDim))
	}
	d, k := c.ProprioDim, c.History
	f := make([]float64, 0, c.In())
	for j := k - 1; j >= 0; j-- {
		if len(past[j]) != d {
			panic(fmt.Sprintf("proprio: past vector %d has %d values, want %d", j, len(past[j]), d))
		}
		if j == k-1 {
			f = append(f, past[j]...)
			continue
		}
		for i, v := range past[j+1] {
			f = append(f, v-past[j][i])
		}
	}
	return append(f, action...)
}

// MinStd is the floor of every standardisation σ: 1e-6 (a micrometre, a
// microradian), far below the smallest motion a step makes (finger and
// fingertip steps are millimetres), so that a feature that is constant in
// the training data (σ = 0) or varies only by float32 rounding does not
// blow up to unit scale.
const MinStd = 1e-6

// Norm holds the fixed standardisation of a [Model]'s input features and
// target changes, fitted on its training data.
type Norm struct {
	InMean, InStd   []float64 // In values
	OutMean, OutStd []float64 // ProprioDim values
}

// FitNorm returns the mean and the population standard deviation (floored
// at MinStd) of the features and of the changes Next − Past[k−1] of
// samples.
func FitNorm(c Config, samples []Sample) Norm {
	if len(samples) == 0 {
		panic("proprio: FitNorm: no samples")
	}
	in, d := c.In(), c.ProprioDim
	nm := Norm{InMean: make([]float64, in), InStd: make([]float64, in), OutMean: make([]float64, d), OutStd: make([]float64, d)}
	fs, ds := make([][]float64, len(samples)), make([][]float64, len(samples))
	for i, s := range samples {
		fs[i], ds[i] = c.Features(s.Past, s.Action), c.delta(s)
	}
	meanStd(fs, nm.InMean, nm.InStd)
	meanStd(ds, nm.OutMean, nm.OutStd)
	return nm
}

// meanStd writes the mean and floored population standard deviation of
// each column of rows into mean and std.
func meanStd(rows [][]float64, mean, std []float64) {
	n := float64(len(rows))
	for _, r := range rows {
		for j, v := range r {
			mean[j] += v / n
		}
	}
	for _, r := range rows {
		for j, v := range r {
			std[j] += (v - mean[j]) * (v - mean[j]) / n
		}
	}
	for j, v := range std {
		std[j] = math.Max(math.Sqrt(v), MinStd)
	}
}

// delta returns s.Next − s.Past[k−1].
func (c Config) delta(s Sample) []float64 {
	cur := s.Past[len(s.Past)-1]
	if len(s.Next) != c.ProprioDim {
		panic(fmt.Sprintf("proprio: next vector has %d values, want %d", len(s.Next), c.ProprioDim))
	}
	d := make([]float64, c.ProprioDim)
	for i, v := range s.Next {
		d[i] = v - cur[i]
	}
	return d
}

// validate panics unless nm has c's sizes.
func (nm Norm) validate(c Config) {
	if len(nm.InMean) != c.In() || len(nm.InStd) != c.In() || len(nm.OutMean) != c.ProprioDim || len(nm.OutStd) != c.ProprioDim {
		panic(fmt.Sprintf("proprio: norm has %d/%d input and %d/%d output statistics, want %d and %d",
			len(nm.InMean), len(nm.InStd), len(nm.OutMean), len(nm.OutStd), c.In(), c.ProprioDim))
	}
}

// Span names one parameter tensor inside the flat parameter slice.
// Shapes are PyTorch's: a linear weight is out × in.
type Span struct {
	Name   string
	Offset int
	Shape  []int
}

// tensor is a parameter view and its gradient view.
type tensor[F Float] struct{ w, g []F }

// linear is y = W·x + b over a batch of rows.
type linear[F Float] struct {
	in, out int
	w, b    tensor[F]
}

// Model is the proprioception head: a [Norm] and an MLP over its
// standardised features. Forward passes keep no state, so a Model may
// predict from several goroutines; Loss accumulates into the gradients
// and is not safe for concurrent use.
type Model[F Float] struct {
	cfg           Config
	norm          Norm
	params, grads []F
	spans         []Span
	layers        []linear[F]
}

// NewModel returns a head for c with standardisation nm, its hidden
// weights drawn from rng (zeros when rng is nil) and its output layer
// zero. It panics when c is invalid or nm does not fit it.
func NewModel[F Float](c Config, nm Norm, rng *rand.Rand) *Model[F] {
	if err := c.Validate(); err != nil {
		panic("proprio: NewModel: " + err.Error())
	}
	nm.validate(c)
	m := &Model[F]{cfg: c, norm: nm}
	widths := append(append([]int{c.In()}, c.Hidden...), c.ProprioDim)
	off := 0
	for l := 0; l+1 < len(widths); l++ {
		in, out := widths[l], widths[l+1]
		name := fmt.Sprintf("layers.%d", l)
		m.spans = append(m.spans, Span{name + ".weight", off, []int{out, in}}, Span{name + ".bias", off + out*in, []int{out}})
		off += out*in + out
	}
	m.params, m.grads = make([]F, off), make([]F, off)
	for l := 0; l+1 < len(widths); l++ {
		in, out := widths[l], widths[l+1]
		ws, bs := m.spans[2*l], m.spans[2*l+1]
		lin := linear[F]{in: in, out: out,
			w: tensor[F]{m.params[ws.Offset : ws.Offset+out*in], m.grads[ws.Offset : ws.Offset+out*in]},
			b: tensor[F]{m.params[bs.Offset : bs.Offset+out], m.grads[bs.Offset : bs.Offset+out]}}
		if rng != nil && l+2 < len(widths) { // the output layer stays zero
			bound := 1 / math.Sqrt(float64(in))
			for j := range lin.w.w {
				lin.w.w[j] = F(bound * (2*rng.Float64() - 1))
			}
		}
		m.layers = append(m.layers, lin)
	}
	return m
}

// Config returns the model's configuration.
func (m *Model[F]) Config() Config { return m.cfg }

// Norm returns the model's standardisation (shared, do not modify).
func (m *Model[F]) Norm() Norm { return m.norm }

// Params returns the flat parameter slice (shared, not a copy).
func (m *Model[F]) Params() []F { return m.params }

// Grads returns the flat gradient slice, laid out as Params.
func (m *Model[F]) Grads() []F { return m.grads }

// Spans names the parameter tensors in Params.
func (m *Model[F]) Spans() []Span { return m.spans }

// ZeroGrads clears the gradients.
func (m *Model[F]) ZeroGrads() { clear(m.grads) }

// Batch is n samples in the network's units: standardised features X
// (n × In) and standardised target changes Z (n × ProprioDim; zeros for
// samples without Next).
type Batch[F Float] struct {
	N    int
	X, Z []F
}

// Batch standardises samples with the model's Norm.
func (m *Model[F]) Batch(samples []Sample) Batch[F] {
	c, nm := m.cfg, m.norm
	in, d := c.In(), c.ProprioDim
	b := Batch[F]{N: len(samples), X: make([]F, len(samples)*in), Z: make([]F, len(samples)*d)}
	for i, s := range samples {
		for j, v := range c.Features(s.Past, s.Action) {
			b.X[i*in+j] = F((v - nm.InMean[j]) / nm.InStd[j])
		}
		if s.Next == nil {
			continue
		}
		for j, v := range c.delta(s) {
			b.Z[i*d+j] = F((v - nm.OutMean[j]) / nm.OutStd[j])
		}
	}
	return b
}

// tape holds a forward pass's activations: hs[l] is layer l's input
// (hs[0] = X), us[l] its output before SiLU.
type tape[F Float] struct {
	n      int
	hs, us [][]F
}

// forward runs the MLP on the n rows of x and returns y (n × ProprioDim)
// with the tape the backward pass needs.
func (m *Model[F]) forward(x []F, n int) ([]F, *tape[F]) {
	tp := &tape[F]{n: n, hs: [][]F{x}}
	last := len(m.layers) - 1
	for l := range last {
		u := m.layers[l].forward(tp.hs[l], n)
		tp.us = append(tp.us, u)
		tp.hs = append(tp.hs, silu(u))
	}
	return m.layers[last].forward(tp.hs[last], n), tp
}

// backward accumulates the parameter gradients of a loss whose gradient
// with respect to forward's y is dy and returns ∂L/∂x.
func (m *Model[F]) backward(tp *tape[F], dy []F) []F {
	for l := len(m.layers) - 1; ; l-- {
		dh := m.layers[l].backward(tp.hs[l], dy, tp.n)
		if l == 0 {
			return dh
		}
		dy = siluBack(tp.us[l-1], dh)
	}
}

// Loss returns L = 1/(N·D) Σ (y − Z)² of batch b and accumulates its
// gradient into the model's (call ZeroGrads first).
func (m *Model[F]) Loss(b Batch[F]) float64 {
	y, tp := m.forward(b.X, b.N)
	loss, dy := mse(y, b.Z)
	m.backward(tp, dy)
	return loss
}

// EvalLoss is Loss without the gradient.
func (m *Model[F]) EvalLoss(b Batch[F]) float64 {
	y, _ := m.forward(b.X, b.N)
	loss, _ := mse(y, b.Z)
	return loss
}

// mse returns the mean of (y − z)² and its gradient 2(y − z)/len.
func mse[F Float](y, z []F) (float64, []F) {
	if len(y) != len(z) || len(y) == 0 {
		panic(fmt.Sprintf("proprio: loss of %d outputs against %d targets", len(y), len(z)))
	}
	dy := make([]F, len(y))
	s, inv := 0.0, 1/float64(len(y))
	for i := range y {
		e := float64(y[i]) - float64(z[i])
		s += e * e
		dy[i] = F(2 * e * inv)
	}
	return s * inv, dy
}

// Predict returns the predicted next vector of every sample (Next is
// ignored): p̂ = p_k + μ_Δ + σ_Δ ⊙ y.
func (m *Model[F]) Predict(samples []Sample) [][]float64 {
	if len(samples) == 0 {
		return nil
	}
	b := m.Batch(samples)
	y, _ := m.forward(b.X, b.N)
	d, nm := m.cfg.ProprioDim, m.norm
	out := make([][]float64, len(samples))
	for i, s := range samples {
		cur := s.Past[len(s.Past)-1]
		p := make([]float64, d)
		for j := range p {
			p[j] = cur[j] + nm.OutMean[j] + nm.OutStd[j]*float64(y[i*d+j])
		}
		out[i] = p
	}
	return out
}

// Rollout imagines len(actions) steps open loop from the k = History real
// vectors past (oldest first): step h predicts from the last k vectors,
// real or imagined, and actions[h], and its prediction becomes the newest
// past vector. It returns the imagined vectors.
func (m *Model[F]) Rollout(past [][]float64, actions [][]float64) [][]float64 {
	k := m.cfg.History
	if len(past) != k {
		panic(fmt.Sprintf("proprio: rollout from %d past vectors, want %d", len(past), k))
	}
	window := append([][]float64(nil), past...)
	out := make([][]float64, 0, len(actions))
	for _, a := range actions {
		next := m.Predict([]Sample{{Past: window[len(window)-k:], Action: a}})[0]
		out = append(out, next)
		window = append(window, next)
	}
	return out
}

// forward returns y = x·Wᵀ + b for the n rows of x.
func (l *linear[F]) forward(x []F, n int) []F {
	if len(x) != n*l.in {
		panic(fmt.Sprintf("proprio: linear: input has %d values, want %d·%d", len(x), n, l.in))
	}
	y := make([]F, n*l.out)
	for i := range n {
		xi := x[i*l.in : (i+1)*l.in]
		for o := range l.out {
			s := float64(l.b.w[o])
			for j, w := range l.w.w[o*l.in : (o+1)*l.in] {
				s += float64(w) * float64(xi[j])
			}
			y[i*l.out+o] = F(s)
		}
	}
	return y
}

// backward accumulates ∂L/∂W += dyᵀ·x and ∂L/∂b += Σ_rows dy and returns
// ∂L/∂x = dy·W.
func (l *linear[F]) backward(x, dy []F, n int) []F {
	dx := make([]F, n*l.in)
	for i := range n {
		xi, dxi := x[i*l.in:(i+1)*l.in], dx[i*l.in:(i+1)*l.in]
		for o := range l.out {
			g := dy[i*l.out+o]
			l.b.g[o] += g
			wo, gwo := l.w.w[o*l.in:(o+1)*l.in], l.w.g[o*l.in:(o+1)*l.in]
			for j := range xi {
				gwo[j] += g * xi[j]
				dxi[j] += g * wo[j]
			}
		}
	}
	return dx
}

// silu returns x·σ(x) elementwise (Elfwing et al. 2018).
func silu[F Float](x []F) []F {
	y := make([]F, len(x))
	for i, v := range x {
		y[i] = F(float64(v) / (1 + math.Exp(-float64(v))))
	}
	return y
}

// siluBack returns dy ⊙ SiLU'(x), SiLU'(x) = σ(x)·(1 + x·(1 − σ(x))).
func siluBack[F Float](x, dy []F) []F {
	dx := make([]F, len(x))
	for i, v := range x {
		u := float64(v)
		s := 1 / (1 + math.Exp(-u))
		dx[i] = dy[i] * F(s*(1+u*(1-s)))
	}
	return dx
}
