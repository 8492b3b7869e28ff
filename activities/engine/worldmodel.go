package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/kernels"
)

// Defaults of WorldModelSettings' zero-valued sizes.
const (
	// DefaultRealCapacity is B_real's size in transitions.
	DefaultRealCapacity = 8192
	// DefaultFitSteps is the number of minibatches of one online fit.
	DefaultFitSteps = 8
	// DefaultFitBatch is the minibatch size of online fits.
	DefaultFitBatch = 256
)

// streamWorldModel is the PCG stream (under Config.Seed) of everything
// random the world model does inside the engine: start states, imagined
// actions and online-fit minibatches. It is separate from the trainer's
// minibatch shuffler so that switching the world model on does not change
// the policy's own random draws.
const streamWorldModel = 4

// WorldModelSettings configure the engine's world model. With Enabled the
// trainer keeps two buffers: B_real, a ring of the most recent real
// transitions (with their history windows) that the world model trains
// and validates on, and B_img, imagined chunks waiting for a batch.
//
// After every update the trainer rolls imagined extensions from start
// states drawn uniformly from B_real, Horizon steps through the world
// model with the current policy (worldmodel.Imagine), and pushes them to
// B_img; each update then takes round(ImaginationRatio · BatchSteps)
// steps of B_img and the rest from real data (worldmodel.MixBatch: real
// data fills any shortfall, never the converse). M_obs trains online on
// B_real every ObsEvery updates, M_rew every RewEvery.
//
// Only real steps count toward the step budget and EnvSteps.
type WorldModelSettings struct {
	// Enabled switches the world model on; every other field is ignored
	// when it is false.
	Enabled bool `json:"enabled"`
	// History is k, the observations M_obs sees; ObsHidden and RewHidden
	// the two models' hidden widths; Activation "tanh" or "relu" ("" is
	// tanh). A pretrained state loaded with LoadWorldModel must have this
	// shape.
	History    int    `json:"history"`
	ObsHidden  []int  `json:"obs_hidden"`
	RewHidden  []int  `json:"rew_hidden"`
	Activation string `json:"activation,omitempty"`
	// ObsLR and RewLR are the online Adam learning rates.
	ObsLR float64 `json:"obs_lr"`
	RewLR float64 `json:"rew_lr"`
	// RewardMode is worldmodel.RewardDirect or worldmodel.RewardSuccessDelta.
	RewardMode string `json:"reward_mode"`
	// ImaginationRatio is the share of each batch's steps that is
	// imagined, in [0, 1).
	ImaginationRatio float64 `json:"imagination_ratio"`
	// ObsEvery and RewEvery are the policy updates between online fits of
	// M_obs and M_rew (>= 1).
	ObsEvery int `json:"obs_every"`
	RewEvery int `json:"rew_every"`
	// Horizon is H, the imagined steps per extension, for this Run; the
	// Run workflow's horizon schedule sets it per segment. >= 1.
	Horizon int `json:"horizon"`
	// RealCapacity is B_real's size in transitions (0: DefaultRealCapacity).
	RealCapacity int `json:"real_capacity,omitempty"`
	// ImgCapacity is B_img's size in steps (0: 4 × BatchSteps); the oldest
	// chunks are evicted first.
	ImgCapacity int `json:"img_capacity,omitempty"`
	// FitSteps and FitBatch size one online fit: FitSteps minibatches of
	// FitBatch transitions drawn uniformly from B_real (0: defaults).
	FitSteps int `json:"fit_steps,omitempty"`
	FitBatch int `json:"fit_batch,omitempty"`
	// TermThreshold is the predicted termination probability that ends an
	// imagined chunk (0: 0.5).
	TermThreshold float64 `json:"term_threshold,omitempty"`
}

func (s WorldModelSettings) withDefaults(batchSteps int) WorldModelSettings {
	if s.RealCapacity == 0 {
		s.RealCapacity = DefaultRealCapacity
	}
	if s.ImgCapacity == 0 {
		s.ImgCapacity = 4 * batchSteps
	}
	if s.FitSteps == 0 {
		s.FitSteps = DefaultFitSteps
	}
	if s.FitBatch == 0 {
		s.FitBatch = DefaultFitBatch
	}
	if s.Activation == "" {
		s.Activation = kernels.ActTanh
	}
	return s
}

