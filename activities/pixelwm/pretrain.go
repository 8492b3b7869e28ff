package pixelwm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// PretrainConfig is the durable pretraining of the pixel world model that
// `accerl run` does (activities.PretrainWorldModel with a world_model
// pixels block): M_obs, then M_rew, then the proprio head, each for a
// number of steps, with a checkpoint every so many steps of each, and the
// models scored on the held-out episodes at the end.
type PretrainConfig struct {
	Obs edm.Config
	// EDM are M_obs's diffusion settings; with Residual, SigmaData 0 takes the
	// standard deviation of the training transitions' frame change
	// (ChangeStd), which the trainer's checkpoint then carries.
	EDM          edm.EDM
	ObsTrain     edm.TrainConfig
	Rew          reward.Config
	RewTrain     reward.TrainConfig
	Proprio      proprio.Config
	ProprioTrain proprio.TrainConfig
	// ObsSteps, RewSteps and ProprioSteps are the three models' steps (each ≥ 1).
	ObsSteps, RewSteps, ProprioSteps int
	// HeldEvery holds out one episode in HeldEvery of every task (Split; ≥ 2).
	HeldEvery int
	// Horizon and Start place the scoring rollouts (EvaluateImagination).
	Horizon, Start int
	// Seed drives the scoring rollouts' sampling noise.
	Seed uint64
	// RewImagined, when > 0, also trains M_rew on this many M_obs-imagined endings of
	// Horizon policy steps per training episode (ImaginedRewardExamples, drawn by the
	// pretrained M_obs when the M_rew phase begins, each frame labelled as the real one it
	// stands for), so that M_rew judges frames as M_obs draws them. 0: real frames only.
	RewImagined int
	// RewCounterfactual, when > 0, also trains M_rew on this many imagined endings of
	// Horizon policy steps per training episode driven by another training episode's
	// ending actions, each frame labelled with what the simulator says those actions did
	// (CounterfactualRewardExamples, drawn when the M_rew phase begins); Collect must then
	// be the input that collected the episodes, for the replays.
	RewCounterfactual int
	// RewCounterfactualJitter, when > 0, drives those endings by the episode's own ending
	// actions with Gaussian noise of this standard deviation instead (jitterActions).
	RewCounterfactualJitter float64
	Collect                 CollectInput
	// Stride is the environment actions per policy step (a policy with action chunks
	// executes execute_steps of each): M_obs and the proprio head learn one prediction per
	// policy step from the Strided episodes, with Obs.ActionDim and Proprio.ActionDim the
	// stride actions' values together; M_rew reads single frames and trains on every one.
	// Horizon and Start count policy steps. 0 or 1: one action per step.
	Stride int
}

// stride is Stride with 0 read as 1.
func (c PretrainConfig) stride() int { return max(1, c.Stride) }

// resumed is c adjusted to a checkpoint made with another stride (by a build whose default
// differed): the checkpointed M_obs's action width says which, and the rest of the
// pretraining keeps to it, so that a resumed pretraining ends as the interrupted one would
// have. c itself when st has no M_obs or the same width. The checkpointed M_obs trainer,
// decoded once for this, is returned too (nil when st has none) for restoreObs.
func (c PretrainConfig) resumed(st *PretrainState) (PretrainConfig, *edm.Trainer, error) {
	if st == nil || st.Obs == nil {
		return c, nil, nil
	}
	t := new(edm.Trainer)
	if err := t.UnmarshalBinary(st.Obs); err != nil {
		return c, nil, err
	}
	got := t.Net.Config().ActionDim
	per := c.Obs.ActionDim / c.stride()
	if got == c.Obs.ActionDim || per < 1 || got%per != 0 {
		return c, t, nil
	}
	c.Stride = got / per
	c.Obs.ActionDim, c.Proprio.ActionDim = got, got
	c.Start = StartFor(c.Stride, max(c.Obs.History, c.Proprio.History)) // the same 20 actions in
	return c, t, nil
}

