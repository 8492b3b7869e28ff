package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Action-head kinds accepted by [PolicyConfig].Head.
const (
	HeadCategorical = "categorical" // one of NumActions discrete actions per step
	HeadTokens      = "tokens"      // ActionDims tokens per step, each one of Bins bins, decoded autoregressively
	HeadGaussian    = "gaussian"    // ActionDims reals per step from a diagonal Gaussian
)

// Defaults filled in by [NewPolicy] for zero fields of a tokens head.
const (
	DefaultBins     = 256 // bins per action dimension, as in RT-2/OpenVLA action tokenisers
	DefaultEmbedDim = 8   // width of the learned token embedding
)

// PolicyConfig sizes a [Policy]: an actor trunk, an action head and a
// separate critic.
type PolicyConfig struct {
	ObsDim int    // observation width
	Head   string // HeadCategorical, HeadTokens or HeadGaussian

	NumActions int // categorical: number of discrete actions (≥ 2)
	ActionDims int // tokens and gaussian: action dimensions (≥ 1)
	// Low and High bound each action dimension. The tokens head needs
	// them to map bins to values; the gaussian head uses them, when set,
	// only to clip actions for the environment (CleanRL's ClipAction).
	Low, High []float64
	Bins      int // tokens: bins per dimension; 0 means DefaultBins
	EmbedDim  int // tokens: token embedding width; 0 means DefaultEmbedDim

	Hidden     []int   // hidden widths of the actor trunk and of the critic (CleanRL: 64, 64)
	Activation string  // ActTanh or ActReLU
	InitLogStd float64 // gaussian: initial log σ of every dimension (CleanRL: 0)
}

// withDefaults fills the zero Bins and EmbedDim of a tokens head and copies
// the slices so that the policy owns them.
func (c PolicyConfig) withDefaults() PolicyConfig {
	if c.Head == HeadTokens {
		if c.Bins == 0 {
			c.Bins = DefaultBins
		}
		if c.EmbedDim == 0 {
			c.EmbedDim = DefaultEmbedDim
		}
	}
	c.Hidden = append([]int(nil), c.Hidden...)
	c.Low = append([]float64(nil), c.Low...)
	c.High = append([]float64(nil), c.High...)
	return c
}

