package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// DefaultPixelValSamples is the number of an update's real transitions on which M_obs's
// one-step error is measured (PixelWMSettings.ValSamples 0).
const DefaultPixelValSamples = 64

// PixelWMState is the pixel world model's trained state in a Snapshot when it trains
// online: each trainer's MarshalBinary record (model, Adam moments, step count, its own
// random stream), so that a restored engine continues bit for bit, and the fits so far.
type PixelWMState struct {
	Obs     []byte `json:"obs"`
	Rew     []byte `json:"rew"`
	Proprio []byte `json:"proprio"`
	// ObsFits and RewFits count the online fits of M_obs (with the proprio head) and M_rew.
	ObsFits int64 `json:"obs_fits"`
	RewFits int64 `json:"rew_fits"`
}

// online reports whether the settings fit any of the three models online.
func (s PixelWMSettings) online() bool {
	return s.ObsFitSteps > 0 || s.RewFitSteps > 0 || s.ProprioFitSteps > 0
}

// pixelReal is one update's real steps as the pixel world model's data: M_obs's and the
// proprio head's transitions (from every step with History−1 steps before it in its chunk
// and a frame after it) and M_rew's labelled frames.
type pixelReal struct {
	obs  []edm.Sample
	prop []proprio.Sample
	rew  []reward.Example
}

// realData turns the update's real chunks (in (Env, Seq) order) into the world model's
// data. A step's action is the first Obs.ActionDim values of the environment action the
// tokens decode to (net.EnvActions): the actions the step executed, Stride = Execute of
// them. The frame after a chunk's last step is its NextFrame (cut or truncated) or
// TerminalFrame (terminated); a step that ended its episode part way through its actions
// keeps all Execute of them as its action, though the simulator ran fewer (one transition
// per episode). M_rew's labels are the simulator's: a frame is a success
// and an end frame only where its episode ended there (the pretraining's episodes also
// linger on after the end, which real rollouts do not).
func (p *pixelImaginer) realData(net kernels.Network, chunks []*Chunk, shape ActionShape, frameBytes int) pixelReal {
	m := p.model
	oc, pc := m.Obs.Config(), m.Proprio.Config()
	k, cams, im, pd, ad := oc.History, oc.Cameras, oc.ImageSize*oc.ImageSize*3, pc.ProprioDim, oc.ActionDim
	split := func(f []byte) []edm.Frame { return cameraFrames(f, cams, im) }
	var d pixelReal
	for _, c := range chunks {
		n := c.Len()
		obsDim := len(c.Obs) / n
		env := make([]float64, n*shape.Env)
		net.EnvActions(kernels.Actions{Tokens: c.Actions, Continuous: c.ContActions}, n, env)
		frames := make([][]edm.Frame, n, n+1)
		props := make([][]float64, n, n+1)
		for t := range n {
			frames[t] = split(c.Frames[t*frameBytes : (t+1)*frameBytes])
			props[t] = c.Obs[t*obsDim : t*obsDim+pd]
			d.rew = append(d.rew, reward.Example{Frames: frames[t]})
		}
		switch {
		case c.Terminated && len(c.TerminalFrame) == frameBytes && len(c.TerminalObs) >= pd:
			frames, props = append(frames, split(c.TerminalFrame)), append(props, c.TerminalObs[:pd])
		case len(c.NextFrame) == frameBytes && len(c.NextObs) >= pd:
			frames, props = append(frames, split(c.NextFrame)), append(props, c.NextObs[:pd])
		}
		if len(frames) > n && (c.Terminated || c.Truncated) {
			d.rew = append(d.rew, reward.Example{Frames: frames[n], Success: c.Success, End: true})
		}
		for t := k - 1; t+1 < len(frames); t++ {
			act := env[t*shape.Env : t*shape.Env+ad]
			d.obs = append(d.obs, edm.Sample{Past: frames[t-k+1 : t+1 : t+1], Action: act, Next: frames[t+1]})
			d.prop = append(d.prop, proprio.Sample{Past: props[t-pc.History+1 : t+1 : t+1], Action: act, Next: props[t+1]})
		}
	}
	return d
}

// validate is M_obs's one-step error on ValSamples transitions drawn uniformly from the
// update's real ones, before any fit on them, over copying the last frame's (1: no better
// than copying; the pretraining's horizon loss, on fresh data): the horizon schedule's
// loss. NaN when there is no transition.
func (p *pixelImaginer) validate(samples []edm.Sample) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	m := p.model
	n := p.set.ValSamples
	if n == 0 {
		n = DefaultPixelValSamples
	}
	past, acts, truth := make([][][]edm.Frame, n), make([][]float64, n), make([][]edm.Frame, n)
	for i := range n {
		s := samples[p.rng.IntN(len(samples))]
		past[i], acts[i], truth[i] = s.Past, s.Action, s.Next
	}
	next := m.Obs.Step(m.EDM, past, acts, p.rng)
	var mse, copyLast float64
	for i := range n {
		mse += edm.StepMSE(next[i], truth[i])
		copyLast += edm.StepMSE(past[i][len(past[i])-1], truth[i])
	}
	if !(copyLast > 0) {
		return math.NaN() // nothing moved: no scale to judge by
	}
	return mse / copyLast
}

