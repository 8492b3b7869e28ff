package specs

import "github.com/hashicorp/hcl/v2"

// Names in the evaluation block.
const (
	blockEvaluation = "evaluation"
	attrEpisodes    = "episodes"
	attrGreedy      = "greedy"
	attrSampled     = "sampled"
	attrFinalEps    = "final_episodes"
)

// Evaluation sets the evaluation episodes a run plays at the end of every
// training segment: complete episodes of a fresh environment with the
// current policy, apart from training. They train nothing, change nothing
// a checkpoint holds, and do not count toward env_steps or the budget (the
// usual protocol of sample-efficiency studies); their mean return is the
// eval_return metrics column, and the report plots it and measures the
// steps to the target by it.
type Evaluation struct {
	// Episodes is the number of evaluation episodes per segment; 0 turns
	// evaluation off. >= 0.
	Episodes int `json:"episodes"`
	// Greedy makes the policy take its most likely action; otherwise it
	// samples, as in training.
	Greedy bool `json:"greedy"`
	// Sampled, with Greedy, plays the same episodes a second time sampling
	// the actions as training does (a VLA at policy.vla.temperature): the
	// policy RL optimises, beside the greedy one a deployment runs. Its
	// figures are the eval_sampled_* metrics columns and the warm start's
	// sampled_success. Omitted from the stored config when off.
	Sampled bool `json:"sampled,omitempty"`
	// FinalEpisodes, when > 0, is the number of episodes of the two evaluations a
	// run's headline figures come from: the warm start's (pretrain_success) and the
	// last segment's (final_success). The evaluations between them play Episodes, a
	// cheaper running estimate. LIBERO's protocol plays each task's 50 fixed initial
	// states: 500 for a 10-task tabletop suite, where 100 episodes leave a success
	// rate near 90% a standard error of 3 points. 0 plays Episodes there too.
	// Omitted from the stored config when 0.
	FinalEpisodes int `json:"final_episodes,omitempty"`
}

// HeadlineEpisodes is the number of episodes the warm start's and the last segment's
// evaluations play: FinalEpisodes when set, else Episodes.
func (ev Evaluation) HeadlineEpisodes() int {
	if ev.FinalEpisodes > 0 && ev.Episodes > 0 {
		return ev.FinalEpisodes
	}
	return ev.Episodes
}

// PlaysSampled says whether each evaluation also plays its episodes sampling
// (Sampled beside Greedy, with episodes to play).
func (ev Evaluation) PlaysSampled() bool { return ev.Episodes > 0 && ev.Greedy && ev.Sampled }

var evaluationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrEpisodes},
		{Name: attrGreedy},
		{Name: attrSampled},
		{Name: attrFinalEps},
	},
}

// decodeEvaluation applies an evaluation block onto ev.
func (d *decoder) decodeEvaluation(block *hcl.Block, ev *Evaluation) {
	c := d.content(block.Body, evaluationSchema)
	d.setInt(c.Attributes, blockEvaluation, attrEpisodes, &ev.Episodes, atLeast(0))
	d.setBool(c.Attributes, blockEvaluation, attrGreedy, &ev.Greedy)
	d.setBool(c.Attributes, blockEvaluation, attrSampled, &ev.Sampled)
	d.setInt(c.Attributes, blockEvaluation, attrFinalEps, &ev.FinalEpisodes, atLeast(0))
}
