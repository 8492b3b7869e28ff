package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/accerl/accerl/activities/worldmodel"
)

// WorldModelSnapshot is the world model's part of a Snapshot: the model
// and its optimisers, B_real, B_img, the per-environment episode tails, the
// RNG state and the counters. Restoring it continues bit-exactly.
type WorldModelSnapshot struct {
	// Model holds both models' parameters, normalisations and Adam states.
	Model *worldmodel.WMState `json:"model"`
	// Ready says the model has been pretrained or fitted online.
	Ready bool `json:"ready"`
	// RNG is the world model's PCG state (start states, imagined actions,
	// online-fit minibatches).
	RNG []byte `json:"rng"`
	// RealTotal counts the real transitions ever added to B_real;
	// RealHist, RealAct, RealNext, RealLabel and RealTerm are B_real's ring
	// positions [0, held), row-major.
	RealTotal int64     `json:"real_total"`
	RealHist  []float64 `json:"real_hist"`
	RealAct   []float64 `json:"real_act"`
	RealNext  []float64 `json:"real_next"`
	RealLabel []float64 `json:"real_label"`
	RealTerm  []float64 `json:"real_term"`
	// Tails are the environments' running episodes as B_real sees them.
	Tails []WMEnvTail `json:"tails"`
	// Img is B_img, oldest first; ImgSeq numbers the next imagined chunk.
	Img    []*Chunk `json:"img"`
	ImgSeq int64    `json:"img_seq"`
	// ObsFits and RewFits count online fits; Imagined the imagined steps
	// trained on.
	ObsFits  int64 `json:"obs_fits"`
	RewFits  int64 `json:"rew_fits"`
	Imagined int64 `json:"imagined"`
}

// WMEnvTail is one environment's running episode as B_real sees it: its
// last History observations, the sequence number of the chunk that
// continues it, and (success mode) the ids of its transitions in B_real,
// labelled once the episode ends.
type WMEnvTail = envTail

func (w *wmEngine) snapshot() (*WorldModelSnapshot, error) {
	rng, err := w.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("world model rng: %w", err)
	}
	r := &w.real
	n := r.held()
	s := &WorldModelSnapshot{
		Model: w.model.State(), Ready: w.ready, RNG: rng,
		RealTotal: r.total,
		RealHist:  slices.Clone(r.hist[:n*r.k*r.d]),
		RealAct:   slices.Clone(r.act[:n*r.aw]),
		RealNext:  slices.Clone(r.next[:n*r.d]),
		RealLabel: slices.Clone(r.label[:n]),
		RealTerm:  slices.Clone(r.term[:n]),
		Img:       cloneChunks(w.img),
		ImgSeq:    w.imgSeq,
		ObsFits:   w.obsFits, RewFits: w.rewFits, Imagined: w.imagined,
	}
	for _, t := range w.tails {
		s.Tails = append(s.Tails, envTail{Past: slices.Clone(t.Past), NextSeq: t.NextSeq, Open: slices.Clone(t.Open)})
	}
	for _, v := range [][]float64{s.Model.ObsParams, s.Model.RewParams, s.RealHist, s.RealNext} {
		if i := slices.IndexFunc(v, notFinite); i >= 0 {
			return nil, fmt.Errorf("world model value %d is %v", i, v[i])
		}
	}
	return s, nil
}

