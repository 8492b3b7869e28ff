package specs

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// Names in the world_model block and its horizon block.
const (
	blockWorldModel         = "world_model"
	attrEnabled             = "enabled"
	attrOfflineTrajectories = "offline_trajectories"
	attrBehaviour           = "behaviour"
	attrHistory             = "history"
	attrObsHidden           = "obs_hidden"
	attrRewHidden           = "rew_hidden"
	attrObsLearningRate     = "obs_learning_rate"
	attrRewLearningRate     = "rew_learning_rate"
	attrReward              = "reward"
	attrPretrainEpochs      = "pretrain_epochs"
	attrImaginationRatio    = "imagination_ratio"
	attrObsEvery            = "obs_every"
	attrRewEvery            = "rew_every"

	blockPixels        = "pixels"
	attrObsSteps       = "obs_steps"
	attrRewSteps       = "rew_steps"
	attrProprioSteps   = "proprio_steps"
	attrBehaviourNoise = "behaviour_noise"
	attrResidual       = "residual"
	attrSampleSteps    = "sample_steps"
	attrObsFitSteps    = "obs_fit_steps"
	attrRewFitSteps    = "rew_fit_steps"
	attrProprioFit     = "proprio_fit_steps"
	attrGroup          = "group"
	attrGraded         = "graded"
	attrTempered       = "tempered"
	attrStartWithin    = "start_within"
	attrRewImagined    = "rew_imagined"
	attrRewCounterfact = "rew_counterfactual"
	attrRewCFJitter    = "rew_counterfactual_jitter"
	attrSelfForcing    = "self_forcing"
	attrSelfForcingAt  = "self_forcing_from"

	blockHorizon = "horizon"
	attrStart    = "start"
	attrEnd      = "end"
	attrLossHigh = "loss_high"
	attrLossLow  = "loss_low"
)

// WorldModel configures AcceRL's world model: offline data collection and
// pretraining, online updates, imagined rollouts and their horizon.
type WorldModel struct {
	// Enabled turns the world model on. When false every other field is
	// kept (so an ablation can switch it back on) but ignored.
	Enabled bool `json:"enabled"`
	// OfflineTrajectories is the number of episodes of the behaviour policy
	// recorded before training and used for pretraining. 0 skips offline
	// data and pretraining: the world model then learns online only. >= 0.
	OfflineTrajectories int `json:"offline_trajectories"`
	// Behaviour is the policy that collects the offline episodes
	// (WorldModelBehaviourRandom).
	Behaviour string `json:"behaviour"`
	// History is k, the number of recent observations the observation model
	// sees. >= 1.
	History int `json:"history"`
	// ObsHidden are the observation model's hidden layer widths.
	ObsHidden []int `json:"obs_hidden"`
	// RewHidden are the reward model's hidden layer widths.
	RewHidden []int `json:"rew_hidden"`
	// ObsLearningRate is the observation model's Adam learning rate. > 0.
	ObsLearningRate float64 `json:"obs_learning_rate"`
	// RewLearningRate is the reward model's Adam learning rate. > 0.
	RewLearningRate float64 `json:"rew_learning_rate"`
	// Reward is WorldModelRewardDirect (predict the reward) or
	// WorldModelRewardSuccessDelta (predict the success probability p; an
	// imagined step earns p(ô_{t+1}) − p(ô_t)).
	Reward string `json:"reward"`
	// PretrainEpochs is the number of passes over the offline data. >= 1.
	PretrainEpochs int `json:"pretrain_epochs"`
	// ImaginationRatio is the share of each training batch's steps that
	// come from imagined rollouts. In [0, 1).
	ImaginationRatio float64 `json:"imagination_ratio"`
	// ObsEvery is the number of policy updates between observation-model
	// updates. >= 1.
	ObsEvery int `json:"obs_every"`
	// RewEvery is the number of policy updates between reward-model
	// updates. >= 1.
	RewEvery int `json:"rew_every"`
	// Horizon schedules the imagination horizon.
	Horizon Horizon `json:"horizon"`
	// Pixels, when present, makes the world model the pixel one of the tabletop suites
	// (activities/pixelwm): M_obs an EDM denoiser over the cameras' frames, a proprio head
	// for the 8-D proprioception and M_rew a success/end classifier over the frames, all
	// pretrained on offline episodes with camera images. Omitted from the JSON while
	// absent, so specs without it keep their hash.
	Pixels *PixelWorldModel `json:"pixels,omitempty"`
}

