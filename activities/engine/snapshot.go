package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/accerl/accerl/kernels"
)

// snapshotFormat versions the Snapshot layout. Format 2 added the policy
// head (Head, ActionDims) and continuous actions in chunks; a format-1
// snapshot (categorical policies only) is still accepted by a categorical
// configuration, whose parameter layout did not change. Format 3 added the
// world model (WorldModel) and chunks' TerminalObs; format-2 snapshots
// are accepted by configurations without a world model.
const snapshotFormat = 3

// Snapshot is everything an Engine needs to continue exactly where it
// stopped: parameters and optimiser state, every environment's state, RNG
// states, episode accumulators and partial chunks, the replay contents, the
// weights the inference service may still act with, and the counters. It is
// plain data and round-trips through encoding/json without loss (float64
// values are written in shortest round-trip form; []byte as base64).
type Snapshot struct {
	// Format is the layout version (currently 2).
	Format int `json:"format"`
	// Env, Mode, Head, ObsDim, NumActions (discrete action spaces),
	// ActionDims (continuous ones) and NumEnvs identify the configuration
	// the snapshot belongs to; New refuses a mismatch (and the parameter
	// count catches a different network).
	Env        string `json:"env"`
	Mode       string `json:"mode"`
	Head       string `json:"head"`
	ObsDim     int    `json:"obs_dim"`
	NumActions int    `json:"num_actions"`
	ActionDims int    `json:"action_dims,omitempty"`
	NumEnvs    int    `json:"num_envs"`

	// Params are the trainer's parameters (policy version PolicyVersion).
	Params []float64 `json:"params"`
	// Adam is the optimiser state.
	Adam AdamState `json:"adam"`
	// PolicyVersion, Updates, EnvSteps and Episodes are the run-wide
	// counters; Updates is also the learner's update counter, which indexes
	// the learning-rate schedule.
	PolicyVersion int64 `json:"policy_version"`
	Updates       int64 `json:"updates"`
	EnvSteps      int64 `json:"env_steps"`
	Episodes      int64 `json:"episodes"`
	// Published are the weight versions the inference service retains
	// (more than the newest one only with Config.Lag > 0), oldest first.
	Published []PublishedParams `json:"published"`
	// TrainerRNG and InferenceRNG are PCG states (rand.PCG.MarshalBinary)
	// of the minibatch shuffler and of async-mode action sampling.
	TrainerRNG   []byte `json:"trainer_rng"`
	InferenceRNG []byte `json:"inference_rng"`
	// Envs holds one entry per environment, by global index.
	Envs []EnvSnapshot `json:"envs"`
	// Replay holds the replay buffer's chunks, oldest first, and
	// ReplayDrops its running drop counters.
	Replay      []*Chunk    `json:"replay"`
	ReplayDrops ReplayDrops `json:"replay_drops"`
	// PendingEpisodes finished after the last report; the next Run reports
	// them first.
	PendingEpisodes []Episode `json:"pending_episodes,omitempty"`
	// WorldModel is the world model's state (model, B_real, B_img, RNG,
	// counters) when Config.WorldModel.Enabled.
	WorldModel *WorldModelSnapshot `json:"world_model,omitempty"`
	// PixelWMRNG is the pixel world model's imagination stream (a PCG state) and
	// PixelImagined its imagined steps so far, with Config.PixelWM.
	PixelWMRNG    []byte `json:"pixel_wm_rng,omitempty"`
	PixelImagined int64  `json:"pixel_imagined,omitempty"`
	// PixelWM is the pixel world model's trained state when it trains online
	// (PixelWMSettings' fit steps); nil otherwise, the pretrained model being where it is.
	PixelWM *PixelWMState `json:"pixel_wm,omitempty"`
}

// AdamState is the serialisable state of kernels.Adam.
type AdamState = kernels.AdamState

// PublishedParams is one weight version retained by the inference service.
type PublishedParams struct {
	Version int64     `json:"version"`
	Params  []float64 `json:"params"`
}