// restore loads s into a freshly built wmEngine.
func (w *wmEngine) restore(s *WorldModelSnapshot, checkImg func(*Chunk) error) error {
	if s.Model == nil {
		return errors.New("world model state missing")
	}
	if err := w.load(s.Model); err != nil {
		return err
	}
	r := &w.real
	n := int(min(s.RealTotal, int64(r.capacity)))
	if s.RealTotal < 0 || len(s.RealHist) != n*r.k*r.d || len(s.RealAct) != n*r.aw || len(s.RealNext) != n*r.d ||
		len(s.RealLabel) != n || len(s.RealTerm) != n {
		return fmt.Errorf("B_real holds %d transitions in %d/%d/%d/%d/%d values, capacity %d wants %d",
			s.RealTotal, len(s.RealHist), len(s.RealAct), len(s.RealNext), len(s.RealLabel), len(s.RealTerm), r.capacity, n)
	}
	if len(s.Tails) != len(w.tails) {
		return fmt.Errorf("%d environment tails, want %d", len(s.Tails), len(w.tails))
	}
	if err := w.src.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("world model rng: %w", err)
	}
	copy(r.hist, s.RealHist)
	copy(r.act, s.RealAct)
	copy(r.next, s.RealNext)
	copy(r.label, s.RealLabel)
	copy(r.term, s.RealTerm)
	r.total = s.RealTotal
	for i, t := range s.Tails {
		if len(t.Past)%w.d != 0 || len(t.Past) > w.k*w.d {
			return fmt.Errorf("environment %d tail has %d values", i, len(t.Past))
		}
		w.tails[i] = envTail{Past: slices.Clone(t.Past), NextSeq: t.NextSeq, Open: slices.Clone(t.Open)}
	}
	w.img, w.imgSteps = nil, 0
	for _, c := range s.Img {
		if err := checkImg(c); err != nil {
			return fmt.Errorf("B_img: %w", err)
		}
	}
	w.pushImagined(cloneChunks(s.Img))
	w.imgSeq, w.ready = s.ImgSeq, s.Ready
	w.obsFits, w.rewFits, w.imagined = s.ObsFits, s.RewFits, s.Imagined
	return nil
}

// load replaces the model with a saved state of the same shape, keeping
// the configured online learning rates.
func (w *wmEngine) load(s *worldmodel.WMState) error {
	m, err := worldmodel.Restore(s)
	if err != nil {
		return err
	}
	want, got := w.model.Config, m.Config
	if got.ObsDim != want.ObsDim || got.NumActions != want.NumActions || got.ActionWidth() != want.ActionWidth() ||
		got.History != want.History || !slices.Equal(got.ObsHidden, want.ObsHidden) || !slices.Equal(got.RewHidden, want.RewHidden) ||
		got.Activation != want.Activation || got.RewardMode != want.RewardMode {
		return fmt.Errorf("world model state has config %+v, the engine's settings build %+v", got, want)
	}
	m.ObsLearner.Opt.LR, m.RewLearner.Opt.LR = w.set.ObsLR, w.set.RewLR
	w.model = m
	return nil
}

// LoadWorldModel replaces the engine's world model with a pretrained state
// (worldmodel.Pretrain's result) of the configured shape, keeping the
// configured online learning rates, and marks it ready for imagination.
// Call it on a fresh engine, before the first Run; a resumed engine
// carries its world model in the Snapshot.
func (e *Engine) LoadWorldModel(s *worldmodel.WMState) error {
	if e.tr.wm == nil {
		return errors.New("load world model: the engine's world model is not enabled")
	}
	if e.running.Load() {
		return errors.New("load world model: a run is active")
	}
	if err := e.tr.wm.load(s); err != nil {
		return fmt.Errorf("load world model: %w", err)
	}
	e.tr.wm.ready = true
	return nil
}

// WorldModelState returns a copy of the world model's parameters,
// normalisations and optimiser states, or nil without a world model.
func (e *Engine) WorldModelState() *worldmodel.WMState {
	if e.tr.wm == nil {
		return nil
	}
	return e.tr.wm.model.State()
}

// SetHorizon changes the imagination horizon H for the following Runs (the
// Run workflow's schedule moves it between segments; an engine kept in
// memory across segments, as the benchmarks do, takes it here instead of
// through a new Config). It must not be called during a Run.
func (e *Engine) SetHorizon(h int) error {
	switch {
	case e.tr.wm == nil:
		return errors.New("set horizon: the engine's world model is not enabled")
	case h < 1:
		return fmt.Errorf("set horizon: horizon must be at least 1, got %d", h)
	case e.running.Load():
		return errors.New("set horizon: a run is active")
	}
	e.cfg.WorldModel.Horizon = h
	e.tr.wm.set.Horizon = h
	return nil
}