// PixelWorldModel sizes the pretraining of the pixel world model. The block's presence
// turns it on; it needs env "tabletop" { pixels = true }. world_model.history is the
// number of conditioning frames (the paper's DIAMOND uses 4), obs_learning_rate and
// rew_learning_rate M_obs's and M_rew's Adam rates, offline_trajectories and behaviour
// the offline episodes. The run pretrains and scores the model (held-out imagined MSE
// against copying the last frame, M_rew's accuracy, a real-vs-imagined strip); with
// imagination_ratio > 0 (the VLA policy in sync mode) the fixed models then imagine that
// share of every batch from the round's real frames (engine.PixelWMSettings).
type PixelWorldModel struct {
	// ObsSteps are M_obs's pretraining steps (16 transitions each; about one step a
	// second on 2 CPU cores at 32×32 with both cameras). >= 1.
	ObsSteps int `json:"obs_steps"`
	// RewSteps are M_rew's pretraining steps (32 frames each; about 20 a second on 2
	// busy cores). Success frames are ~4% of the noisy expert's; at 1,500 steps M_rew
	// found 7% of them, at ~5,000 (learning rate 3e-3) 64% (docs/results/world-model).
	// >= 1.
	RewSteps int `json:"rew_steps"`
	// ProprioSteps are the proprio head's pretraining steps (64 transitions each; a few
	// milliseconds each). >= 1.
	ProprioSteps int `json:"proprio_steps"`
	// BehaviourNoise is the execution noise σ (action units) of the expert_noisy
	// behaviour policy: at 0.3 about 80% of the spatial episodes succeed and the rest
	// fail, which the reward model needs both of. [0, 1].
	BehaviourNoise float64 `json:"behaviour_noise"`
	// Residual makes M_obs denoise the change from the last context frame instead of the
	// next frame (kernels/edm's EDM.Residual, with σ_data measured on the offline data), so
	// that copying the last frame is its fallback. Measured (docs/results/world-model, 150
	// steps, one sampling step): held-out imagined MSE 0.0207 at step 1 and 0.0529 at step 8,
	// against copy-last's 0.0249 and 0.0558 and the direct model's 0.0277 and 0.1033 (at
	// its best, 3 sampling steps).
	Residual bool `json:"residual"`
	// SampleSteps are the Euler steps with which M_obs imagines a frame. DIAMOND uses 3; 1
	// returns the denoiser's estimate from pure noise, its mean prediction, which measured
	// closer to the real frames at a CPU's few hundred training steps (3 steps add noise
	// that compounds over the horizon). >= 1.
	SampleSteps int `json:"sample_steps"`
	// ObsFitSteps, RewFitSteps and ProprioFitSteps train the pretrained models online
	// during imagined training (imagination_ratio > 0), on each update's real steps before
	// it imagines: ObsFitSteps Adam steps of M_obs (16 transitions each, about a second on
	// 2 cores) and ProprioFitSteps of the proprio head every world_model.obs_every updates,
	// RewFitSteps of M_rew every rew_every updates. A sync update is thousands of steps, so
	// obs_every = 1 is the usual setting (its default of 100 is the state-vector model's).
	// 0 (the default) keeps that model as pretrained. Either way M_obs's one-step error on
	// each update's fresh real steps, over copying the last frame's, is the horizon
	// schedule's loss. Omitted from the JSON while 0, so specs without them keep their hash.
	ObsFitSteps     int `json:"obs_fit_steps,omitempty"`
	RewFitSteps     int `json:"rew_fit_steps,omitempty"`
	ProprioFitSteps int `json:"proprio_fit_steps,omitempty"`
	// Group is the number of imagined rollouts started from each real step drawn (0 or 1:
	// one). algorithm.adv_estimator = "grpo" needs at least 2: it compares the rollouts of
	// a start with each other by M_rew's success on their last imagined frame, as it
	// compares real episodes of a task by the environment's success (what differs within a
	// group is the sampled actions, as with algorithm.repeat_starts on real starts).
	// Omitted from the JSON while 0, so specs without it keep their hash.
	Group int `json:"group,omitempty"`
	// Temperature, when > 0, samples the imagined rollouts' action tokens at this
	// temperature instead of policy.vla.temperature (exploring in imagination, where a step
	// costs no environment), each recorded with the log-probability the policy gives it at
	// its own temperature: the update treats imagined actions as the policy's own samples,
	// so that with GRPO the rollouts of a start differ more and more of their groups
	// disagree. It has no importance weight for the other temperature (a bias toward the
	// imagined rollouts' actions, which the clip bounds per update; Tempered trains them
	// at this temperature instead). [0, 10]; 0 (the
	// default) is the policy's temperature. Omitted from the JSON while 0, so specs
	// without it keep their hash.
	Temperature float64 `json:"temperature,omitempty"`
	// Tempered (with temperature) records each imagined action's log-probability at the
	// temperature it was sampled at instead, and the update evaluates it there too: on the
	// imagined steps it is the on-policy update of the tempered policy, which shares the
	// policy's logits, without the pull toward the sampler's distribution (a flatter
	// policy) that evaluating the sampled actions at the policy's low temperature has.
	// Omitted from the JSON while false, so specs without it keep their hash.
	Tempered bool `json:"tempered,omitempty"`
	// StartWithin, when > 0, starts the imagined rollouts only from the last start_within
	// policy steps before the end of an episode of the update's real round (its success or
	// its time limit), where the rollouts of a group can end differently within the
	// horizon, instead of from any step. Omitted from the JSON while 0, so specs without it
	// keep their hash.
	StartWithin int `json:"start_within,omitempty"`
	// Graded ranks the rollouts of a start (with group ≥ 2 and GRPO) by how far each took
	// M_rew's p_success (its last imagined frame's less the start's) instead of by its
	// verdict at ½, with mean-centred advantages (R − mean(R), no division by the std, as
	// Dr. GRPO): a group whose rollouts M_rew judges alike still ranks them, by a small
	// advantage where they differ little. Omitted from the JSON while false, so specs
	// without it keep their hash.
	Graded bool `json:"graded,omitempty"`
	// RewImagined, when > 0, also pretrains M_rew on this many endings per offline
	// training episode that the pretrained M_obs imagines (the last 8 policy steps before
	// the episode's end, with its recorded actions), each imagined frame labelled as the
	// real frame it stands for: M_rew trained on real frames alone called 16 of 18 real
	// success endings successes but none of the imagined ones (docs/results/world-model),
	// so that imagined rollouts could not succeed. With it they do, but at horizons of 20
	// steps and more the verdicts are no better than chance against the simulator, and a
	// policy trained on them unlearned (docs/results/world-model, README): a measurement
	// aid for now, not a recipe. [0, 64]; 0 (the default): real frames only. Omitted from
	// the JSON while 0, so specs without it keep their hash.
	RewImagined int `json:"rew_imagined,omitempty"`
	// RewCounterfactual, when > 0, also pretrains M_rew on this many endings per offline
	// training episode that the pretrained M_obs imagines with another training episode's
	// ending actions, each imagined frame labelled with what the simulator says those
	// actions did at that step (the episode replayed to the ending's start, then the
	// other's actions executed). Labelled by their own episode's outcome (rew_imagined),
	// imagined endings teach M_rew that where an imagination starts decides its verdict;
	// with these its p_success ranked the imagined endings of one start by their real
	// outcome 66–76% right instead of 46–59% (chance 50%; bench pixel-wm, 20 steps out),
	// at the cost of fewer real successes recognised (docs/results/world-model). [0, 64]; 0 (the default): none. Omitted from
	// the JSON while 0, so specs without it keep their hash.
	RewCounterfactual int `json:"rew_counterfactual,omitempty"`
	// RewCounterfactualJitter, when > 0, drives those endings by the episode's own ending
	// actions with fresh Gaussian noise of this standard deviation (action units) on their
	// motion values instead of another episode's: near misses and near successes of one
	// start, as the rollouts of one GRPO group differ. Judged on held-out endings jittered
	// the same way (σ 0.3, 20 steps out), its M_rew ranked them by their real outcome 82%
	// right against 68% for another's actions (bench pixel-wm, docs/results/world-model).
	// [0, 2]; needs rew_counterfactual; 0 (the default): another episode's actions.
	// Omitted from the JSON while 0, so specs without it keep their hash.
	RewCounterfactualJitter float64 `json:"rew_counterfactual_jitter,omitempty"`
	// SelfForcing, when > 0, trains M_obs from step SelfForcingFrom on with up to this many
	// of each example's most recent context frames replaced by its own predictions from the
	// real frames before them (scheduled sampling, edm.EDM.SelfForcing), so that it learns
	// from contexts like those it meets a few steps into an imagination. Switched on after
	// 1,600 of 2,000 steps on real contexts it lowered the error 20 steps out (0.0536
	// against 0.0561) and let M_rew recognise 17 of 30 imagined success endings (0 without);
	// from the start, or after a few hundred steps, it made M_obs worse
	// (docs/results/world-model). 0 to world_model.history; 0 (the default): real contexts
	// only. SelfForcingFrom is below obs_steps. Omitted from the JSON while 0, so specs
	// without them keep their hash.
	SelfForcing     int `json:"self_forcing,omitempty"`
	SelfForcingFrom int `json:"self_forcing_from,omitempty"`
}

