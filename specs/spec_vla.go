package specs

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// Names in the policy's vla block.
const (
	blockVLA      = "vla"
	attrDim       = "dim"
	attrLayers    = "layers"
	attrHeads     = "heads"
	attrPatch     = "patch"
	attrMLPRatio  = "mlp_ratio"
	attrVocabSize = "vocab_size"
	attrSlimHead  = "slim_head"
	attrTemp      = "temperature"
	attrDetachVal = "detach_value"
	attrExecOnly  = "executed_only"
	attrVLAGreedy = "greedy"

	pathVLA = blockPolicy + "." + blockVLA
)

// VLA makes the policy a micro vision-language-action model (package kernels/vla): a
// decoder-only transformer that reads the tabletop cameras' images (cut into patch×patch
// patches), the task's instruction (its words embedded) and the 8-D proprioception, and
// writes each action as 7 tokens (one per action dimension, policy.bins bins each; with
// action_chunk K, 7·K tokens), decoded one after another with a KV cache. RL trains it with
// token-level losses over those tokens. It needs env "tabletop" { pixels = true } and
// action = "tokens"; the pretrain block clones it from demonstrations by cross-entropy on
// the action tokens. Omitted from the JSON while absent, so specs without it keep their hash.
type VLA struct {
	Dim      int `json:"dim"`       // transformer width
	Layers   int `json:"layers"`    // transformer blocks
	Heads    int `json:"heads"`     // attention heads; must divide dim
	Patch    int `json:"patch"`     // patch side in pixels; must divide env.image_size
	MLPRatio int `json:"mlp_ratio"` // MLP hidden width as a multiple of dim
	// VocabSize is the LM vocabulary: the suites' words, 2 specials and the bins action
	// tokens, padded with unused ids up to this size (an LM-sized table, so that vocabulary
	// slimming has something to cut); 0 is no padding.
	VocabSize int `json:"vocab_size,omitempty"`
	// SlimHead restricts the LM head to the action-token rows (vocabulary slimming);
	// false scores the action tokens with the full-vocabulary softmax.
	SlimHead bool `json:"slim_head"`
	// Temperature T samples the RL stage's action tokens from softmax(logits/T), in acting
	// and in the learner's log-probabilities alike, so that the importance ratios compare
	// the distribution the actions came from: RL then trains the tempered policy. A
	// behaviour-cloned VLA's distributions are broad (soft labels most of all), and sampled
	// at T = 1 they seldom finish a task, so RL sees almost no reward; T < 1 samples nearer
	// the greedy actions. Cloning always trains at T = 1 and greedy evaluation does not
	// depend on T. 0 (omitted from the JSON, so older specs keep their hash) is 1.
	Temperature float64 `json:"temperature,omitempty"`
	// DetachValue trains RL's value head on the transformer's pooled hidden states without
	// sending the value loss's gradient into the transformer, so that the critic, which
	// starts far from the returns (cloning does not train it), cannot move the features the
	// cloned policy acts on. False (omitted from the JSON) trains them together.
	DetachValue bool `json:"detach_value,omitempty"`
	// ExecutedOnly makes RL's action the executed part of each chunk: with action_chunk K
	// and execute_steps E, the policy decodes 7·E tokens per query instead of 7·K and the
	// token-level loss scores only those. The K−E actions the environment never runs do not
	// change the return, so their tokens' share of the loss (75% at K 8, E 2) is noise in
	// the gradient and dilutes the executed tokens' share; dropping them also makes acting
	// and training cheaper. Behaviour cloning still learns whole chunks; the cloned policy's
	// greedy actions are unchanged (the decoding is causal over the action tokens, so the
	// first 7·E tokens do not depend on the later ones). False (omitted from the JSON)
	// decodes and scores whole chunks.
	ExecutedOnly bool `json:"executed_only,omitempty"`
	// Greedy is how a greedy evaluation (and a deployment) picks each action token:
	// GreedyArgmax, the most probable bin (the default, stored as ""), or GreedyMean, the
	// bin nearest the mean of the distribution at this temperature. At a low temperature
	// (0.03) the mean is the centre of the distribution's top, which follows the policy RL
	// samples and improves, where the argmax of a flat top (soft labels make tops of several
	// near-equal bins) wanders with RL's small steps; at temperature 1 the mean mixes modes.
	Greedy string `json:"greedy,omitempty"`
}

// Greedy decodings of policy.vla.greedy.
const (
	GreedyArgmax = "argmax"
	GreedyMean   = "mean"
)

// SamplingTemperature is Temperature with 0 read as 1.
func (v VLA) SamplingTemperature() float64 {
	if v.Temperature == 0 {
		return 1
	}
	return v.Temperature
}

