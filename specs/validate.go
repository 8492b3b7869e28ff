package specs

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// Attribute paths used by the checks that span several attributes.
const (
	pathReplayCapacity = blockPipeline + "." + attrReplayCapacity
	pathChunkSteps     = blockPipeline + "." + attrChunkSteps
	pathBatchSteps     = blockAlgorithm + "." + attrBatchSteps
	pathLatencyKind    = blockEnv + "." + blockLatency + "." + attrKind
	pathLatencyMedian  = blockEnv + "." + blockLatency + "." + attrMedian
	pathMode           = blockPipeline + "." + attrMode
)

// finalize fills the defaults that depend on other fields of the same arm.
// It runs after all ablations were decoded, so an ablation that switches the
// env kind gets the new kind's episode limit unless some block wrote one.
func finalize(cfg *Config) {
	if cfg.Env.MaxEpisodeSteps == 0 {
		cfg.Env.MaxEpisodeSteps, _ = DefaultMaxEpisodeSteps(cfg.Env.Kind)
	}
}

// checkArm reports the constraints between fields of one resolved arm. The
// subject is the attribute the arm itself wrote when it wrote one, so a
// conflict an ablation introduces points into the ablation.
func checkArm(arm Arm, src *sources) hcl.Diagnostics {
	var diags hcl.Diagnostics
	add := func(subject hcl.Range, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  summary,
			Detail:   fmt.Sprintf("In arm %q: %s", arm.Name, detail),
			Subject:  subject.Ptr(),
		})
	}
	c := arm.Config
	if c.Pipeline.ReplayCapacity < c.Algorithm.BatchSteps {
		add(src.blame(pathReplayCapacity, pathBatchSteps), "Replay capacity smaller than batch",
			fmt.Sprintf("pipeline.replay_capacity (%d) must be at least algorithm.batch_steps (%d), because every update consumes batch_steps steps from replay. Raise replay_capacity or lower batch_steps.",
				c.Pipeline.ReplayCapacity, c.Algorithm.BatchSteps))
	}
	if c.Pipeline.ChunkSteps > c.Pipeline.ReplayCapacity {
		add(src.blame(pathChunkSteps, pathReplayCapacity), "Chunk larger than replay",
			fmt.Sprintf("pipeline.chunk_steps (%d) must not exceed pipeline.replay_capacity (%d), because a chunk is stored in replay whole. Lower chunk_steps or raise replay_capacity.",
				c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity))
	}
	if c.Env.Latency.Kind == LatencyLognormal && c.Env.Latency.Median <= 0 {
		add(src.blame(pathLatencyMedian, pathLatencyKind), "Value out of range",
			"a lognormal latency needs a median longer than zero, because its logarithm is the distribution's mean. Set median to a positive duration such as \"5ms\", or use kind = \"none\".")
	}
	checkWorldModel(c, src, add)
	if w := c.WorldModel; w.Enabled && w.ImaginationRatio > 0 && c.Pipeline.Mode == ModeAsync {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Imagination does not save real steps in async mode",
			Detail: fmt.Sprintf("In arm %q: in async mode the rollout workers step their environments at full speed whatever the trainer does, "+
				"so world_model.imagination_ratio = %g makes each update take fewer real steps but not the run: the budget is spent at the same pace, "+
				"and real data the trainer does not keep up with is evicted from replay. To trade imagined for real steps, set pipeline.mode = \"sync\".",
				arm.Name, w.ImaginationRatio),
			Subject: src.blame(pathImaginationRatio, pathMode, pathWorldModelOn).Ptr(),
		})
	}
	return diags
}

// dedupe keeps the first of diagnostics with the same summary and subject: an
// ablation that inherits a conflict from the base reports it at the same
// place as the base does.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		summary string
		subject hcl.Range
	}
	seen := map[key]bool{}
	var out hcl.Diagnostics
	for _, d := range diags {
		var k key
		k.summary = d.Summary
		if d.Subject != nil {
			k.subject = *d.Subject
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}