// DefaultPixelWorldModel is the measured `accerl bench pixel-wm` recipe at a size a run
// pretrains in about a quarter of an hour on 2 cores: 400 M_obs steps, 5,000 M_rew steps
// (with world_model.rew_learning_rate = 3e-3, as the bench; the block's 1e-3 default is
// the state-vector model's), 3,000 proprio steps, expert noise 0.3, a residual M_obs
// sampled in one step.
func DefaultPixelWorldModel() PixelWorldModel {
	return PixelWorldModel{ObsSteps: 400, RewSteps: 5000, ProprioSteps: 3000, BehaviourNoise: 0.3, Residual: true, SampleSteps: 1}
}

// Horizon is the imagination-horizon schedule: H = Start while the world
// model's validation loss is at or above LossHigh, End once it is at or
// below LossLow, linear in between, and never lower than it has been. The
// loss is the observation model's mean squared error on real validation
// data in normalised units, where 1 is as good as predicting the average
// change of the observation and 0 is perfect.
type Horizon struct {
	// Start is the horizon of a poor model. >= 1, <= End.
	Start int `json:"start"`
	// End is the horizon of a good model. >= 1.
	End int `json:"end"`
	// LossHigh is the loss at and above which H = Start. > 0.
	LossHigh float64 `json:"loss_high"`
	// LossLow is the loss at and below which H = End. >= 0, < LossHigh.
	LossLow float64 `json:"loss_low"`
}

var worldModelSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrEnabled},
		{Name: attrOfflineTrajectories},
		{Name: attrBehaviour},
		{Name: attrHistory},
		{Name: attrObsHidden},
		{Name: attrRewHidden},
		{Name: attrObsLearningRate},
		{Name: attrRewLearningRate},
		{Name: attrReward},
		{Name: attrPretrainEpochs},
		{Name: attrImaginationRatio},
		{Name: attrObsEvery},
		{Name: attrRewEvery},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: blockHorizon},
		{Type: blockPixels},
	},
}

var pixelWorldModelSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrObsSteps},
		{Name: attrRewSteps},
		{Name: attrProprioSteps},
		{Name: attrBehaviourNoise},
		{Name: attrResidual},
		{Name: attrSampleSteps},
		{Name: attrObsFitSteps},
		{Name: attrRewFitSteps},
		{Name: attrProprioFit},
		{Name: attrGroup},
		{Name: attrTemp},
		{Name: attrTempered},
		{Name: attrStartWithin},
		{Name: attrGraded},
		{Name: attrRewImagined},
		{Name: attrRewCounterfact},
		{Name: attrRewCFJitter},
		{Name: attrSelfForcing},
		{Name: attrSelfForcingAt},
	},
}

var horizonSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrStart},
		{Name: attrEnd},
		{Name: attrLossHigh},
		{Name: attrLossLow},
	},
}