// Validate reports a configuration the policy cannot be built from.
func (c PolicyConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.ObsDim <= 0 {
		errs = append(errs, fmt.Errorf("obs dim must be positive, got %d", c.ObsDim))
	}
	switch c.Head {
	case HeadCategorical:
		if c.NumActions < 2 {
			errs = append(errs, fmt.Errorf("categorical head: num actions must be at least 2, got %d", c.NumActions))
		}
	case HeadTokens:
		if c.ActionDims < 1 {
			errs = append(errs, fmt.Errorf("tokens head: action dims must be at least 1, got %d", c.ActionDims))
		}
		if c.Bins < 2 || c.EmbedDim < 1 {
			errs = append(errs, fmt.Errorf("tokens head: bins must be at least 2 and embed dim at least 1, got %d and %d", c.Bins, c.EmbedDim))
		}
		if err := checkBounds(c.Low, c.High, c.ActionDims, true); err != nil {
			errs = append(errs, fmt.Errorf("tokens head: %w", err))
		}
	case HeadGaussian:
		if c.ActionDims < 1 {
			errs = append(errs, fmt.Errorf("gaussian head: action dims must be at least 1, got %d", c.ActionDims))
		}
		if err := checkBounds(c.Low, c.High, c.ActionDims, false); err != nil {
			errs = append(errs, fmt.Errorf("gaussian head: %w", err))
		}
		if math.IsNaN(c.InitLogStd) || math.IsInf(c.InitLogStd, 0) {
			errs = append(errs, fmt.Errorf("gaussian head: initial log std must be finite, got %v", c.InitLogStd))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown head %q (want %q, %q or %q)", c.Head, HeadCategorical, HeadTokens, HeadGaussian))
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
		return fmt.Errorf("policy config: %w", err)
	}
	return nil
}

// checkBounds validates per-dimension bounds; optional bounds may both be
// empty.
func checkBounds(low, high []float64, dims int, required bool) error {
	if !required && len(low) == 0 && len(high) == 0 {
		return nil
	}
	if len(low) != dims || len(high) != dims {
		return fmt.Errorf("low and high need %d values each, got %d and %d", dims, len(low), len(high))
	}
	for d := range low {
		if !(low[d] < high[d]) || math.IsInf(low[d], 0) || math.IsInf(high[d], 0) {
			return fmt.Errorf("dimension %d: want finite low < high, got [%v, %v]", d, low[d], high[d])
		}
	}
	return nil
}

// Actions holds the actions of n steps in the form the policy's head uses.
// A categorical head fills Tokens with n action indices; a tokens head fills
// Tokens with n×ActionDims bin indices (row-major: step i's tokens are
// Tokens[i*ActionDims:(i+1)*ActionDims], decoded in that order); a gaussian
// head fills Continuous with n×ActionDims reals. The other slice is unused.
type Actions struct {
	Tokens     []int
	Continuous []float64
}

// Policy is an actor-critic model for any of the three action heads:
//
//	features = act(trunk(o))      the actor's hidden layers (o itself without hidden layers)
//	π(·|o)   = head(features)     categorical, autoregressive tokens or diagonal Gaussian
//	V(o)     = critic(o)          a separate MLP ObsDim → Hidden… → 1
//
// With the categorical head it is exactly CleanRL's discrete agent: same
// layer shapes, parameter layout (actor.0.weight … critic.4.bias) and
// initialisation order (actor layers, then critic layers). With the
// gaussian head it is CleanRL's ppo_continuous_action agent. The tokens
// head is described in the package documentation (Action heads).
//
// Log-probabilities and entropies are per token: TokensPerStep() per step
// (1 for categorical, ActionDims for tokens, and 1 for gaussian, whose
// token is the whole action vector with its joint log-density).
//
// All parameters live in one flat slice (actor trunk, head, critic; see
// Layout) and the gradients in a second slice with the same layout. The
// model reuses scratch buffers, so one instance is not safe for concurrent
// use; give every goroutine its own Clone.
type Policy struct {
	cfg    PolicyConfig
	params []float64
	grads  []float64
	trunk  *MLP // nil without hidden layers
	act    activation
	head   policyHead
	critic *MLP
	names  []ParamSpan // Layout, computed once

	n     int       // rows of the last Evaluate; 0 forbids Backward
	feat  []float64 // activated trunk output (or the caller's obs without a trunk)
	fbuf  []float64 // storage for feat
	dfeat []float64
	dpre  []float64
}

// policyHead is one action head on top of the actor's features. evaluate
// keeps what backward needs; backward overwrites dfeat with ∂L/∂features
// and accumulates the head's parameter gradients.
type policyHead interface {
	numParams() int
	bind(params, grads []float64)
	init(rng *rand.Rand)
	spans(off, trunkLayers int) []ParamSpan
	tokensPerStep() int
	checkActions(op string, a Actions, n int)
	evaluate(feat []float64, n int, a Actions, logp, ent []float64)
	backward(dlogp, dent, dfeat []float64)
	sample(feat []float64, n int, rng *rand.Rand, a Actions, logp []float64)
	mode(feat []float64, n int, a Actions)
	envActions(a Actions, n int, out []float64)
	envActionDims() int
}

// NewPolicy builds a policy and initialises it from rng as CleanRL does:
// trunk layers orthogonal with gain sqrt(2), then the head (output layers
// gain 0.01 for a near-uniform or near-zero-mean initial policy), then the
// critic (hidden sqrt(2), output 1), all biases zero. It panics on an
// invalid config; check user input with [PolicyConfig.Validate].
func NewPolicy(cfg PolicyConfig, rng *rand.Rand) *Policy {
	p := newPolicy(cfg)
	if p.trunk != nil {
		p.trunk.InitOrthogonal(math.Sqrt2, math.Sqrt2, rng)
	}
	p.head.init(rng)
	p.critic.InitOrthogonal(math.Sqrt2, 1, rng)
	return p
}

// newPolicy builds and binds the structure with all parameters zero.
func newPolicy(cfg PolicyConfig) *Policy {
	if err := cfg.Validate(); err != nil {
		panic("kernels: NewPolicy: " + err.Error())
	}
	cfg = cfg.withDefaults()
	act, _ := lookupActivation(cfg.Activation)
	p := &Policy{cfg: cfg, act: act}
	featDim := cfg.ObsDim
	if len(cfg.Hidden) > 0 {
		p.trunk = NewMLP(append([]int{cfg.ObsDim}, cfg.Hidden...), cfg.Activation)
		featDim = cfg.Hidden[len(cfg.Hidden)-1]
	}
	switch cfg.Head {
	case HeadCategorical:
		p.head = newCategoricalHead(featDim, cfg.NumActions)
	case HeadTokens:
		p.head = newTokensHead(featDim, cfg)
	case HeadGaussian:
		p.head = newGaussianHead(featDim, cfg)
	}
	p.critic = NewMLP(append(append([]int{cfg.ObsDim}, cfg.Hidden...), 1), cfg.Activation)

	nt := 0
	if p.trunk != nil {
		nt = p.trunk.NumParams()
	}
	nh, nc := p.head.numParams(), p.critic.NumParams()
	p.params = make([]float64, nt+nh+nc)
	p.grads = make([]float64, nt+nh+nc)
	if p.trunk != nil {
		p.trunk.Bind(p.params[:nt:nt], p.grads[:nt:nt])
	}
	p.head.bind(p.params[nt:nt+nh:nt+nh], p.grads[nt:nt+nh:nt+nh])
	p.critic.Bind(p.params[nt+nh:], p.grads[nt+nh:])
	p.names = p.layout(nt, nh)
	return p
}

// Config returns the policy's configuration with defaults filled (a copy).
func (p *Policy) Config() PolicyConfig { return p.cfg.withDefaults() }

// TokensPerStep returns how many log-probabilities (tokens) each step has:
// 1 for categorical and gaussian, ActionDims for tokens.
func (p *Policy) TokensPerStep() int { return p.head.tokensPerStep() }

// EnvActionDims returns the length of one step's environment action:
// 1 for categorical (the index as a float64), ActionDims otherwise.
func (p *Policy) EnvActionDims() int { return p.head.envActionDims() }

// NumParams returns the length of the flat parameter slice.
func (p *Policy) NumParams() int { return len(p.params) }

// Params returns the live flat parameter slice: writes change the model.
func (p *Policy) Params() []float64 { return p.params }

// Grads returns the live flat gradient slice, laid out like Params.
func (p *Policy) Grads() []float64 { return p.grads }

// ZeroGrads sets every gradient to zero; Backward accumulates.
func (p *Policy) ZeroGrads() { clear(p.grads) }

// SetParams copies v into the model; it panics unless len(v) == NumParams.
func (p *Policy) SetParams(v []float64) {
	if len(v) != len(p.params) {
		panic(fmt.Sprintf("kernels: Policy.SetParams: got %d values, want %d", len(v), len(p.params)))
	}
	copy(p.params, v)
}

// Clone returns a deep copy (parameters and gradients) that shares nothing
// with p, e.g. for an inference replica.
func (p *Policy) Clone() *Policy {
	c := newPolicy(p.cfg)
	copy(c.params, p.params)
	copy(c.grads, p.grads)
	return c
}

// ParamSpan names one tensor inside a model's flat parameter slice: its
// values are Params()[Offset : Offset+Size()], row-major with the given
// Shape. Names follow CleanRL's PyTorch state_dict ("actor.0.weight",
// "critic.4.bias"): the index counts the activation modules between linear
// layers.
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

// Layout lists the tensors of the flat parameter slice in order. Names
// follow CleanRL's state_dict: actor.0.weight … for the trunk and a
// categorical output layer; actor_mean.* and actor_logstd for the gaussian
// head; token_embed.weight (Bins×EmbedDim) and token_head.k.weight/bias for
// the tokens head; then critic.0.weight … The same offsets index Grads.
func (p *Policy) Layout() []ParamSpan {
	out := make([]ParamSpan, len(p.names))
	for i, s := range p.names {
		out[i] = ParamSpan{Name: s.Name, Offset: s.Offset, Shape: append([]int(nil), s.Shape...)}
	}
	return out
}

func (p *Policy) layout(nt, nh int) []ParamSpan {
	var spans []ParamSpan
	actorName := "actor"
	if p.cfg.Head == HeadGaussian {
		actorName = "actor_mean"
	}
	trunkLayers := 0
	if p.trunk != nil {
		spans = mlpSpans(actorName, p.trunk, 0)
		trunkLayers = len(p.trunk.Layers)
	}
	spans = append(spans, p.head.spans(nt, trunkLayers)...)
	return append(spans, mlpSpans("critic", p.critic, nt+nh)...)
}

// mlpSpans names an MLP's layers prefix.0, prefix.2, … (the odd indices
// are the activation modules of a PyTorch nn.Sequential).
func mlpSpans(prefix string, m *MLP, off int) []ParamSpan {
	var spans []ParamSpan
	for l, d := range m.Layers {
		spans = append(spans, denseSpans(fmt.Sprintf("%s.%d.", prefix, 2*l), d, off)...)
		off += d.NumParams()
	}
	return spans
}

func denseSpans(prefix string, d *Dense, off int) []ParamSpan {
	return []ParamSpan{
		{Name: prefix + "weight", Offset: off, Shape: []int{d.Out, d.In}},
		{Name: prefix + "bias", Offset: off + d.Out*d.In, Shape: []int{d.Out}},
	}
}

// paramName names flat index i, e.g. "token_head.1.weight[17]".
func (p *Policy) paramName(i int) string {
	for _, s := range p.names {
		if i >= s.Offset && i < s.Offset+s.Size() {
			return fmt.Sprintf("%s[%d]", s.Name, i-s.Offset)
		}
	}
	return fmt.Sprintf("[%d]", i)
}

// features runs the trunk on n observations and returns the activated
// output (n×F), or obs itself when there are no hidden layers.
func (p *Policy) features(obs []float64, n int) []float64 {
	if p.trunk == nil {
		p.feat = obs
		return obs
	}
	h := p.trunk.Forward(obs, n)
	p.fbuf = grow(p.fbuf, len(h))
	p.act.forward(h, p.fbuf)
	p.feat = p.fbuf
	return p.feat
}

// ActActions runs the policy on n observations (row-major n×ObsDim),
// samples one action per row with rng (token by token for the tokens head,
// each token conditioned on the ones drawn before it), and fills a with the
// actions, logp (n×TokensPerStep) with each token's log-probability under
// the current parameters, and values (n) with V(o). The slice of a that the
// head uses must have its full length. Not safe for concurrent use.
func (p *Policy) ActActions(obs []float64, n int, rng *rand.Rand, a Actions, logp, values []float64) {
	p.checkObs("Act", obs, n)
	p.head.checkActions("Act", a, n)
	checkN("Policy.Act", n*p.TokensPerStep(), len(logp))
	checkN("Policy.Act", n, len(values))
	p.head.sample(p.features(obs, n), n, rng, a, logp)
	copy(values, p.critic.Forward(obs, n))
	p.n = 0 // Act leaves nothing for Backward
}

// Act is ActActions for the categorical and tokens heads, whose actions
// are token indices (n×TokensPerStep); with the categorical head it
// samples one action per row. It panics for the gaussian head (use
// ActContinuous).
func (p *Policy) Act(obs []float64, n int, rng *rand.Rand, tokens []int, logp, values []float64) {
	p.ActActions(obs, n, rng, Actions{Tokens: tokens}, logp, values)
}

// ActContinuous is ActActions for the gaussian head: actions receives
// n×ActionDims samples (unclipped; see EnvActions). It panics for the
// other heads.
func (p *Policy) ActContinuous(obs []float64, n int, rng *rand.Rand, actions []float64, logp, values []float64) {
	p.ActActions(obs, n, rng, Actions{Continuous: actions}, logp, values)
}

// Greedy fills a with the most likely action of each of n observations:
// the arg-max action (categorical), the arg-max token at each position
// given the arg-max tokens before it (tokens; greedy decoding, not the
// joint mode), or the mean (gaussian). Ties go to the lowest index.
func (p *Policy) Greedy(obs []float64, n int, a Actions) {
	p.checkObs("Greedy", obs, n)
	p.head.checkActions("Greedy", a, n)
	p.head.mode(p.features(obs, n), n, a)
	p.n = 0
}

// EnvActions converts n actions into environment actions, row-major
// n×EnvActionDims: the index as a float64 (categorical), each token's bin
// centre low + (b + ½)(high − low)/Bins (tokens), or the sample clipped to
// [Low, High] when bounds are configured (gaussian).
func (p *Policy) EnvActions(a Actions, n int, out []float64) {
	p.head.checkActions("EnvActions", a, n)
	checkN("Policy.EnvActions", n*p.EnvActionDims(), len(out))
	p.head.envActions(a, n, out)
}

// Values fills out[i] = V(o_i) for n observations (row-major n×ObsDim).
func (p *Policy) Values(obs []float64, n int, out []float64) {
	p.checkObs("Values", obs, n)
	checkN("Policy.Values", n, len(out))
	copy(out, p.critic.Forward(obs, n))
	p.n = 0
}

// Evaluate is the training forward pass: for n observations and the actions
// taken it fills logp and entropy (n×TokensPerStep: each token's
// log π_θ(token | o, earlier tokens) and the entropy of the distribution it
// was drawn from) and values (n, V_θ(o)), and keeps what Backward needs.
// obs and a must stay unchanged until Backward.
func (p *Policy) Evaluate(obs []float64, n int, a Actions, logp, entropy, values []float64) {
	p.checkObs("Evaluate", obs, n)
	p.head.checkActions("Evaluate", a, n)
	t := p.TokensPerStep()
	checkN("Policy.Evaluate", n*t, len(logp), len(entropy))
	checkN("Policy.Evaluate", n, len(values))
	p.head.evaluate(p.features(obs, n), n, a, logp, entropy)
	copy(values, p.critic.Forward(obs, n))
	p.n = n
}

// Backward accumulates into Grads the gradient of a loss whose partial
// derivatives with respect to Evaluate's outputs are dlogp, dentropy
// (n×TokensPerStep) and dvalues (n). It must follow Evaluate with no other
// forward pass between.
func (p *Policy) Backward(dlogp, dentropy, dvalues []float64) {
	n := p.n
	if n == 0 {
		panic("kernels: Policy.Backward: no Evaluate before Backward")
	}
	checkN("Policy.Backward", n*p.TokensPerStep(), len(dlogp), len(dentropy))
	checkN("Policy.Backward", n, len(dvalues))
	p.dfeat = grow(p.dfeat, len(p.feat))
	p.head.backward(dlogp, dentropy, p.dfeat)
	if p.trunk != nil {
		p.dpre = grow(p.dpre, len(p.feat))
		p.act.backward(p.feat, p.dfeat, p.dpre)
		p.trunk.Backward(p.dpre, nil)
	}
	p.critic.Backward(dvalues, nil)
}

func (p *Policy) checkObs(op string, obs []float64, n int) {
	if n <= 0 || len(obs) != n*p.cfg.ObsDim {
		panic(fmt.Sprintf("kernels: Policy.%s: obs has %d values for n=%d, want n*ObsDim = %d (n > 0)",
			op, len(obs), n, n*p.cfg.ObsDim))
	}
}
