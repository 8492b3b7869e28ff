package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ActorCriticConfig sizes an [ActorCritic].
type ActorCriticConfig struct {
	ObsDim     int    // observation width
	NumActions int    // number of discrete actions (categorical head)
	Hidden     []int  // hidden layer widths, shared by actor and critic (CleanRL: 64, 64)
	Activation string // ActTanh ("tanh") or ActReLU ("relu")
}

// Validate reports a configuration the model cannot be built from.
func (c ActorCriticConfig) Validate() error {
	var errs []error
	if c.ObsDim <= 0 {
		errs = append(errs, fmt.Errorf("obs dim must be positive, got %d", c.ObsDim))
	}
	if c.NumActions < 2 {
		errs = append(errs, fmt.Errorf("num actions must be at least 2, got %d", c.NumActions))
	}
	for i, h := range c.Hidden {
		if h <= 0 {
			errs = append(errs, fmt.Errorf("hidden layer %d must have a positive width, got %d", i, h))
		}
	}
	if _, ok := lookupActivation(c.Activation); !ok {
		errs = append(errs, fmt.Errorf("unknown activation %q (want %q or %q)", c.Activation, ActTanh, ActReLU))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("actor-critic config: %w", err)
	}
	return nil
}

// ParamSpan names one tensor inside the flat parameter slice: its values are
// Params()[Offset : Offset+Size()], row-major with the given Shape. Names
// follow CleanRL's PyTorch state_dict ("actor.0.weight", "critic.4.bias"):
// the index counts the activation modules between linear layers.
type ParamSpan struct {
	Name   string
	Offset int
	Shape  []int
}

// Size returns the number of values in the tensor.
func (s ParamSpan) Size() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// ActorCritic is CleanRL's PPO agent for discrete actions: an actor MLP
// ObsDim → Hidden… → NumActions producing categorical logits and a separate
// critic MLP ObsDim → Hidden… → 1 producing V(o). Hidden layers use the
// configured activation and orthogonal init with gain sqrt(2); the actor's
// output layer uses gain 0.01 (a near-uniform initial policy) and the
// critic's gain 1; all biases start at zero.
//
// All parameters live in one flat slice (actor first, then critic; see
// Layout) and the gradients in a second slice with the same layout. The
// model reuses scratch buffers, so one instance is not safe for concurrent
// use; give every goroutine its own Clone.
type ActorCritic struct {
	cfg    ActorCriticConfig
	params []float64
	grads  []float64
	actor  *MLP
	critic *MLP
	head   Categorical

	// Scratch of the last Evaluate (used by Backward) and of Act.
	n       int
	actions []int
	logp    []float64 // n×K log-probabilities
	ent     []float64
	dlogits []float64
}

// NewActorCritic builds a model and initialises it from rng as CleanRL does
// (actor layers first, then critic layers, in order). It panics on an
// invalid config; check user input with [ActorCriticConfig.Validate].
func NewActorCritic(cfg ActorCriticConfig, rng *rand.Rand) *ActorCritic {
	m := newActorCritic(cfg)
	m.actor.InitOrthogonal(math.Sqrt2, 0.01, rng)
	m.critic.InitOrthogonal(math.Sqrt2, 1, rng)
	return m
}

// newActorCritic builds and binds the structure with all parameters zero.
func newActorCritic(cfg ActorCriticConfig) *ActorCritic {
	if err := cfg.Validate(); err != nil {
		panic("kernels: NewActorCritic: " + err.Error())
	}
	cfg.Hidden = append([]int(nil), cfg.Hidden...)
	sizes := func(out int) []int {
		s := append([]int{cfg.ObsDim}, cfg.Hidden...)
		return append(s, out)
	}
	m := &ActorCritic{
		cfg:    cfg,
		actor:  NewMLP(sizes(cfg.NumActions), cfg.Activation),
		critic: NewMLP(sizes(1), cfg.Activation),
		head:   Categorical{K: cfg.NumActions},
	}
	na, nc := m.actor.NumParams(), m.critic.NumParams()
	m.params = make([]float64, na+nc)
	m.grads = make([]float64, na+nc)
	m.actor.Bind(m.params[:na:na], m.grads[:na:na])
	m.critic.Bind(m.params[na:], m.grads[na:])
	return m
}

// Config returns the model's configuration (a copy).
func (m *ActorCritic) Config() ActorCriticConfig {
	c := m.cfg
	c.Hidden = append([]int(nil), m.cfg.Hidden...)
	return c
}

// NumParams returns the length of the flat parameter slice.
func (m *ActorCritic) NumParams() int { return len(m.params) }

// Params returns the live flat parameter slice: writes change the model.
func (m *ActorCritic) Params() []float64 { return m.params }

// Grads returns the live flat gradient slice, laid out like Params.
func (m *ActorCritic) Grads() []float64 { return m.grads }

// ZeroGrads sets every gradient to zero; Backward accumulates.
func (m *ActorCritic) ZeroGrads() { clear(m.grads) }

// SetParams copies p into the model; it panics unless len(p) == NumParams.
func (m *ActorCritic) SetParams(p []float64) {
	if len(p) != len(m.params) {
		panic(fmt.Sprintf("kernels: ActorCritic.SetParams: got %d values, want %d", len(p), len(m.params)))
	}
	copy(m.params, p)
}

