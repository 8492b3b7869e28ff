package reports

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/runstore"
)

// FirstCrossing returns the first x at which c reaches target (y ≥ target),
// skipping NaN values, and false when it never does.
func FirstCrossing(c Curve, target float64) (x float64, ok bool) {
	for i := range c.Y {
		if c.Y[i] >= target && !math.IsNaN(c.X[i]) {
			return c.X[i], true
		}
	}
	return math.NaN(), false
}

// runTarget is how fast one run reached the target return.
type runTarget struct {
	Steps   float64 // env steps at the first crossing; +Inf when not reached
	Budget  float64 // env steps the run has done: the censoring point when not reached
	Reached bool
}

// censored returns the value a bound uses for the run: its steps when it
// reached the target, its budget when it did not (it would have needed
// more than that).
func (t runTarget) censored() float64 {
	if t.Reached {
		return t.Steps
	}
	return t.Budget
}

// targetMeasure is one way of reading off when a run reached the target
// return: from the smoothed returns of its training episodes
// (trainingMeasure) or from its evaluation points (evalMeasure). Both share
// the first-crossing, censoring and aggregation code below.
type targetMeasure struct {
	// curve returns the run's return curve against env steps and how many
	// of its leading points are not trusted to count as a crossing. It is
	// only called through ofRun.
	curve func(r *runData) (c Curve, untrusted int)
	// stream is the PCG stream of the across-seed bootstrap.
	stream uint64
}

// trainingMeasure reads the target off the run's smoothed return curve
// (returnCurve). A trailing mean over fewer episodes than the window is
// not trusted: the first window−1 points are skipped, unless the run has
// fewer points than that, in which case only its last point counts.
func trainingMeasure(window int) targetMeasure {
	return targetMeasure{stream: streamThreshold, curve: func(r *runData) (Curve, int) {
		c := returnCurve(r, window)
		return c, max(0, min(window, len(c.X))-1)
	}}
}

// evalMeasure reads the target off the run's evaluation points
// (evalCurve): each is already the mean of a batch of evaluation episodes,
// so every point counts and none is smoothed.
var evalMeasure = targetMeasure{stream: streamEvalThreshold, curve: func(r *runData) (Curve, int) {
	return evalCurve(r), 0
}}

// ofRun finds the first env step at which the run's curve reaches target.
// A run that never does is censored at its budget: the larger of its env
// steps and the curve's last x. ok is false for a run without any point.
func (m targetMeasure) ofRun(r *runData, target float64) (t runTarget, ok bool) {
	c, untrusted := m.curve(r)
	_, last, ok := xRange(c)
	if !ok {
		return runTarget{}, false
	}
	c = Curve{X: c.X[untrusted:], Y: c.Y[untrusted:]}
	t.Budget = math.Max(float64(r.EnvSteps), last)
	if x, hit := FirstCrossing(c, target); hit {
		t.Steps, t.Reached = x, true
	} else {
		t.Steps = math.Inf(1)
	}
	return t, true
}

// targetOfRun finds the first env step at which the run's smoothed return
// curve reaches target (trainingMeasure).
func targetOfRun(r *runData, window int, target float64) (t runTarget, ok bool) {
	return trainingMeasure(window).ofRun(r, target)
}

// armTarget aggregates the runs of one arm.
type armTarget struct {
	Runs    []runTarget
	Reached int
	// Median is the median env steps across seeds with a 95% bootstrap
	// interval; a seed that did not reach the target counts as +Inf, so
	// the median (or an interval end) is +Inf when the rank it falls on is
	// a censored seed.
	Median Interval
	// Bound is the median with every censored seed at its budget: a lower
	// bound on Median that is finite, shown as ">Bound" when Median is +Inf.
	Bound float64
	// Top is the largest value a seed contributes: its steps when it reached
	// the target, its budget when it did not. An interval open upwards is
	// drawn up to it.
	Top float64
}

