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
	// AdvantageNormBatch or AdvantageNormNone.
	AdvantageNorm string `json:"advantage_norm"`
	// GIPOSigma is GIPO's σ in w = exp(-½ (log ρ / σ)²). > 0.
	GIPOSigma float64 `json:"gipo_sigma"`
}

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
	d.setEnum(c, p, attrAdvantageNorm, &a.AdvantageNorm, advantageNorms())
	d.setFloat(c, p, attrGIPOSigma, &a.GIPOSigma, greaterThan(0))
}