// EnvSnapshot is the state of one environment slot.
type EnvSnapshot struct {
	// State is the environment's MarshalBinary (including its latency
	// sampler's RNG state).
	State []byte `json:"state"`
	// RNG is the slot's PCG state (resets and sync-mode action sampling).
	RNG []byte `json:"rng"`
	// Obs is the current observation, waiting for an action; Frame its frame (FrameEnv).
	Obs   []float64 `json:"obs"`
	Frame []byte    `json:"frame,omitempty"`
	// EpisodeReturn and EpisodeLength accumulate the running episode.
	EpisodeReturn float64 `json:"episode_return"`
	EpisodeLength int     `json:"episode_length"`
	// NextSeq numbers the slot's next chunk.
	NextSeq int64 `json:"next_seq"`
	// Partial is the chunk being filled, if any.
	Partial *Chunk `json:"partial,omitempty"`
	// StartKey identifies the running episode's start; with Config.RepeatStarts, Start and
	// StartObs are the environment's state and observation right after that start's Reset
	// and StartLeft its plays still to come (envSlot).
	StartKey  uint64    `json:"start_key,omitempty"`
	Start     []byte    `json:"start,omitempty"`
	StartObs  []float64 `json:"start_obs,omitempty"`
	StartLeft int       `json:"start_left,omitempty"`
}

// Snapshot captures the engine between runs. It fails while Run is active
// and when a parameter or an optimiser moment is not finite, so that no
// checkpoint ever holds a diverged model.
func (e *Engine) Snapshot() (*Snapshot, error) {
	if e.running.Load() {
		return nil, errors.New("snapshot engine: a run is active")
	}
	tr := e.tr
	opt := tr.learner.Opt
	params := tr.model().Params()
	for _, t := range []struct {
		name string
		v    []float64
	}{{"parameter", params}, {"adam first moment", opt.M}, {"adam second moment", opt.V}} {
		if i := slices.IndexFunc(t.v, notFinite); i >= 0 {
			return nil, fmt.Errorf("snapshot engine: %s %d is %v", t.name, i, t.v[i])
		}
	}
	trRNG, err := tr.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("snapshot engine: trainer rng: %w", err)
	}
	svcRNG, err := e.svcSrc.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("snapshot engine: inference rng: %w", err)
	}
	snap := &Snapshot{
		Format: snapshotFormat,
		Env:    e.cfg.Env, Mode: e.cfg.Mode, Head: e.cfg.Policy.Head,
		ObsDim: e.obsDim, NumActions: e.space.N, ActionDims: e.actionDims(), NumEnvs: len(e.slots),
		Params:        slices.Clone(params),
		Adam:          opt.State(),
		PolicyVersion: tr.version,
		Updates:       tr.updates,
		EnvSteps:      e.envSteps.Load(),
		Episodes:      e.episodes(),
		TrainerRNG:    trRNG,
		InferenceRNG:  svcRNG,
		Replay:        cloneChunks(e.replay.contents()),
		ReplayDrops:   e.replay.Drops(),
	}
	for _, p := range e.svc.published() {
		snap.Published = append(snap.Published, PublishedParams{Version: p.version, Params: p.params})
	}
	if tr.wm != nil {
		if snap.WorldModel, err = tr.wm.snapshot(); err != nil {
			return nil, fmt.Errorf("snapshot engine: %w", err)
		}
	}
	if e.pix != nil {
		if snap.PixelWMRNG, err = e.pix.src.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("snapshot engine: pixel world model rng: %w", err)
		}
		snap.PixelImagined = e.pix.imagined
		if snap.PixelWM, err = e.pix.state(); err != nil {
			return nil, fmt.Errorf("snapshot engine: %w", err)
		}
	}
	e.ro.mu.Lock()
	snap.PendingEpisodes = slices.Clone(e.ro.finished)
	e.ro.mu.Unlock()
	for _, s := range e.slots {
		state, err := s.env.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("snapshot engine: env %d: %w", s.index, err)
		}
		rng, err := s.src.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("snapshot engine: env %d rng: %w", s.index, err)
		}
		es := EnvSnapshot{State: state, RNG: rng, Obs: slices.Clone(s.obs), Frame: slices.Clone(s.frame),
			EpisodeReturn: s.epReturn, EpisodeLength: s.epLen, NextSeq: s.seq,
			StartKey: s.startKey, Start: slices.Clone(s.start), StartObs: slices.Clone(s.startObs), StartLeft: s.startLeft}
		if s.chunk != nil {
			es.Partial = cloneChunks([]*Chunk{s.chunk})[0]
		}
		snap.Envs = append(snap.Envs, es)
	}
	return snap, nil
}

