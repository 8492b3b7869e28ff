package vla

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// Net is the micro-VLA with element type F. [Model] (float32) is the one
// that acts and trains; the float64 instantiation runs the same code for
// gradient checks.
//
// A Net keeps scratch buffers for Act and Backward between calls (and its
// backend serves one goroutine at a time), so it must not be used by
// several goroutines at once; run one Net per actor, sharing parameters by
// copying Params.
type Net[F Float] struct {
	cfg           Config
	params, grads []F
	w             weights[F]
	spans         []Span

	// logitScale is 1/T for the sampling temperature T of SetTemperature
	// (1 from newNet).
	logitScale F
	// detachValue stops the value loss's gradient at the value head
	// (SetDetachValue).
	detachValue bool

	be     kernels.Backend // float32 matrix products; nil: the pure-Go gemm
	actWS  actWork[F]
	backWS backWork[F]
}

// SetTemperature makes the action-token distribution π_T = softmax(z/T)
// of the head's logits z everywhere the network computes it: in Act's
// sampling and log-probabilities and in Forward's log-probabilities,
// entropies and their gradients, so that an RL learner's importance ratios
// compare the distribution the actions were drawn from. T < 1 sharpens π
// (a behaviour-cloned policy whose broad distributions rarely finish a
// task when sampled at T = 1), T > 1 flattens it; argmax decoding does not
// change. T = 1 (the default) is the plain softmax. It panics unless T > 0.
func (m *Net[F]) SetTemperature(t float64) {
	if !(t > 0) || math.IsInf(t, 0) {
		panic(fmt.Sprintf("vla: SetTemperature(%v): the temperature must be a positive number", t))
	}
	m.logitScale = F(1 / t)
}

// SetDetachValue(true) trains the value head on the pooled hidden states
// as they are, without sending the value loss's gradient into the
// transformer: RL's critic then cannot move the features a behaviour-cloned
// policy acts on, while its value head (initialised near 0, far from the
// returns) learns. False (the default) trains trunk and head together.
func (m *Net[F]) SetDetachValue(on bool) { m.detachValue = on }

// Temperature is the sampling temperature of SetTemperature (1 unless set).
func (m *Net[F]) Temperature() float64 { return 1 / float64(m.logitScale) }

// Model is the float32 micro-VLA.
type Model = Net[float32]

// New returns a float32 model with freshly initialised parameters. It
// panics if cfg is invalid (see [Config.Validate]).
func New(cfg Config, rng *rand.Rand) *Model { return NewNet[float32](cfg, rng) }

// NewNet returns a model with element type F, initialised GPT-2 style
// (Radford et al. 2019): every matrix and embedding from N(0, 0.02²), the
// residual-stream output projections (attention out, MLP fc2) from N(0,
// (0.02/√(2·Layers))²), the patch stems and the proprio map from N(0,
// 1/fan_in) since their inputs are raw features of order 1, layer-norm gains
// 1, all biases 0. The LM head's small init makes the first action-token
// distributions near uniform.
func NewNet[F Float](cfg Config, rng *rand.Rand) *Net[F] {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("vla: New: %v", err))
	}
	m := newNet[F](cfg, nil)
	normal := func(x []F, std float64) {
		for i := range x {
			x[i] = F(std * rng.NormFloat64())
		}
	}
	ones := func(x []F) {
		for i := range x {
			x[i] = 1
		}
	}
	const std = 0.02
	resid := std / math.Sqrt(2*float64(cfg.Layers))
	pd := cfg.Patch * cfg.Patch * 3
	for c := range m.w.stemW {
		normal(m.w.stemW[c].w, 1/math.Sqrt(float64(pd)))
		normal(m.w.posImg[c].w, std)
	}
	normal(m.w.cam.w, std)
	normal(m.w.tok.w, std)
	normal(m.w.seqPos.w, std)
	normal(m.w.propW.w, 1/math.Sqrt(float64(cfg.ProprioDim)))
	for _, b := range m.w.blocks {
		ones(b.ln1g.w)
		ones(b.ln2g.w)
		normal(b.qkvW.w, std)
		normal(b.oW.w, resid)
		normal(b.fc1W.w, std)
		normal(b.fc2W.w, resid)
	}
	ones(m.w.lnfG.w)
	normal(m.w.valW.w, std)
	normal(m.w.headAct.w, std)
	normal(m.w.headRest.w, std)
	return m
}

// newNet returns a model of cfg with zero parameters and, for float32, the
// backend be (nil: a new CPU backend).
func newNet[F Float](cfg Config, be kernels.Backend) *Net[F] {
	m := &Net[F]{cfg: cfg, params: make([]F, cfg.ParamCount()), grads: make([]F, cfg.TrainableCount()), logitScale: 1}
	m.w, m.spans, _, _ = buildLayout(cfg, m.params, m.grads)
	if isF32[F]() {
		if be == nil {
			be = kernels.NewCPU(0)
		}
		m.be = be
	}
	return m
}

// SetBackend routes the float32 model's matrix products through be (nil:
// the package's pure-Go gemm, ~15× slower; [kernels.NewReference] for
// float64-accumulated parity checks; [kernels.NewCUDA] for a GPU, which
// copies every operand to the device and back, so it pays only for large
// batches). New models use [kernels.NewCPU] with GOMAXPROCS threads. It
// panics on a float64 model, which always runs the pure-Go reference path.
func (m *Net[F]) SetBackend(be kernels.Backend) {
	if !isF32[F]() {
		panic("vla: SetBackend: only a float32 model has a backend")
	}
	m.be = be
}

// Backend returns the backend of the matrix products (nil: pure Go).
func (m *Net[F]) Backend() kernels.Backend { return m.be }

// Config returns the model's configuration.
func (m *Net[F]) Config() Config { return m.cfg }

// Params returns the flat parameter slice (the model's own storage; see
// [Net.Spans] for its layout).
func (m *Net[F]) Params() []F { return m.params }

// Grads returns the flat gradient slice, parallel to Params()[:len(Grads())]:
// with the slim head it stops before the non-action LM-head rows, which are
// the last (V−Bins)·Dim parameters and are never trained.
func (m *Net[F]) Grads() []F { return m.grads }

// Trainable returns the parameters that have gradients,
// Params()[:len(Grads())], the slice an optimizer updates.
func (m *Net[F]) Trainable() []F { return m.params[:len(m.grads)] }

// ZeroGrads clears the gradients; Backward accumulates.
func (m *Net[F]) ZeroGrads() { clear(m.grads) }

// Spans lists the parameter tensors in layout order.
func (m *Net[F]) Spans() []Span { return append([]Span(nil), m.spans...) }

// SetSlimHead switches between the slim and the full head on the same
// parameters; the gradient slice is reallocated (and zeroed) to the new
// trainable length.
func (m *Net[F]) SetSlimHead(slim bool) {
	m.cfg.SlimHead = slim
	m.grads = make([]F, m.cfg.TrainableCount())
	m.w, _, _, _ = buildLayout(m.cfg, m.params, m.grads)
}
