package specs

import (
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
)

// Names in the pretrain block.
const (
	blockPretrain    = "pretrain"
	attrDemosPerTask = "demos_per_task"
	attrBatch        = "batch"
	attrNoise        = "noise"
	attrShift        = "shift"
	attrLabelSigma   = "label_sigma"
	attrFrom         = "from"

	pathPretrain = blockPretrain + "." + attrEnabled
)

// Pretrain is the behaviour-cloning (BC) warm start of AcceRL's recipe: before RL, the run
// records demonstrations of every task of its suite with the scripted expert, trains the
// policy to imitate them (least squares on the expert's actions, chunked as the policy's
// action_chunk says), measures the cloned policy's success with the evaluation block's
// protocol, and starts RL from it. Tabletop suites with the gaussian head only.
//
// A pretrain block turns it on with these defaults; `enabled = false` in an ablation turns
// it off again (the "RL from scratch" arm). The whole block is omitted from the JSON while
// off, so specs without one keep their hash.
type Pretrain struct {
	Enabled bool `json:"enabled"`
	// DemosPerTask is the number of successful expert episodes recorded per task (LIBERO: 50).
	DemosPerTask int `json:"demos_per_task"`
	// Epochs over the demonstrations; Batch samples per gradient step.
	Epochs int `json:"epochs"`
	Batch  int `json:"batch"`
	// LearningRate is Adam's initial rate, decayed linearly to a tenth over the epochs.
	LearningRate float64 `json:"learning_rate"`
	// Noise is the DART execution noise σ (in action units) added to the expert's motion
	// while recording; the labels stay the noise-free actions, so the data shows the
	// corrections back from slightly wrong states.
	Noise float64 `json:"noise"`
	// Shift is random-shift augmentation of the VLA's training images: each is translated by
	// up to this many whole pixels per sample and epoch (edges repeated), so that the
	// network cannot key on the exact pixels of a few hundred demonstrations. VLA policies
	// only; 0 (omitted from the JSON, so older specs keep their hash) trains on the images as
	// recorded. Measured on the spatial suite at 32×32, shift 2 lowered BC success from
	// 24.6% to 7.2% (README): try it with larger images, where a pixel is less of the view.
	Shift int `json:"shift,omitempty"`
	// LabelSigma > 0 trains the VLA on ordinal soft labels: the target of an expert's
	// action bin is a Gaussian of LabelSigma bins around it, so that a neighbouring bin is a
	// near miss rather than as wrong as any other (vla.SoftTargets). VLA policies only; 0
	// (omitted from the JSON, so older specs keep their hash) is one-hot cross-entropy.
	// Measured on the spatial suite with `accerl bench bc` (docs/results/vla-bc-notes.md):
	// σ 3 gave +4 to +5.5 points with 20 demonstrations per task and +1.8 with 50; σ 6 blurs
	// the targets too much.
	LabelSigma float64 `json:"label_sigma,omitempty"`
	// From starts the cloning from a policy cloned before instead of a random network, as
	// RL fine-tuning of a VLA starts from a released supervised checkpoint: a run directory
	// (its bc/final checkpoint), that checkpoint directory itself, a `bench learn --bc-cache`
	// entry or a `bench bc --save-model` file; a relative path is taken from the directory
	// accerl is run in and stored absolute. The run records its own demonstrations as
	// usual, trains Epochs more epochs from the given policy (a fresh optimizer, the
	// learning rate decaying from LearningRate to a tenth), and with epochs = 0 evaluates
	// it and starts RL from it unchanged. VLA policies only; omitted from the JSON when
	// empty, so older specs keep their hash.
	From string `json:"from,omitempty"`
}

// DefaultPretrain is the measured BC recipe (activities/bc: 50 demos per task, 30 epochs,
// batch 128, learning rate 1e-3, DART noise 0.1).
func DefaultPretrain() Pretrain {
	return Pretrain{Enabled: true, DemosPerTask: 50, Epochs: 30, Batch: 128, LearningRate: 1e-3, Noise: 0.1}
}

var pretrainSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrEnabled},
		{Name: attrDemosPerTask},
		{Name: attrEpochs},
		{Name: attrBatch},
		{Name: attrLearningRate},
		{Name: attrNoise},
		{Name: attrShift},
		{Name: attrLabelSigma},
		{Name: attrFrom},
	},
}

// decodePretrain applies a pretrain block onto p: a block turns pretraining on with the
// defaults for whatever it does not set (an inherited block keeps its values).
func (d *decoder) decodePretrain(block *hcl.Block, p *Pretrain) {
	c := d.content(block.Body, pretrainSchema)
	if !p.Enabled {
		*p = DefaultPretrain()
	}
	d.src.record(pathPretrain, block.DefRange)
	d.setBool(c.Attributes, blockPretrain, attrEnabled, &p.Enabled)
	d.setInt(c.Attributes, blockPretrain, attrDemosPerTask, &p.DemosPerTask, between(1, 10000))
	d.setInt(c.Attributes, blockPretrain, attrEpochs, &p.Epochs, between(0, 100000))
	d.setInt(c.Attributes, blockPretrain, attrBatch, &p.Batch, between(1, 1<<20))
	d.setFloat(c.Attributes, blockPretrain, attrLearningRate, &p.LearningRate, aboveUpTo(0, 1))
	d.setFloat(c.Attributes, blockPretrain, attrNoise, &p.Noise, between(0, 1))
	d.setInt(c.Attributes, blockPretrain, attrShift, &p.Shift, between(0, 16))
	d.setFloat(c.Attributes, blockPretrain, attrLabelSigma, &p.LabelSigma, between(0, 64))
	d.setString(c.Attributes, blockPretrain, attrFrom, &p.From)
	if p.From != "" && !filepath.IsAbs(p.From) {
		if abs, err := filepath.Abs(p.From); err == nil {
			p.From = abs
		}
	}
	if !p.Enabled {
		*p = Pretrain{}
	}
}

