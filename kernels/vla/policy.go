package vla

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// PolicyConfig makes the micro-VLA a policy of accerl's RL engine
// ([Policy]): the model, where its inputs lie in the engine's observations
// and frames, and the environment's action box.
type PolicyConfig struct {
	Model Config
	// ObsDim is the width of the engine's observation vector; its first
	// Model.ProprioDim values are the proprioception.
	ObsDim int
	// InstrTokens and InstrPad describe a frame: Model.Cameras RGB images
	// of Model.ImageSize² × 3 bytes (HWC, in the model's camera order)
	// followed by InstrTokens uint16 little-endian word ids, of which those
	// equal to InstrPad are unused places (dropped).
	InstrTokens, InstrPad int
	// Low and High bound each of the Model.ActionDims action values; a bin
	// b decodes to low + (b + ½)(high − low)/Bins.
	Low, High []float64
	// Temperature is the sampling temperature of the action tokens in
	// acting and in the learner's log-probabilities ([Net.SetTemperature]);
	// 0 is 1. It is not part of the parameters: a policy cloned at T = 1
	// fine-tunes at any T.
	Temperature float64
	// DetachValue keeps the value loss's gradient out of the transformer
	// ([Net.SetDetachValue]): only the value head learns from it.
	DetachValue bool
	// GreedyMean makes the greedy decoding ([Policy.Greedy], what evaluations and a
	// deployment run) take each position's mean bin under the tempered distribution
	// ([DecodeMean] at Temperature) instead of its argmax. At a low temperature that is the
	// centre of the distribution's top, which follows the policy RL samples from when the
	// top is a plateau of near-equal bins (soft labels) whose argmax RL's small steps move
	// about; at T = 1 it is the plain mean, which mixes modes (a half-open gripper).
	GreedyMean bool
}

// rlSettings applies the RL settings (Temperature, 0 read as 1, and
// DetachValue) to m and returns it.
func (c PolicyConfig) rlSettings(m *Model) *Model {
	if c.Temperature != 0 {
		m.SetTemperature(c.Temperature)
	}
	m.SetDetachValue(c.DetachValue)
	return m
}

// FrameBytes is the length of one frame.
func (c PolicyConfig) FrameBytes() int {
	return c.Model.Cameras*c.Model.ImageSize*c.Model.ImageSize*3 + 2*c.InstrTokens
}

// Validate reports the first problem of c.
func (c PolicyConfig) Validate() error {
	if err := c.Model.Validate(); err != nil {
		return err
	}
	switch {
	case c.ObsDim < c.Model.ProprioDim:
		return fmt.Errorf("observations of %d values cannot hold the %d-D proprioception", c.ObsDim, c.Model.ProprioDim)
	case c.InstrTokens < 0:
		return fmt.Errorf("%d instruction tokens per frame", c.InstrTokens)
	case len(c.Low) != c.Model.ActionDims || len(c.High) != c.Model.ActionDims:
		return fmt.Errorf("action bounds of %d and %d values, the model writes %d action tokens", len(c.Low), len(c.High), c.Model.ActionDims)
	case c.Temperature < 0 || math.IsNaN(c.Temperature) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("sampling temperature %v: it must be a positive number (0 is 1)", c.Temperature)
	}
	return nil
}

// Policy is the micro-VLA as a [kernels.FrameNetwork]: the engine's
// learner trains it with token-level PPO, GIPO, SAPO or v-trace over its
// ActionDims action tokens (one log-probability per token, as AcceRL's
// token-level losses), and its inference service samples it.
//
// Precision: the network computes in float32 (its [Model]); the flat
// parameters the learner's optimiser updates are a float64 master copy
// (Params), copied into the float32 model by SyncParams, and the float32
// gradients are widened into Grads after each Backward — mixed precision
// with wide master weights, so that Adam's small steps are not lost to
// float32 rounding and the engine's checkpoints, weight publishing and undo
// work on the same []float64 as for the state-vector policy.
//
// Observation row i is read as: proprio = obs[i·ObsDim : i·ObsDim +
// ProprioDim], images and instruction from frames[i] of the last SetFrames.
// Not safe for concurrent use.
type Policy struct {
	cfg    PolicyConfig
	net    *Model
	params []float64 // master copy, len ParamCount
	grads  []float64 // len ParamCount; the frozen head rows stay 0

	frames          [][]byte
	temps           []float64 // SetTemperatures
	batch           []Obs
	tape            *Tape[float32]
	vtape           Tape[float32]
	tokens          [][]int
	dlp, dent, dval []float32
	n               int
}

