package reports

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/runstore"
)

func TestFirstCrossing(t *testing.T) {
	c := Curve{X: []float64{10, 20, 30, 40}, Y: []float64{1, math.NaN(), 5, 7}}
	if x, ok := FirstCrossing(c, 5); !ok || x != 30 {
		t.Errorf("crossing 5 = %v, %v; want 30 (equal counts as reached)", x, ok)
	}
	if x, ok := FirstCrossing(c, 8); ok || !math.IsNaN(x) {
		t.Errorf("crossing 8 = %v, %v; want not reached", x, ok)
	}
}

// episodesRun is a run whose episode i ends at env step 10(i+1).
func episodesRun(returns ...float64) *runData {
	r := &runData{EnvSteps: int64(10 * len(returns))}
	for i, ret := range returns {
		r.Episodes = append(r.Episodes, runstore.EpisodeRow{EnvSteps: int64(10 * (i + 1)), Return: ret})
	}
	return r
}

func TestTargetOfRun(t *testing.T) {
	// Window 3 over returns 9, 0, 0, 3, 6, 9 gives 9, 4.5, 3, 1, 3, 6. The
	// first two average fewer than 3 episodes and are skipped, so a lucky
	// first episode does not count: target 4 is first reached at the 6th
	// episode, step 60 (not step 10).
	tr, ok := targetOfRun(episodesRun(9, 0, 0, 3, 6, 9), 3, 4)
	if !ok || tr != (runTarget{Steps: 60, Budget: 60, Reached: true}) {
		t.Errorf("target 4 = %+v, %v; want reached at 60", tr, ok)
	}
	tr, _ = targetOfRun(episodesRun(9, 0, 0, 3, 6, 9), 3, 7)
	if tr.Reached || !math.IsInf(tr.Steps, 1) || tr.Budget != 60 || tr.censored() != 60 {
		t.Errorf("target 7 = %+v; want censored at its 60 steps", tr)
	}
	// Fewer episodes than the window: only the last point (mean of all,
	// (1+5)/2 = 3) counts.
	if tr, _ := targetOfRun(episodesRun(1, 5), 3, 2.5); tr.Steps != 20 {
		t.Errorf("short run = %+v; want reached at its last point, 20", tr)
	}
	// The summary's env steps extend the budget past the last episode.
	r := episodesRun(0, 0)
	r.EnvSteps = 500
	if tr, _ := targetOfRun(r, 1, 1); tr.Budget != 500 {
		t.Errorf("budget = %v, want the run's 500 env steps", tr.Budget)
	}
	if _, ok := targetOfRun(&runData{}, 3, 1); ok {
		t.Error("a run without returns has a target result")
	}
}

func TestAggregateTargetAndRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	inf := math.Inf(1)
	// {200, 400, 600}: median 400, nothing censored.
	fast := aggregateTarget([]runTarget{{200, 900, true}, {400, 900, true}, {600, 900, true}}, 200, rng)
	// {100, +Inf (budget 800), +Inf (budget 1000)}: the median rank is a
	// censored seed; at budgets {100, 800, 1000} the median is 800.
	slow := aggregateTarget([]runTarget{{100, 500, true}, {inf, 800, false}, {inf, 1000, false}}, 200, rng)
	if fast.Median.Point != 400 || fast.Bound != 400 || fast.Reached != 3 || fast.Top != 600 {
		t.Errorf("fast = %+v", fast)
	}
	if !math.IsInf(slow.Median.Point, 1) || slow.Bound != 800 || slow.Reached != 1 || slow.Top != 1000 {
		t.Errorf("slow = %+v", slow)
	}
	for _, c := range []struct {
		name      string
		arm, base *armTarget
		want      float64
		rel       string
	}{
		{"both reached", &fast, &fast, 1, ""},
		{"arm censored", &slow, &fast, 2, ">"},    // at least 800/400
		{"base censored", &fast, &slow, 0.5, "<"}, // at most 400/800
		{"both censored", &slow, &slow, math.NaN(), ""},
		{"no baseline", &fast, nil, math.NaN(), ""},
	} {
		v, rel := targetRatio(c.arm, c.base)
		if !near(v, c.want, 0) || rel != c.rel {
			t.Errorf("%s: ratio %v %q, want %v %q", c.name, v, rel, c.want, c.rel)
		}
	}
}
