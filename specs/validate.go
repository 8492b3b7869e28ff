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
	pathMinibatches    = blockAlgorithm + "." + attrMinibatches
	pathMaxStaleness   = blockPipeline + "." + attrMaxStaleness
	pathLag            = blockPipeline + "." + attrLag
	pathAction         = blockPolicy + "." + attrAction
	pathWarmup         = blockAlgorithm + "." + attrWarmupUpdates
	pathCriticWarmup   = blockAlgorithm + "." + attrCriticWarmup
	pathAdvEstimator   = blockAlgorithm + "." + attrAdvEstimator
	pathRepeatStarts   = blockAlgorithm + "." + attrRepeatStarts
	pathEvalSampled    = blockEvaluation + "." + attrSampled
	pathEvalGreedy     = blockEvaluation + "." + attrGreedy
	pathEvalEpisodes   = blockEvaluation + "." + attrEpisodes
	pathEvalFinal      = blockEvaluation + "." + attrFinalEps
	pathAnnealLR       = blockAlgorithm + "." + attrAnnealLR
	pathEnvSteps       = blockBudget + "." + attrEnvSteps
)

// finalize fills the defaults that depend on other fields of the same arm.
// It runs after all ablations were decoded, so an ablation that switches the
// env kind gets the new kind's episode limit unless some block wrote one.
func finalize(cfg *Config) {
	finalizeTabletop(&cfg.Env)
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
	if c.Algorithm.Minibatches > c.Algorithm.BatchSteps {
		add(src.blame(pathMinibatches, pathBatchSteps), "More minibatches than batch steps",
			fmt.Sprintf("algorithm.minibatches (%d) must not exceed algorithm.batch_steps (%d), because every minibatch needs at least one step of the update's batch. Lower minibatches or raise batch_steps.",
				c.Algorithm.Minibatches, c.Algorithm.BatchSteps))
	}
	if p := c.Pipeline; p.MaxStaleness > 0 && p.MaxStaleness < p.Lag {
		add(src.blame(pathMaxStaleness, pathLag), "Staleness bound below the policy lag",
			fmt.Sprintf("pipeline.max_staleness (%d) is below pipeline.lag (%d): every sample is at least lag versions old, so all of them would be dropped and training would never start. Raise max_staleness to at least %d, or set it to 0 (keep every sample).",
				p.MaxStaleness, p.Lag, p.Lag))
	}
	checkActionHead(c, src, add)
	checkTabletop(c, src, add)
	checkRemote(c, src, add)
	checkPretrain(c, src, add)
	checkVLA(c, src, add)
	if a := c.Algorithm; a.AnnealLR && a.LRSchedule != LRScheduleConstant && int64(a.WarmupUpdates) >= c.TotalUpdates() {
		add(src.blame(pathWarmup, pathEnvSteps, pathAnnealLR), "Warmup longer than the run",
			fmt.Sprintf("algorithm.warmup_updates (%d) must be fewer than the run's planned updates (%d: budget.env_steps %d at %d real steps per update), because the annealed learning rate decays to 0 over the updates after the warmup. Lower warmup_updates, raise budget.env_steps, or set anneal_lr = false.",
				a.WarmupUpdates, c.TotalUpdates(), c.Budget.EnvSteps, c.StepsPerUpdate()))
	}
	if a := c.Algorithm; a.CriticWarmup > 0 && c.Budget.EnvSteps > 0 && int64(a.CriticWarmup) >= c.TotalUpdates() {
		add(src.blame(pathCriticWarmup, pathEnvSteps), "Critic warm-up longer than the run",
			fmt.Sprintf("algorithm.critic_warmup (%d) covers all of the run's planned updates (%d: budget.env_steps %d at %d real steps per update), so the policy would never be trained. Lower critic_warmup or raise budget.env_steps.",
				a.CriticWarmup, c.TotalUpdates(), c.Budget.EnvSteps, c.StepsPerUpdate()))
	}
	if a := c.Algorithm; a.AdvEstimator == AdvEstimatorGRPO {
		if a.Name == AlgorithmVTrace {
			add(src.blame(pathAdvEstimator, pathAlgorithmName), "GRPO advantages with v-trace",
				"algorithm.adv_estimator = \"grpo\" replaces the policy's advantages by the episodes' group-relative outcomes, but v-trace computes its own off-policy advantages. Use algorithm \"ppo\", \"gipo\" or \"sapo\" with grpo, or adv_estimator = \"gae\" with vtrace.")
		}
		if w := c.WorldModel; w.Enabled && w.ImaginationRatio > 0 && w.Pixels == nil {
			add(src.blame(pathAdvEstimator, pathImaginationRatio), "GRPO advantages with imagined rollouts",
				fmt.Sprintf("algorithm.adv_estimator = \"grpo\" scores whole episodes by their outcome, and the state-vector world model's imagined rollouts (imagination_ratio %g) are %d-step pieces that end none. Use adv_estimator = \"gae\" with this world model, or set world_model.imagination_ratio = 0.", w.ImaginationRatio, w.Horizon.Start))
		} else if w.Enabled && w.ImaginationRatio > 0 && w.Pixels.Group < 2 {
			add(src.blame(pathAdvEstimator, pathImaginationRatio, pathWorldModelPixels), "GRPO advantages with single imagined rollouts",
				fmt.Sprintf("algorithm.adv_estimator = \"grpo\" compares episodes with each other, and the pixel world model imagines one rollout per start (world_model.pixels.group = %d), so an imagined rollout has nothing to be compared with. Set world_model.pixels.group = 8 (8 rollouts per start, judged by M_rew's success on their last frame), use adv_estimator = \"gae\", or set world_model.imagination_ratio = 0.",
					w.Pixels.Group))
		}
	}
	if a := c.Algorithm; a.RepeatStarts > 1 && a.AdvEstimator != AdvEstimatorGRPO {
		add(src.blame(pathRepeatStarts, pathAdvEstimator), "Repeated starts without GRPO",
			fmt.Sprintf("algorithm.repeat_starts = %d plays every start %d times so that GRPO can compare each episode with the other plays of its start, but adv_estimator is \"gae\", which compares nothing. Set adv_estimator = \"grpo\", or drop repeat_starts.", a.RepeatStarts, a.RepeatStarts))
	}
	if ev := c.Evaluation; ev.Sampled && !ev.Greedy {
		add(src.blame(pathEvalSampled, pathEvalGreedy), "Sampled evaluation without a greedy one",
			"evaluation.sampled = true plays the episodes a second time, sampling, beside the greedy evaluation; with greedy = false the evaluation already samples. Set greedy = true, or drop sampled.")
	}
	if ev := c.Evaluation; ev.FinalEpisodes > 0 && ev.Episodes == 0 {
		add(src.blame(pathEvalFinal, pathEvalEpisodes), "Final evaluation episodes without an evaluation",
			fmt.Sprintf("evaluation.final_episodes = %d sets how many episodes the warm start's and the last segment's evaluations play, but episodes = 0 turns evaluation off. Set episodes (e.g. 100, played after every other segment), or drop final_episodes.", ev.FinalEpisodes))
	}
	checkWorldModel(c, src, add)
	checkResources(c, src, add)
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

// checkActionHead reports a policy head that does not suit the environment's action space:
// the categorical head picks one of a discrete set of actions, the tokens and gaussian heads
// write continuous vectors.
func checkActionHead(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	discrete, ok := envDiscrete(c.Env.Kind)
	if !ok {
		return // an unknown kind was reported where it was written
	}
	head := c.Policy.Action
	switch {
	case discrete && head != ActionCategorical:
		add(src.blame(pathAction, pathEnvKind), "Action head does not suit the environment",
			fmt.Sprintf("policy.action = %q writes continuous actions, and %q has a discrete set of actions. Use action = %q.",
				head, c.Env.Kind, ActionCategorical))
	case !discrete && head == ActionCategorical:
		add(src.blame(pathAction, pathEnvKind), "Action head does not suit the environment",
			fmt.Sprintf("policy.action = %q picks one of a discrete set of actions, and %q takes continuous actions. Use action = %q (each dimension cut into bins, as a VLA does) or %q.",
				head, c.Env.Kind, ActionTokens, ActionGaussian))
	}
}