// pixelStartActions is the real step (in environment actions) that scoring rollouts start
// from by default: 20 actions into an episode, when the arm is moving.
const pixelStartActions = 20

// StartFor is the scoring rollouts' start, in policy steps of stride actions, for models
// with history context frames: pixelStartActions in, and never before the context exists.
func StartFor(stride, history int) int { return max(pixelStartActions/max(1, stride), history-1) }

// The three phases' loss-curve spacing and checkpoint spacing, in their
// own steps. A checkpoint falls on a curve point, so that the curve's
// running sum is empty in every checkpoint and a resumed curve is the
// uninterrupted one. M_obs takes about a second a step on 2 cores, M_rew
// 40 ms and the proprio head a few milliseconds, so each phase writes a
// checkpoint every 10–25 s.
const (
	obsLossEvery, obsCkptEvery         = 5, 25
	rewLossEvery, rewCkptEvery         = 50, 250
	proprioLossEvery, proprioCkptEvery = 100, 1000
)

// Pretraining phases, in order.
const (
	PhaseObs     = "obs"
	PhaseRew     = "rew"
	PhaseProprio = "proprio"
	PhaseDone    = "done"
)

// PretrainState is a pretraining checkpoint: the phase being trained, the
// trainers that exist (each one's MarshalBinary record, so that a restored
// trainer continues bit for bit), the loss curves so far and, once Phase
// is PhaseDone, the scores.
type PretrainState struct {
	Phase   string `json:"phase"`
	Obs     []byte `json:"-"`
	Rew     []byte `json:"-"`
	Proprio []byte `json:"-"`
	// Step counts the steps of all three models together.
	Step        int           `json:"step"`
	ObsLoss     []float64     `json:"obs_loss_curve"`
	RewLoss     []float64     `json:"rew_loss_curve"`
	ProprioLoss []float64     `json:"proprio_loss_curve"`
	Scores      *PretrainEval `json:"scores,omitempty"`
	// RewCounterfactual is what the M_rew phase drew for PretrainConfig.RewCounterfactual
	// (kept here, as it is drawn once when the phase begins).
	RewCounterfactual *CounterfactualExamples `json:"rew_counterfactual,omitempty"`
}

// PretrainEval scores the pretrained models on the held-out episodes.
type PretrainEval struct {
	TrainEpisodes int `json:"train_episodes"`
	HeldEpisodes  int `json:"held_out_episodes"`
	ObsParams     int `json:"obs_params"`
	// SigmaData and SampleSteps are M_obs's σ_data (measured on the data for a
	// residual model) and sampling steps.
	SigmaData   float64 `json:"obs_sigma_data"`
	SampleSteps int     `json:"obs_sample_steps"`
	RewParams   int     `json:"rew_params"`
	// RewImagined counts the imagined frames among M_rew's training examples.
	RewImagined   int `json:"rew_train_imagined_frames,omitempty"`
	ProprioParams int `json:"proprio_params"`
	// Imagination is M_obs's open-loop per-step MSE against copying the
	// last real frame; Reward M_rew's accuracy and reward error; Proprio
	// the proprio head's; RewHeldLoss the held-out focal loss.
	Imagination ImagineEval `json:"imagination"`
	Reward      RewardEval  `json:"reward"`
	RewHeldLoss float64     `json:"rew_held_out_focal_loss"`
	Proprio     ProprioEval `json:"proprio"`
	// Endings is M_rew on imagined episode endings against the real ones.
	Endings EndingEval `json:"imagined_endings"`
}

