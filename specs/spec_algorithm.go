package specs

import "github.com/hashicorp/hcl/v2"

// Names in the algorithm block.
const (
	blockAlgorithm      = "algorithm"
	attrLearningRate    = "learning_rate"
	attrAnnealLR        = "anneal_lr"
	attrGamma           = "gamma"
	attrGAELambda       = "gae_lambda"
	attrClip            = "clip"
	attrValueCoef       = "value_coef"
	attrEntropyCoef     = "entropy_coef"
	attrMaxGradNorm     = "max_grad_norm"
	attrEpochs          = "epochs"
	attrMinibatches     = "minibatches"
	attrBatchSteps      = "batch_steps"
	attrNormAdv         = "norm_adv"
	attrRecomputeValues = "recompute_values"
	attrAdvantageNorm   = "advantage_norm"
	attrGIPOSigma       = "gipo_sigma"
	attrKLCoef          = "kl_coef"
	attrLRSchedule      = "lr_schedule"
	attrWarmupUpdates   = "warmup_updates"
	attrSAPOTauPos      = "sapo_tau_pos"
	attrSAPOTauNeg      = "sapo_tau_neg"
	attrVTraceRhoBar    = "vtrace_rho_bar"
	attrVTraceCBar      = "vtrace_c_bar"
	attrClipValueLoss   = "clip_value_loss"
	attrCriticWarmup    = "critic_warmup"
	attrSkipRewardless  = "skip_rewardless"
	attrAdvEstimator    = "adv_estimator"
	attrPositiveAdv     = "positive_advantages"
	attrRepeatStarts    = "repeat_starts"
)

// pathAlgorithmName is the sources path recorded for the algorithm label.
const pathAlgorithmName = blockAlgorithm + ".name"

