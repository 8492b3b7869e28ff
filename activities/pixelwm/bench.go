package pixelwm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// BenchConfig is one measurement of the pixel world model: offline data,
// M_obs and M_rew trained for a wall-time budget, the proprio head for a
// number of steps, all scored on held-out episodes.
type BenchConfig struct {
	// Collect describes the offline data; DataDir, when set, is where it
	// is stored as Arrow IPC and read back by a later run with the same
	// Collect ([CollectOrLoad]).
	Collect CollectInput
	DataDir string
	// HeldEvery holds out every HeldEvery-th episode (≥ 2).
	HeldEvery int
	// Budget is the training wall time of both models together; RewShare
	// of it goes to M_rew (cheap per step), the rest to M_obs.
	Budget   time.Duration
	RewShare float64
	// ObsSteps, when > 0, trains M_obs for exactly this many steps instead
	// of its share of Budget (so that runs on a loaded machine compare at
	// equal steps); M_rew keeps its share.
	ObsSteps int
	// ObsCheckpoint, when set, is a file that keeps the trained M_obs (with a ".json"
	// record of its data and curve beside it): a run that finds one of the same data and
	// settings restores it instead of training, one that finds none trains and writes it.
	// It needs ObsSteps.
	ObsCheckpoint string
	// RewSteps, when > 0, trains M_rew for exactly this many steps instead of its share
	// of Budget.
	RewSteps int
	// Obs, EDM and ObsTrain are M_obs's size, diffusion settings and
	// optimisation; Rew and RewTrain M_rew's.
	Obs      edm.Config
	EDM      edm.EDM
	ObsTrain edm.TrainConfig
	Rew      reward.Config
	RewTrain reward.TrainConfig
	// Proprio and ProprioTrain are the proprio head's size and
	// optimisation (package kernels/edm/proprio); ProprioSteps is its
	// number of training steps, outside Budget (a step costs a few
	// milliseconds). 0 leaves the head out.
	Proprio      proprio.Config
	ProprioTrain proprio.TrainConfig
	ProprioSteps int
	// Horizon is the number of imagined steps per rollout and Start the
	// real step the rollouts start from.
	Horizon, Start int
	// RewImagined, when > 0, adds this many imagined endings of Horizon steps per training
	// episode to M_rew's training frames (ImaginedRewardExamples, drawn by the trained M_obs).
	RewImagined int
	// RewCounterfactual, when > 0, adds this many imagined endings of Horizon steps per
	// training episode driven by another training episode's ending actions, labelled by the
	// simulator's outcome of those actions (CounterfactualRewardExamples).
	RewCounterfactual int
	// RewCounterfactualJitter, when > 0, drives those endings by the episode's own ending
	// actions with Gaussian noise of this standard deviation on their motion values instead
	// of another episode's (jitterActions).
	RewCounterfactualJitter float64
	// CounterfactualJitter, when > 0, drives each held-out ending of the counterfactual
	// evaluation by its own ending actions with such noise, CounterfactualSwaps draws of it,
	// instead of by other episodes' actions: the small differences of one GRPO group.
	CounterfactualJitter float64
	// CounterfactualSwaps is how many other held-out episodes' ending actions drive each
	// held-out ending in the counterfactual evaluation (EvaluateCounterfactual; 0 or 1: the
	// next episode's).
	CounterfactualSwaps int
	// Seed drives the imagination's sampling noise.
	Seed uint64
	// Progress, when set, receives one line per phase and per loss report.
	Progress func(line string)
}

