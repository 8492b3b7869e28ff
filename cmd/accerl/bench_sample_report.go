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
