package main

import (
	"slices"

	"github.com/accerl/accerl/specs"
)

// The configurations of the sample-efficiency bench's arms: the world model's settings on
// top of a base recipe (state-vector envs and the tabletop suites), and the world-model
// arm's pixel flags.

// sampleWMConfig is base with the world model on: pretrained on offline random episodes,
// both models updated online after every policy update, and the default horizon schedule.
func sampleWMConfig(base specs.Config, offline int, ratio float64) specs.Config {
	c := base
	c.Policy.Hidden = slices.Clone(base.Policy.Hidden)
	w := &c.WorldModel
	w.Enabled = true
	w.OfflineTrajectories = offline
	w.ObsHidden, w.RewHidden = []int{64, 64}, []int{64, 64}
	w.ObsEvery, w.RewEvery = 1, 1
	w.ImaginationRatio = ratio
	return c
}

// sampleTabletopConfig is the tabletop arms' shared setting: the micro-VLA of
// `bench learn tabletop-SUITE-vla` (tabletopVLABase: both 32×32 cameras, the measured BC
// recipe, action chunks of 8 executing 2, sync mode) with sampling temperature 0.03,
// batches of 4,096 steps, positive advantages only and the value head detached from the
// shared trunk (lowTemperatureVLA), on a budget of online steps. With grpo the advantages
// are the check's (tabletopVLAConfig: GRPO, learning rate 1e-5; the world-model arm then
// needs imagined groups, sampleTabletopWM); without, the best recipe measured with a
// critic (README, "micro-VLA": learning rate 3e-6, one critic-warmup update, updates
// without reward skipped).
func sampleTabletopConfig(suite string, budget int64, grpo bool) specs.Config {
	c := lowTemperatureVLA(tabletopVLABase(suite), budget)
	a := &c.Algorithm
	if grpo {
		a.AdvEstimator = specs.AdvEstimatorGRPO
		return c
	}
	a.LearningRate, a.CriticWarmup, a.SkipRewardless = 3e-6, 1, true
	return c
}

// sampleTabletopWM is base with the pixel world model on: offline episodes of the
// scripted expert with execution noise, M_obs over 4 context frames (as DIAMOND) with the
// pixels block's defaults (obsSteps > 0 sets its pretraining steps), and a share ratio of
// every update's batch imagined from the round's real frames with the current VLA. M_obs
// (fitSteps Adam steps) and the proprio head (6× as many: they take milliseconds) are fitted
// online on every update's real steps before it imagines; M_rew stays as pretrained (a
// real rollout has one success frame per successful episode, the offline episodes linger
// on theirs). The horizon rises from 5 at M_obs's one-step error equal to copying the
// last frame's (loss 1) to 50 at half of it. group > 0 imagines that many rollouts from
// each start (world_model.pixels.group, for GRPO).
func sampleTabletopWM(base specs.Config, offline int, ratio float64, obsSteps, fitSteps, group int) specs.Config {
	c := base
	w := &c.WorldModel
	w.Enabled, w.OfflineTrajectories, w.Behaviour, w.History = true, offline, specs.WorldModelBehaviourExpertNoisy, 4
	w.ImaginationRatio, w.RewLearningRate = ratio, 3e-3 // M_rew at bench pixel-wm's rate
	w.ObsEvery, w.RewEvery = 1, 1
	w.Horizon = specs.Horizon{Start: 5, End: 50, LossHigh: 1, LossLow: 0.5}
	px := specs.DefaultPixelWorldModel()
	if obsSteps > 0 {
		px.ObsSteps = obsSteps
	}
	px.ObsFitSteps, px.ProprioFitSteps, px.Group = fitSteps, 6*fitSteps, group
	w.Pixels = &px
	return c
}

// tabletopWMFlags are the world-model arm's pixel flags (--imagined-temperature,
// --tempered-imagined, --imagined-start-within, --graded-imagined, --rew-imagined, --rew-counterfactual(-jitter), --self-forcing(-from),
// --horizon-max), checked before the arms run.
type tabletopWMFlags struct {
	temperature                                                  float64
	tempered, graded                                             bool
	rewImagined, rewCounterfactual, selfForcing, selfForcingFrom int
	startWithin                                                  int
	rewCounterfactualJitter                                      float64
	horizonMax                                                   int // 0: the schedule's end stays
}

// apply sets f on c's pixel world model (from sampleTabletopWM) and caps its horizon
// schedule at horizonMax policy steps: it then starts at the lesser of its start and the cap.
func (f tabletopWMFlags) apply(c *specs.Config) {
	px := c.WorldModel.Pixels
	px.Temperature, px.Graded, px.RewImagined, px.RewCounterfactual = f.temperature, f.graded, f.rewImagined, f.rewCounterfactual
	px.SelfForcing, px.SelfForcingFrom, px.RewCounterfactualJitter = f.selfForcing, f.selfForcingFrom, f.rewCounterfactualJitter
	px.Tempered, px.StartWithin = f.tempered, f.startWithin
	if h := &c.WorldModel.Horizon; f.horizonMax > 0 {
		h.End, h.Start = f.horizonMax, min(h.Start, f.horizonMax)
	}
}