// DefaultBenchConfig measures on 200 spatial episodes of the expert with
// execution noise 0.3 (about 80% succeed) and 8 lingering steps, both
// cameras at 32×32, one episode in five held out, 8 training minutes (a
// quarter for M_rew), 3,000 steps of 64 for the default proprio head
// (k = 4, hidden 64, 64; about 7 s, outside the budget; measured on these
// episodes: held-out one-step NMSE 0.021 against copy-last's 1.04), and 8
// imagined steps from step 20. Collecting is cheap (~10 s); M_obs's steps, not its data,
// are what the budget limits, while M_rew overfits 60 episodes (held-out
// focal loss 0.20 against 0.02 on its training frames) and generalises
// better from 200.
func DefaultBenchConfig(seed uint64) BenchConfig {
	cams := tabletop.Cameras()
	return BenchConfig{
		Collect: CollectInput{Suite: tabletop.SuiteSpatial, Episodes: 200, Behaviour: BehaviourExpertNoisy, Noise: 0.3,
			ImageSize: 32, Cameras: cams, Linger: 8, Seed: seed},
		HeldEvery: 5, Budget: 8 * time.Minute, RewShare: 0.25,
		Obs: edm.DefaultConfig(len(cams), tabletop.ActionDim), EDM: edm.DefaultEDM(), ObsTrain: edm.DefaultTrainConfig(seed),
		Rew: reward.DefaultConfig(), RewTrain: reward.DefaultTrainConfig(seed),
		Proprio: proprio.DefaultConfig(tabletop.ProprioDim, tabletop.ActionDim), ProprioTrain: proprio.DefaultTrainConfig(seed), ProprioSteps: 3000,
		Horizon: 8, Start: 20, Seed: seed,
	}
}