// DefaultVLA is the measured pixel BC size (activities/bc.DefaultVLAConfig): width 64,
// 2 layers of 2 heads, 8×8 patches, MLP ratio 4, slim head.
func DefaultVLA() VLA {
	return VLA{Dim: 64, Layers: 2, Heads: 2, Patch: 8, MLPRatio: 4, SlimHead: true}
}

var vlaSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrDim}, {Name: attrLayers}, {Name: attrHeads}, {Name: attrPatch},
		{Name: attrMLPRatio}, {Name: attrVocabSize}, {Name: attrSlimHead}, {Name: attrTemp},
		{Name: attrDetachVal}, {Name: attrExecOnly}, {Name: attrVLAGreedy},
	},
}

// decodeVLA applies a policy's vla block onto *v, starting from DefaultVLA.
func (d *decoder) decodeVLA(block *hcl.Block, v **VLA) {
	// A copy: an ablation arm's block must not change the base's (or another arm's).
	cp := DefaultVLA()
	if *v != nil {
		cp = **v
	}
	*v = &cp
	d.src.record(pathVLA, block.DefRange)
	c := d.content(block.Body, vlaSchema)
	a, p := c.Attributes, pathVLA
	d.setInt(a, p, attrDim, &(*v).Dim, between(1, 4096))
	d.setInt(a, p, attrLayers, &(*v).Layers, between(1, 64))
	d.setInt(a, p, attrHeads, &(*v).Heads, between(1, 256))
	d.setInt(a, p, attrPatch, &(*v).Patch, between(1, 256))
	d.setInt(a, p, attrMLPRatio, &(*v).MLPRatio, between(1, 16))
	d.setInt(a, p, attrVocabSize, &(*v).VocabSize, between(0, 1<<20))
	d.setBool(a, p, attrSlimHead, &(*v).SlimHead)
	d.setFloat(a, p, attrTemp, &(*v).Temperature, aboveUpTo(0, 10))
	d.setBool(a, p, attrDetachVal, &(*v).DetachValue)
	d.setBool(a, p, attrExecOnly, &(*v).ExecutedOnly)
	d.setEnum(a, p, attrVLAGreedy, &(*v).Greedy, []string{GreedyArgmax, GreedyMean})
	if (*v).Greedy == GreedyArgmax {
		(*v).Greedy = "" // the default, stored as omitted so that the hash is the default's
	}
	if (*v).Temperature == 1 {
		(*v).Temperature = 0 // the default, stored as omitted so that the hash is the default's
	}
}

// checkVLA reports a vla block the arm cannot use: the VLA reads frames of the tabletop
// suites and writes tokens; its sizes must fit each other and the images.
func checkVLA(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	v := c.Policy.VLA
	if v == nil {
		return
	}
	if c.Env.Kind != EnvTabletop || !c.Env.Pixels {
		add(src.blame(pathVLA, joinPath(blockEnv, attrPixels), pathEnvKind), "The VLA policy needs camera frames",
			fmt.Sprintf("policy.vla reads the cameras' images and the instruction of every step, which only env \"tabletop\" with pixels = true provides (env is %q, pixels %v). Set env \"tabletop\" { pixels = true }, or remove the vla block to use the MLP over state vectors.",
				c.Env.Kind, c.Env.Pixels))
	}
	if c.Policy.Action != ActionTokens {
		add(src.blame(pathVLA, pathAction), "The VLA policy writes action tokens",
			fmt.Sprintf("policy.vla decodes each action as tokens, so policy.action must be %q (it is %q). Set action = %q.", ActionTokens, c.Policy.Action, ActionTokens))
	}
	if v.Dim%v.Heads != 0 {
		add(src.blame(joinPath(pathVLA, attrHeads), joinPath(pathVLA, attrDim)), "Attention heads do not divide the width",
			fmt.Sprintf("policy.vla.heads = %d does not divide dim = %d: each head gets dim/heads channels. Pick heads among the divisors of %d.", v.Heads, v.Dim, v.Dim))
	}
	if s := c.Env.ImageSize; s > 0 && s%v.Patch != 0 {
		add(src.blame(joinPath(pathVLA, attrPatch), joinPath(blockEnv, attrImageSize)), "Patches do not tile the image",
			fmt.Sprintf("policy.vla.patch = %d does not divide env.image_size = %d, so the %d×%d images cannot be cut into %d×%d patches. Pick a patch that divides %d (e.g. 8).", v.Patch, s, s, s, v.Patch, v.Patch, s))
	}
	if c.WorldModel.Enabled && c.WorldModel.Pixels == nil {
		add(src.blame(pathVLA, pathWorldModelOn), "State-vector world model with the VLA policy",
			"this world model imagines state vectors, not the frames the VLA reads. Add a pixels { } block to world_model for the pixel world model, turn the world model off, or remove the vla block.")
	}
}
