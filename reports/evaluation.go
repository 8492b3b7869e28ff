package reports

import (
	"fmt"
	"math"
)

// Evaluation points. A run that evaluates its policy (the spec's
// evaluation block) plays separate evaluation episodes at the end of every
// training segment; they train nothing and are not counted as env steps.
// The engine logs them on the metrics row of the update they follow:
// eval_episodes > 0 marks the row as an evaluation point, eval_return is
// their mean return and env_steps, the training steps so far, is its x.
// This is the sample-efficiency protocol of Dreamer, MBPO and Stable
// Baselines' EvalCallback.

// evalCurve is a run's evaluation return against env steps: one point per
// metrics row with EvalEpisodes > 0, in row order. Each point is already
// the mean of a batch of episodes, so it is not smoothed. A NaN return on
// such a row stays NaN, and every user of a curve skips it.
func evalCurve(r *runData) Curve {
	var c Curve
	for _, m := range r.Metrics {
		if m.EvalEpisodes > 0 {
			c.X = append(c.X, float64(m.EnvSteps))
			c.Y = append(c.Y, m.EvalReturn)
		}
	}
	return c
}

// evaluationOf summarises the evaluation rows of every run of e; nil when
// there are none, in which case the report has no evaluation figure or
// columns at all.
func evaluationOf(e *experimentData) *EvaluationInfo {
	var info EvaluationInfo
	for _, r := range e.Runs {
		points := 0
		for _, m := range r.Metrics {
			if m.EvalEpisodes <= 0 {
				continue
			}
			if info.Points == 0 {
				info.EpisodesMin, info.EpisodesMax = m.EvalEpisodes, m.EvalEpisodes
			}
			info.EpisodesMin, info.EpisodesMax = min(info.EpisodesMin, m.EvalEpisodes), max(info.EpisodesMax, m.EvalEpisodes)
			info.Points++
			points++
		}
		if points > 0 {
			info.Runs++
		}
	}
	if info.Points == 0 {
		return nil
	}
	return &info
}

// episodesText is the number of episodes per evaluation for the report's
// text: "10", or "5–10" when evaluations differ.
func (v *EvaluationInfo) episodesText() string {
	if v.EpisodesMin == v.EpisodesMax {
		return fmt.Sprint(v.EpisodesMin)
	}
	return fmt.Sprintf("%d–%d", v.EpisodesMin, v.EpisodesMax)
}

// evalMeasureName and trainingMeasureName say which steps-to-target
// measure a number comes from, in table headers and in the report's text.
func evalMeasureName(v *EvaluationInfo) string {
	return fmt.Sprintf("by evaluation episodes (%s per evaluation, not counted as env steps)", v.episodesText())
}

func trainingMeasureName(window int) string {
	return fmt.Sprintf("by the mean of the last %d training episodes", window)
}

// wideStepRange reports whether the arms' evaluation curves reach env step
// counts that differ by more than 10× (the largest x of an arm's
// evaluation points, compared across arms), so that a linear axis would
// squash the shorter arms against its origin.
func wideStepRange(e *experimentData) bool {
	lo, hi := math.Inf(1), 0.0
	for _, arm := range e.Arms {
		reach := 0.0
		for _, r := range e.runsOf(arm) {
			if _, last, ok := xRange(evalCurve(r)); ok {
				reach = math.Max(reach, last)
			}
		}
		if reach > 0 {
			lo, hi = math.Min(lo, reach), math.Max(hi, reach)
		}
	}
	return hi > 10*lo
}

// positiveX drops the points of c at x ≤ 0, which a log axis cannot show.
func positiveX(c Curve) Curve {
	var out Curve
	for i, x := range c.X {
		if x > 0 {
			out.X, out.Y = append(out.X, x), append(out.Y, c.Y[i])
		}
	}
	return out
}