// Validate reports every setting Bench cannot run with and how to fix it.
func (c BenchConfig) Validate() error {
	var errs []error
	if err := c.Collect.Validate(); err != nil {
		errs = append(errs, err)
	}
	cams := len(c.Collect.Cameras)
	if cams == 0 {
		cams = len(tabletop.Cameras())
	}
	if err := c.Obs.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("observation model: %w", err))
	} else if c.Obs.ImageSize != c.Collect.ImageSize || c.Obs.Cameras != cams || c.Obs.ActionDim != tabletop.ActionDim {
		errs = append(errs, fmt.Errorf("observation model sees %d cameras at %d×%d with %d-D actions, the data has %d at %d×%d with %d-D actions; build it with edm.DefaultConfig(cameras, tabletop.ActionDim) at the data's image size",
			c.Obs.Cameras, c.Obs.ImageSize, c.Obs.ImageSize, c.Obs.ActionDim, cams, c.Collect.ImageSize, c.Collect.ImageSize, tabletop.ActionDim))
	}
	if err := checkEDM(c.EDM, c.Obs.History); err != nil {
		errs = append(errs, err)
	}
	if err := c.Rew.Validate(); err != nil {
		errs = append(errs, err)
	} else if c.Rew.ImageSize != c.Collect.ImageSize || c.Rew.Cameras != cams {
		errs = append(errs, fmt.Errorf("reward model sees %d cameras at %d×%d, the data has %d at %d×%d", c.Rew.Cameras, c.Rew.ImageSize, c.Rew.ImageSize, cams, c.Collect.ImageSize, c.Collect.ImageSize))
	}
	if err := c.RewTrain.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.ProprioSteps < 0 {
		errs = append(errs, fmt.Errorf("proprio head steps must not be negative (0 leaves the head out), got %d", c.ProprioSteps))
	} else if c.ProprioSteps > 0 {
		if err := c.Proprio.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("proprio head: %w", err))
		} else if c.Proprio.ProprioDim != tabletop.ProprioDim || c.Proprio.ActionDim != tabletop.ActionDim {
			errs = append(errs, fmt.Errorf("proprio head reads %d-D proprioception and %d-D actions, the data has %d and %d; build it with proprio.DefaultConfig(tabletop.ProprioDim, tabletop.ActionDim)",
				c.Proprio.ProprioDim, c.Proprio.ActionDim, tabletop.ProprioDim, tabletop.ActionDim))
		} else if c.Start < c.Proprio.History-1 {
			errs = append(errs, fmt.Errorf("rollouts start at step %d, before the proprio head's %d context vectors exist; start at %d or later", c.Start, c.Proprio.History, c.Proprio.History-1))
		}
		if err := c.ProprioTrain.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.HeldEvery < 2 {
		errs = append(errs, fmt.Errorf("held-every must be at least 2 (one episode in that many is held out), got %d", c.HeldEvery))
	} else if c.Collect.Episodes < c.HeldEvery {
		errs = append(errs, fmt.Errorf("%d episodes hold none out at one in %d; collect at least %d", c.Collect.Episodes, c.HeldEvery, c.HeldEvery))
	}
	if c.ObsSteps < 0 {
		errs = append(errs, fmt.Errorf("observation-model steps must not be negative (0 trains for the budget's share), got %d", c.ObsSteps))
	}
	if c.ObsCheckpoint != "" && c.ObsSteps <= 0 {
		errs = append(errs, fmt.Errorf("M_obs checkpoint %s: a checkpoint stands for a fixed number of training steps; set the observation-model steps (--obs-steps)", c.ObsCheckpoint))
	}
	if c.RewSteps < 0 {
		errs = append(errs, fmt.Errorf("reward-model steps must not be negative (0 trains for the budget's share), got %d", c.RewSteps))
	}
	if c.Budget <= 0 {
		errs = append(errs, fmt.Errorf("training budget must be positive, got %v", c.Budget))
	}
	if !(c.RewShare > 0 && c.RewShare < 1) {
		errs = append(errs, fmt.Errorf("reward-model share of the budget must be in (0, 1), got %v", c.RewShare))
	}
	if c.Horizon < 1 {
		errs = append(errs, fmt.Errorf("horizon must be at least 1 imagined step, got %d", c.Horizon))
	}
	if c.RewImagined < 0 {
		errs = append(errs, fmt.Errorf("imagined endings per episode for M_rew must not be negative (0 trains it on real frames only), got %d", c.RewImagined))
	}
	if c.RewCounterfactual < 0 {
		errs = append(errs, fmt.Errorf("counterfactual endings per episode for M_rew must not be negative (0 draws none), got %d", c.RewCounterfactual))
	}
	if !(c.CounterfactualJitter >= 0 && c.CounterfactualJitter <= 2) || !(c.RewCounterfactualJitter >= 0 && c.RewCounterfactualJitter <= 2) {
		errs = append(errs, fmt.Errorf("counterfactual action noise must be 0 (other episodes' actions) to 2 action units, got %g for the evaluation and %g for M_rew's endings", c.CounterfactualJitter, c.RewCounterfactualJitter))
	}
	if c.RewCounterfactualJitter > 0 && c.RewCounterfactual == 0 {
		errs = append(errs, fmt.Errorf("M_rew's counterfactual action noise %g has no endings to drive; give the counterfactual endings per episode too", c.RewCounterfactualJitter))
	}
	if c.Start < c.Obs.History-1 {
		errs = append(errs, fmt.Errorf("rollouts start at step %d, before the %d context frames exist; start at %d or later", c.Start, c.Obs.History, c.Obs.History-1))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pixel world-model bench: %w", err)
	}
	return nil
}