func (s WorldModelSettings) validate(batchSteps int) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.RewardMode != worldmodel.RewardDirect && s.RewardMode != worldmodel.RewardSuccessDelta {
		bad("reward mode must be %q or %q, got %q", worldmodel.RewardDirect, worldmodel.RewardSuccessDelta, s.RewardMode)
	}
	if !(s.ImaginationRatio >= 0 && s.ImaginationRatio < 1) {
		bad("imagination ratio must be in [0, 1), got %v", s.ImaginationRatio)
	}
	if s.ObsEvery < 1 || s.RewEvery < 1 || s.Horizon < 1 || s.History < 1 {
		bad("obs_every, rew_every, horizon and history must be at least 1, got %d, %d, %d and %d", s.ObsEvery, s.RewEvery, s.Horizon, s.History)
	}
	if !(s.ObsLR > 0) || !(s.RewLR > 0) {
		bad("world model learning rates must be positive, got %v and %v", s.ObsLR, s.RewLR)
	}
	if s.RealCapacity < 0 || s.ImgCapacity < 0 || s.FitSteps < 0 || s.FitBatch < 0 {
		bad("world model capacities and fit sizes must not be negative")
	}
	if c := s.withDefaults(batchSteps).ImgCapacity; c < imgQuota(s.ImaginationRatio, batchSteps) {
		bad("img capacity %d cannot hold an update's imagined share of %d steps", c, imgQuota(s.ImaginationRatio, batchSteps))
	}
	if !(s.TermThreshold >= 0 && s.TermThreshold < 1) {
		bad("termination threshold must be in [0, 1), got %v", s.TermThreshold)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("world model: %w", err)
	}
	return nil
}

// imgQuota is the imagined steps an update asks for, round(ratio · batch)
// (worldmodel.MixBatch's quota).
func imgQuota(ratio float64, batch int) int { return int(math.Round(ratio * float64(batch))) }

// modelConfig is the world model's shape for an environment.
func (s WorldModelSettings) modelConfig(obsDim int, numActions, actionDims int) worldmodel.ModelConfig {
	mc := worldmodel.ModelConfig{
		ObsDim: obsDim, NumActions: numActions, History: s.History,
		ObsHidden: slices.Clone(s.ObsHidden), RewHidden: slices.Clone(s.RewHidden),
		Activation: s.Activation, RewardMode: s.RewardMode,
	}
	if numActions == 0 {
		mc.ActionDim = actionDims
	}
	return mc
}

// wmEngine is the trainer's world-model side: the model, B_real, B_img,
// the per-environment history tails and the counters. Only the trainer's
// goroutine touches it.
type wmEngine struct {
	set  WorldModelSettings
	d, k int // observation width, history length
	aw   int // values per environment action
	src  *rand.PCG
	rng  *rand.Rand

	model *worldmodel.WorldModel
	// ready is true once the model has been pretrained (LoadWorldModel) or
	// fitted online at least once, with fitted normalisations: before
	// that, imagination would roll an untrained model.
	ready bool

	real  realBuffer
	tails []envTail

	img      []*Chunk // B_img, oldest first
	imgSteps int
	imgSeq   int64

	obsFits, rewFits int64
	imagined         int64 // run-wide imagined steps trained on

	stage   stage // this update's new real transitions, before they join B_real
	lastVal float64
	scratch struct {
		env   []float64
		hist  []float64
		batch kernels.ObsBatch
		rew   kernels.RewardBatch
	}
}

// envTail is what B_real needs to know of one environment's running
// episode: its last k observations (for history windows), the sequence
// number of the chunk that continues it, and (success mode) the B_real ids
// of its transitions, labelled when the episode ends.
type envTail struct {
	Past    []float64 `json:"past"`
	NextSeq int64     `json:"next_seq"`
	Open    []int64   `json:"open,omitempty"`
}

func newWMEngine(set WorldModelSettings, mc worldmodel.ModelConfig, numEnvs int, seed uint64) (*wmEngine, error) {
	model, err := worldmodel.NewWorldModel(mc, set.ObsLR, set.RewLR, seed)
	if err != nil {
		return nil, err
	}
	src := rand.NewPCG(seed, streamWorldModel)
	w := &wmEngine{
		set: set, d: mc.ObsDim, k: mc.History, aw: mc.ActionWidth(),
		src: src, rng: rand.New(src), model: model, tails: make([]envTail, numEnvs),
		lastVal: math.NaN(),
	}
	w.real.init(set.RealCapacity, mc.ObsDim, mc.History, w.aw)
	return w, nil
}

// successMode reports whether M_rew learns episode outcomes.
func (w *wmEngine) successMode() bool { return w.set.RewardMode == worldmodel.RewardSuccessDelta }

// stage holds the transitions of the chunks an update consumed, built
// before they join B_real so that the model can be validated on them
// first: data it has never trained on.
type stage struct {
	hist, act, next []float64
	rew, term       []float64
	env             []int
	ends            []stageEnd
}

// stageEnd records that the transition at index at ended env's episode.
type stageEnd struct {
	env     int
	at      int
	success bool
}

