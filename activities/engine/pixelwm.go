package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/kernels/vla"
)

// streamPixelWM is the PCG stream (under Config.Seed) of the pixel world model's
// imagination: start states, imagined actions and M_obs's sampling noise.
const streamPixelWM = 6

// PixelWMSettings configure imagined training over pixels (the pixel world model of the
// tabletop suites): before every sync-mode update the trainer rolls imagined chunks from
// real steps of the update's own batch, Horizon steps each, through a pretrained,
// fixed world model with the current policy, and the update trains on them beside the
// real steps. Each imagined engine step feeds the policy's frame (the imagined camera
// images and the start's instruction) and its observation (the imagined proprioception
// in place of the start's), samples the action tokens as acting does, and advances
// M_obs and the proprio head through the step's executed actions (once per step for
// models trained a policy step at a time, PixelWorldModel.Stride); its reward is M_rew's
// p_success(after) − p_success(before), and the chunk ends when M_rew's p_end reaches
// TermThreshold. Only real steps count toward the budget.
type PixelWMSettings struct {
	Enabled bool `json:"enabled"`
	// ImaginationRatio is the share of each update's BatchSteps that is imagined, in
	// (0, 1).
	ImaginationRatio float64 `json:"imagination_ratio"`
	// Horizon is H, the imagined steps per start (the Run workflow's schedule sets it per
	// segment). >= 1.
	Horizon int `json:"horizon"`
	// Execute is the number of environment actions one engine step executes (the policy's
	// execute_steps with action chunks, else 1). >= 1.
	Execute int `json:"execute"`
	// TermThreshold is the p_end at which an imagined chunk ends (0: 0.5).
	TermThreshold float64 `json:"term_threshold,omitempty"`
	// Online training on each update's real steps (the sync round's fresh data: B_real),
	// before the update imagines: every ObsEvery updates ObsFitSteps Adam steps of M_obs
	// and ProprioFitSteps of the proprio head, every RewEvery updates RewFitSteps of M_rew
	// (0 steps: that model stays as pretrained; the *Every 0 mean 1). M_obs's and the
	// proprio head's fits need a model trained a policy step at a time
	// (PixelWorldModel.Stride = Execute): the engine stores no frame between a step's
	// actions.
	ObsEvery        int `json:"obs_every,omitempty"`
	RewEvery        int `json:"rew_every,omitempty"`
	ObsFitSteps     int `json:"obs_fit_steps,omitempty"`
	RewFitSteps     int `json:"rew_fit_steps,omitempty"`
	ProprioFitSteps int `json:"proprio_fit_steps,omitempty"`
	// Group is the number of imagined rollouts started from each drawn real step (0 or 1:
	// one). With AdvGRPO, at least 2: a group's rollouts differ only in the actions the
	// policy samples (and M_obs's noise), and GRPO compares them by their outcome, M_rew's
	// success on the rollout's last imagined frame (p_success ≥ 0.5; Chunk.Success), as it
	// compares real episodes by the environment's success. A rollout that runs to the
	// horizon or that M_rew ends is an ended imagined episode (Truncated or Terminated);
	// the one the update's quota cuts ends none and gets no GRPO advantage.
	Group int `json:"group,omitempty"`
	// Temperature, when > 0, samples the imagined rollouts' action tokens at this
	// temperature instead of the policy's (a VLA's; exploring in imagination, where a step
	// costs no environment), and records for each the log-probabilities the policy gives
	// them at its own temperature, so that the update treats an imagined action as one the
	// policy sampled: with GRPO, the rollouts of a start differ more and more groups
	// disagree. Without an importance weight for the other temperature the update is
	// biased toward the imagined rollouts' actions; the clip bounds each update's move
	// (Tempered trains them at this temperature instead).
	// 0: the policy's temperature (as real rollouts).
	Temperature float64 `json:"temperature,omitempty"`
	// Tempered (with Temperature) records the imagined actions' log-probabilities at
	// Temperature, the distribution they were drawn from, and the update evaluates them
	// there too (Chunk.Temperature, kernels.Batch.Temperatures): on the imagined steps the
	// update is the on-policy one of the tempered policy softmax(z/Temperature), whose
	// logits z the policy shares, instead of the policy's own with actions it would
	// rarely sample. Without it the sampled tokens' gradient at the policy's low
	// temperature, (e_a − π)/T with π nearly one-hot, points from the policy's choice
	// toward the tempered sampler's on average whatever the outcome, and the policy
	// flattens (measured: entropy 1.11 → 1.17 over 12 updates at 0.3 against 0.03).
	Tempered bool `json:"tempered,omitempty"`
	// Graded compares the rollouts of a start (with AdvGRPO and Group ≥ 2) by M_rew's
	// p_success on the last imagined frame less the start's (the sum of the imagined
	// rewards) instead of its verdict at ½, with mean-centred advantages (R_i − mean(R),
	// kernels.EpisodePiece.Centred): rollouts that M_rew judges alike on both sides of ½
	// still rank by how far each took p_success, and small differences stay small.
	Graded bool `json:"graded,omitempty"`
	// StartWithin, when > 0, draws the imagined rollouts' starts only from the last
	// StartWithin steps of chunks in which an episode ended (terminated or truncated),
	// instead of from every step: the starts whose imagined outcomes differ within a group
	// (success is a few steps away or missed), where M_rew's verdicts on imagined endings
	// were measured (`bench pixel-wm --counterfactual-jitter`), rather than mid-episode
	// starts whose p_success barely changes in a horizon. An update whose round ended no
	// episode imagines nothing. 0: every step.
	StartWithin int `json:"start_within,omitempty"`
	// ValSamples is the number of each update's real transitions on which M_obs's
	// one-step error over copying the last frame's is measured before any fit
	// (UpdateReport.WMValLoss, the horizon schedule's loss; 0: DefaultPixelValSamples).
	ValSamples int `json:"val_samples,omitempty"`
}

