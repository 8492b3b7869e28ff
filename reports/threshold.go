package reports

import (
	"math"
	"math/rand/v2"
	"slices"
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

// targetOfRun finds the first env step at which the run's smoothed return
// curve (returnCurve) reaches target. A trailing mean over fewer episodes
// than the window is not trusted: the first window−1 points are skipped,
// unless the run has fewer points than that, in which case only its last
// point counts. ok is false for a run without any return.
func targetOfRun(r *runData, window int, target float64) (t runTarget, ok bool) {
	c := returnCurve(r, window)
	_, last, ok := xRange(c)
	if !ok {
		return runTarget{}, false
	}
	skip := min(window, len(c.X)) - 1
	c = Curve{X: c.X[skip:], Y: c.Y[skip:]}
	t.Budget = math.Max(float64(r.EnvSteps), last)
	if x, hit := FirstCrossing(c, target); hit {
		t.Steps, t.Reached = x, true
	} else {
		t.Steps = math.Inf(1)
	}
	return t, true
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