// Validate reports every setting Pretrain cannot run with.
func (c PretrainConfig) Validate() error {
	var errs []error
	if err := c.Obs.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("observation model: %w", err))
	}
	if err := checkEDM(c.EDM, c.Obs.History); err != nil {
		errs = append(errs, err)
	}
	if c.EDM.Steps < 1 {
		errs = append(errs, fmt.Errorf("observation model: sampling steps must be at least 1, got %d", c.EDM.Steps))
	}
	if err := c.Rew.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.RewTrain.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Proprio.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("proprio head: %w", err))
	}
	if err := c.ProprioTrain.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, s := range []struct {
		name string
		n    int
	}{{"observation-model steps", c.ObsSteps}, {"reward-model steps", c.RewSteps}, {"proprio-head steps", c.ProprioSteps}} {
		if s.n < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", s.name, s.n))
		}
	}
	if c.Stride < 0 || c.Obs.ActionDim%c.stride() != 0 || c.Proprio.ActionDim != c.Obs.ActionDim {
		errs = append(errs, fmt.Errorf("stride %d: M_obs's and the proprio head's actions (%d and %d values) must be the same stride actions' values", c.Stride, c.Obs.ActionDim, c.Proprio.ActionDim))
	}
	if c.HeldEvery < 2 {
		errs = append(errs, fmt.Errorf("held-every must be at least 2 (one episode in that many is held out), got %d", c.HeldEvery))
	}
	if c.RewImagined < 0 {
		errs = append(errs, fmt.Errorf("imagined endings per episode for M_rew must not be negative (0 trains it on real frames only), got %d", c.RewImagined))
	}
	if c.RewCounterfactual < 0 {
		errs = append(errs, fmt.Errorf("counterfactual endings per episode for M_rew must not be negative (0 draws none), got %d", c.RewCounterfactual))
	} else if !(c.RewCounterfactualJitter >= 0 && c.RewCounterfactualJitter <= 2) || c.RewCounterfactualJitter > 0 && c.RewCounterfactual == 0 {
		errs = append(errs, fmt.Errorf("counterfactual action noise must be 0 to 2 action units and needs counterfactual endings, got %g with %d endings per episode", c.RewCounterfactualJitter, c.RewCounterfactual))
	} else if c.RewCounterfactual > 0 {
		if err := c.Collect.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("counterfactual endings replay the offline episodes with the input that collected them: %w", err))
		}
	}
	if c.Horizon < 1 {
		errs = append(errs, fmt.Errorf("horizon must be at least 1 imagined step, got %d", c.Horizon))
	}
	if c.Start < max(c.Obs.History, c.Proprio.History)-1 {
		errs = append(errs, fmt.Errorf("scoring rollouts start at step %d, before the %d context frames exist; start at %d or later",
			c.Start, max(c.Obs.History, c.Proprio.History), max(c.Obs.History, c.Proprio.History)-1))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pixel world-model pretraining: %w", err)
	}
	return nil
}

