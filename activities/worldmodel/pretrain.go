package worldmodel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels"
)

// DefaultBatchSize is PretrainConfig.BatchSize's value when it is 0.
const DefaultBatchSize = 256

// PretrainConfig sets up offline pretraining of both models.
type PretrainConfig struct {
	History    int     // k, observations in M_obs's input, >= 1
	ObsHidden  []int   // M_obs hidden widths
	RewHidden  []int   // M_rew hidden widths
	Activation string  // "tanh" or "relu"; "" means "tanh"
	ObsLR      float64 // M_obs Adam learning rate, > 0
	RewLR      float64 // M_rew Adam learning rate, > 0
	RewardMode string  // RewardDirect or RewardSuccessDelta
	// Epochs is the number of passes over the training rows; used when
	// Steps is 0. >= 0.
	Epochs int
	// Steps, when > 0, is the total number of minibatch steps instead.
	Steps int
	// BatchSize is the minibatch size; 0 means DefaultBatchSize.
	BatchSize int
	// ValFraction is the share of episodes held out for validation, in
	// [0, 1). With a positive value at least one episode is held out
	// (and at least one kept for training).
	ValFraction float64
	// Seed drives initialisation, the split and the minibatch order.
	Seed uint64
	// EvalEvery is the number of steps between progress reports (each with
	// a full validation pass); 0 means once per epoch. The last step always
	// reports.
	EvalEvery int
}

// Validate reports a config Pretrain cannot run.
func (c PretrainConfig) Validate() error {
	var errs []error
	if c.RewardMode != RewardDirect && c.RewardMode != RewardSuccessDelta {
		errs = append(errs, fmt.Errorf("unknown reward mode %q (want %q or %q)", c.RewardMode, RewardDirect, RewardSuccessDelta))
	}
	if !(c.ObsLR > 0) || !(c.RewLR > 0) || math.IsInf(c.ObsLR, 0) || math.IsInf(c.RewLR, 0) {
		errs = append(errs, fmt.Errorf("learning rates must be positive and finite, got %v and %v", c.ObsLR, c.RewLR))
	}
	if c.Epochs < 0 || c.Steps < 0 || c.Epochs == 0 && c.Steps == 0 {
		errs = append(errs, fmt.Errorf("epochs and steps must not be negative and one must be positive, got %d and %d", c.Epochs, c.Steps))
	}
	if c.BatchSize < 0 || c.EvalEvery < 0 {
		errs = append(errs, fmt.Errorf("batch size and eval interval must not be negative, got %d and %d", c.BatchSize, c.EvalEvery))
	}
	if !(c.ValFraction >= 0 && c.ValFraction < 1) {
		errs = append(errs, fmt.Errorf("validation fraction must be in [0, 1), got %v", c.ValFraction))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pretrain config: %w", err)
	}
	return nil
}

// modelConfig derives the model shape from the config and the dataset.
func (c PretrainConfig) modelConfig(ds *Dataset) ModelConfig {
	act := c.Activation
	if act == "" {
		act = kernels.ActTanh
	}
	m := ModelConfig{
		ObsDim: ds.Info.ObsDim, NumActions: ds.Info.NumActions, History: c.History,
		ObsHidden: slices.Clone(c.ObsHidden), RewHidden: slices.Clone(c.RewHidden),
		Activation: act, RewardMode: c.RewardMode,
	}
	if m.NumActions == 0 {
		m.ActionDim = ds.Info.ActionDims
	}
	return m
}

// PretrainProgress is reported every EvalEvery steps and after the last
// step. Losses are means over the steps since the previous report (train)
// or over every validation row (val); NaN where there is nothing to
// average.
type PretrainProgress struct {
	Step         int     `json:"step"`  // completed steps
	Total        int     `json:"total"` // steps Pretrain will run in all
	Epoch        float64 `json:"epoch"` // Step / StepsPerEpoch
	TrainObsLoss float64 `json:"train_obs_loss"`
	TrainRewLoss float64 `json:"train_rew_loss"` // reward + termination terms
	ValObsLoss   float64 `json:"val_obs_loss"`   // normalised-delta MSE: the horizon schedule's input
	ValRewLoss   float64 `json:"val_rew_loss"`
	// Snapshot returns the state after Step, e.g. to write a checkpoint
	// from the progress callback. Valid only during the callback.
	Snapshot func() *WMState `json:"-"`
}