// BenchResult is what Bench measured; every duration is wall time.
type BenchResult struct {
	Collect        CollectInput `json:"collect"`
	TrainEpisodes  int          `json:"train_episodes"`
	HeldEpisodes   int          `json:"held_out_episodes"`
	Succeeded      int          `json:"episodes_succeeded"`
	CollectSeconds float64      `json:"collect_seconds"` // collecting (and storing), or loading when Loaded
	Loaded         bool         `json:"loaded"`

	Obs          edm.Config      `json:"obs_config"`
	EDM          edm.EDM         `json:"edm"`
	ObsTrain     edm.TrainConfig `json:"obs_train"`
	ObsParams    int             `json:"obs_params"`
	ObsSamples   int             `json:"obs_train_samples"`
	ObsSteps     int             `json:"obs_train_steps"`
	ObsSeconds   float64         `json:"obs_train_seconds"`
	ObsLossEvery int             `json:"obs_loss_every"`
	// ObsRestored names the M_obs checkpoint restored instead of training (ObsSeconds and
	// ObsLoss are then the training's that made it).
	ObsRestored string    `json:"obs_restored_from,omitempty"`
	ObsLoss     []float64 `json:"obs_loss_curve"` // mean minibatch EDM loss over each ObsLossEvery steps
	// ObsChangeStd is the standard deviation of the training transitions'
	// frame change Next − Past[k−1] ([−1, 1] pixel units): the σ_data of a
	// residual M_obs (edm.EDM.Residual), as 0.5 is the frames'.
	ObsChangeStd   float64     `json:"obs_change_std"`
	ObsImagination ImagineEval `json:"obs_imagination"`

	Rew         reward.Config      `json:"rew_config"`
	RewTrain    reward.TrainConfig `json:"rew_train"`
	RewParams   int                `json:"rew_params"`
	RewExamples int                `json:"rew_train_frames"`
	// RewImagined is how many of RewExamples M_obs imagined (BenchConfig.RewImagined).
	RewImagined int `json:"rew_train_imagined_frames,omitempty"`
	// RewCounterfactual counts the counterfactual endings among RewExamples
	// (BenchConfig.RewCounterfactual); its frames are counted in RewImagined too.
	RewCounterfactual *CounterfactualExamples `json:"rew_train_counterfactual,omitempty"`
	RewSteps          int                     `json:"rew_train_steps"`
	RewSeconds        float64                 `json:"rew_train_seconds"`
	RewLossEvery      int                     `json:"rew_loss_every"`
	RewLoss           []float64               `json:"rew_loss_curve"` // mean minibatch focal loss over each RewLossEvery steps
	RewHeldBefore     float64                 `json:"rew_held_out_focal_loss_before"`
	RewHeldAfter      float64                 `json:"rew_held_out_focal_loss_after"`
	RewHeld           RewardEval              `json:"rew_held_out"`
	// Endings is M_rew on M_obs's imagined episode endings against the real ones.
	Endings EndingEval `json:"imagined_endings"`
	// Counterfactual is M_rew on endings driven by another episode's actions, against the
	// simulator's outcome of those actions (EvaluateCounterfactual).
	Counterfactual *CounterfactualEval `json:"counterfactual_endings,omitempty"`

	// The proprio head, zero when ProprioSteps is 0. ProprioHeldBefore
	// and ProprioHeldAfter are its standardised MSE on every held-out
	// transition before and after training (1 on its own training data
	// before, by construction).
	Proprio           proprio.Config      `json:"proprio_config"`
	ProprioTrain      proprio.TrainConfig `json:"proprio_train"`
	ProprioParams     int                 `json:"proprio_params"`
	ProprioSamples    int                 `json:"proprio_train_samples"`
	ProprioSteps      int                 `json:"proprio_train_steps"`
	ProprioSeconds    float64             `json:"proprio_train_seconds"`
	ProprioLossEvery  int                 `json:"proprio_loss_every"`
	ProprioLoss       []float64           `json:"proprio_loss_curve"` // mean minibatch standardised MSE over each ProprioLossEvery steps
	ProprioHeldBefore float64             `json:"proprio_held_out_loss_before"`
	ProprioHeldAfter  float64             `json:"proprio_held_out_loss_after"`
	ProprioEval       ProprioEval         `json:"proprio_imagination"`
}