// Attribute paths used by the world model's cross-field checks.
const (
	pathHorizonStart     = blockWorldModel + "." + blockHorizon + "." + attrStart
	pathHorizonEnd       = blockWorldModel + "." + blockHorizon + "." + attrEnd
	pathHorizonLossHigh  = blockWorldModel + "." + blockHorizon + "." + attrLossHigh
	pathHorizonLossLow   = blockWorldModel + "." + blockHorizon + "." + attrLossLow
	pathWorldModelOn     = blockWorldModel + "." + attrEnabled
	pathWorldModelRew    = blockWorldModel + "." + attrReward
	pathImaginationRatio = blockWorldModel + "." + attrImaginationRatio
	pathWorldModelPixels = blockWorldModel + "." + blockPixels
	pathWorldModelBehav  = blockWorldModel + "." + attrBehaviour
)

// decodeWorldModel applies a world_model block onto w.
func (d *decoder) decodeWorldModel(block *hcl.Block, w *WorldModel) {
	c := d.content(block.Body, worldModelSchema)
	a := c.Attributes
	const prefix = blockWorldModel
	d.setBool(a, prefix, attrEnabled, &w.Enabled)
	d.setInt(a, prefix, attrOfflineTrajectories, &w.OfflineTrajectories, atLeast(0))
	d.setEnum(a, prefix, attrBehaviour, &w.Behaviour, worldModelBehaviours())
	d.setInt(a, prefix, attrHistory, &w.History, atLeast(1))
	d.setInts(a, prefix, attrObsHidden, &w.ObsHidden, atLeast(1))
	d.setInts(a, prefix, attrRewHidden, &w.RewHidden, atLeast(1))
	d.setFloat(a, prefix, attrObsLearningRate, &w.ObsLearningRate, greaterThan(0))
	d.setFloat(a, prefix, attrRewLearningRate, &w.RewLearningRate, greaterThan(0))
	d.setEnum(a, prefix, attrReward, &w.Reward, worldModelRewards())
	d.setInt(a, prefix, attrPretrainEpochs, &w.PretrainEpochs, atLeast(1))
	d.setFloat(a, prefix, attrImaginationRatio, &w.ImaginationRatio,
		bound{lo: 0, hi: 1, hasLo: true, hasHi: true, hiOpen: true})
	d.setInt(a, prefix, attrObsEvery, &w.ObsEvery, atLeast(1))
	d.setInt(a, prefix, attrRewEvery, &w.RewEvery, atLeast(1))
	if hb := d.single(c.Blocks, blockHorizon); hb != nil {
		d.decodeHorizon(hb, &w.Horizon)
	}
	if pb := d.single(c.Blocks, blockPixels); pb != nil {
		d.decodePixelWorldModel(pb, &w.Pixels)
	}
}