// Pretrain trains the three models on eps (with one episode in HeldEvery
// of every task held out) from resume (nil: from scratch), calling save
// with every checkpoint: every obsCkptEvery, rewCkptEvery and
// proprioCkptEvery steps of a phase, at each phase's end, and last with
// the scores (Phase PhaseDone). A save error stops it. Resuming from a
// checkpoint of the same config and data gives the same final state as
// not stopping. A state already done is returned at once.
func Pretrain(ctx context.Context, c PretrainConfig, eps []Episode, resume *PretrainState, save func(*PretrainState) error) (*PretrainState, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	st := &PretrainState{Phase: PhaseObs}
	if resume != nil {
		cp := *resume
		// The curves grow in place; the caller's state keeps its own.
		cp.ObsLoss = append([]float64(nil), resume.ObsLoss...)
		cp.RewLoss = append([]float64(nil), resume.RewLoss...)
		cp.ProprioLoss = append([]float64(nil), resume.ProprioLoss...)
		st = &cp
	}
	if st.Phase == PhaseDone {
		return st, nil
	}
	c, restored, err := c.resumed(st)
	if err != nil {
		return nil, err
	}
	train, held := Split(eps, c.HeldEvery)
	if len(train) == 0 || len(held) == 0 {
		return nil, fmt.Errorf("pixel world-model pretraining: %d episodes leave %d to train on and %d held out at one in %d; collect more",
			len(eps), len(train), len(held), c.HeldEvery)
	}
	// M_obs and the proprio head see the episodes a policy step at a time; the scoring
	// rollouts start from the reset's phase, as a policy meets an episode.
	steps, heldSteps := Strided(train, c.stride(), false), Strided(held, c.stride(), true)

	samples := ObsSamples(c.Obs, steps)
	if len(samples) == 0 {
		return nil, fmt.Errorf("pixel world-model pretraining: no episode of the training split has %d frames of context and a next frame", c.Obs.History+1)
	}
	c.EDM = withSigmaData(c.EDM, samples)
	obs, err := restoreObs(c, restored)
	if err != nil {
		return nil, err
	}
	if st.Phase == PhaseObs {
		if err := runPhase(ctx, st, &st.ObsLoss, obs.Steps, c.ObsSteps, obsLossEvery, obsCkptEvery,
			func() (float64, error) { return obs.Step(samples) },
			func() error { return marshalInto(&st.Obs, obs) }, PhaseRew, save); err != nil {
			return nil, err
		}
	}

	rew, err := restoreRew(c, st)
	if err != nil {
		return nil, err
	}
	if st.Phase == PhaseRew {
		examples := RewardExamples(train)
		if c.RewImagined > 0 {
			// Drawn again on a resume, the same: from the phase's fixed M_obs and seed.
			examples = append(examples, ImaginedRewardExamples(obs.Net, obs.EDM, steps, c.Horizon, c.RewImagined, rewImaginedRand(c.Seed))...)
		}
		if c.RewCounterfactual > 0 {
			// Also drawn again identically on a resume; the simulator replays the raw episodes.
			cf, cst, err := CounterfactualRewardExamples(c.Collect, eps, c.HeldEvery, obs.Net, obs.EDM, c.Horizon, c.RewCounterfactual, c.RewCounterfactualJitter, rewCounterfactualRand(c.Seed))
			if err != nil {
				return nil, err
			}
			examples = append(examples, cf...)
			st.RewCounterfactual = &cst
		}
		if err := runPhase(ctx, st, &st.RewLoss, rew.Steps, c.RewSteps, rewLossEvery, rewCkptEvery,
			func() (float64, error) { return rew.Step(examples) },
			func() error { return marshalInto(&st.Rew, rew) }, PhaseProprio, save); err != nil {
			return nil, err
		}
	}

	psamples := ProprioSamples(c.Proprio, steps)
	pt, err := restoreProprio(c, st, psamples)
	if err != nil {
		return nil, err
	}
	if st.Phase == PhaseProprio {
		if err := runPhase(ctx, st, &st.ProprioLoss, pt.Steps, c.ProprioSteps, proprioLossEvery, proprioCkptEvery,
			func() (float64, error) { return pt.Step(psamples) },
			func() error { return marshalInto(&st.Proprio, pt) }, PhaseDone, save); err != nil {
			return nil, err
		}
	}

	// Score, then the last checkpoint.
	ev := &PretrainEval{TrainEpisodes: len(train), HeldEpisodes: len(held),
		ObsParams: len(obs.Net.Params()), RewParams: len(rew.Model.Params()), RewImagined: imaginedRewardFrames(steps, c.Obs.History, c.Horizon, c.RewImagined), ProprioParams: len(pt.Model.Params())}
	ev.SigmaData, ev.SampleSteps = obs.EDM.SigmaData, obs.EDM.Steps
	ev.Imagination, _ = EvaluateImagination(obs.Net, obs.EDM, heldSteps, c.Start, c.Horizon, scoringRand(c.Seed))
	ev.Reward = EvaluateReward(rew.Model, held)
	ev.RewHeldLoss = rew.EvalLoss(RewardExamples(held), 256)
	ev.Proprio = EvaluateProprio(pt.Model, heldSteps, c.Start, c.Horizon)
	ev.Endings = EvaluateEndings(obs.Net, obs.EDM, rew.Model, heldSteps, c.Horizon, endingsRand(c.Seed))
	st.Scores = ev
	if err := save(st); err != nil {
		return nil, err
	}
	return st, nil
}