func (s *stage) reset() {
	s.hist, s.act, s.next = s.hist[:0], s.act[:0], s.next[:0]
	s.rew, s.term, s.env, s.ends = s.rew[:0], s.term[:0], s.env[:0], s.ends[:0]
}

func (s *stage) len() int { return len(s.rew) }

// ingest turns the real chunks of an update (sorted by (Env, Seq)) into
// transitions with their history windows, evaluates M_obs on them (the
// validation loss on recent real data; NaN before the model is ready),
// then adds them to B_real. envActions converts a chunk's stored actions
// into the environment's encoding.
func (w *wmEngine) ingest(chunks []*Chunk, envActions func(c *Chunk, out []float64)) {
	st := &w.stage
	st.reset()
	d, k := w.d, w.k
	for _, c := range chunks {
		if c.Env < 0 {
			continue // imagined
		}
		tail := &w.tails[c.Env]
		if c.Seq != tail.NextSeq {
			// A chunk in between was dropped (staleness, capacity): the
			// history before this one is unknown; start afresh.
			tail.Past, tail.Open = tail.Past[:0], tail.Open[:0]
		}
		T := c.Len()
		w.scratch.env = grow(w.scratch.env, T*w.aw)
		envActions(c, w.scratch.env)
		w.scratch.hist = grow(w.scratch.hist, k*d)
		for t := range T {
			tail.Past = append(tail.Past, c.Obs[t*d:(t+1)*d]...)
			if n := len(tail.Past) / d; n > k {
				tail.Past = append(tail.Past[:0], tail.Past[(n-k)*d:]...)
			}
			var next []float64
			switch {
			case t+1 < T:
				next = c.Obs[(t+1)*d : (t+2)*d]
			case len(c.NextObs) == d:
				next = c.NextObs
			case len(c.TerminalObs) == d:
				next = c.TerminalObs
			default:
				continue // a terminal step recorded without its final observation
			}
			worldmodel.FillHistory(w.scratch.hist, tail.Past, d, k)
			st.hist = append(st.hist, w.scratch.hist...)
			st.act = append(st.act, w.scratch.env[t*w.aw:(t+1)*w.aw]...)
			st.next = append(st.next, next...)
			st.rew = append(st.rew, c.Rewards[t])
			term := 0.0
			if c.Terminated && t == T-1 {
				term = 1
			}
			st.term = append(st.term, term)
			st.env = append(st.env, c.Env)
		}
		tail.NextSeq = c.Seq + 1
		if c.Terminated || c.Truncated {
			st.ends = append(st.ends, stageEnd{env: c.Env, at: st.len() - 1, success: c.Success})
			tail.Past = tail.Past[:0]
		}
	}
	w.lastVal = math.NaN()
	if n := st.len(); n > 0 && w.ready {
		w.lastVal = w.model.Obs().Loss(kernels.ObsBatch{N: n, Hist: st.hist, Action: st.act, Next: st.next})
	}
	w.commit()
}

// commit moves the staged transitions into B_real and labels finished
// episodes (success mode).
func (w *wmEngine) commit() {
	st := &w.stage
	e := 0
	for i := range st.len() {
		label := -1.0
		if !w.successMode() {
			label = st.rew[i]
		}
		id := w.real.add(st.hist[i*w.k*w.d:(i+1)*w.k*w.d], st.act[i*w.aw:(i+1)*w.aw], st.next[i*w.d:(i+1)*w.d], label, st.term[i])
		tail := &w.tails[st.env[i]]
		if w.successMode() {
			tail.Open = append(tail.Open, id)
		}
		for e < len(st.ends) && st.ends[e].at <= i {
			end := st.ends[e]
			t := &w.tails[end.env]
			if w.successMode() {
				v := 0.0
				if end.success {
					v = 1
				}
				for _, id := range t.Open {
					w.real.setLabel(id, v)
				}
			}
			t.Open = t.Open[:0]
			e++
		}
	}
	for ; e < len(st.ends); e++ {
		// An episode whose last transition could not be staged: nothing of
		// it is open any more either way.
		w.tails[st.ends[e].env].Open = w.tails[st.ends[e].env].Open[:0]
	}
}

