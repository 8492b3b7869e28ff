package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MLP is a stack of [Dense] layers with an activation after every layer but
// the last (the output is linear):
//
//	h0 = x;  h_{l+1} = act(h_l W_lᵀ + b_l) for l < L-1;  y = h_{L-1} W_{L-1}ᵀ + b_{L-1}
//
// Forward keeps the activations of the last batch so that Backward can use
// them; an MLP is therefore not safe for concurrent use.
type MLP struct {
	Layers     []*Dense
	Activation string

	act  activation
	n    int         // batch size of the last Forward
	hs   [][]float64 // hs[0] = input (caller's slice), hs[l+1] = output of layer l
	bufs [][]float64 // backing storage for hs[1:]
	dh   [2][]float64
}

// NewMLP returns an unbound MLP with layer sizes sizes[0] → sizes[1] → … →
// sizes[len-1]; it panics on fewer than two sizes, a non-positive size or an
// unknown activation. Call Bind before use.
func NewMLP(sizes []int, activationName string) *MLP {
	if len(sizes) < 2 {
		panic(fmt.Sprintf("kernels: NewMLP: need at least input and output sizes, got %v", sizes))
	}
	act, ok := lookupActivation(activationName)
	if !ok {
		panic(fmt.Sprintf("kernels: NewMLP: unknown activation %q (want %q or %q)", activationName, ActTanh, ActReLU))
	}
	m := &MLP{Activation: activationName, act: act}
	for l := 0; l+1 < len(sizes); l++ {
		m.Layers = append(m.Layers, NewDense(sizes[l], sizes[l+1]))
	}
	m.hs = make([][]float64, len(m.Layers)+1)
	m.bufs = make([][]float64, len(m.Layers))
	return m
}

// In returns the input width.
func (m *MLP) In() int { return m.Layers[0].In }

// Out returns the output width.
func (m *MLP) Out() int { return m.Layers[len(m.Layers)-1].Out }

// NumParams returns the total parameter count of all layers.
func (m *MLP) NumParams() int {
	n := 0
	for _, d := range m.Layers {
		n += d.NumParams()
	}
	return n
}

// Bind lays the layers out one after another in params and grads (each of
// length NumParams): layer 0's weights, layer 0's biases, layer 1's weights…
func (m *MLP) Bind(params, grads []float64) {
	if len(params) != m.NumParams() || len(grads) != m.NumParams() {
		panic(fmt.Sprintf("kernels: MLP.Bind: got %d params and %d grads, want %d",
			len(params), len(grads), m.NumParams()))
	}
	off := 0
	for _, d := range m.Layers {
		k := d.NumParams()
		d.Bind(params[off:off+k:off+k], grads[off:off+k:off+k])
		off += k
	}
}

// InitOrthogonal initialises every hidden layer with gain hiddenGain and the
// output layer with outGain (see [Dense.InitOrthogonal]), in layer order.
func (m *MLP) InitOrthogonal(hiddenGain, outGain float64, rng *rand.Rand) {
	for l, d := range m.Layers {
		g := hiddenGain
		if l == len(m.Layers)-1 {
			g = outGain
		}
		d.InitOrthogonal(g, rng)
	}
}

// Forward runs the network on n rows of x (n×In) and returns the output
// (n×Out). The returned slice is an internal buffer, valid until the next
// Forward; x must stay unchanged until the matching Backward.
func (m *MLP) Forward(x []float64, n int) []float64 {
	if len(x) != n*m.In() {
		panic(fmt.Sprintf("kernels: MLP.Forward: x has %d values, want n*In = %d", len(x), n*m.In()))
	}
	m.n = n
	m.hs[0] = x
	for l, d := range m.Layers {
		m.bufs[l] = grow(m.bufs[l], n*d.Out)
		y := m.bufs[l]
		d.Forward(m.hs[l], n, y)
		if l < len(m.Layers)-1 {
			m.act.forward(y, y)
		}
		m.hs[l+1] = y
	}
	return m.hs[len(m.Layers)]
}

// Backward takes dout = ∂L/∂y (n×Out) for the batch of the last Forward,
// accumulates every layer's parameter gradients and, when dx is non-nil,
// overwrites dx (n×In) with ∂L/∂x. dout is not modified.
func (m *MLP) Backward(dout []float64, dx []float64) {
	n := m.n
	if len(dout) != n*m.Out() {
		panic(fmt.Sprintf("kernels: MLP.Backward: dout has %d values, want n*Out = %d", len(dout), n*m.Out()))
	}
	delta := dout // ∂L/∂(pre-activation output of layer l)
	for l := len(m.Layers) - 1; l >= 0; l-- {
		d := m.Layers[l]
		if l == 0 {
			d.Backward(m.hs[0], delta, n, dx)
			break
		}
		// Alternate two scratch buffers: ∂L/∂h_l, then through the
		// activation of layer l-1 in place.
		buf := &m.dh[l%2]
		*buf = grow(*buf, n*d.In)
		d.Backward(m.hs[l], delta, n, *buf)
		m.act.backward(m.hs[l], *buf, *buf)
		delta = *buf
	}
}

// grow returns buf resliced to length n, reallocating only when its capacity
// is too small.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// allFinite reports whether every value is neither NaN nor ±Inf, and the
// index of the first offender otherwise.
func allFinite(x []float64) (int, bool) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i, false
		}
	}
	return -1, true
}