// online runs the update's validation and the fits due at run-wide update number u on
// the update's real chunks: M_obs's validation loss (kept in lastVal), then every ObsEvery
// updates ObsFitSteps steps of M_obs and ProprioFitSteps of the proprio head, and every
// RewEvery updates RewFitSteps of M_rew, each trainer drawing its own minibatches.
func (p *pixelImaginer) online(net kernels.Network, chunks []*Chunk, shape ActionShape, frameBytes int, u int64) error {
	if p.model == nil {
		return errors.New("pixel world model: none loaded (Engine.SetPixelWorldModel)")
	}
	d := p.realData(net, sortedChunks(chunks), shape, frameBytes)
	p.lastVal = p.validate(d.obs)
	s, tr := p.set, p.model
	fit := func(name string, steps int, step func() (float64, error)) error {
		for range steps {
			if _, err := step(); err != nil {
				return fmt.Errorf("pixel world model: online fit of %s at update %d: %w", name, u, err)
			}
		}
		return nil
	}
	if (s.ObsFitSteps > 0 || s.ProprioFitSteps > 0) && u%int64(max(1, s.ObsEvery)) == 0 && len(d.obs) > 0 {
		if err := fit("M_obs", s.ObsFitSteps, func() (float64, error) { return tr.ObsTrainer.Step(d.obs) }); err != nil {
			return err
		}
		if err := fit("the proprio head", s.ProprioFitSteps, func() (float64, error) { return tr.ProprioTrainer.Step(d.prop) }); err != nil {
			return err
		}
		p.obsFits++
	}
	if s.RewFitSteps > 0 && u%int64(max(1, s.RewEvery)) == 0 && len(d.rew) > 0 {
		if err := fit("M_rew", s.RewFitSteps, func() (float64, error) { return tr.RewTrainer.Step(d.rew) }); err != nil {
			return err
		}
		p.rewFits++
	}
	return nil
}

// cameraFrames views the first cams images of im bytes each in a step's frame (which the
// instruction's bytes follow) as M_obs's per-camera frames, without copying.
func cameraFrames(f []byte, cams, im int) []edm.Frame {
	out := make([]edm.Frame, cams)
	for c := range out {
		out[c] = edm.Frame(f[c*im : (c+1)*im])
	}
	return out
}

// sortedChunks is chunks in (Env, Seq) order, which does not depend on the order in which
// concurrent workers finished them.
func sortedChunks(chunks []*Chunk) []*Chunk {
	s := slices.Clone(chunks)
	slices.SortFunc(s, byEnvSeq)
	return s
}

// byEnvSeq orders chunks by environment, then by sequence number within it: every
// ordering of an update's chunks that must not depend on which worker finished first.
func byEnvSeq(a, b *Chunk) int { return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Seq, b.Seq)) }

// state is the online trainers' Snapshot part (nil when nothing trains online).
func (p *pixelImaginer) state() (*PixelWMState, error) {
	if !p.set.online() || p.model == nil {
		return p.pending, nil // not loaded yet: what the engine was restored with
	}
	m := p.model
	st := &PixelWMState{ObsFits: p.obsFits, RewFits: p.rewFits}
	for _, x := range []struct {
		dst *[]byte
		t   interface{ MarshalBinary() ([]byte, error) }
	}{{&st.Obs, m.ObsTrainer}, {&st.Rew, m.RewTrainer}, {&st.Proprio, m.ProprioTrainer}} {
		b, err := x.t.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("pixel world model state: %w", err)
		}
		*x.dst = b
	}
	return st, nil
}

// adopt replaces m's trainers (and so its models) by the restored snapshot's, when the
// engine was restored with one: the pretrained model a segment loads is where the run
// started, the snapshot is where its online fits got to.
func (p *pixelImaginer) adopt(m *PixelWorldModel) error {
	st := p.pending
	if st == nil {
		return nil
	}
	var (
		obs edm.Trainer
		rew reward.Trainer
		pro proprio.Trainer
	)
	for _, x := range []struct {
		name string
		b    []byte
		t    interface{ UnmarshalBinary([]byte) error }
	}{{"M_obs", st.Obs, &obs}, {"M_rew", st.Rew, &rew}, {"the proprio head", st.Proprio, &pro}} {
		if err := x.t.UnmarshalBinary(x.b); err != nil {
			return fmt.Errorf("restore the pixel world model's %s: %w", x.name, err)
		}
	}
	m.ObsTrainer, m.RewTrainer, m.ProprioTrainer = &obs, &rew, &pro
	m.Obs, m.EDM, m.Rew, m.Proprio = obs.Net, obs.EDM, rew.Model, pro.Model
	p.obsFits, p.rewFits = st.ObsFits, st.RewFits
	p.pending = nil
	return nil
}