// aggregateTarget summarises runs (at least one).
func aggregateTarget(runs []runTarget, reps int, rng *rand.Rand) armTarget {
	a := armTarget{Runs: runs}
	steps := make([]float64, len(runs))
	bounds := make([]float64, len(runs))
	for i, t := range runs {
		steps[i], bounds[i] = t.Steps, t.censored()
		a.Top = math.Max(a.Top, t.censored())
		if t.Reached {
			a.Reached++
		}
	}
	a.Median = medianInterval(steps, reps, rng)
	slices.Sort(bounds)
	a.Bound = quantile(bounds, 0.5)
	return a
}

// targetRatio compares an arm's median steps-to-target with the
// baseline's: value = arm / baseline (below 1: the arm needs fewer env
// steps). When only one side is censored the ratio is a bound: rel is ">"
// when the arm did not reach the target (it needs more than value times
// the baseline's steps) and "<" when the baseline did not. Both censored,
// or a missing side, give NaN.
func targetRatio(arm, base *armTarget) (value float64, rel string) {
	if arm == nil || base == nil {
		return math.NaN(), ""
	}
	am, bm := arm.Median.Point, base.Median.Point
	switch {
	case !math.IsInf(am, 1) && !math.IsInf(bm, 1):
		return am / bm, ""
	case math.IsInf(am, 1) && !math.IsInf(bm, 1):
		return arm.Bound / bm, ">"
	case !math.IsInf(am, 1) && math.IsInf(bm, 1):
		return am / base.Bound, "<"
	}
	return math.NaN(), ""
}

// stepTargets holds the per-arm steps-to-target details of both measures,
// indexed like experimentData.Arms.
type stepTargets struct {
	training, eval []*armTarget
}

// targetResults is one steps-to-target measure over an experiment.
type targetResults struct {
	Runs    []*RunTarget // indexed like experimentData.Runs; nil for a run without a curve
	Arms    []*ArmTarget // indexed like experimentData.Arms; nil for an arm without any curve
	Details []*armTarget // the same per arm, with the per-seed detail that figures draw
}

// measureTargets computes measure m for every run and arm of e against
// e.Target (which must be set): each run's first crossing or censoring,
// each arm's median with its bootstrap interval, and each arm's ratio to
// the baseline's median when the baseline is one of the arms.
func measureTargets(e *experimentData, opts Options, m targetMeasure) targetResults {
	out := targetResults{Runs: make([]*RunTarget, len(e.Runs)), Arms: make([]*ArmTarget, len(e.Arms)),
		Details: make([]*armTarget, len(e.Arms))}
	byArm := map[string][]runTarget{}
	for i, r := range e.Runs {
		if t, ok := m.ofRun(r, e.Target.Return); ok {
			byArm[r.Arm] = append(byArm[r.Arm], t)
			out.Runs[i] = &RunTarget{Reached: t.Reached, Steps: runstore.JSONFloat(t.Steps), Budget: t.Budget}
		}
	}
	for i, arm := range e.Arms {
		if len(byArm[arm]) == 0 {
			continue
		}
		at := aggregateTarget(byArm[arm], opts.BootstrapReps, armRng(opts, arm, m.stream))
		out.Details[i] = &at
		out.Arms[i] = &ArmTarget{Seeds: len(at.Runs), Reached: at.Reached, Median: runstore.JSONFloat(at.Median.Point),
			Low: runstore.JSONFloat(at.Median.Low), High: runstore.JSONFloat(at.Median.High), LowerBound: runstore.JSONFloat(at.Bound),
			Ratio: runstore.JSONFloat(math.NaN())}
	}
	base := slices.Index(e.Arms, e.Baseline)
	if base < 0 {
		return out
	}
	for i, a := range out.Arms {
		if a != nil {
			v, rel := targetRatio(out.Details[i], out.Details[base])
			a.Ratio, a.RatioBound = runstore.JSONFloat(v), rel
		}
	}
	return out
}