// scoringRand is the random stream of the scoring rollouts (and of the
// strip, which replays the first of them).
func scoringRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1a)) }

// endingsRand is the random stream of EvaluateEndings's imaginations.
func endingsRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1b)) }

// rewImaginedRand is the random stream of ImaginedRewardExamples's imaginations.
func rewImaginedRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1c)) }

// counterfactualRand is the random stream of EvaluateCounterfactual's imaginations.
func counterfactualRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1d)) }

// ScoringStrip replays the first scoring rollout of a finished pretraining
// (the same episodes, start, horizon and noise as its scores) for a person
// to look at.
func ScoringStrip(c PretrainConfig, eps []Episode, st *PretrainState) (Strip, error) {
	c, restored, err := c.resumed(st)
	if err != nil {
		return Strip{}, err
	}
	obs, err := restoreObs(c, restored)
	if err != nil {
		return Strip{}, err
	}
	_, held := Split(eps, c.HeldEvery)
	// The trainer's settings: a residual model's σ_data came from the data.
	_, strip := EvaluateImagination(obs.Net, obs.EDM, Strided(held, c.stride(), true), c.Start, c.Horizon, scoringRand(c.Seed))
	return strip, nil
}

// runPhase trains one model from step done to total, appending the mean
// loss of every lossEvery steps to curve and handing save a checkpoint
// every ckptEvery steps; at the end it records the trainer, moves st to
// next and, unless next is PhaseDone (whose checkpoint carries the scores
// the caller adds), saves once more.
func runPhase(ctx context.Context, st *PretrainState, curve *[]float64, done, total, lossEvery, ckptEvery int,
	step func() (float64, error), record func() error, next string, save func(*PretrainState) error) error {
	acc := 0.0
	for n := done + 1; n <= total; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := step()
		if err != nil {
			return err
		}
		st.Step++
		acc += l
		if n%lossEvery == 0 || n == total {
			*curve = append(*curve, acc/float64((n-1)%lossEvery+1))
			acc = 0
		}
		if n%ckptEvery == 0 && n < total {
			if err := record(); err != nil {
				return err
			}
			if err := save(st); err != nil {
				return err
			}
		}
	}
	if err := record(); err != nil {
		return err
	}
	st.Phase = next
	if next == PhaseDone {
		return nil
	}
	return save(st)
}

func marshalInto(dst *[]byte, m interface{ MarshalBinary() ([]byte, error) }) error {
	b, err := m.MarshalBinary()
	*dst = b
	return err
}

// restoreObs returns M_obs's trainer: the checkpoint's (restored, from resumed), or a
// fresh one while the state has none.
func restoreObs(c PretrainConfig, restored *edm.Trainer) (*edm.Trainer, error) {
	if restored != nil {
		return restored, nil
	}
	return edm.NewTrainer(c.Obs, c.EDM, c.ObsTrain, nil)
}

func restoreRew(c PretrainConfig, st *PretrainState) (*reward.Trainer, error) {
	if st.Rew == nil {
		return reward.NewTrainer(c.Rew, c.RewTrain)
	}
	var t reward.Trainer
	if err := t.UnmarshalBinary(st.Rew); err != nil {
		return nil, err
	}
	return &t, nil
}

// restoreProprio normalises a fresh head by its training samples
// (proprio.FitNorm); a checkpointed head carries its normalisation.
func restoreProprio(c PretrainConfig, st *PretrainState, samples []proprio.Sample) (*proprio.Trainer, error) {
	if st.Proprio == nil {
		if len(samples) == 0 {
			return nil, fmt.Errorf("pixel world-model pretraining: no episode of the training split has %d proprio vectors of context", c.Proprio.History)
		}
		return proprio.NewTrainer(c.Proprio, proprio.FitNorm(c.Proprio, samples), c.ProprioTrain)
	}
	var t proprio.Trainer
	if err := t.UnmarshalBinary(st.Proprio); err != nil {
		return nil, err
	}
	return &t, nil
}