// PretrainStats summarises a Pretrain call.
type PretrainStats struct {
	TrainEpisodes, ValEpisodes int
	TrainRows, ValRows         int
	StepsPerEpoch              int
	Steps                      int // completed steps, counting those before a resume
	ResumedFrom                int // Step of the resume state, 0 for a fresh start
	// ValObsNoChange is the validation loss (normalised units) of
	// predicting "no change", ô_{t+1} = o_t: the bar the model must beat.
	ValObsNoChange float64
	Final          PretrainProgress // the last report
}

// Pretrain trains a world model on the offline dataset ds: both models
// take one Adam step per minibatch of training rows (M_obs on (history,
// a_t) → o_{t+1}, M_rew on o_{t+1} → reward or success label, and
// termination).
//
// Episodes are split once into training and validation sets by a
// permutation drawn from (Seed, streamSplit), so no episode contributes to
// both. On a fresh start (resume == nil) the model is initialised from
// Seed and the normalisations are fitted on the training rows (inputs: the
// rows' o_t; deltas: o_{t+1} − o_t; reward-model inputs: o_{t+1}). Each
// epoch visits the training rows in a permutation drawn from the sampler
// RNG, in minibatches of BatchSize (the last one smaller).
//
// With resume, training continues from resume.Step with the saved
// parameters, Adam states, normalisations and sampler state, and its
// result is bit-for-bit the result of an uninterrupted call. The resume
// state must come from the same dataset and config; a different model
// shape or epoch length is an error. A state already at or past the total
// step count is returned as is.
//
// progress, when not nil, is called every EvalEvery steps (default: each
// epoch) and after the last step. A cancelled ctx stops training between
// steps; Pretrain then returns the state reached so far with ctx's error,
// and that state resumes exactly. A numerical error (a non-finite loss,
// gradient or parameter; the learners refuse the step) also returns the
// state with the error, for diagnosis: if M_rew failed, M_obs has already
// taken that step, so it is not an exact resume point.
func Pretrain(ctx context.Context, ds *Dataset, cfg PretrainConfig, resume *WMState, progress func(PretrainProgress)) (*WMState, PretrainStats, error) {
	p, err := newPretrainer(ds, cfg, resume)
	if err != nil {
		return nil, PretrainStats{}, fmt.Errorf("pretrain world model: %w", err)
	}
	state, err := p.run(ctx, progress)
	if err != nil {
		return state, p.stats, fmt.Errorf("pretrain world model: %w", err)
	}
	return state, p.stats, nil
}

// pretrainer is the state of one Pretrain call.
type pretrainer struct {
	cfg          PretrainConfig
	wm           *WorldModel
	train, val   []int // row indices
	b            batcher
	rng          *rand.Rand
	pcg          *rand.PCG
	epochRNG     []byte // sampler state at the start of the current epoch
	perm         []int
	step, total  int
	perEpoch     int
	stats        PretrainStats
	sumObs, sumR float64
	nSum         int
}