var _ kernels.FrameNetwork = (*Policy)(nil)

// NewPolicy returns a policy with fresh parameters ([New] with rng). It
// panics on an invalid cfg (see [PolicyConfig.Validate]).
func NewPolicy(cfg PolicyConfig, rng *rand.Rand) *Policy {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Sprintf("vla: NewPolicy: %v", err))
	}
	p := &Policy{cfg: cfg, net: cfg.rlSettings(New(cfg.Model, rng))}
	p.params = make([]float64, len(p.net.Params()))
	for i, v := range p.net.Params() {
		p.params[i] = float64(v)
	}
	p.grads = make([]float64, len(p.params))
	return p
}

// Net returns the float32 network (computing with the parameters of the
// last SyncParams or SetParams).
func (p *Policy) Net() *Model { return p.net }

// PolicyConfig returns the policy's configuration.
func (p *Policy) PolicyConfig() PolicyConfig { return p.cfg }

// Config implements kernels.Network: a tokens head of Model.ActionDims
// tokens of Model.Bins bins over the configured action box.
func (p *Policy) Config() kernels.PolicyConfig {
	c := p.cfg
	return kernels.PolicyConfig{ObsDim: c.ObsDim, Head: kernels.HeadTokens, ActionDims: c.Model.ActionDims,
		Bins: c.Model.Bins, Low: append([]float64(nil), c.Low...), High: append([]float64(nil), c.High...)}
}

// TokensPerStep implements kernels.Network.
func (p *Policy) TokensPerStep() int { return p.cfg.Model.ActionDims }

// EnvActionDims implements kernels.Network.
func (p *Policy) EnvActionDims() int { return p.cfg.Model.ActionDims }

// NumParams implements kernels.Network.
func (p *Policy) NumParams() int { return len(p.params) }

// Params implements kernels.Network: the float64 master parameters.
func (p *Policy) Params() []float64 { return p.params }

// Grads implements kernels.Network.
func (p *Policy) Grads() []float64 { return p.grads }

// ZeroGrads implements kernels.Network.
func (p *Policy) ZeroGrads() {
	clear(p.grads)
	p.net.ZeroGrads()
}

// SetParams implements kernels.Network (and the engine's inference Policy).
func (p *Policy) SetParams(v []float64) {
	if len(v) != len(p.params) {
		panic(fmt.Sprintf("vla: Policy.SetParams: got %d values, want %d", len(v), len(p.params)))
	}
	copy(p.params, v)
	p.SyncParams()
}

// SyncParams implements kernels.Network: it rounds the master parameters
// into the float32 network.
func (p *Policy) SyncParams() {
	w := p.net.Params()
	for i, v := range p.params {
		w[i] = float32(v)
	}
}

// ParamName implements kernels.Network.
func (p *Policy) ParamName(i int) string {
	for _, s := range p.net.spans {
		n := 1
		for _, d := range s.Shape {
			n *= d
		}
		if i >= s.Offset && i < s.Offset+n {
			return fmt.Sprintf("%s[%d]", s.Name, i-s.Offset)
		}
	}
	return fmt.Sprintf("[%d]", i)
}

// CloneNetwork implements kernels.Network.
func (p *Policy) CloneNetwork() kernels.Network { return p.Clone() }

// Clone returns a deep copy of the parameters (not the scratch or the
// frames) with its own float32 network and backend.
func (p *Policy) Clone() *Policy {
	c := &Policy{cfg: p.cfg, net: p.cfg.rlSettings(newNet[float32](p.cfg.Model, nil))}
	c.params = append([]float64(nil), p.params...)
	c.grads = make([]float64, len(p.params))
	c.SyncParams()
	return c
}

// SetFrames implements kernels.FrameNetwork.
func (p *Policy) SetFrames(frames [][]byte) { p.frames = frames }

// SetTemperatures implements kernels.TemperedNetwork: Evaluate computes row i's
// log-probabilities and entropies at temperature temps[i] (0: the policy's own;
// Net.ForwardIntoAt) until the next call; nil evaluates every row at the policy's own.
// Acting ignores them.
func (p *Policy) SetTemperatures(temps []float64) { p.temps = temps }

