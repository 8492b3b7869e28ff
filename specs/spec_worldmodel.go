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
	if w.Enabled && c.Env.Pixels {
		add(src.blame(joinPath(blockEnv, attrPixels), pathWorldModelOn), "World model over pixels",
			"the world model predicts state vectors and does not read frames yet; a run with env.pixels = true cannot use it. Set pixels = false (the world model then learns the 70-D state features), or turn the world model off.")
	}
	if w.Enabled && w.Reward == WorldModelRewardSuccessDelta && c.Env.Kind == EnvPendulum {
		add(src.blame(pathWorldModelRew, pathWorldModelOn), "No success signal",
			fmt.Sprintf("world_model.reward = %q trains the reward model on whether episodes succeed, and %q has no notion of success (its episodes only end at the time limit). Use reward = %q.",
				WorldModelRewardSuccessDelta, EnvPendulum, WorldModelRewardDirect))
	}
}
