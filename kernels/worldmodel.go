package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ObsModelConfig sizes an [ObsModel].
type ObsModelConfig struct {
	// ObsDim is the width of one observation, or of one feature vector when
	// an [Encoder] sits in front of the model.
	ObsDim int
	// History is k, the number of observations in the input: o_{t−k+1}, …,
	// o_t, oldest first. At an episode's start the missing older ones are
	// zeros. ≥ 1.
	History int
	// NumActions > 0 means discrete actions: the caller passes action[0] =
	// float64(index), as testenv does, and the model one-hot encodes it.
	NumActions int
	// ActionDim is the width of a continuous action vector (NumActions ==
	// 0), passed and fed to the network as is. Ignored for discrete actions.
	ActionDim int
	// Hidden are the hidden layer widths (may be empty: a linear model).
	Hidden []int
	// Activation is ActTanh or ActReLU.
	Activation string
}

// ActionWidth returns the number of values per action the caller passes:
// 1 for a discrete action (its index), ActionDim for a continuous one.
func (c ObsModelConfig) ActionWidth() int {
	if c.NumActions > 0 {
		return 1
	}
	return c.ActionDim
}

// InputDim returns the network's input width: History·ObsDim observation
// values followed by the action encoding (NumActions one-hot values, or
// ActionDim raw values).
func (c ObsModelConfig) InputDim() int {
	enc := c.ActionDim
	if c.NumActions > 0 {
		enc = c.NumActions
	}
	return c.History*c.ObsDim + enc
}

// Validate reports a configuration the model cannot be built from.
func (c ObsModelConfig) Validate() error {
	var errs []error
	if c.ObsDim <= 0 {
		errs = append(errs, fmt.Errorf("obs dim must be positive, got %d", c.ObsDim))
	}
	if c.History < 1 {
		errs = append(errs, fmt.Errorf("history must be at least 1, got %d", c.History))
	}
	switch {
	case c.NumActions < 0:
		errs = append(errs, fmt.Errorf("num actions must not be negative, got %d", c.NumActions))
	case c.NumActions == 0 && c.ActionDim <= 0:
		errs = append(errs, fmt.Errorf("continuous actions need a positive action dim, got %d", c.ActionDim))
	}
	errs = append(errs, checkHidden(c.Hidden, c.Activation)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("observation model config: %w", err)
	}
	return nil
}

func checkHidden(hidden []int, act string) []error {
	var errs []error
	for i, h := range hidden {
		if h <= 0 {
			errs = append(errs, fmt.Errorf("hidden layer %d must have a positive width, got %d", i, h))
		}
	}
	if _, ok := lookupActivation(act); !ok {
		errs = append(errs, fmt.Errorf("unknown activation %q (want %q or %q)", act, ActTanh, ActReLU))
	}
	return errs
}

// ObsBatch is a minibatch of N transitions for an [ObsModel]: the history
// window before each action, the action, and the observation that followed.
type ObsBatch struct {
	N int
	// Hist is N×History×ObsDim: row i holds o_{t−k+1} … o_t of transition
	// i, oldest first, zeros where the episode had not started yet.
	Hist []float64
	// Action is N×ActionWidth, in the environment's encoding.
	Action []float64
	// Next is N×ObsDim: o_{t+1}.
	Next []float64
}

// ObsModel is the world model's observation model M_obs(o_{t−k+1..t}, a_t)
// → ô_{t+1}, an [MLP] on the concatenation of the k normalised
// observations and the action encoding:
//
//	x     = [norm(o_{t−k+1}); …; norm(o_t); enc(a_t)]       norm(o) = (o − μ_o)/σ_o
//	ŷ     = MLP(x)                                          a normalised delta
//	ô_{t+1} = o_t + σ_Δ ⊙ ŷ + μ_Δ
//
// It predicts the change o_{t+1} − o_t rather than o_{t+1} itself, as
// model-based RL usually does (Nagabandi et al. 2018, "Neural Network
// Dynamics for Model-Based Deep Reinforcement Learning with Model-Free
// Fine-Tuning", §IV-A): consecutive observations are close, so the next
// observation is mostly a copy of the current one, and a network that must
// reproduce that copy spends its capacity (and its error) on the identity.
// The delta isolates what the action and the dynamics change, is small and
// centred, and "no change" is the natural starting point rather than
// something to be learnt. The normalisation constants (μ_o, σ_o, μ_Δ, σ_Δ;
// see [ObsModel.SetNormalization]) are fitted from data before training
// and are not trained; they start as the identity (μ = 0, σ = 1).
//
// The loss is the mean squared error of the normalised delta,
//
//	L = 1/(N·ObsDim) Σ_i Σ_j (ŷ_ij − (o_{t+1} − o_t − μ_Δ)_j / σ_Δj)²
//
// so L ≈ 1 for a model that predicts the average change, whatever the
// observation's units — the scale the horizon schedule's thresholds use.
//
// # Encoder seam
//
// The model sees vectors. For vector observations these are the
// observations themselves ([IdentityEncoder]). Pixel observations would put
// an [Encoder] in front (raw → feature vector), set ObsDim to its feature
// width, and let the model predict feature deltas; a decoder back to pixels
// is only needed to look at imagined frames, since the policy and the
// reward model can act on features too. A learned encoder would add its
// parameters after the MLP's in the flat slice and a backward pass taking
// ∂L/∂x from [MLP.Backward].
//
// Parameters live in one flat slice (see Layout: "obs.0.weight", …) and
// gradients in a second one, like every model in this package. The model
// keeps scratch buffers: not safe for concurrent use; Clone it per
// goroutine.
type ObsModel struct {
	cfg    ObsModelConfig
	params []float64
	grads  []float64
	net    *MLP
	obsN   Normalization
	deltaN Normalization

	in   []float64 // n×InputDim of the last forward pass
	dout []float64
}