// observations decodes n rows into p.batch: the images are views of the
// frames, the instruction and the proprio are converted.
func (p *Policy) observations(op string, obs []float64, n int) []Obs {
	c := p.cfg
	if len(obs) != n*c.ObsDim {
		panic(fmt.Sprintf("vla: Policy.%s: %d observation values for %d rows of %d", op, len(obs), n, c.ObsDim))
	}
	if len(p.frames) != n {
		panic(fmt.Sprintf("vla: Policy.%s: %d frames for %d rows (SetFrames first)", op, len(p.frames), n))
	}
	im := c.Model.ImageSize * c.Model.ImageSize * 3
	want := c.FrameBytes()
	if cap(p.batch) < n {
		p.batch = make([]Obs, n)
	}
	p.batch = p.batch[:n]
	for i, f := range p.frames {
		if len(f) != want {
			panic(fmt.Sprintf("vla: Policy.%s: frame %d has %d bytes, want %d", op, i, len(f), want))
		}
		o := &p.batch[i]
		o.Images = o.Images[:0]
		for cam := range c.Model.Cameras {
			o.Images = append(o.Images, f[cam*im:(cam+1)*im])
		}
		o.Instr = o.Instr[:0]
		ids := f[c.Model.Cameras*im:]
		for k := range c.InstrTokens {
			if id := int(binary.LittleEndian.Uint16(ids[2*k:])); id != c.InstrPad {
				o.Instr = append(o.Instr, id)
			}
		}
		o.Proprio = o.Proprio[:0]
		for _, v := range obs[i*c.ObsDim : i*c.ObsDim+c.Model.ProprioDim] {
			o.Proprio = append(o.Proprio, float32(v))
		}
	}
	return p.batch
}

// ActActions implements kernels.Network: it samples every row's action
// tokens autoregressively with rng ([Net.Act]); a.Tokens receives the bins.
func (p *Policy) ActActions(obs []float64, n int, rng *rand.Rand, a kernels.Actions, logp, values []float64) {
	p.act("ActActions", obs, n, rng, nil, false, a, logp, values)
}

// ActActionsRows is ActActions with row i sampling from rngs[i] alone, each row bit for bit
// what it would be in a batch of any other size (Net.ActRows): the engine's sync mode acts
// on a whole batch with it and stays independent of how requests were batched.
func (p *Policy) ActActionsRows(obs []float64, n int, rngs []*rand.Rand, a kernels.Actions, logp, values []float64) {
	p.act("ActActionsRows", obs, n, nil, rngs, false, a, logp, values)
}

// Greedy implements kernels.Network: the argmax token at each position
// given the argmax tokens before it. Each row's tokens are the same in a batch of any size
// (Net.ActRows): the engine's evaluation plays episodes side by side.
func (p *Policy) Greedy(obs []float64, n int, a kernels.Actions) {
	p.act("Greedy", obs, n, nil, nil, true, a, nil, nil)
}

// act decodes n rows: sampled with rng (Net.Act), or, when rng is nil, greedily or with row
// i sampling from rngs[i] (Net.ActRows); logp and values may be nil.
func (p *Policy) act(op string, obs []float64, n int, rng *rand.Rand, rngs []*rand.Rand, greedy bool, a kernels.Actions, logp, values []float64) {
	t := p.TokensPerStep()
	if len(a.Tokens) != n*t {
		panic(fmt.Sprintf("vla: Policy.%s: %d action tokens for %d rows of %d", op, len(a.Tokens), n, t))
	}
	batch := p.observations(op, obs, n)
	var (
		tok [][]int
		lp  [][]float32
		v   []float32
	)
	switch {
	case rng != nil:
		tok, lp, v = p.net.Act(batch, rng, false)
	case greedy && p.cfg.GreedyMean:
		tok, lp, v = p.net.ActRowsDecode(batch, nil, DecodeMean)
	default:
		tok, lp, v = p.net.ActRows(batch, rngs, greedy)
	}
	p.copyOut(n, tok, lp, v, a, logp, values)
}