func (s PixelWMSettings) validate() error {
	var errs []error
	if !(s.ImaginationRatio > 0 && s.ImaginationRatio < 1) {
		errs = append(errs, fmt.Errorf("imagination ratio must be in (0, 1), got %v", s.ImaginationRatio))
	}
	if s.Horizon < 1 || s.Execute < 1 {
		errs = append(errs, fmt.Errorf("horizon and executed actions per step must be at least 1, got %d and %d", s.Horizon, s.Execute))
	}
	if !(s.TermThreshold >= 0 && s.TermThreshold < 1) {
		errs = append(errs, fmt.Errorf("termination threshold must be in [0, 1), got %v", s.TermThreshold))
	}
	if min(s.ObsEvery, s.RewEvery, s.ObsFitSteps, s.RewFitSteps, s.ProprioFitSteps, s.ValSamples) < 0 {
		errs = append(errs, fmt.Errorf("online fit settings must not be negative, got every %d/%d, steps %d/%d/%d, %d validation samples",
			s.ObsEvery, s.RewEvery, s.ObsFitSteps, s.RewFitSteps, s.ProprioFitSteps, s.ValSamples))
	}
	if s.StartWithin < 0 {
		errs = append(errs, fmt.Errorf("imagined starts within the last steps of episodes must not be negative (0: every step), got %d", s.StartWithin))
	}
	if !(s.Temperature >= 0) || math.IsInf(s.Temperature, 0) {
		errs = append(errs, fmt.Errorf("imagined sampling temperature must be a positive number (0: the policy's), got %v", s.Temperature))
	}
	if s.Group < 0 {
		errs = append(errs, fmt.Errorf("rollouts per start (group) must not be negative (0 or 1: one), got %d", s.Group))
	}
	if s.Tempered && !(s.Temperature > 0) {
		errs = append(errs, errors.New("tempered imagined training evaluates the imagined actions at the temperature they were sampled at: set an imagined temperature with it"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pixel world model: %w", err)
	}
	return nil
}

// PixelWorldModel is the pretrained pixel world model the engine imagines with: M_obs
// (an EDM denoiser over the cameras' frames) with its diffusion settings, the proprio
// head and M_rew. The engine does not train it.
type PixelWorldModel struct {
	Obs     *edm.Net[float32]
	EDM     edm.EDM
	Proprio *proprio.Model[float32]
	Rew     *reward.Model
	// Stride is the environment actions M_obs and the proprio head advance by in one
	// prediction (their action inputs are that many actions' values together): the
	// engine step's Execute for models trained a policy step at a time, 1 for models
	// trained an action at a time. It divides Execute; 0 means 1.
	Stride int
	// ObsTrainer, RewTrainer and ProprioTrainer train Obs, Rew and Proprio online (their
	// models are those three), each needed when PixelWMSettings fits it.
	ObsTrainer     *edm.Trainer
	RewTrainer     *reward.Trainer
	ProprioTrainer *proprio.Trainer
}

// stride is Stride with 0 read as 1.
func (m *PixelWorldModel) stride() int { return max(1, m.Stride) }

// pixelImaginer is the trainer's pixel imagination: settings, model and random stream.
type pixelImaginer struct {
	set   PixelWMSettings
	model *PixelWorldModel
	src   *rand.PCG
	rng   *rand.Rand
	// imagined counts the imagined steps trained on, run-wide.
	imagined int64
	// lastVal is the last update's validation loss (NaN before the first); obsFits and
	// rewFits count online fits; pending is the restored snapshot's trained state, which
	// SetPixelWorldModel adopts.
	lastVal          float64
	obsFits, rewFits int64
	pending          *PixelWMState
}

func newPixelImaginer(set PixelWMSettings, seed uint64) *pixelImaginer {
	if set.TermThreshold == 0 {
		set.TermThreshold = 0.5
	}
	src := rand.NewPCG(seed, streamPixelWM)
	return &pixelImaginer{set: set, src: src, rng: rand.New(src), lastVal: math.NaN()}
}

// SetPixelWorldModel gives the engine the pretrained pixel world model it imagines with
// (Config.PixelWM). It checks the models against the environments' frames, observations
// and actions.
func (e *Engine) SetPixelWorldModel(m PixelWorldModel) error {
	if e.pix == nil {
		return errors.New("set pixel world model: the engine's config does not imagine over pixels (Config.PixelWM)")
	}
	if e.pix.set.online() {
		if m.ObsTrainer == nil || m.RewTrainer == nil || m.ProprioTrainer == nil {
			return errors.New("set pixel world model: the settings train it online, which needs the three trainers (PixelWorldModel.ObsTrainer, RewTrainer, ProprioTrainer)")
		}
		if err := e.pix.adopt(&m); err != nil {
			return fmt.Errorf("set pixel world model: %w", err)
		}
		if m.Obs != m.ObsTrainer.Net || m.Rew != m.RewTrainer.Model || m.Proprio != m.ProprioTrainer.Model {
			return errors.New("set pixel world model: the models must be the trainers' own")
		}
	}
	if m.Obs == nil || m.Proprio == nil || m.Rew == nil {
		return errors.New("set pixel world model: M_obs, the proprio head and M_rew are all needed")
	}
	oc, pc, rc := m.Obs.Config(), m.Proprio.Config(), m.Rew.Config()
	img := oc.Cameras * oc.ImageSize * oc.ImageSize * 3
	var errs []error
	if e.frameBytes < img {
		errs = append(errs, fmt.Errorf("M_obs imagines %d cameras at %d×%d (%d bytes), the environment's frames have %d bytes", oc.Cameras, oc.ImageSize, oc.ImageSize, img, e.frameBytes))
	}
	if rc.Cameras != oc.Cameras || rc.ImageSize != oc.ImageSize {
		errs = append(errs, fmt.Errorf("M_rew reads %d cameras at %d×%d, M_obs imagines %d at %d×%d", rc.Cameras, rc.ImageSize, rc.ImageSize, oc.Cameras, oc.ImageSize, oc.ImageSize))
	}
	if pc.ActionDim != oc.ActionDim || pc.ProprioDim > e.obsDim {
		errs = append(errs, fmt.Errorf("proprio head: %d-D actions (M_obs: %d) and %d-D proprioception (observations: %d values)", pc.ActionDim, oc.ActionDim, pc.ProprioDim, e.obsDim))
	}
	if st, x := m.stride(), e.pix.set.Execute; st > x || x%st != 0 || oc.ActionDim%st != 0 {
		errs = append(errs, fmt.Errorf("M_obs advances by %d actions (%d values) at a time, which must divide the %d an engine step executes", st, oc.ActionDim, x))
	} else if need := x / st * oc.ActionDim; e.shape.Env < need {
		errs = append(errs, fmt.Errorf("an engine step executes %d actions, %d values for M_obs; the policy writes %d values per step", x, need, e.shape.Env))
	}
	if s := e.pix.set; (s.ObsFitSteps > 0 || s.ProprioFitSteps > 0) && m.stride() != s.Execute {
		errs = append(errs, fmt.Errorf("online fits of M_obs and the proprio head need a model that advances a whole engine step (%d actions) at a time, this one advances %d: pretrain it again with this build", s.Execute, m.stride()))
	}
	if pc.History > oc.History {
		errs = append(errs, fmt.Errorf("the proprio head needs %d past vectors, M_obs's %d frames of history are all a start keeps", pc.History, oc.History))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("set pixel world model: %w", err)
	}
	e.pix.model = &m
	return nil
}

// pixelRow is one imagined rollout in progress: its history of frames (per step, one
// Frame per camera) and proprio vectors, the start's instruction bytes and observation,
// and what it has recorded so far.
type pixelRow struct {
	frames  [][]edm.Frame
	prop    [][]float64
	instr   []byte
	obsBase []float64
	pNow    float64 // M_rew's p_success of the current frame
	c       *Chunk
	done    bool
}

// frame is the policy's frame of the row's current step: the cameras' images, then the
// instruction's bytes.
func (r *pixelRow) frame() []byte {
	cur := r.frames[len(r.frames)-1]
	var b []byte
	for _, f := range cur {
		b = append(b, f...)
	}
	return append(b, r.instr...)
}

// obs is the row's current observation: the start's, with the imagined proprioception.
func (r *pixelRow) obs() []float64 {
	o := slices.Clone(r.obsBase)
	copy(o, r.prop[len(r.prop)-1])
	return o
}

// imagine rolls imagined chunks from starts drawn uniformly from the steps of chunks that
// have History−1 steps before them in their chunk (with StartWithin, of those only the last
// steps of chunks that ended an episode), with the trainer's network net (which
// reads frames) at policy version version, until they hold quota steps (see the rounds
// below), cutting the last. It returns nil when no chunk is long enough.
func (p *pixelImaginer) imagine(ctx context.Context, net kernels.Network, chunks []*Chunk, shape ActionShape, version int64, quota, frameBytes int) ([]*Chunk, error) {
	if p.model == nil {
		return nil, errors.New("pixel world model: none loaded (Engine.SetPixelWorldModel)")
	}
	fnet, ok := net.(kernels.FrameNetwork)
	if !ok {
		return nil, errors.New("pixel world model: the policy does not read frames")
	}
	if quota <= 0 {
		return nil, nil
	}
	k := p.model.Obs.Config().History
	sorted := sortedChunks(chunks)
	type start struct {
		c *Chunk
		t int
	}
	var starts []start
	for _, c := range sorted {
		if len(c.Frames) != c.Len()*frameBytes {
			return nil, fmt.Errorf("pixel world model: chunk (%d, %d) holds %d frame bytes for %d steps of %d", c.Env, c.Seq, len(c.Frames), c.Len(), frameBytes)
		}
		from := k - 1
		if w := p.set.StartWithin; w > 0 {
			if !c.Terminated && !c.Truncated {
				continue
			}
			from = max(from, c.Len()-w)
		}
		for t := from; t < c.Len(); t++ {
			starts = append(starts, start{c, t})
		}
	}
	if len(starts) == 0 {
		return nil, nil
	}
	H := p.set.Horizon
	obsDim := len(sorted[0].Obs) / sorted[0].Len()
	var rows []*pixelRow
	// The first round starts ceil(quota/H) rollouts; when M_rew's terminations cut them
	// short, later rounds size themselves by the mean length so far (at most eight rounds).
	// With groups, every drawn start begins G rollouts in a row, which share a group id
	// (Chunk.Start, from 1; imagined chunks otherwise have 0).
	G := max(1, p.set.Group)
	perStart, got := float64(H), 0
	for round := 0; round < 8 && got < quota; round++ {
		n := int(math.Ceil(float64(quota-got)/perStart/float64(G))) * G
		batch := make([]*pixelRow, n)
		for i := 0; i < n; i += G {
			s := starts[p.rng.IntN(len(starts))]
			for g := range G {
				seq := int64(len(rows) + i + g)
				batch[i+g] = p.startRow(s.c, s.t, obsDim, frameBytes, seq)
				if G > 1 {
					batch[i+g].c.Start = uint64(len(rows)+i)/uint64(G) + 1
				}
			}
		}
		if err := p.roll(ctx, fnet, batch, shape, version, obsDim); err != nil {
			return nil, err
		}
		for _, r := range batch {
			got += r.c.Len()
		}
		rows = append(rows, batch...)
		perStart = max(1, float64(got)/float64(len(rows)))
	}
	// Bootstrap the chunks that ran to the horizon from their last imagined state, and
	// cut the total to the quota.
	var out []*Chunk
	left := quota
	for _, r := range rows {
		c := r.c
		if left <= 0 || c.Len() == 0 {
			break
		}
		if !c.Terminated {
			c.NextObs, c.NextFrame = r.obs(), r.frame()
			// Ran to the horizon: the imagined episode's time limit.
			c.Truncated = true
		}
		c.Success = r.pNow >= 0.5
		if c.Len() > left {
			cutChunk(c, left, len(c.Obs)/c.Len(), len(c.Frames)/c.Len(), shape)
		}
		left -= c.Len()
		out = append(out, c)
	}
	for _, c := range out {
		for _, v := range c.Rewards {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("pixel world model: imagined reward %v", v)
			}
		}
	}
	p.imagined += int64(quota - left)
	return out, nil
}

// cutChunk keeps the first n steps of c and bootstraps it from step n, which it had
// recorded.
func cutChunk(c *Chunk, n, obsDim, frameBytes int, shape ActionShape) {
	c.NextObs = slices.Clone(c.Obs[n*obsDim : (n+1)*obsDim])
	c.NextFrame = slices.Clone(c.Frames[n*frameBytes : (n+1)*frameBytes])
	c.Terminated, c.Truncated, c.Success = false, false, false
	c.Obs, c.Frames = c.Obs[:n*obsDim], c.Frames[:n*frameBytes]
	c.Actions, c.ContActions = c.Actions[:n*shape.Tokens], c.ContActions[:n*shape.Reals]
	c.LogProbs, c.Values, c.Rewards, c.Versions = c.LogProbs[:n*shape.LogProbs], c.Values[:n], c.Rewards[:n], c.Versions[:n]
}

// act samples n imagined rows' action tokens with the imaginer's generator: at the
// policy's temperature, or at PixelWMSettings.Temperature with logp the log-probabilities
// the policy gives the sampled tokens at its own (a teacher-forced pass after sampling;
// the policy's temperature is restored before it) or, Tempered, at that temperature (the
// sampler's own).
func (p *pixelImaginer) act(fnet kernels.FrameNetwork, obs []float64, n int, a kernels.Actions, logp, values []float64) error {
	if p.set.Temperature == 0 {
		fnet.ActActions(obs, n, p.rng, a, logp, values)
		return nil
	}
	vp, ok := fnet.(*vla.Policy)
	if !ok {
		return fmt.Errorf("pixel world model: an imagined sampling temperature (%v) needs the VLA policy, got %T", p.set.Temperature, fnet)
	}
	own := vp.PolicyConfig().Temperature
	if own == 0 {
		own = 1
	}
	vp.Net().SetTemperature(p.set.Temperature)
	fnet.ActActions(obs, n, p.rng, a, logp, values)
	vp.Net().SetTemperature(own) // the value the policy was built with: bit for bit its scale
	if !p.set.Tempered {
		fnet.Evaluate(obs, n, a, logp, make([]float64, len(logp)), values)
	}
	return nil
}

// startRow begins an imagined rollout from step t of the real chunk c: its History frames
// and proprio vectors up to t, its instruction and observation.
func (p *pixelImaginer) startRow(c *Chunk, t, obsDim, frameBytes int, seq int64) *pixelRow {
	m := p.model
	oc := m.Obs.Config()
	k, cams, im := oc.History, oc.Cameras, oc.ImageSize*oc.ImageSize*3
	pd := m.Proprio.Config().ProprioDim
	r := &pixelRow{obsBase: slices.Clone(c.Obs[t*obsDim : (t+1)*obsDim])}
	for j := t - k + 1; j <= t; j++ {
		f := c.Frames[j*frameBytes : (j+1)*frameBytes]
		r.frames = append(r.frames, cameraFrames(f, cams, im))
		r.prop = append(r.prop, slices.Clone(c.Obs[j*obsDim:j*obsDim+pd]))
	}
	r.instr = slices.Clone(c.Frames[t*frameBytes+cams*im : (t+1)*frameBytes])
	r.c = &Chunk{Env: -1, Seq: seq}
	if p.set.Tempered {
		r.c.Temperature = p.set.Temperature
	}
	return r
}

// roll runs rows for up to Horizon imagined steps each, recording them in the rows'
// chunks. It stops with ctx's error between steps (an imagined update takes minutes on a
// CPU; a cancelled segment must not wait for it).
func (p *pixelImaginer) roll(ctx context.Context, fnet kernels.FrameNetwork, rows []*pixelRow, shape ActionShape, version int64, obsDim int) error {
	m := p.model
	oc := m.Obs.Config()
	k := oc.History
	H := p.set.Horizon
	cur := func(live []*pixelRow) [][][]uint8 {
		out := make([][][]uint8, len(live))
		for i, r := range live {
			for _, f := range r.frames[len(r.frames)-1] {
				out[i] = append(out[i], f)
			}
		}
		return out
	}
	ps, _ := m.Rew.Predict(cur(rows))
	for i, r := range rows {
		r.pNow = ps[i]
	}
	ad := oc.ActionDim
	for range H {
		if err := ctx.Err(); err != nil {
			return err
		}
		var live []*pixelRow
		for _, r := range rows {
			if !r.done {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			break
		}
		nl := len(live)
		frames := make([][]byte, nl)
		obs := make([]float64, 0, nl*obsDim)
		for i, r := range live {
			frames[i] = r.frame()
			obs = append(obs, r.obs()...)
		}
		a := kernels.Actions{Tokens: make([]int, nl*shape.Tokens), Continuous: make([]float64, nl*shape.Reals)}
		logp, values := make([]float64, nl*shape.LogProbs), make([]float64, nl)
		fnet.SetFrames(frames)
		if err := p.act(fnet, obs, nl, a, logp, values); err != nil {
			return err
		}
		env := make([]float64, nl*shape.Env)
		fnet.EnvActions(a, nl, env)
		for i, r := range live {
			c := r.c
			c.Obs = append(c.Obs, obs[i*obsDim:(i+1)*obsDim]...)
			c.Frames = append(c.Frames, frames[i]...)
			c.Actions = append(c.Actions, a.Tokens[i*shape.Tokens:(i+1)*shape.Tokens]...)
			c.ContActions = append(c.ContActions, a.Continuous[i*shape.Reals:(i+1)*shape.Reals]...)
			c.LogProbs = append(c.LogProbs, logp[i*shape.LogProbs:(i+1)*shape.LogProbs]...)
			c.Values = append(c.Values, values[i])
			c.Versions = append(c.Versions, version)
		}
		// M_obs and the proprio head advance Stride actions at a time (ad values), through
		// the Execute the step runs.
		for x := 0; x < p.set.Execute/m.stride(); x++ {
			past := make([][][]edm.Frame, nl)
			acts := make([][]float64, nl)
			psamples := make([]proprio.Sample, nl)
			for i, r := range live {
				past[i] = r.frames[len(r.frames)-k:]
				acts[i] = env[i*shape.Env+x*ad : i*shape.Env+(x+1)*ad]
				psamples[i] = proprio.Sample{Past: r.prop[len(r.prop)-m.Proprio.Config().History:], Action: acts[i]}
			}
			next := m.Obs.Step(m.EDM, past, acts, p.rng)
			nextProp := m.Proprio.Predict(psamples)
			for i, r := range live {
				r.frames = append(r.frames[len(r.frames)-k+1:], next[i])
				r.prop = append(r.prop[len(r.prop)-k+1:], nextProp[i])
			}
		}
		pNext, pEnd := m.Rew.Predict(cur(live))
		for i, r := range live {
			r.c.Rewards = append(r.c.Rewards, pNext[i]-r.pNow)
			r.pNow = pNext[i]
			if pEnd[i] >= p.set.TermThreshold {
				r.c.Terminated, r.done = true, true
			}
		}
	}
	return nil
}