// NewObsModel builds a model with orthogonal initialisation from rng (gain
// sqrt(2) for hidden layers, 1 for the linear output, zero biases) and
// identity normalisation. It panics on an invalid config; check user input
// with [ObsModelConfig.Validate].
func NewObsModel(cfg ObsModelConfig, rng *rand.Rand) *ObsModel {
	m := newObsModel(cfg)
	m.net.InitOrthogonal(math.Sqrt2, 1, rng)
	return m
}

func newObsModel(cfg ObsModelConfig) *ObsModel {
	if err := cfg.Validate(); err != nil {
		panic("kernels: NewObsModel: " + err.Error())
	}
	cfg.Hidden = append([]int(nil), cfg.Hidden...)
	if cfg.NumActions > 0 {
		cfg.ActionDim = 0
	}
	sizes := append(append([]int{cfg.InputDim()}, cfg.Hidden...), cfg.ObsDim)
	m := &ObsModel{
		cfg:    cfg,
		net:    NewMLP(sizes, cfg.Activation),
		obsN:   IdentityNormalization(cfg.ObsDim),
		deltaN: IdentityNormalization(cfg.ObsDim),
	}
	m.params = make([]float64, m.net.NumParams())
	m.grads = make([]float64, m.net.NumParams())
	m.net.Bind(m.params, m.grads)
	return m
}

// Config returns the model's configuration (a copy).
func (m *ObsModel) Config() ObsModelConfig {
	c := m.cfg
	c.Hidden = append([]int(nil), m.cfg.Hidden...)
	return c
}

// NumParams returns the length of the flat parameter slice.
func (m *ObsModel) NumParams() int { return len(m.params) }

// Params returns the live flat parameter slice: writes change the model.
func (m *ObsModel) Params() []float64 { return m.params }

// Grads returns the live flat gradient slice, laid out like Params.
func (m *ObsModel) Grads() []float64 { return m.grads }

// ZeroGrads sets every gradient to zero; LossAndGrad accumulates.
func (m *ObsModel) ZeroGrads() { clear(m.grads) }

// SetParams copies p into the model; it panics unless len(p) == NumParams.
func (m *ObsModel) SetParams(p []float64) {
	if len(p) != len(m.params) {
		panic(fmt.Sprintf("kernels: ObsModel.SetParams: got %d values, want %d", len(p), len(m.params)))
	}
	copy(m.params, p)
}

// Layout lists the tensors of the flat parameter slice: obs.0.weight
// (first hidden width × InputDim), obs.0.bias, obs.2.weight, …
func (m *ObsModel) Layout() []ParamSpan { return mlpSpans("obs", m.net, 0) }

// Normalization returns copies of the observation and delta normalisations.
func (m *ObsModel) Normalization() (obs, delta Normalization) {
	return m.obsN.clone(), m.deltaN.clone()
}

// SetNormalization sets the input normalisation (applied to every history
// slot) and the delta normalisation (the target's scale). Both must have
// ObsDim entries, finite means and positive finite standard deviations;
// anything else panics. The slices are copied.
func (m *ObsModel) SetNormalization(obs, delta Normalization) {
	obs.check("ObsModel.SetNormalization (obs)", m.cfg.ObsDim)
	delta.check("ObsModel.SetNormalization (delta)", m.cfg.ObsDim)
	m.obsN, m.deltaN = obs.clone(), delta.clone()
}

// Clone returns a deep copy (parameters, gradients, normalisation) that
// shares nothing with m.
func (m *ObsModel) Clone() *ObsModel {
	c := newObsModel(m.cfg)
	copy(c.params, m.params)
	copy(c.grads, m.grads)
	c.obsN, c.deltaN = m.obsN.clone(), m.deltaN.clone()
	return c
}