// Bench collects the offline data, trains M_obs then M_rew for their
// shares of the budget and then the proprio head for its steps, and
// evaluates each on the held-out episodes. It
// returns the strip of the first held-out rollout with the result.
func Bench(ctx context.Context, c BenchConfig) (BenchResult, Strip, error) {
	if err := c.Validate(); err != nil {
		return BenchResult{}, Strip{}, err
	}
	say := func(format string, args ...any) {
		if c.Progress != nil {
			c.Progress(fmt.Sprintf(format, args...))
		}
	}
	obsRec, err := c.readObsRecord()
	if err != nil {
		return BenchResult{}, Strip{}, err
	}
	t0 := time.Now()
	eps, loaded, err := CollectOrLoad(ctx, c.Collect, c.DataDir)
	if err != nil {
		return BenchResult{}, Strip{}, err
	}
	train, held := Split(eps, c.HeldEvery)
	res := BenchResult{Collect: c.Collect, TrainEpisodes: len(train), HeldEpisodes: len(held), CollectSeconds: time.Since(t0).Seconds(),
		Obs: c.Obs, EDM: c.EDM, ObsTrain: c.ObsTrain, ObsLossEvery: 10, Rew: c.Rew, RewTrain: c.RewTrain, RewLossEvery: 50}
	frames := 0
	for _, e := range eps {
		frames += e.Len()
		if e.Succeeded {
			res.Succeeded++
		}
	}
	verb := "collected"
	if loaded {
		verb = "loaded"
	}
	res.Loaded = loaded
	say("%s %d %s episodes (%d succeeded, %d frames) in %.1fs: %d to train on, %d held out",
		verb, len(eps), c.Collect.Behaviour, res.Succeeded, frames, res.CollectSeconds, len(train), len(held))

	// M_obs.
	obsBudget := time.Duration(float64(c.Budget) * (1 - c.RewShare))
	samples := ObsSamples(c.Obs, train)
	res.ObsChangeStd = ChangeStd(samples)
	c.EDM = withSigmaData(c.EDM, samples) // as the pixels block's pretraining does
	res.EDM = c.EDM
	obs, err := c.trainObs(ctx, obsBudget, samples, obsRec, &res, say)
	if err != nil {
		return res, Strip{}, err
	}
	t1 := time.Now()
	var strip Strip
	res.ObsImagination, strip = EvaluateImagination(obs.Net, c.EDM, held, c.Start, c.Horizon, rand.New(rand.NewPCG(c.Seed, 0x1a)))
	res.ObsImagination.Seconds = time.Since(t1).Seconds()

	// M_rew.
	rew, err := reward.NewTrainer(c.Rew, c.RewTrain)
	if err != nil {
		return res, strip, err
	}
	examples, heldEx := RewardExamples(train), RewardExamples(held)
	if c.RewImagined > 0 {
		t2 := time.Now()
		imagined := ImaginedRewardExamples(obs.Net, c.EDM, train, c.Horizon, c.RewImagined, rewImaginedRand(c.Seed))
		res.RewImagined = len(imagined)
		examples = append(examples, imagined...)
		say("M_rew: %d imagined frames (%d endings per training episode) in %.1fs", len(imagined), c.RewImagined, time.Since(t2).Seconds())
	}
	if c.RewCounterfactual > 0 {
		t2 := time.Now()
		cf, st, err := CounterfactualRewardExamples(c.Collect, eps, c.HeldEvery, obs.Net, c.EDM, c.Horizon, c.RewCounterfactual, c.RewCounterfactualJitter, rewCounterfactualRand(c.Seed))
		if err != nil {
			return res, strip, err
		}
		res.RewImagined += len(cf)
		res.RewCounterfactual = &st
		examples = append(examples, cf...)
		say("M_rew: %d imagined frames of %d counterfactual endings (%d per training episode; %d reached the goal in the simulator) in %.1fs",
			len(cf), st.Endings, c.RewCounterfactual, st.Succeeded, time.Since(t2).Seconds())
	}
	res.RewParams, res.RewExamples = len(rew.Model.Params()), len(examples)
	res.RewHeldBefore = rew.EvalLoss(heldEx, 256)
	rewBudget := c.Budget - obsBudget
	say("M_rew: %d parameters, %d frames, training %s", res.RewParams, len(examples), trainingLength(rewBudget, c.RewSteps))
	res.RewLoss, res.RewSeconds, err = trainFor(ctx, rewBudget, c.RewSteps, res.RewLossEvery, func() (float64, error) { return rew.Step(examples) },
		func(step int, loss, sec float64) { say("M_rew step %d  focal loss %.4f  (%.0fs)", step, loss, sec) })
	if err != nil {
		return res, strip, err
	}
	res.RewSteps = rew.Steps
	res.RewHeldAfter = rew.EvalLoss(heldEx, 256)
	res.RewHeld = EvaluateReward(rew.Model, held)
	res.Endings = EvaluateEndings(obs.Net, c.EDM, rew.Model, held, c.Horizon, endingsRand(c.Seed))
	cf, err := EvaluateCounterfactual(c.Collect, eps, c.HeldEvery, obs.Net, c.EDM, rew.Model, c.Horizon, c.CounterfactualSwaps, c.CounterfactualJitter, counterfactualRand(c.Seed))
	if err != nil {
		return res, strip, err
	}
	res.Counterfactual = &cf
	if c.ProprioSteps == 0 {
		return res, strip, nil
	}

	// The proprio head.
	psamples, pheld := ProprioSamples(c.Proprio, train), ProprioSamples(c.Proprio, held)
	pt, err := proprio.NewTrainer(c.Proprio, proprio.FitNorm(c.Proprio, psamples), c.ProprioTrain)
	if err != nil {
		return res, strip, err
	}
	res.Proprio, res.ProprioTrain, res.ProprioLossEvery = c.Proprio, c.ProprioTrain, 100
	res.ProprioParams, res.ProprioSamples = len(pt.Model.Params()), len(psamples)
	res.ProprioHeldBefore = pt.EvalLoss(pheld)
	say("proprio head: %d parameters, %d transitions, training %d steps", res.ProprioParams, len(psamples), c.ProprioSteps)
	res.ProprioLoss, res.ProprioSeconds, err = trainFor(ctx, 0, c.ProprioSteps, res.ProprioLossEvery, func() (float64, error) { return pt.Step(psamples) },
		func(step int, loss, sec float64) { say("proprio step %d  loss %.4f  (%.1fs)", step, loss, sec) })
	if err != nil {
		return res, strip, err
	}
	res.ProprioSteps = pt.Steps
	res.ProprioHeldAfter = pt.EvalLoss(pheld)
	t2 := time.Now()
	res.ProprioEval = EvaluateProprio(pt.Model, held, c.Start, c.Horizon)
	res.ProprioEval.Seconds = time.Since(t2).Seconds()
	return res, strip, nil
}