// checkPretrain reports a pretrain block the arm cannot use: behaviour cloning needs the
// tabletop suites' expert and a head whose mean can be fitted by least squares; and a
// policy.execute_steps above policy.action_chunk, or an action chunk on another head.
func checkPretrain(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	p := c.Policy
	if p.ExecuteSteps > max(1, p.ActionChunk) {
		add(src.blame(joinPath(blockPolicy, attrExecute), joinPath(blockPolicy, attrChunk)), "More executed steps than the chunk holds",
			fmt.Sprintf("policy.execute_steps (%d) must not exceed policy.action_chunk (%d), because each query writes action_chunk actions and runs the first execute_steps of them. Lower execute_steps or raise action_chunk.",
				p.ExecuteSteps, max(1, p.ActionChunk)))
	}
	if p.ActionChunk > 1 && p.Action != ActionGaussian && p.VLA == nil {
		add(src.blame(joinPath(blockPolicy, attrChunk), pathAction), "Action chunks need the gaussian head",
			fmt.Sprintf("policy.action_chunk = %d writes %d actions per query, which only the gaussian head and the VLA do (policy.action is %q). Set action = %q, add a vla block, or remove action_chunk.",
				p.ActionChunk, p.ActionChunk, p.Action, ActionGaussian))
	}
	if !c.Pretrain.Enabled {
		return
	}
	if c.Env.Kind != EnvTabletop {
		add(src.blame(pathPretrain, pathEnvKind), "Behaviour cloning needs a tabletop suite",
			fmt.Sprintf("the pretrain block clones the tabletop suites' scripted expert, and env %q has none. Use env \"tabletop\" { suite = ... }, or remove the pretrain block (or set enabled = false in it).",
				c.Env.Kind))
	}
	if p.Action != ActionGaussian && p.VLA == nil {
		add(src.blame(pathPretrain, pathAction), "Behaviour cloning needs the gaussian head",
			fmt.Sprintf("the pretrain block fits the policy's mean action to the expert's by least squares, which needs policy.action = %q (it is %q). Set action = %q, or add a vla block (cloned by cross-entropy on its action tokens).",
				ActionGaussian, p.Action, ActionGaussian))
	}
	if c.Pretrain.LabelSigma > 0 && p.VLA == nil {
		add(src.blame(joinPath(blockPretrain, attrLabelSigma), pathPretrain), "Soft labels without action tokens",
			fmt.Sprintf("pretrain.label_sigma = %g spreads each expert action bin over its neighbours, which only the VLA's token cross-entropy uses (a vla block in the policy). Remove label_sigma, or add a vla block.", c.Pretrain.LabelSigma))
	}
	if c.Pretrain.Shift > 0 && p.VLA == nil {
		add(src.blame(joinPath(blockPretrain, attrShift), pathPretrain), "Image augmentation without images",
			fmt.Sprintf("pretrain.shift = %d translates the training images, and only a VLA policy (a vla block in the policy) reads images. Remove shift, or add a vla block.", c.Pretrain.Shift))
	}
	if c.Pretrain.From != "" && p.VLA == nil {
		add(src.blame(joinPath(blockPretrain, attrFrom), pathPretrain), "Starting from a clone needs the VLA",
			fmt.Sprintf("pretrain.from = %q starts the cloning from a cloned VLA, and this policy has no vla block. Remove from, or add a vla block that builds the network cloned there.", c.Pretrain.From))
	}
	if c.Pretrain.Epochs == 0 && c.Pretrain.From == "" {
		add(src.blame(joinPath(blockPretrain, attrEpochs), pathPretrain), "Cloning for no epochs",
			"pretrain.epochs = 0 trains nothing, which only means something with pretrain.from (a clone taken as it is). Set epochs to at least 1, or give from.")
	}
	if c.WorldModel.Enabled && c.WorldModel.Pixels == nil {
		// The pixel world model and a cloned VLA go together (the run pretrains the world
		// model, then clones the policy: bench sample-efficiency --env tabletop); the
		// state-vector world model beside a clone has not been tried.
		add(src.blame(pathPretrain, pathWorldModelOn), "Behaviour cloning with a state-vector world model",
			"a run that clones its policy (the pretrain block) can pretrain the pixel world model (world_model with a pixels block) beside it, not yet the state-vector one. Turn one of them off, or use the pixel world model (env \"tabletop\" { pixels = true } with a vla policy).")
	}
}