// paramName names flat index i, e.g. "obs.2.weight[17]".
func (m *ObsModel) paramName(i int) string { return spanName(m.Layout(), i) }

// forward assembles the input rows and runs the network; it returns the
// normalised delta predictions (n×ObsDim, an internal buffer).
func (m *ObsModel) forward(op string, hist, action []float64, n int) []float64 {
	c := m.cfg
	d, k, aw := c.ObsDim, c.History, c.ActionWidth()
	if n <= 0 || len(hist) != n*k*d || len(action) != n*aw {
		panic(fmt.Sprintf("kernels: ObsModel.%s: hist has %d values and action %d for n=%d, want n*History*ObsDim = %d and n*ActionWidth = %d (n > 0)",
			op, len(hist), len(action), n, n*k*d, n*aw))
	}
	width := c.InputDim()
	m.in = grow(m.in, n*width)
	for i := 0; i < n; i++ {
		row := m.in[i*width : (i+1)*width]
		h := hist[i*k*d : (i+1)*k*d]
		for s := 0; s < k; s++ {
			m.obsN.apply(h[s*d:(s+1)*d], row[s*d:(s+1)*d])
		}
		enc := row[k*d:]
		a := action[i*aw : (i+1)*aw]
		if c.NumActions > 0 {
			clear(enc)
			enc[oneHotIndex("ObsModel."+op, a[0], c.NumActions)] = 1
		} else {
			copy(enc, a)
		}
	}
	return m.net.Forward(m.in, n)
}

// oneHotIndex checks that v is an integer action index in [0, n).
func oneHotIndex(op string, v float64, n int) int {
	j := int(v)
	if float64(j) != v || j < 0 || j >= n {
		panic(fmt.Sprintf("kernels: %s: discrete action %v is not an integer in [0, %d)", op, v, n))
	}
	return j
}

// Predict fills out (n×ObsDim) with ô_{t+1} = o_t + σ_Δ ⊙ ŷ + μ_Δ for n
// history windows (n×History×ObsDim, oldest first) and actions
// (n×ActionWidth, the environment's encoding). out must not alias hist.
func (m *ObsModel) Predict(hist []float64, action []float64, n int, out []float64) {
	d, k := m.cfg.ObsDim, m.cfg.History
	y := m.forward("Predict", hist, action, n)
	checkN("ObsModel.Predict", n*d, len(out))
	for i := 0; i < n; i++ {
		last := hist[(i*k+k-1)*d : (i*k+k)*d]
		for j := 0; j < d; j++ {
			out[i*d+j] = last[j] + y[i*d+j]*m.deltaN.Std[j] + m.deltaN.Mean[j]
		}
	}
}

// Loss returns the normalised-delta MSE of the batch (see [ObsModel])
// without touching the gradients.
func (m *ObsModel) Loss(b ObsBatch) float64 {
	loss, _ := m.lossAndResidual("Loss", b, false)
	return loss
}

// LossAndGrad returns the normalised-delta MSE of the batch and
// accumulates its gradient with respect to the parameters into Grads:
// ∂L/∂ŷ_ij = 2(ŷ_ij − y_ij)/(N·ObsDim), carried back through the MLP.
func (m *ObsModel) LossAndGrad(b ObsBatch) float64 {
	loss, dout := m.lossAndResidual("LossAndGrad", b, true)
	m.net.Backward(dout, nil)
	return loss
}

// lossAndResidual evaluates the loss; with grad it also fills m.dout with
// ∂L/∂ŷ.
func (m *ObsModel) lossAndResidual(op string, b ObsBatch, grad bool) (float64, []float64) {
	d, k, n := m.cfg.ObsDim, m.cfg.History, b.N
	y := m.forward(op, b.Hist, b.Action, n)
	checkN("ObsModel."+op, n*d, len(b.Next))
	if grad {
		m.dout = grow(m.dout, n*d)
	}
	inv := 1 / float64(n*d)
	loss := 0.0
	for i := 0; i < n; i++ {
		last := b.Hist[(i*k+k-1)*d : (i*k+k)*d]
		for j := 0; j < d; j++ {
			target := (b.Next[i*d+j] - last[j] - m.deltaN.Mean[j]) / m.deltaN.Std[j]
			r := y[i*d+j] - target
			loss += r * r
			if grad {
				m.dout[i*d+j] = 2 * r * inv
			}
		}
	}
	return loss * inv, m.dout
}

// spanName names flat index i of a layout, e.g. "obs.2.weight[17]".
func spanName(spans []ParamSpan, i int) string {
	for _, s := range spans {
		if i >= s.Offset && i < s.Offset+s.Size() {
			return fmt.Sprintf("%s[%d]", s.Name, i-s.Offset)
		}
	}
	return fmt.Sprintf("[%d]", i)
}