// fit runs the online fits due at run-wide update number u: M_obs every
// ObsEvery updates, M_rew every RewEvery, and both at once the first time
// B_real holds a minibatch when the model has not been pretrained (whose
// normalisations are then fitted on B_real).
func (w *wmEngine) fit(u int64) error {
	held := w.real.held()
	if held < min(w.set.FitBatch, w.real.capacity) {
		return nil
	}
	first := !w.ready
	if first {
		w.fitNormalization()
	}
	if first || u%int64(w.set.ObsEvery) == 0 {
		for range w.set.FitSteps {
			if _, err := w.model.ObsLearner.Fit(w.obsBatch()); err != nil {
				return fmt.Errorf("world model: online fit of the observation model: %w", err)
			}
		}
		w.obsFits++
	}
	if first || u%int64(w.set.RewEvery) == 0 {
		for range w.set.FitSteps {
			b, ok := w.rewBatch()
			if !ok {
				break // success mode: no finished episode in B_real yet
			}
			if _, err := w.model.RewLearner.Fit(b); err != nil {
				return fmt.Errorf("world model: online fit of the reward model: %w", err)
			}
		}
		w.rewFits++
	}
	w.ready = true
	return nil
}

// fitNormalization fits the three normalisations on B_real (a model that
// was not pretrained starts with identities).
func (w *wmEngine) fitNormalization() {
	d, k, n := w.d, w.k, w.real.held()
	obs := make([]float64, 0, n*d)
	delta := make([]float64, 0, n*d)
	next := make([]float64, 0, n*d)
	for i := range n {
		h, nx := w.real.histAt(i), w.real.nextAt(i)
		o := h[(k-1)*d:]
		obs = append(obs, o...)
		next = append(next, nx...)
		for j := range d {
			delta = append(delta, nx[j]-o[j])
		}
	}
	w.model.Obs().SetNormalization(kernels.FitNormalization(obs, n, d), kernels.FitNormalization(delta, n, d))
	w.model.Rew().SetNormalization(kernels.FitNormalization(next, n, d))
}

// obsBatch draws FitBatch transitions of B_real uniformly with replacement.
func (w *wmEngine) obsBatch() kernels.ObsBatch {
	d, k, aw := w.d, w.k, w.aw
	n := w.set.FitBatch
	b := &w.scratch.batch
	b.N = n
	b.Hist, b.Action, b.Next = grow(b.Hist, n*k*d), grow(b.Action, n*aw), grow(b.Next, n*d)
	held := w.real.held()
	for i := range n {
		j := w.rng.IntN(held)
		copy(b.Hist[i*k*d:(i+1)*k*d], w.real.histAt(j))
		copy(b.Action[i*aw:(i+1)*aw], w.real.actAt(j))
		copy(b.Next[i*d:(i+1)*d], w.real.nextAt(j))
	}
	return *b
}

// rewBatch draws FitBatch labelled transitions of B_real (every one in
// direct mode; those of finished episodes in success mode). ok is false
// when B_real has none.
func (w *wmEngine) rewBatch() (kernels.RewardBatch, bool) {
	d := w.d
	n := w.set.FitBatch
	held := w.real.held()
	b := &w.scratch.rew
	b.N = n
	b.Obs, b.Target, b.Terminated = grow(b.Obs, n*d), grow(b.Target, n), grow(b.Terminated, n)
	for i := range n {
		j, ok := -1, false
		// Rejection sampling over unlabelled rows (running episodes in
		// success mode); bounded so that a buffer of open episodes ends it.
		for range 64 {
			j = w.rng.IntN(held)
			if w.real.labelAt(j) >= 0 {
				ok = true
				break
			}
		}
		if !ok {
			return *b, false
		}
		copy(b.Obs[i*d:(i+1)*d], w.real.nextAt(j))
		b.Target[i] = w.real.labelAt(j)
		b.Terminated[i] = w.real.termAt(j)
	}
	return *b, true
}

// takeImagined removes from B_img the chunks of this update's imagined
// share (worldmodel.MixBatch with the imagination ratio, oldest first) and
// returns them with the real steps the update still needs: BatchSteps
// minus the imagined steps, up to the quota (real data fills a shortfall).
func (w *wmEngine) takeImagined(batch int) (img []*Chunk, realQuota int) {
	mix, _ := worldmodel.MixBatch([]*Chunk(nil), w.img, w.set.ImaginationRatio, batch)
	n := len(mix.Img)
	img = mix.Img
	w.img = slices.Clone(w.img[n:])
	w.imgSteps -= mix.ImgSteps
	q := imgQuota(w.set.ImaginationRatio, batch)
	return img, max(1, batch-min(q, mix.ImgSteps))
}

// pushImagined appends chunks to B_img, evicting the oldest beyond its
// capacity.
func (w *wmEngine) pushImagined(chunks []*Chunk) {
	for _, c := range chunks {
		w.img = append(w.img, c)
		w.imgSteps += c.Len()
	}
	for w.imgSteps > w.set.ImgCapacity && len(w.img) > 0 {
		w.imgSteps -= w.img[0].Len()
		w.img = w.img[1:]
	}
}
