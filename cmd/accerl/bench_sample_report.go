package main

import (
	"fmt"
	"math"

	"github.com/accerl/accerl/reports"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// What `accerl bench sample-efficiency` prints and draws, and what it reads back from an
// arm's run directory.

// sampleResult is the whole benchmark.
type sampleResult struct {
	Env         string       `json:"env"`
	Target      float64      `json:"target"`
	Window      int          `json:"window_episodes"`
	Budget      int64        `json:"budget_env_steps"`
	OfflineTraj int          `json:"offline_trajectories"`
	Seeds       []sampleSeed `json:"seeds"`
	// MedianRatio is the median of the seeds' Ratio, over the seeds not solved at the warm
	// start (MeasuredSeeds of them; 0 when none is).
	MedianRatio   float64 `json:"median_ratio"`
	MeasuredSeeds int     `json:"measured_seeds"`
	// MedianRatioWithOffline is the median of the same seeds' RatioWithOffline.
	MedianRatioWithOffline float64 `json:"median_ratio_with_offline"`
	// Suite is the tabletop suite (--env tabletop), whose policy is the micro-VLA cloned
	// from the suite's demonstrations in both arms; ImaginationRatio the world-model arm's
	// imagined share of each batch.
	Suite            string  `json:"suite,omitempty"`
	ImaginationRatio float64 `json:"imagination_ratio"`
	// VLALayers and PretrainFrom are --vla-layers and --pretrain-from as given (tabletop
	// only; absent: 2 layers, each arm cloned from the demonstrations).
	VLALayers    int    `json:"vla_layers,omitempty"`
	PretrainFrom string `json:"pretrain_from,omitempty"`
	// GRPOGroup is --grpo-group: both arms trained with GRPO, the world-model arm
	// imagining this many rollouts per start (absent: the critic recipe).
	GRPOGroup int `json:"grpo_group,omitempty"`
	// ImaginedTemperature is --imagined-temperature: the world-model arm's imagined
	// rollouts sample their actions at it (world_model.pixels.temperature; absent: the
	// policy's).
	ImaginedTemperature float64 `json:"imagined_temperature,omitempty"`
	// TemperedImagined is --tempered-imagined (world_model.pixels.tempered).
	TemperedImagined bool `json:"tempered_imagined,omitempty"`
	// ImaginedStartWithin is --imagined-start-within (world_model.pixels.start_within).
	ImaginedStartWithin int `json:"imagined_start_within,omitempty"`
	// GradedImagined is --graded-imagined: the world-model arm's imagined groups ranked by
	// M_rew's p_success change, mean-centred (world_model.pixels.graded).
	GradedImagined bool `json:"graded_imagined,omitempty"`
	// RewImagined is --rew-imagined (world_model.pixels.rew_imagined).
	RewImagined int `json:"rew_imagined,omitempty"`
	// RewCounterfactual is --rew-counterfactual (world_model.pixels.rew_counterfactual).
	RewCounterfactual int `json:"rew_counterfactual,omitempty"`
	// RewCounterfactualJitter is --rew-counterfactual-jitter
	// (world_model.pixels.rew_counterfactual_jitter).
	RewCounterfactualJitter float64 `json:"rew_counterfactual_jitter,omitempty"`
	// HorizonMax is --horizon-max (world_model.horizon.end; absent: 50).
	HorizonMax int `json:"horizon_max,omitempty"`
	// SelfForcing and SelfForcingFrom are --self-forcing and --self-forcing-from
	// (world_model.pixels.self_forcing and self_forcing_from; absent: off).
	SelfForcing     int `json:"self_forcing,omitempty"`
	SelfForcingFrom int `json:"self_forcing_from,omitempty"`
	// EvalEpisodes, EvalEvery and Greedy describe the evaluation protocol (EvalEpisodes 0:
	// solved by the training-episode window instead).
	EvalEpisodes int   `json:"eval_episodes"`
	EvalEvery    int64 `json:"eval_every_env_steps"`
	Hold         int   `json:"eval_hold"`
	Greedy       bool  `json:"eval_greedy"`
}

// envLabel names the benchmark's environment: the kind, and the suite on the tabletop.
func envLabel(kind, suite string) string {
	if kind == specs.EnvTabletop {
		return kind + " " + suite
	}
	return kind
}

// plotSample draws every seed's evaluation curve of both arms.
func plotSample(path string, res sampleResult) error {
	var series []reports.EvalSeries
	add := func(group int, label string, a sampleArm) {
		s := reports.EvalSeries{Group: group, Label: label}
		for _, p := range a.Curve {
			s.X, s.Y = append(s.X, float64(p.EnvSteps)), append(s.Y, p.Return)
		}
		series = append(series, s)
	}
	wmLabel := fmt.Sprintf("world model (+%.0fk offline steps)", float64(medianOffline(res.Seeds))/1000)
	for _, s := range res.Seeds {
		add(0, wmLabel, s.WorldModel)
		add(1, "no world model", s.Baseline)
	}
	seeds := fmt.Sprintf("%d seeds", len(res.Seeds))
	if len(res.Seeds) == 1 {
		seeds = fmt.Sprintf("seed %d", res.Seeds[0].Seed)
	}
	title := fmt.Sprintf("%s: mean of %d %s evaluation episodes, %s", envLabel(res.Env, res.Suite), res.EvalEpisodes, evalMode(res.Greedy), seeds)
	var opts reports.EvalCurveOptions
	if res.Env == specs.EnvTabletop {
		// Success rates from the warm start's (at 0 steps) on, over a budget of a few updates.
		opts = reports.EvalCurveOptions{YLabel: "evaluation success rate", Linear: true}
	}
	return reports.WriteEvalCurves(path, title, res.Target, series, opts)
}

// describeArm is one arm's line of the bench's output.
func describeArm(a sampleArm) string {
	final := "no training episode finished"
	if a.TrainEpisodes > 0 {
		final = fmt.Sprintf("final mean training return %.4g", a.FinalReturn)
	}
	s := fmt.Sprintf("%s online steps, %d updates, %s, %.0fs", stepsWord(a), a.Updates, final, a.WallS)
	if a.Evaluations > 0 {
		s += fmt.Sprintf(", %d evaluations (%d eval steps, best %.4g)", a.Evaluations, a.EvalSteps, a.BestEval)
	}
	if a.OfflineSteps > 0 || a.ImaginedSteps > 0 {
		s += fmt.Sprintf(", %d offline steps, %d imagined steps, final horizon %d", a.OfflineSteps, a.ImaginedSteps, a.FinalHorizon)
	}
	if im := a.Imagined; im != nil {
		var ended, ok, moved int64
		for i := range im.Ended {
			ended, ok, moved = ended+im.Ended[i], ok+im.Success[i], moved+im.Moved[i]
		}
		s += fmt.Sprintf("; imagined rollouts: %d ended, %d judged successes by M_rew, %d moved the policy", ended, ok, moved)
	}
	return s
}

func stepsWord(a sampleArm) string {
	if a.Reached {
		return fmt.Sprint(a.StepsToTarget)
	}
	return fmt.Sprintf("not reached in %d", a.EnvSteps)
}

// medianOffline is the median of the seeds' offline steps (the plot's world-model label).
func medianOffline(seeds []sampleSeed) int64 {
	var x []float64
	for _, s := range seeds {
		x = append(x, float64(s.WorldModel.OfflineSteps))
	}
	return int64(math.Round(median(x)))
}

// evalMode names how evaluation episodes choose actions.
func evalMode(greedy bool) string {
	if greedy {
		return "greedy"
	}
	return "sampled"
}

// grpoCurves are a run's per-update GRPO counts (runstore's grpo_episodes and grpo_moved):
// the episodes that ended in each update's batch and those whose advantage moved the policy.
func grpoCurves(metrics []runstore.MetricsRow) (episodes, moved []int64) {
	for _, m := range metrics {
		episodes, moved = append(episodes, m.GRPOEpisodes), append(moved, m.GRPOMoved)
	}
	return episodes, moved
}