// restore loads snap into a freshly built engine, checking that it fits.
func (e *Engine) restore(snap *Snapshot) error {
	tr := e.tr
	model := tr.model()
	np := model.NumParams()
	head := snap.Head
	if snap.Format == 1 && head == "" {
		head = kernels.HeadCategorical // format 1 knew only the categorical policy
	}
	switch {
	case snap.Format != snapshotFormat && snap.Format != 2 && snap.Format != 1:
		return fmt.Errorf("restore snapshot: format %d, want %d", snap.Format, snapshotFormat)
	case (snap.WorldModel != nil) != (tr.wm != nil):
		return fmt.Errorf("restore snapshot: world model in snapshot %v, in config %v", snap.WorldModel != nil, tr.wm != nil)
	case snap.Env != e.cfg.Env || snap.Mode != e.cfg.Mode || head != e.cfg.Policy.Head:
		return fmt.Errorf("restore snapshot: taken for env %q in %s mode with a %s policy, config has %q in %s mode with a %s policy",
			snap.Env, snap.Mode, head, e.cfg.Env, e.cfg.Mode, e.cfg.Policy.Head)
	case snap.ObsDim != e.obsDim || snap.NumActions != e.space.N || snap.ActionDims != e.actionDims() ||
		snap.NumEnvs != len(e.slots) || len(snap.Envs) != len(e.slots):
		return fmt.Errorf("restore snapshot: %d envs with obs dim %d, %d actions and %d action dims (%d env states), config has %d, %d, %d, %d",
			snap.NumEnvs, snap.ObsDim, snap.NumActions, snap.ActionDims, len(snap.Envs), len(e.slots), e.obsDim, e.space.N, e.actionDims())
	case len(snap.Params) != np || len(snap.Adam.M) != np || len(snap.Adam.V) != np:
		return fmt.Errorf("restore snapshot: %d parameters and %d/%d Adam moments, the configured model has %d",
			len(snap.Params), len(snap.Adam.M), len(snap.Adam.V), np)
	case snap.Updates < 0 || snap.EnvSteps < 0:
		return fmt.Errorf("restore snapshot: negative counters (%d updates, %d env steps)", snap.Updates, snap.EnvSteps)
	}
	if i := slices.IndexFunc(snap.Params, notFinite); i >= 0 {
		return fmt.Errorf("restore snapshot: parameter %d is %v", i, snap.Params[i])
	}
	if b := e.cfg.MaxEnvSteps; b > 0 && snap.EnvSteps > b {
		return fmt.Errorf("restore snapshot: %d env steps already taken, more than the budget of %d", snap.EnvSteps, b)
	}
	held := 0
	for _, c := range snap.Replay {
		if err := e.checkChunk(c, true); err != nil {
			return fmt.Errorf("restore snapshot: replay: %w", err)
		}
		held += c.Len()
	}
	if held > e.replay.capacity {
		return fmt.Errorf("restore snapshot: replay holds %d steps, capacity is %d", held, e.replay.capacity)
	}
	model.SetParams(snap.Params)
	if err := tr.learner.Opt.Restore(snap.Adam); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	tr.version, tr.updates = snap.PolicyVersion, snap.Updates
	tr.learner.Updates = int(snap.Updates)
	if err := tr.src.UnmarshalBinary(snap.TrainerRNG); err != nil {
		return fmt.Errorf("restore snapshot: trainer rng: %w", err)
	}
	if err := e.svcSrc.UnmarshalBinary(snap.InferenceRNG); err != nil {
		return fmt.Errorf("restore snapshot: inference rng: %w", err)
	}
	e.envSteps.Store(snap.EnvSteps)
	e.ro.reserved.Store(snap.EnvSteps)
	e.ro.episodes = snap.Episodes
	e.ro.finished = slices.Clone(snap.PendingEpisodes)

	published := snap.Published
	if len(published) == 0 {
		published = []PublishedParams{{Version: snap.PolicyVersion, Params: snap.Params}}
	}
	for _, p := range published {
		if len(p.Params) != np {
			return fmt.Errorf("restore snapshot: published version %d has %d parameters, want %d", p.Version, len(p.Params), np)
		}
		if i := slices.IndexFunc(p.Params, notFinite); i >= 0 {
			return fmt.Errorf("restore snapshot: published version %d parameter %d is %v", p.Version, i, p.Params[i])
		}
		e.svc.Publish(p.Version, p.Params)
	}
	if tr.wm != nil {
		err := tr.wm.restore(snap.WorldModel, func(c *Chunk) error {
			if c.Env != -1 {
				return fmt.Errorf("imagined chunk (%d, %d) must have env -1", c.Env, c.Seq)
			}
			d := *c
			d.Env = 0 // checkChunk checks the real-env range; the rest applies as is
			return e.checkChunk(&d, true)
		})
		if err != nil {
			return fmt.Errorf("restore snapshot: %w", err)
		}
	}
	if e.pix != nil {
		if snap.PixelWMRNG == nil {
			return errors.New("restore snapshot: the config imagines over pixels, the snapshot has no pixel world model state")
		}
		if err := e.pix.src.UnmarshalBinary(snap.PixelWMRNG); err != nil {
			return fmt.Errorf("restore snapshot: pixel world model rng: %w", err)
		}
		e.pix.imagined = snap.PixelImagined
		if e.pix.set.online() {
			// SetPixelWorldModel adopts it in place of the pretrained model. A snapshot of
			// a run that did not train online yet (none fitted) has none: it starts from the
			// pretrained one.
			e.pix.pending = snap.PixelWM
		}
	}
	e.replay.restore(cloneChunks(snap.Replay), snap.ReplayDrops)
	e.replay.SetVersion(snap.PolicyVersion)

	for i, es := range snap.Envs {
		s := e.slots[i]
		if len(es.Obs) != e.obsDim {
			return fmt.Errorf("restore snapshot: env %d observation has %d values, want %d", i, len(es.Obs), e.obsDim)
		}
		if len(es.Frame) != e.frameBytes {
			return fmt.Errorf("restore snapshot: env %d frame has %d bytes, the environments' frames %d (a checkpoint of a run with other pixels settings?)", i, len(es.Frame), e.frameBytes)
		}
		if err := s.env.UnmarshalBinary(es.State); err != nil {
			return fmt.Errorf("restore snapshot: env %d: %w", i, err)
		}
		if err := s.src.UnmarshalBinary(es.RNG); err != nil {
			return fmt.Errorf("restore snapshot: env %d rng: %w", i, err)
		}
		s.obs = slices.Clone(es.Obs)
		s.frame = slices.Clone(es.Frame)
		s.epReturn, s.epLen, s.seq = es.EpisodeReturn, es.EpisodeLength, es.NextSeq
		if es.StartLeft > 0 && (len(es.Start) == 0 || len(es.StartObs) != e.obsDim) {
			return fmt.Errorf("restore snapshot: env %d has %d plays of its start left but its start holds %d state bytes and %d observation values (want %d)", i, es.StartLeft, len(es.Start), len(es.StartObs), e.obsDim)
		}
		s.startKey, s.start, s.startObs, s.startLeft = es.StartKey, slices.Clone(es.Start), slices.Clone(es.StartObs), es.StartLeft
		s.chunk = nil
		if es.Partial != nil {
			if err := e.checkChunk(es.Partial, false); err != nil {
				return fmt.Errorf("restore snapshot: env %d partial chunk: %w", i, err)
			}
			if es.Partial.Len() >= e.ro.chunkSteps {
				return fmt.Errorf("restore snapshot: env %d partial chunk has %d steps, chunks hold %d", i, es.Partial.Len(), e.ro.chunkSteps)
			}
			s.chunk = cloneChunks([]*Chunk{es.Partial})[0]
		}
	}
	return nil
}