func newPretrainer(ds *Dataset, cfg PretrainConfig, resume *WMState) (*pretrainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if ds.Len() == 0 {
		return nil, errors.New("dataset is empty")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	mc := cfg.modelConfig(ds)
	if err := mc.Validate(); err != nil {
		return nil, err
	}
	p := &pretrainer{cfg: cfg, b: batcher{ds: ds, k: cfg.History}}
	if cfg.RewardMode == RewardSuccessDelta {
		labels, err := successLabels(ds)
		if err != nil {
			return nil, err
		}
		p.b.success = labels
	}
	p.split(ds)
	p.perEpoch = (len(p.train) + cfg.BatchSize - 1) / cfg.BatchSize
	p.total = cfg.Steps
	if p.total == 0 {
		p.total = cfg.Epochs * p.perEpoch
	}
	p.stats.StepsPerEpoch = p.perEpoch
	p.pcg = rand.NewPCG(cfg.Seed, streamSample)
	p.rng = rand.New(p.pcg)

	if resume == nil {
		wm, err := NewWorldModel(mc, cfg.ObsLR, cfg.RewLR, cfg.Seed)
		if err != nil {
			return nil, err
		}
		p.fitNormalization(wm, ds)
		p.wm = wm
		p.epochRNG, _ = p.pcg.MarshalBinary()
	} else {
		if !sameShape(resume.Config, mc) {
			return nil, fmt.Errorf("resume state has model config %+v, this run builds %+v", resume.Config, mc)
		}
		if resume.StepsPerEpoch != p.perEpoch {
			return nil, fmt.Errorf("resume state has %d steps per epoch, this dataset and batch size give %d", resume.StepsPerEpoch, p.perEpoch)
		}
		wm, err := Restore(resume)
		if err != nil {
			return nil, err
		}
		// The learning rates come from cfg: a resumed run may change them.
		wm.ObsLearner.Opt.LR, wm.RewLearner.Opt.LR = cfg.ObsLR, cfg.RewLR
		if err := p.pcg.UnmarshalBinary(resume.RNG); err != nil {
			return nil, fmt.Errorf("resume state's sampler: %w", err)
		}
		p.wm = wm
		p.step = resume.Step
		p.stats.ResumedFrom = resume.Step
		p.epochRNG = slices.Clone(resume.RNG)
		if p.step%p.perEpoch != 0 && p.step < p.total {
			// Mid-epoch: draw the epoch's permutation again from its start state.
			p.perm = p.shuffle()
		}
	}
	p.stats.ValObsNoChange = p.noChangeLoss(ds)
	return p, nil
}

// split assigns whole episodes to training and validation.
func (p *pretrainer) split(ds *Dataset) {
	var episodes []int64
	for i := 0; i < ds.Len(); i++ {
		if i == 0 || ds.Episode[i] != ds.Episode[i-1] {
			episodes = append(episodes, ds.Episode[i])
		}
	}
	rng := rand.New(rand.NewPCG(p.cfg.Seed, streamSplit))
	rng.Shuffle(len(episodes), func(i, j int) { episodes[i], episodes[j] = episodes[j], episodes[i] })
	nVal := int(math.Round(p.cfg.ValFraction * float64(len(episodes))))
	if p.cfg.ValFraction > 0 {
		nVal = min(max(nVal, 1), len(episodes)-1)
	}
	val := map[int64]bool{}
	for _, e := range episodes[:max(nVal, 0)] {
		val[e] = true
	}
	for i := 0; i < ds.Len(); i++ {
		if val[ds.Episode[i]] {
			p.val = append(p.val, i)
		} else {
			p.train = append(p.train, i)
		}
	}
	p.stats.ValEpisodes = len(val)
	p.stats.TrainEpisodes = len(episodes) - len(val)
	p.stats.TrainRows, p.stats.ValRows = len(p.train), len(p.val)
}

// fitNormalization fits the three normalisations on the training rows.
func (p *pretrainer) fitNormalization(wm *WorldModel, ds *Dataset) {
	d, n := ds.Info.ObsDim, len(p.train)
	obs := make([]float64, 0, n*d)
	next := make([]float64, 0, n*d)
	delta := make([]float64, 0, n*d)
	for _, r := range p.train {
		o, nx := ds.Obs[r*d:(r+1)*d], ds.NextObs[r*d:(r+1)*d]
		obs = append(obs, o...)
		next = append(next, nx...)
		for j := range o {
			delta = append(delta, nx[j]-o[j])
		}
	}
	wm.Obs().SetNormalization(kernels.FitNormalization(obs, n, d), kernels.FitNormalization(delta, n, d))
	wm.Rew().SetNormalization(kernels.FitNormalization(next, n, d))
}

// noChangeLoss is the validation loss of ŷ = −μ_Δ/σ_Δ (ô_{t+1} = o_t).
func (p *pretrainer) noChangeLoss(ds *Dataset) float64 {
	if len(p.val) == 0 {
		return math.NaN()
	}
	d := ds.Info.ObsDim
	_, dn := p.wm.Obs().Normalization()
	s := 0.0
	for _, r := range p.val {
		for j := 0; j < d; j++ {
			z := (ds.NextObs[r*d+j] - ds.Obs[r*d+j]) / dn.Std[j]
			s += z * z
		}
	}
	return s / float64(len(p.val)*d)
}

func (p *pretrainer) shuffle() []int {
	perm := slices.Clone(p.train)
	p.rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	return perm
}

func (p *pretrainer) run(ctx context.Context, progress func(PretrainProgress)) (*WMState, error) {
	every := p.cfg.EvalEvery
	if every == 0 {
		every = p.perEpoch
	}
	bs := p.cfg.BatchSize
	if p.step >= p.total {
		// The resume state is already complete: report its validation
		// losses and return it unchanged.
		p.report(nil)
		return p.snapshot(), nil
	}
	for p.step < p.total {
		if err := ctx.Err(); err != nil {
			return p.snapshot(), err
		}
		pos := p.step % p.perEpoch
		if pos == 0 {
			p.epochRNG, _ = p.pcg.MarshalBinary()
			p.perm = p.shuffle()
		}
		idx := p.perm[pos*bs : min((pos+1)*bs, len(p.perm))]
		lo, err := p.wm.ObsLearner.Fit(p.b.obsBatch(idx))
		if err != nil {
			return p.snapshot(), fmt.Errorf("step %d: %w", p.step, err)
		}
		lr, err := p.wm.RewLearner.Fit(p.b.rewBatch(idx))
		if err != nil {
			return p.snapshot(), fmt.Errorf("step %d: %w", p.step, err)
		}
		p.step++
		p.stats.Steps = p.step
		p.sumObs += lo
		p.sumR += lr.Total
		p.nSum++
		if p.step%every == 0 || p.step == p.total {
			p.report(progress)
		}
	}
	return p.snapshot(), nil
}

// report evaluates the validation losses and calls progress.
func (p *pretrainer) report(progress func(PretrainProgress)) {
	pr := PretrainProgress{
		Step: p.step, Total: p.total, Epoch: float64(p.step) / float64(p.perEpoch),
		TrainObsLoss: math.NaN(), TrainRewLoss: math.NaN(),
		ValObsLoss: math.NaN(), ValRewLoss: math.NaN(),
	}
	if p.nSum > 0 {
		pr.TrainObsLoss = p.sumObs / float64(p.nSum)
		pr.TrainRewLoss = p.sumR / float64(p.nSum)
	}
	p.sumObs, p.sumR, p.nSum = 0, 0, 0
	pr.ValObsLoss, pr.ValRewLoss = p.validate()
	p.stats.Steps = p.step
	p.stats.Final = pr
	if progress != nil {
		pr.Snapshot = p.snapshot
		progress(pr)
	}
}

// validate returns the mean losses over all validation rows, evaluated in
// chunks (NaN, NaN without validation rows).
func (p *pretrainer) validate() (obs, rew float64) {
	if len(p.val) == 0 {
		return math.NaN(), math.NaN()
	}
	const chunk = 4096
	for lo := 0; lo < len(p.val); lo += chunk {
		idx := p.val[lo:min(lo+chunk, len(p.val))]
		w := float64(len(idx))
		obs += w * p.wm.Obs().Loss(p.b.obsBatch(idx))
		rew += w * p.wm.Rew().Loss(p.b.rewBatch(idx)).Total
	}
	n := float64(len(p.val))
	return obs / n, rew / n
}

// snapshot is the state after p.step steps.
func (p *pretrainer) snapshot() *WMState {
	s := p.wm.State()
	s.Step = p.step
	s.StepsPerEpoch = p.perEpoch
	if p.step%p.perEpoch == 0 {
		// The next epoch has not started: its permutation comes from the
		// sampler as it is now.
		s.RNG, _ = p.pcg.MarshalBinary()
	} else {
		s.RNG = slices.Clone(p.epochRNG)
	}
	return s
}
