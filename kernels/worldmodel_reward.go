package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Reward-model modes accepted by [RewardModelConfig].Mode.
const (
	// RewardHeadDirect regresses the reward itself (MSE).
	RewardHeadDirect = "direct"
	// RewardHeadSuccess predicts the logit of the success probability
	// p_success(o) (binary cross-entropy); the AcceRL imagination reward is
	// then r̂_t = p(ô_{t+1}) − p(ô_t).
	RewardHeadSuccess = "success"
)

// RewardModelConfig sizes a [RewardModel].
type RewardModelConfig struct {
	ObsDim     int    // observation (feature) width
	Hidden     []int  // hidden layer widths (may be empty)
	Activation string // ActTanh or ActReLU
	Mode       string // RewardHeadDirect or RewardHeadSuccess
}

// Validate reports a configuration the model cannot be built from.
func (c RewardModelConfig) Validate() error {
	var errs []error
	if c.ObsDim <= 0 {
		errs = append(errs, fmt.Errorf("obs dim must be positive, got %d", c.ObsDim))
	}
	if c.Mode != RewardHeadDirect && c.Mode != RewardHeadSuccess {
		errs = append(errs, fmt.Errorf("unknown reward mode %q (want %q or %q)", c.Mode, RewardHeadDirect, RewardHeadSuccess))
	}
	errs = append(errs, checkHidden(c.Hidden, c.Activation)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reward model config: %w", err)
	}
	return nil
}

// RewardBatch is a minibatch of N observations for a [RewardModel] with
// their targets. For a transition o_t → o_{t+1} the observation is o_{t+1}:
// the state the step led to.
type RewardBatch struct {
	N   int
	Obs []float64 // N×ObsDim
	// Target is the reward (direct mode) or the success label in [0, 1]
	// (success mode), N values.
	Target []float64
	// Terminated is 1 where the observation is terminal, else 0 (N values;
	// values in between are soft labels).
	Terminated []float64
}

// RewardLoss holds the terms of one reward-model loss evaluation.
type RewardLoss struct {
	Total  float64 // Reward + Term, the minimised loss
	Reward float64 // MSE (direct) or BCE (success) of the reward head
	Term   float64 // BCE of the termination head
}

// RewardModel is the world model's reward model M_rew(o), an [MLP] from
// the normalised observation to two outputs:
//
//	z = MLP((o − μ_o)/σ_o),   z_0: reward (direct) or success logit,  z_1: termination logit
//
// with the losses, averaged over the N rows,
//
//	direct:   L_rew  = mean (z_0 − r)²                     ∂/∂z_0 = 2(z_0 − r)/N
//	success:  L_rew  = mean BCE(z_0, s)                     ∂/∂z_0 = (σ(z_0) − s)/N
//	always:   L_term = mean BCE(z_1, d)                     ∂/∂z_1 = (σ(z_1) − d)/N
//	          L      = L_rew + L_term
//
// where BCE(z, y) = −y log σ(z) − (1 − y) log(1 − σ(z)), evaluated as
// max(z, 0) − y z + log(1 + e^{−|z|}) so that large logits neither overflow
// nor lose precision. Parameters live in one flat slice ("rew.0.weight", …)
// and gradients in a second one. Not safe for concurrent use.
type RewardModel struct {
	cfg    RewardModelConfig
	params []float64
	grads  []float64
	net    *MLP
	obsN   Normalization

	in   []float64
	dout []float64
}

// NewRewardModel builds a model with orthogonal initialisation from rng
// (gain sqrt(2) hidden, 1 output, zero biases) and identity normalisation.
// It panics on an invalid config; check user input with Validate.
func NewRewardModel(cfg RewardModelConfig, rng *rand.Rand) *RewardModel {
	m := newRewardModel(cfg)
	m.net.InitOrthogonal(math.Sqrt2, 1, rng)
	return m
}

func newRewardModel(cfg RewardModelConfig) *RewardModel {
	if err := cfg.Validate(); err != nil {
		panic("kernels: NewRewardModel: " + err.Error())
	}
	cfg.Hidden = append([]int(nil), cfg.Hidden...)
	sizes := append(append([]int{cfg.ObsDim}, cfg.Hidden...), 2)
	m := &RewardModel{cfg: cfg, net: NewMLP(sizes, cfg.Activation), obsN: IdentityNormalization(cfg.ObsDim)}
	m.params = make([]float64, m.net.NumParams())
	m.grads = make([]float64, m.net.NumParams())
	m.net.Bind(m.params, m.grads)
	return m
}

// Config returns the model's configuration (a copy).
func (m *RewardModel) Config() RewardModelConfig {
	c := m.cfg
	c.Hidden = append([]int(nil), m.cfg.Hidden...)
	return c
}

// NumParams returns the length of the flat parameter slice.
func (m *RewardModel) NumParams() int { return len(m.params) }

// Params returns the live flat parameter slice: writes change the model.
func (m *RewardModel) Params() []float64 { return m.params }

// Grads returns the live flat gradient slice, laid out like Params.
func (m *RewardModel) Grads() []float64 { return m.grads }