// checkChunk reports a chunk whose slices disagree with each other or with
// the engine's shapes, or whose action tokens are out of range. A complete
// chunk (in replay) that did not terminate needs its next observation; a
// partial one (being filled) has none.
func (e *Engine) checkChunk(c *Chunk, complete bool) error {
	t, a := c.Len(), e.shape
	if t == 0 || len(c.Obs) != t*e.obsDim || len(c.Actions) != t*a.Tokens || len(c.ContActions) != t*a.Reals ||
		len(c.LogProbs) != t*a.LogProbs || len(c.Values) != t || len(c.Rewards) != t {
		return fmt.Errorf("chunk (%d, %d) has inconsistent lengths", c.Env, c.Seq)
	}
	if c.Env < 0 || c.Env >= len(e.slots) {
		return fmt.Errorf("chunk (%d, %d) names env %d of %d", c.Env, c.Seq, c.Env, len(e.slots))
	}
	tokens := e.space.N // categorical: action indices
	if e.cfg.Policy.Head == kernels.HeadTokens {
		tokens = e.tr.model().Config().Bins
	}
	if i := slices.IndexFunc(c.Actions, func(k int) bool { return k < 0 || k >= tokens }); i >= 0 {
		return fmt.Errorf("chunk (%d, %d) has action token %d at %d, outside [0, %d)", c.Env, c.Seq, c.Actions[i], i, tokens)
	}
	wantNext := 0
	if complete && !c.Terminated {
		wantNext = e.obsDim
	}
	if len(c.TerminalObs) != 0 && (!c.Terminated || len(c.TerminalObs) != e.obsDim) {
		return fmt.Errorf("chunk (%d, %d) has %d terminal-observation values (terminated %v)", c.Env, c.Seq, len(c.TerminalObs), c.Terminated)
	}
	if len(c.NextObs) != wantNext || (!complete && (c.Terminated || c.Truncated)) {
		return fmt.Errorf("chunk (%d, %d) has %d next-observation values (terminated %v, truncated %v), want %d",
			c.Env, c.Seq, len(c.NextObs), c.Terminated, c.Truncated, wantNext)
	}
	fb := e.frameBytes
	if len(c.Frames) != t*fb || len(c.NextFrame) != min(len(c.NextObs), 1)*fb || len(c.TerminalFrame) != min(len(c.TerminalObs), 1)*fb {
		return fmt.Errorf("chunk (%d, %d) has %d frame bytes for %d steps (next %d, terminal %d), want %d per step", c.Env, c.Seq,
			len(c.Frames), t, len(c.NextFrame), len(c.TerminalFrame), fb)
	}
	if t > e.replay.capacity {
		return fmt.Errorf("chunk (%d, %d) has %d steps, replay holds %d", c.Env, c.Seq, t, e.replay.capacity)
	}
	return nil
}

// actionDims is the continuous action width (0 for a discrete space).
func (e *Engine) actionDims() int {
	if e.space.N > 0 {
		return 0
	}
	return len(e.space.Low)
}

func notFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

func cloneChunks(cs []*Chunk) []*Chunk {
	out := make([]*Chunk, len(cs))
	for i, c := range cs {
		d := *c
		d.Obs = slices.Clone(c.Obs)
		d.Actions = slices.Clone(c.Actions)
		d.ContActions = slices.Clone(c.ContActions)
		d.LogProbs = slices.Clone(c.LogProbs)
		d.Values = slices.Clone(c.Values)
		d.Rewards = slices.Clone(c.Rewards)
		d.Versions = slices.Clone(c.Versions)
		d.NextObs = slices.Clone(c.NextObs)
		d.TerminalObs = slices.Clone(c.TerminalObs)
		d.Frames = slices.Clone(c.Frames)
		d.NextFrame = slices.Clone(c.NextFrame)
		d.TerminalFrame = slices.Clone(c.TerminalFrame)
		d.Staleness = nil
		out[i] = &d
	}
	return out
}