// Algorithm holds the policy-optimisation algorithm and its hyperparameters.
type Algorithm struct {
	// Name is the algorithm block's label: AlgorithmPPO, AlgorithmGIPO,
	// AlgorithmSAPO or AlgorithmVTrace.
	Name string `json:"name"`
	// LearningRate is Adam's step size. > 0.
	LearningRate float64 `json:"learning_rate"`
	// AnnealLR decays the learning rate linearly to 0 over the budget.
	AnnealLR bool `json:"anneal_lr"`
	// Gamma is the discount factor, in (0,1].
	Gamma float64 `json:"gamma"`
	// GAELambda is GAE's λ, in [0,1].
	GAELambda float64 `json:"gae_lambda"`
	// Clip is PPO's ratio clip ε. > 0.
	Clip float64 `json:"clip"`
	// ValueCoef weighs the value loss c_v. >= 0.
	ValueCoef float64 `json:"value_coef"`
	// EntropyCoef weighs the entropy bonus c_e. >= 0.
	EntropyCoef float64 `json:"entropy_coef"`
	// MaxGradNorm clips the global gradient norm. > 0.
	MaxGradNorm float64 `json:"max_grad_norm"`
	// Epochs is the number of passes over each training batch. >= 1.
	Epochs int `json:"epochs"`
	// Minibatches is the number of minibatches per epoch. >= 1; it need not
	// divide BatchSteps.
	Minibatches int `json:"minibatches"`
	// BatchSteps is the number of env steps consumed per update. >= 1.
	BatchSteps int `json:"batch_steps"`
	// NormAdv turns advantage normalisation on; when false no normalisation
	// happens whatever AdvantageNorm says.
	NormAdv bool `json:"norm_adv"`
	// RecomputeValues recomputes V(o_t) with the current parameters before
	// computing advantages (policy-lag compensation).
	RecomputeValues bool `json:"recompute_values"`
	// AdvantageNorm is the normalisation scope: AdvantageNormGlobal,
	// AdvantageNormMinibatch or AdvantageNormNone. Configs decoded from
	// older workflow histories may hold the old spelling AdvantageNormBatch,
	// which means AdvantageNormMinibatch.
	AdvantageNorm string `json:"advantage_norm"`
	// GIPOSigma is GIPO's σ in w = exp(-½ (log ρ / σ)²). > 0.
	GIPOSigma float64 `json:"gipo_sigma"`
	// KLCoef weighs an extra KL(π_old‖π) penalty c_kl; 0 turns it off. >= 0.
	KLCoef float64 `json:"kl_coef"`
	// LRSchedule is how the learning rate decays after warmup when AnnealLR
	// is on: LRScheduleLinear (to 0, CleanRL's anneal), LRScheduleCosine or
	// LRScheduleConstant. With AnnealLR off the rate is constant.
	LRSchedule string `json:"lr_schedule"`
	// WarmupUpdates ramps the learning rate linearly up from LearningRate/
	// WarmupUpdates over this many updates before the schedule. >= 0.
	WarmupUpdates int `json:"warmup_updates"`
	// SAPOTauPos and SAPOTauNeg are SAPO's gate temperatures for positive and
	// negative advantages (Gao et al. 2025). > 0.
	SAPOTauPos float64 `json:"sapo_tau_pos"`
	SAPOTauNeg float64 `json:"sapo_tau_neg"`
	// VTraceRhoBar and VTraceCBar truncate V-trace's importance weights
	// (ρ̄ and c̄ of Espeholt et al. 2018). > 0.
	VTraceRhoBar float64 `json:"vtrace_rho_bar"`
	VTraceCBar   float64 `json:"vtrace_c_bar"`
	// ClipValueLoss clips the value prediction's change per update to ±Clip, as
	// CleanRL does. Turn it off when returns are large (Pendulum's are near
	// −1000): the clipped critic then cannot follow them.
	ClipValueLoss bool `json:"clip_value_loss"`
	// CriticWarmup is the number of updates at the start of each run that
	// train the value alone (no policy gradient): when RL fine-tunes a cloned
	// policy the critic starts untrained, and advantages made of its errors
	// move the policy at random (verl's critic_warmup). >= 0; 0 (omitted from
	// the stored config, so older configs keep their hashes) is off.
	CriticWarmup int `json:"critic_warmup,omitempty"`
	// SkipRewardless trains the value alone on every batch whose rewards are
	// all 0 (sparse success reward: no episode in it succeeded): such a
	// batch's advantages hold only the critic's errors.
	SkipRewardless bool `json:"skip_rewardless,omitempty"`
	// PositiveAdvantages lets only steps with a positive normalised advantage
	// move the policy (max(Â, 0), self-imitation): on a sparse success reward
	// the policy is pulled toward what succeeded and not pushed away from the
	// tokens of failed episodes. The value trains on every step.
	PositiveAdvantages bool `json:"positive_advantages,omitempty"`
	// AdvEstimator is how the policy's advantages are estimated: AdvEstimatorGAE (GAE over
	// the critic's values, the default; "" in the stored config, so older configs keep their
	// hashes) or AdvEstimatorGRPO (verl's adv_estimator = grpo: each episode that ends in a
	// batch is scored by its return against the batch's other episodes of the same task,
	// (R − mean)/std, with no critic; steps of episodes the batch cuts get no policy
	// gradient). On a sparse success reward this replaces the errors of a critic that
	// cloning left untrained by the outcomes themselves. The value head still trains on GAE's
	// returns; norm_adv does not apply (the groups normalise). Not with vtrace, nor with
	// the state-vector world model's imagination; with the pixel world model's when it
	// imagines each start in groups (world_model.pixels.group >= 2).
	AdvEstimator string `json:"adv_estimator,omitempty"`
	// RepeatStarts, above 1 and with AdvEstimatorGRPO, has every rollout environment play
	// each start it draws (a tabletop task's layout after a reset) this many times in a row,
	// and judges each episode against the batch's other plays of its start instead of its
	// task's episodes: what differs between them is the actions, not how hard the layout
	// is (SimpleVLA-RL and RLinf roll each LIBERO initial state out n times). 0 or 1 (the
	// default, omitted from the stored config) draws a new start at every reset.
	RepeatStarts int `json:"repeat_starts,omitempty"`
}

// Advantage estimators (algorithm.adv_estimator).
const (
	AdvEstimatorGAE  = "gae"
	AdvEstimatorGRPO = "grpo"
)

var algorithmSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrLearningRate},
		{Name: attrAnnealLR},
		{Name: attrGamma},
		{Name: attrGAELambda},
		{Name: attrClip},
		{Name: attrValueCoef},
		{Name: attrEntropyCoef},
		{Name: attrMaxGradNorm},
		{Name: attrEpochs},
		{Name: attrMinibatches},
		{Name: attrBatchSteps},
		{Name: attrNormAdv},
		{Name: attrRecomputeValues},
		{Name: attrAdvantageNorm},
		{Name: attrGIPOSigma},
		{Name: attrKLCoef},
		{Name: attrLRSchedule},
		{Name: attrWarmupUpdates},
		{Name: attrSAPOTauPos},
		{Name: attrSAPOTauNeg},
		{Name: attrVTraceRhoBar},
		{Name: attrVTraceCBar},
		{Name: attrClipValueLoss},
		{Name: attrCriticWarmup},
		{Name: attrSkipRewardless},
		{Name: attrPositiveAdv},
		{Name: attrAdvEstimator},
		{Name: attrRepeatStarts},
	},
}

// decodeAlgorithm applies an algorithm block (label: name) onto a.
func (d *decoder) decodeAlgorithm(block *hcl.Block, a *Algorithm) {
	name, nameRange := block.Labels[0], block.LabelRanges[0]
	if contains(algorithms(), name) {
		a.Name = name
		d.src.record(pathAlgorithmName, nameRange)
	} else {
		d.errorf(nameRange, nil, "Unknown algorithm",
			"There is no algorithm %q. Use one of: %s.", name, quoteList(algorithms()))
	}
	c := d.content(block.Body, algorithmSchema).Attributes
	const p = blockAlgorithm
	d.setFloat(c, p, attrLearningRate, &a.LearningRate, greaterThan(0))
	d.setBool(c, p, attrAnnealLR, &a.AnnealLR)
	d.setFloat(c, p, attrGamma, &a.Gamma, aboveUpTo(0, 1))
	d.setFloat(c, p, attrGAELambda, &a.GAELambda, between(0, 1))
	d.setFloat(c, p, attrClip, &a.Clip, greaterThan(0))
	d.setFloat(c, p, attrValueCoef, &a.ValueCoef, atLeast(0))
	d.setFloat(c, p, attrEntropyCoef, &a.EntropyCoef, atLeast(0))
	d.setFloat(c, p, attrMaxGradNorm, &a.MaxGradNorm, greaterThan(0))
	d.setInt(c, p, attrEpochs, &a.Epochs, atLeast(1))
	d.setInt(c, p, attrMinibatches, &a.Minibatches, atLeast(1))
	d.setInt(c, p, attrBatchSteps, &a.BatchSteps, atLeast(1))
	d.setBool(c, p, attrNormAdv, &a.NormAdv)
	d.setBool(c, p, attrRecomputeValues, &a.RecomputeValues)
	d.setEnumAliased(c, p, attrAdvantageNorm, &a.AdvantageNorm, advantageNorms(), map[string]string{AdvantageNormBatch: AdvantageNormMinibatch})
	d.setFloat(c, p, attrGIPOSigma, &a.GIPOSigma, greaterThan(0))
	d.setFloat(c, p, attrKLCoef, &a.KLCoef, atLeast(0))
	d.setEnum(c, p, attrLRSchedule, &a.LRSchedule, lrSchedules())
	d.setInt(c, p, attrWarmupUpdates, &a.WarmupUpdates, atLeast(0))
	d.setFloat(c, p, attrSAPOTauPos, &a.SAPOTauPos, greaterThan(0))
	d.setFloat(c, p, attrSAPOTauNeg, &a.SAPOTauNeg, greaterThan(0))
	d.setFloat(c, p, attrVTraceRhoBar, &a.VTraceRhoBar, greaterThan(0))
	d.setFloat(c, p, attrVTraceCBar, &a.VTraceCBar, greaterThan(0))
	d.setBool(c, p, attrClipValueLoss, &a.ClipValueLoss)
	d.setInt(c, p, attrCriticWarmup, &a.CriticWarmup, atLeast(0))
	d.setBool(c, p, attrSkipRewardless, &a.SkipRewardless)
	d.setBool(c, p, attrPositiveAdv, &a.PositiveAdvantages)
	d.setEnum(c, p, attrAdvEstimator, &a.AdvEstimator, []string{AdvEstimatorGAE, AdvEstimatorGRPO})
	if a.AdvEstimator == AdvEstimatorGAE {
		a.AdvEstimator = "" // the default, stored as omitted so that the hash is the default's
	}
	d.setInt(c, p, attrRepeatStarts, &a.RepeatStarts, atLeast(0))
	if a.RepeatStarts == 1 {
		a.RepeatStarts = 0 // one play per start is the default: the same hash
	}
}