// copyOut writes the net's per-row tokens, log-probabilities and values into the engine's
// row-major buffers (logp and values may be nil).
func (p *Policy) copyOut(n int, tok [][]int, lp [][]float32, v []float32, a kernels.Actions, logp, values []float64) {
	t := p.TokensPerStep()
	for i := range n {
		copy(a.Tokens[i*t:(i+1)*t], tok[i])
		if logp != nil {
			for k, x := range lp[i] {
				logp[i*t+k] = float64(x)
			}
		}
		if values != nil {
			values[i] = float64(v[i])
		}
	}
}

// EnvActions implements kernels.Network: each token's bin centre.
func (p *Policy) EnvActions(a kernels.Actions, n int, out []float64) {
	t := p.TokensPerStep()
	if len(a.Tokens) != n*t || len(out) != n*t {
		panic(fmt.Sprintf("vla: Policy.EnvActions: %d tokens and %d outputs for %d rows of %d", len(a.Tokens), len(out), n, t))
	}
	for i := range n {
		copy(out[i*t:(i+1)*t], p.cfg.Model.TokensToAction(a.Tokens[i*t:(i+1)*t], p.cfg.Low, p.cfg.High))
	}
}

// Values implements kernels.Network: the value head over the observation
// prefix alone (the prefix never attends to actions, so this is the value
// Act and Evaluate report).
func (p *Policy) Values(obs []float64, n int, out []float64) {
	if len(out) != n {
		panic(fmt.Sprintf("vla: Policy.Values: %d outputs for %d rows", len(out), n))
	}
	p.net.run(&p.vtape, p.observations("Values", obs, n), nil, 0, nil)
	for i, v := range p.vtape.Value[:n] {
		out[i] = float64(v)
	}
}

// Evaluate implements kernels.Network: the teacher-forced pass
// ([Net.ForwardInto]) over the rows and their action tokens.
func (p *Policy) Evaluate(obs []float64, n int, a kernels.Actions, logp, entropy, values []float64) {
	t := p.TokensPerStep()
	if len(a.Tokens) != n*t || len(logp) != n*t || len(entropy) != n*t || len(values) != n {
		panic(fmt.Sprintf("vla: Policy.Evaluate: %d tokens, %d log-probs, %d entropies, %d values for %d rows of %d tokens",
			len(a.Tokens), len(logp), len(entropy), len(values), n, t))
	}
	batch := p.observations("Evaluate", obs, n)
	if cap(p.tokens) < n {
		p.tokens = make([][]int, n)
	}
	p.tokens = p.tokens[:n]
	for i := range n {
		p.tokens[i] = a.Tokens[i*t : (i+1)*t]
	}
	if p.temps != nil {
		if len(p.temps) != n {
			panic(fmt.Sprintf("vla: Policy.Evaluate: %d temperatures for %d rows (SetTemperatures)", len(p.temps), n))
		}
		p.tape = p.net.ForwardIntoAt(p.tape, batch, p.tokens, p.temps)
	} else {
		p.tape = p.net.ForwardInto(p.tape, batch, p.tokens)
	}
	for i, x := range p.tape.Logp[:n*t] {
		logp[i] = float64(x)
	}
	for i, x := range p.tape.Entropy[:n*t] {
		entropy[i] = float64(x)
	}
	for i, x := range p.tape.Value[:n] {
		values[i] = float64(x)
	}
	p.n = n
}

// Backward implements kernels.Network: the float32 backward pass of the
// last Evaluate, whose accumulated gradients (since ZeroGrads) are widened
// into Grads.
func (p *Policy) Backward(dlogp, dentropy, dvalues []float64) {
	n, t := p.n, p.TokensPerStep()
	if n == 0 {
		panic("vla: Policy.Backward: no Evaluate before Backward")
	}
	if len(dlogp) != n*t || len(dentropy) != n*t || len(dvalues) != n {
		panic(fmt.Sprintf("vla: Policy.Backward: %d, %d, %d partials for %d rows of %d tokens", len(dlogp), len(dentropy), len(dvalues), n, t))
	}
	p.dlp, p.dent, p.dval = narrow(p.dlp, dlogp), narrow(p.dent, dentropy), narrow(p.dval, dvalues)
	p.net.Backward(p.tape, p.dlp, p.dent, p.dval)
	for i, g := range p.net.Grads() {
		p.grads[i] = float64(g)
	}
}

// narrow converts x to float32 into buf.
func narrow(buf []float32, x []float64) []float32 {
	buf = grow(buf, len(x))
	for i, v := range x {
		buf[i] = float32(v)
	}
	return buf
}