// trainingLength says how long trainFor(budget, steps, …) trains: steps when > 0, else the budget.
func trainingLength(budget time.Duration, steps int) string {
	if steps > 0 {
		return fmt.Sprintf("%d steps", steps)
	}
	return budget.Round(time.Second).String()
}

// trainFor calls step steps times when steps > 0, else until budget has
// passed (at least once), averaging its losses over every `every` steps
// into the returned curve and reporting each average.
func trainFor(ctx context.Context, budget time.Duration, steps, every int, step func() (float64, error), report func(step int, loss, sec float64)) ([]float64, float64, error) {
	start := time.Now()
	var curve []float64
	acc := 0.0
	more := func(n int) bool {
		return n == 1 || (steps > 0 && n <= steps) || (steps <= 0 && time.Since(start) < budget)
	}
	for n := 1; more(n); n++ {
		if err := ctx.Err(); err != nil {
			return curve, time.Since(start).Seconds(), err
		}
		l, err := step()
		if err != nil {
			return curve, time.Since(start).Seconds(), err
		}
		acc += l
		if n%every == 0 {
			curve = append(curve, acc/float64(every))
			acc = 0
			report(n, curve[len(curve)-1], time.Since(start).Seconds())
		}
	}
	return curve, time.Since(start).Seconds(), nil
}