// decodePixelWorldModel applies a world_model's pixels block onto *p, starting from
// DefaultPixelWorldModel.
func (d *decoder) decodePixelWorldModel(block *hcl.Block, p **PixelWorldModel) {
	// A copy: an ablation arm's block must not change the base's (or another arm's).
	cp := DefaultPixelWorldModel()
	if *p != nil {
		cp = **p
	}
	*p = &cp
	d.src.record(pathWorldModelPixels, block.DefRange)
	c := d.content(block.Body, pixelWorldModelSchema)
	a, pre := c.Attributes, pathWorldModelPixels
	d.setInt(a, pre, attrObsSteps, &cp.ObsSteps, between(1, 1e7))
	d.setInt(a, pre, attrRewSteps, &cp.RewSteps, between(1, 1e7))
	d.setInt(a, pre, attrProprioSteps, &cp.ProprioSteps, between(1, 1e7))
	d.setFloat(a, pre, attrBehaviourNoise, &cp.BehaviourNoise, between(0, 1))
	d.setBool(a, pre, attrResidual, &cp.Residual)
	d.setInt(a, pre, attrSampleSteps, &cp.SampleSteps, between(1, 100))
	d.setInt(a, pre, attrObsFitSteps, &cp.ObsFitSteps, between(0, 1e6))
	d.setInt(a, pre, attrRewFitSteps, &cp.RewFitSteps, between(0, 1e6))
	d.setInt(a, pre, attrProprioFit, &cp.ProprioFitSteps, between(0, 1e6))
	d.setInt(a, pre, attrGroup, &cp.Group, between(0, 1024))
	d.setFloat(a, pre, attrTemp, &cp.Temperature, between(0, 10))
	d.setBool(a, pre, attrTempered, &cp.Tempered)
	d.setInt(a, pre, attrStartWithin, &cp.StartWithin, between(0, 1e6))
	d.setBool(a, pre, attrGraded, &cp.Graded)
	d.setInt(a, pre, attrRewImagined, &cp.RewImagined, between(0, 64))
	d.setInt(a, pre, attrRewCounterfact, &cp.RewCounterfactual, between(0, 64))
	d.setFloat(a, pre, attrRewCFJitter, &cp.RewCounterfactualJitter, between(0, 2))
	d.setInt(a, pre, attrSelfForcing, &cp.SelfForcing, between(0, 64))
	d.setInt(a, pre, attrSelfForcingAt, &cp.SelfForcingFrom, between(0, 1e7))
}

// decodeHorizon applies a horizon block onto h.
func (d *decoder) decodeHorizon(block *hcl.Block, h *Horizon) {
	const prefix = blockWorldModel + "." + blockHorizon
	c := d.content(block.Body, horizonSchema)
	a := c.Attributes
	d.setInt(a, prefix, attrStart, &h.Start, atLeast(1))
	d.setInt(a, prefix, attrEnd, &h.End, atLeast(1))
	d.setFloat(a, prefix, attrLossHigh, &h.LossHigh, greaterThan(0))
	d.setFloat(a, prefix, attrLossLow, &h.LossLow, atLeast(0))
}

// checkWorldModel reports the world model's constraints between fields of
// one resolved arm through add (see checkArm). The horizon's order is
// checked even while the model is disabled, so that an ablation switching
// it on cannot inherit a broken schedule unnoticed.
func checkWorldModel(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	w := c.WorldModel
	if w.Horizon.Start > w.Horizon.End {
		add(src.blame(pathHorizonStart, pathHorizonEnd), "Horizon start after end",
			fmt.Sprintf("world_model.horizon.start (%d) must not exceed world_model.horizon.end (%d), because the horizon only grows from start to end. Lower start or raise end.",
				w.Horizon.Start, w.Horizon.End))
	}
	if !(w.Horizon.LossLow < w.Horizon.LossHigh) {
		add(src.blame(pathHorizonLossLow, pathHorizonLossHigh), "Horizon loss thresholds out of order",
			fmt.Sprintf("world_model.horizon.loss_low (%g) must be below world_model.horizon.loss_high (%g): the horizon reaches end when the loss falls to loss_low, starting from loss_high. Lower loss_low or raise loss_high.",
				w.Horizon.LossLow, w.Horizon.LossHigh))
	}
	checkPixelWorldModel(c, src, add)
	if w.Enabled && w.Reward == WorldModelRewardSuccessDelta && c.Env.Kind == EnvPendulum {
		add(src.blame(pathWorldModelRew, pathWorldModelOn), "No success signal",
			fmt.Sprintf("world_model.reward = %q trains the reward model on whether episodes succeed, and %q has no notion of success (its episodes only end at the time limit). Use reward = %q.",
				WorldModelRewardSuccessDelta, EnvPendulum, WorldModelRewardDirect))
	}
}

