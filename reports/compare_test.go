package reports

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestProbabilityOfImprovementHandComputed(t *testing.T) {
	// One task. Pairs (x, y): (3,2) win, (3,1) win, (1,2) loss, (1,1) tie:
	// (1 + 1 + 0 + ½) / 4 = 0.625.
	if got := probImprovement([][]float64{{3}, {1}}, [][]float64{{2}, {1}}); got != 0.625 {
		t.Errorf("P(X>Y), one task = %v, want 0.625", got)
	}
	// Two tasks, 2 runs of X and 3 of Y. Task 0: x {3, 1} vs y {2, 1, 0}:
	// 3 wins 3 times; 1 loses, ties, wins: 4.5 of 6 = 0.75. Task 1: x {0, 5}
	// vs y {5, 5, 5}: 0 loses 3 times, 5 ties 3 times: 1.5 of 6 = 0.25.
	// Mean over tasks: 0.5.
	x := [][]float64{{3, 0}, {1, 5}}
	y := [][]float64{{2, 5}, {1, 5}, {0, 5}}
	if got := probImprovement(x, y); got != 0.5 {
		t.Errorf("P(X>Y), two tasks = %v, want 0.5", got)
	}
	// An arm against itself: wins and losses pair up, the diagonal ties:
	// exactly ½ whatever the scores.
	self := [][]float64{{4}, {9}, {1}, {9}}
	if got := probImprovement(self, self); got != 0.5 {
		t.Errorf("P(X>X) = %v, want 0.5", got)
	}
	// Every run of X beats every run of Y, in every resample too: [1, 1].
	iv := ProbabilityOfImprovement([][]float64{{10}, {11}, {12}}, [][]float64{{1}, {2}}, 500, 3)
	if iv != (Interval{Point: 1, Low: 1, High: 1}) {
		t.Errorf("dominating X: %+v, want {1 1 1}", iv)
	}
	// X = {1, 0} against a single y = 0.5: P = ½. Resamples of X are
	// {1,1} → 1, mixed → ½, {0,0} → 0, each end with probability ¼ (far
	// above 2.5%), so the interval is [0, 1].
	iv = ProbabilityOfImprovement([][]float64{{1}, {0}}, [][]float64{{0.5}}, 2000, 9)
	if iv != (Interval{Point: 0.5, Low: 0, High: 1}) {
		t.Errorf("two-run X: %+v, want {0.5 0 1}", iv)
	}
	a, b := ProbabilityOfImprovement(x, y, 300, 5), ProbabilityOfImprovement(x, y, 300, 5)
	if a != b {
		t.Errorf("same seed, different intervals: %+v vs %+v", a, b)
	}
}

func TestOptimalityGapHandComputed(t *testing.T) {
	cases := []struct {
		name                string
		scores              [][]float64
		target, floor, want float64
	}{
		// Normalised 0.9, 0.5, 1.2: gaps 0.1, 0.5, 0 (no credit above the
		// target); mean 0.6/3 = 0.2.
		{"floor 0", [][]float64{{90}, {50}, {120}}, 100, 0, 0.2},
		// (s+100)/200: 0.95, 0.75, 1.1: gaps 0.05, 0.25, 0; mean 0.1.
		{"random score -100", [][]float64{{90}, {50}, {120}}, 100, -100, 0.1},
		// Pendulum-like negative returns, random -1200, target -200:
		// (-700+1200)/1000 = 0.5 → 0.5; (-150+1200)/1000 = 1.05 → 0.
		{"negative returns", [][]float64{{-700}, {-150}}, -200, -1200, 0.25},
		// Two tasks pool all four scores: gaps 0, 1, 0.5, 0.5 → 0.5.
		{"two tasks", [][]float64{{10, 5}, {0, 5}}, 10, 0, 0.5},
	}
	for _, c := range cases {
		// A couple of divisions and sums of small numbers: a few ulps.
		if got := OptimalityGap(c.scores, c.target, c.floor); !near(got, c.want, 1e-15) {
			t.Errorf("%s: gap = %v, want %v", c.name, got, c.want)
		}
	}
	if !math.IsNaN(OptimalityGap([][]float64{{1}}, 3, 3)) {
		t.Error("target equal to the floor should give NaN")
	}
	// Seeds 0 and 100 against target 100: gaps 1 and 0, point 0.5; a
	// resample is both 0s (gap 1), mixed (½) or both 100s (0), each end
	// with probability ¼: the interval is [0, 1].
	iv := OptimalityGapInterval([][]float64{{0}, {100}}, 100, 0, 2000, 1)
	if iv != (Interval{Point: 0.5, Low: 0, High: 1}) {
		t.Errorf("gap interval = %+v, want {0.5 0 1}", iv)
	}
	// Identical seeds: every resample is the same, zero width.
	iv = OptimalityGapInterval([][]float64{{80}, {80}, {80}}, 100, 0, 300, 1)
	if !near(iv.Point, 0.2, 1e-15) || iv.Low != iv.Point || iv.High != iv.Point {
		t.Errorf("identical seeds: %+v, want a zero-width interval at 0.2", iv)
	}
}

func TestCompareShapePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"task mismatch": func() { ProbabilityOfImprovement([][]float64{{1, 2}}, [][]float64{{1}}, 10, 0) },
		"empty x":       func() { ProbabilityOfImprovement(nil, [][]float64{{1}}, 10, 0) },
		"ragged gap":    func() { OptimalityGap([][]float64{{1, 2}, {3}}, 1, 0) },
		"no reps":       func() { OptimalityGapInterval([][]float64{{1}}, 1, 0, 0, 0) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestIQMIntervalNarrowsWithSeeds adds seeds drawn from one distribution
// and checks that the confidence interval of the IQM narrows.
func TestIQMIntervalNarrowsWithSeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(2021, 4))
	all := make([][]float64, 80)
	for i := range all {
		all[i] = []float64{10 + 3*rng.NormFloat64()}
	}
	var prev float64
	for k, n := range []int{5, 20, 80} {
		iv := IQMInterval(all[:n], 2000, 7)
		w := iv.High - iv.Low
		t.Logf("%2d seeds: IQM %.3f, 95%% CI width %.3f", n, iv.Point, w)
		// The width shrinks like 1/√n, so four times the seeds roughly
		// halve it; 0.8 leaves room for the noise in a width estimated
		// from 5 seeds (the measured ratios are printed above).
		if k > 0 && !(w < 0.8*prev) {
			t.Errorf("%d seeds: width %.3f, not below 0.8 × %.3f (the width with a quarter of the seeds)", n, w, prev)
		}
		prev = w
	}
}

func TestMedianAndQuantileWithInfinity(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		sorted []float64
		q      float64
		want   float64
	}{
		{[]float64{1, inf}, 0.5, inf},       // interpolates towards +Inf
		{[]float64{1, 2, inf}, 0.5, 2},      // exact rank
		{[]float64{1, inf}, 0, 1},           // exact rank next to +Inf: not NaN
		{[]float64{inf, inf}, 0.3, inf},     // equal neighbours: not NaN
		{[]float64{1, 2, 3, 4}, 0.25, 1.75}, // unchanged for finite values
	} {
		if got := quantile(c.sorted, c.q); got != c.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", c.sorted, c.q, got, c.want)
		}
	}
	// {1, 3, +Inf}: median 3. Resample medians: 1 needs two or three 1s,
	// P = 7/27 ≈ 26%; +Inf needs two or three +Infs, also 26%: both ends
	// are well past 2.5%, so the interval is [1, +Inf].
	iv := medianInterval([]float64{1, 3, inf}, 2000, rand.New(rand.NewPCG(1, 1)))
	if iv != (Interval{Point: 3, Low: 1, High: inf}) {
		t.Errorf("median interval = %+v, want {3 1 +Inf}", iv)
	}
	if iv := meanInterval(nil, 10, rand.New(rand.NewPCG(1, 1))); !math.IsNaN(iv.Point) {
		t.Errorf("mean interval of nothing = %+v, want NaN", iv)
	}
	// Ratio of means, one value each side: no spread at all.
	if iv := ratioInterval([]float64{6}, []float64{4}, 50, rand.New(rand.NewPCG(1, 1))); iv != (Interval{1.5, 1.5, 1.5}) {
		t.Errorf("ratio interval = %+v, want {1.5 1.5 1.5}", iv)
	}
}