// ZeroGrads sets every gradient to zero; LossAndGrad accumulates.
func (m *RewardModel) ZeroGrads() { clear(m.grads) }

// SetParams copies p into the model; it panics unless len(p) == NumParams.
func (m *RewardModel) SetParams(p []float64) {
	if len(p) != len(m.params) {
		panic(fmt.Sprintf("kernels: RewardModel.SetParams: got %d values, want %d", len(p), len(m.params)))
	}
	copy(m.params, p)
}

// Layout lists the tensors of the flat parameter slice: rew.0.weight, …
// The last layer's rows are the reward/success output (row 0) and the
// termination output (row 1).
func (m *RewardModel) Layout() []ParamSpan { return mlpSpans("rew", m.net, 0) }

// Normalization returns a copy of the input normalisation.
func (m *RewardModel) Normalization() Normalization { return m.obsN.clone() }

// SetNormalization sets the input normalisation (ObsDim finite means,
// positive finite stds; anything else panics). The slices are copied.
func (m *RewardModel) SetNormalization(obs Normalization) {
	obs.check("RewardModel.SetNormalization", m.cfg.ObsDim)
	m.obsN = obs.clone()
}

// Clone returns a deep copy that shares nothing with m.
func (m *RewardModel) Clone() *RewardModel {
	c := newRewardModel(m.cfg)
	copy(c.params, m.params)
	copy(c.grads, m.grads)
	c.obsN = m.obsN.clone()
	return c
}

func (m *RewardModel) paramName(i int) string { return spanName(m.Layout(), i) }

func (m *RewardModel) forward(op string, obs []float64, n int) []float64 {
	d := m.cfg.ObsDim
	if n <= 0 || len(obs) != n*d {
		panic(fmt.Sprintf("kernels: RewardModel.%s: obs has %d values for n=%d, want n*ObsDim = %d (n > 0)", op, len(obs), n, n*d))
	}
	m.in = grow(m.in, n*d)
	for i := 0; i < n; i++ {
		m.obsN.apply(obs[i*d:(i+1)*d], m.in[i*d:(i+1)*d])
	}
	return m.net.Forward(m.in, n)
}

// Predict fills, for n observations (n×ObsDim), reward[i] with the
// predicted reward (direct) or success probability σ(z_0) (success) and
// term[i] with the termination probability σ(z_1).
func (m *RewardModel) Predict(obs []float64, n int, reward, term []float64) {
	z := m.forward("Predict", obs, n)
	checkN("RewardModel.Predict", n, len(reward), len(term))
	for i := 0; i < n; i++ {
		reward[i] = z[2*i]
		if m.cfg.Mode == RewardHeadSuccess {
			reward[i] = sigmoid(z[2*i])
		}
		term[i] = sigmoid(z[2*i+1])
	}
}

// Loss evaluates the loss of the batch without touching the gradients.
func (m *RewardModel) Loss(b RewardBatch) RewardLoss {
	return m.lossAndGrad("Loss", b, 1, 1, false)
}

// LossAndGrad evaluates the loss of the batch and accumulates its gradient
// with respect to the parameters into Grads.
func (m *RewardModel) LossAndGrad(b RewardBatch) RewardLoss {
	return m.lossAndGrad("LossAndGrad", b, 1, 1, true)
}

// lossAndGrad weighs the two terms by wRew and wTerm in Total and in the
// gradient (the tests isolate each term with a zero weight).
func (m *RewardModel) lossAndGrad(op string, b RewardBatch, wRew, wTerm float64, grad bool) RewardLoss {
	n := b.N
	z := m.forward(op, b.Obs, n)
	checkN("RewardModel."+op, n, len(b.Target), len(b.Terminated))
	if grad {
		m.dout = grow(m.dout, 2*n)
	}
	inv := 1 / float64(n)
	var l RewardLoss
	for i := 0; i < n; i++ {
		z0, z1 := z[2*i], z[2*i+1]
		var g0 float64
		if m.cfg.Mode == RewardHeadSuccess {
			l.Reward += bceWithLogit(z0, b.Target[i])
			g0 = sigmoid(z0) - b.Target[i]
		} else {
			r := z0 - b.Target[i]
			l.Reward += r * r
			g0 = 2 * r
		}
		l.Term += bceWithLogit(z1, b.Terminated[i])
		if grad {
			m.dout[2*i] = wRew * g0 * inv
			m.dout[2*i+1] = wTerm * (sigmoid(z1) - b.Terminated[i]) * inv
		}
	}
	l.Reward *= inv
	l.Term *= inv
	l.Total = wRew*l.Reward + wTerm*l.Term
	if grad {
		m.net.Backward(m.dout, nil)
	}
	return l
}

// bceWithLogit returns −y log σ(z) − (1 − y) log(1 − σ(z)) computed as
// max(z, 0) − y z + log1p(e^{−|z|}).
func bceWithLogit(z, y float64) float64 {
	return math.Max(z, 0) - y*z + math.Log1p(math.Exp(-math.Abs(z)))
}