// checkPixelWorldModel reports a world model whose kind does not match the env's
// observations: the pixel model needs the tabletop cameras, the state-vector model cannot
// read them, the pixel model imagines only for the VLA in sync mode, and the state-vector
// model has no expert to collect with.
func checkPixelWorldModel(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	w := c.WorldModel
	if !w.Enabled {
		return
	}
	if w.Pixels == nil {
		if c.Env.Pixels {
			add(src.blame(joinPath(blockEnv, attrPixels), pathWorldModelOn), "State-vector world model on a pixel env",
				"this world model predicts state vectors, and env.pixels = true makes the run about camera frames. Add a pixels { } block to world_model for the pixel world model (M_obs over frames, M_rew over frames), set env.pixels = false (the world model then learns the 70-D state features), or turn the world model off.")
		}
		if w.Behaviour == WorldModelBehaviourExpertNoisy {
			add(src.blame(pathWorldModelBehav, pathWorldModelOn), "No expert for the state-vector world model",
				fmt.Sprintf("world_model.behaviour = %q plays the tabletop suites' scripted expert, which only the pixel world model's offline collector has. Use behaviour = %q, or add a pixels { } block.",
					WorldModelBehaviourExpertNoisy, WorldModelBehaviourRandom))
		}
		return
	}
	if c.Env.Kind != EnvTabletop || !c.Env.Pixels {
		add(src.blame(pathWorldModelPixels, joinPath(blockEnv, attrPixels), pathEnvKind), "Pixel world model without camera frames",
			fmt.Sprintf("world_model.pixels predicts the tabletop cameras' frames, which only env \"tabletop\" with pixels = true renders (env is %q, pixels %v). Set env \"tabletop\" { pixels = true }, or remove the pixels block for the state-vector world model.",
				c.Env.Kind, c.Env.Pixels))
	}
	if w.ImaginationRatio > 0 && (c.Policy.VLA == nil || c.Pipeline.Mode != ModeSync) {
		add(src.blame(pathImaginationRatio, pathWorldModelPixels), "Imagined training over pixels needs the VLA in sync mode",
			fmt.Sprintf("world_model.imagination_ratio = %g imagines camera frames for the policy to act on, which only the VLA policy reads (policy.vla is %s), and imagines from each sync round's real steps (pipeline.mode is %q). Add a vla block to the policy and set pipeline.mode = %q, or set imagination_ratio = 0 to pretrain and score the pixel world model only.",
				w.ImaginationRatio, map[bool]string{true: "set", false: "absent"}[c.Policy.VLA != nil], c.Pipeline.Mode, ModeSync))
	}
	if px := w.Pixels; px.ObsFitSteps+px.RewFitSteps+px.ProprioFitSteps > 0 && !(w.ImaginationRatio > 0) {
		add(src.blame(pathWorldModelPixels, pathImaginationRatio), "Online fits without imagined training",
			fmt.Sprintf("world_model.pixels sets online fits (obs_fit_steps %d, rew_fit_steps %d, proprio_fit_steps %d), which run during imagined training only, and imagination_ratio is %g. Set imagination_ratio > 0 (with the VLA in sync mode), or set the fit steps to 0.",
				px.ObsFitSteps, px.RewFitSteps, px.ProprioFitSteps, w.ImaginationRatio))
	}
	if px := w.Pixels; px.Group > 1 && (!(w.ImaginationRatio > 0) || c.Algorithm.AdvEstimator != AdvEstimatorGRPO) {
		add(src.blame(pathWorldModelPixels, pathImaginationRatio, pathAdvEstimator), "Imagined groups without GRPO on imagined rollouts",
			fmt.Sprintf("world_model.pixels.group = %d imagines each start %d times so that GRPO can compare the rollouts of a start, but imagination_ratio is %g and algorithm.adv_estimator is %q. Set imagination_ratio > 0 and adv_estimator = \"grpo\", or drop group.",
				px.Group, px.Group, w.ImaginationRatio, c.Algorithm.AdvEstimator))
	}
	if px := w.Pixels; px.Graded && px.Group < 2 {
		add(src.blame(pathWorldModelPixels), "Graded imagined outcomes without imagined groups",
			fmt.Sprintf("world_model.pixels.graded ranks the imagined rollouts of a start against each other, and group is %d, so a start has no others. Set group = 8 (with imagination_ratio > 0 and adv_estimator = \"grpo\"), or drop graded.", px.Group))
	}
	if px := w.Pixels; px.Temperature > 0 && !(w.ImaginationRatio > 0) {
		add(src.blame(pathWorldModelPixels, pathImaginationRatio), "Imagined sampling temperature without imagined training",
			fmt.Sprintf("world_model.pixels.temperature = %g samples the actions of imagined rollouts, and imagination_ratio is %g, so nothing is imagined. Set imagination_ratio > 0 (with the VLA in sync mode), or drop temperature.",
				px.Temperature, w.ImaginationRatio))
	}
	if px := w.Pixels; px.StartWithin > 0 && !(w.ImaginationRatio > 0) {
		add(src.blame(pathWorldModelPixels, pathImaginationRatio), "Imagined starts without imagined training",
			fmt.Sprintf("world_model.pixels.start_within = %d chooses where imagined rollouts start, and imagination_ratio is %g, so nothing is imagined. Set imagination_ratio > 0 (with the VLA in sync mode), or drop start_within.",
				px.StartWithin, w.ImaginationRatio))
	}
	if px := w.Pixels; px.Tempered && px.Temperature == 0 {
		add(src.blame(pathWorldModelPixels), "Tempered imagined training without an imagined temperature",
			"world_model.pixels.tempered evaluates the imagined actions at the temperature they were sampled at, and temperature is 0 (the policy's own), so there is nothing to temper. Set temperature = 0.3 (measured), or drop tempered.")
	}
	if px := w.Pixels; px.RewCounterfactualJitter > 0 && px.RewCounterfactual == 0 {
		add(src.blame(pathWorldModelPixels), "Counterfactual action noise without counterfactual endings",
			fmt.Sprintf("world_model.pixels.rew_counterfactual_jitter = %g is the noise on the actions that drive M_rew's counterfactual endings, and rew_counterfactual is 0, so none are drawn. Set rew_counterfactual = 4 (measured), or drop rew_counterfactual_jitter.",
				px.RewCounterfactualJitter))
	}
	if px := w.Pixels; px.SelfForcing > w.History {
		add(src.blame(pathWorldModelPixels, joinPath(blockWorldModel, attrHistory)), "Self-forcing deeper than the context",
			fmt.Sprintf("world_model.pixels.self_forcing = %d replaces up to that many of M_obs's context frames with its own predictions, and world_model.history = %d gives it only %d. Set self_forcing to at most %d (4 was measured), or raise history.",
				px.SelfForcing, w.History, w.History, w.History))
	}
	if px := w.Pixels; px.SelfForcingFrom > 0 && (px.SelfForcing == 0 || px.SelfForcingFrom >= px.ObsSteps) {
		add(src.blame(pathWorldModelPixels), "Self-forcing start that never comes",
			fmt.Sprintf("world_model.pixels.self_forcing_from = %d switches self-forcing on at that M_obs step, and self_forcing is %d over obs_steps = %d, so it never trains self-forced. Set self_forcing = 4 and self_forcing_from below obs_steps (measured: the last fifth of them), or drop self_forcing_from.",
				px.SelfForcingFrom, px.SelfForcing, px.ObsSteps))
	}
	if w.OfflineTrajectories == 0 {
		add(src.blame(joinPath(blockWorldModel, attrOfflineTrajectories), pathWorldModelPixels), "Pixel world model without offline data",
			"the pixel world model is pretrained on offline episodes before it can imagine (its online fits refine it), and offline_trajectories = 0 records none. Set offline_trajectories to at least 10 (one held-out episode in ten; the paper uses 1,000).")
	} else if w.OfflineTrajectories < 10 {
		add(src.blame(joinPath(blockWorldModel, attrOfflineTrajectories), pathWorldModelPixels), "Too few offline episodes",
			fmt.Sprintf("world_model.offline_trajectories = %d: the pixel world model holds out one episode in ten to score itself, so it needs at least 10. Set offline_trajectories = 10 or more (the paper uses 1,000).", w.OfflineTrajectories))
	}
}