// Clone returns a deep copy (parameters and gradients) that shares nothing
// with m, e.g. for an inference replica.
func (m *ActorCritic) Clone() *ActorCritic {
	c := newActorCritic(m.cfg)
	copy(c.params, m.params)
	copy(c.grads, m.grads)
	return c
}

// Layout lists the tensors of the flat parameter slice in order, with
// CleanRL's names: actor.0.weight (Hidden[0]×ObsDim), actor.0.bias, actor.2…,
// then critic.0.weight, … The same offsets index Grads.
func (m *ActorCritic) Layout() []ParamSpan {
	var spans []ParamSpan
	off := 0
	for _, net := range []struct {
		name string
		mlp  *MLP
	}{{"actor", m.actor}, {"critic", m.critic}} {
		for l, d := range net.mlp.Layers {
			prefix := fmt.Sprintf("%s.%d.", net.name, 2*l)
			spans = append(spans,
				ParamSpan{Name: prefix + "weight", Offset: off, Shape: []int{d.Out, d.In}},
				ParamSpan{Name: prefix + "bias", Offset: off + d.Out*d.In, Shape: []int{d.Out}})
			off += d.NumParams()
		}
	}
	return spans
}

// paramName names flat index i, e.g. "actor.2.weight[17]".
func (m *ActorCritic) paramName(i int) string {
	for _, s := range m.Layout() {
		if i >= s.Offset && i < s.Offset+s.Size() {
			return fmt.Sprintf("%s[%d]", s.Name, i-s.Offset)
		}
	}
	return fmt.Sprintf("[%d]", i)
}

// Act runs the policy on n observations (row-major n×ObsDim), samples one
// action per row from the categorical distribution with rng, and fills
// actions[i], logp[i] = log π(actions[i] | o_i) and values[i] = V(o_i).
// It reuses internal scratch buffers: not safe for concurrent use of one
// instance.
func (m *ActorCritic) Act(obs []float64, n int, rng *rand.Rand, actions []int, logp, values []float64) {
	m.checkObs("Act", obs, n)
	checkN("ActorCritic.Act", n, len(actions), len(logp), len(values))
	logits := m.actor.Forward(obs, n)
	m.logp = grow(m.logp, n*m.cfg.NumActions)
	m.head.LogProbs(logits, n, m.logp)
	m.head.Sample(m.logp, n, rng, actions, logp)
	copy(values, m.critic.Forward(obs, n))
	m.n = 0 // Act leaves nothing for Backward
}

// Values fills out[i] = V(o_i) for n observations (row-major n×ObsDim).
func (m *ActorCritic) Values(obs []float64, n int, out []float64) {
	m.checkObs("Values", obs, n)
	checkN("ActorCritic.Values", n, len(out))
	copy(out, m.critic.Forward(obs, n))
	m.n = 0
}

// Probs fills probs (n×NumActions) with π(j | o_i).
func (m *ActorCritic) Probs(obs []float64, n int, probs []float64) {
	m.checkObs("Probs", obs, n)
	m.head.LogProbs(m.actor.Forward(obs, n), n, probs)
	for i, l := range probs {
		probs[i] = math.Exp(l)
	}
	m.n = 0
}

// Evaluate is the training forward pass: for n observations and the actions
// taken it fills logp[i] = log π_θ(actions[i] | o_i), entropy[i] =
// H[π_θ(·|o_i)] and values[i] = V_θ(o_i), and keeps what Backward needs. obs
// and actions must stay unchanged until Backward.
func (m *ActorCritic) Evaluate(obs []float64, n int, actions []int, logp, entropy, values []float64) {
	m.checkObs("Evaluate", obs, n)
	checkN("ActorCritic.Evaluate", n, len(actions), len(logp), len(entropy), len(values))
	k := m.cfg.NumActions
	m.logp = grow(m.logp, n*k)
	m.head.LogProbs(m.actor.Forward(obs, n), n, m.logp)
	m.head.Eval(m.logp, n, actions, logp, entropy)
	copy(values, m.critic.Forward(obs, n))
	m.n, m.actions = n, actions
	m.ent = grow(m.ent, n)
	copy(m.ent, entropy)
}

// Backward accumulates into Grads the gradient of a loss whose per-sample
// partial derivatives with respect to Evaluate's outputs are dlogp, dentropy
// and dvalues. It must follow Evaluate with no other forward pass between.
func (m *ActorCritic) Backward(dlogp, dentropy, dvalues []float64) {
	n := m.n
	if n == 0 {
		panic("kernels: ActorCritic.Backward: no Evaluate before Backward")
	}
	checkN("ActorCritic.Backward", n, len(dlogp), len(dentropy), len(dvalues))
	m.dlogits = grow(m.dlogits, n*m.cfg.NumActions)
	m.head.Backward(m.logp, n, m.actions, m.ent, dlogp, dentropy, m.dlogits)
	m.actor.Backward(m.dlogits, nil)
	m.critic.Backward(dvalues, nil)
}

func (m *ActorCritic) checkObs(op string, obs []float64, n int) {
	if n <= 0 || len(obs) != n*m.cfg.ObsDim {
		panic(fmt.Sprintf("kernels: ActorCritic.%s: obs has %d values for n=%d, want n*ObsDim = %d (n > 0)",
			op, len(obs), n, n*m.cfg.ObsDim))
	}
}
