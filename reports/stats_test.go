package reports

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exact is the tolerance for values that are sums and quotients of a few
// small binary-exact numbers: a couple of rounding steps at most.
const exact = 1e-12

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

func TestMeanStdQuantile(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if got := mean(xs); got != 5 {
		t.Errorf("mean = %v, want 5", got)
	}
	// Sum of squared deviations 32, divided by n-1 = 7.
	if got, want := sampleStd(xs), math.Sqrt(32.0/7); !near(got, want, exact) {
		t.Errorf("sampleStd = %v, want %v", got, want)
	}
	if sampleStd([]float64{3}) != 0 || !math.IsNaN(sampleStd(nil)) || !math.IsNaN(mean(nil)) {
		t.Error("std/mean of one or zero values")
	}
	// numpy.percentile([1,2,3,4], [0, 25, 50, 100]) = [1, 1.75, 2.5, 4].
	s := []float64{1, 2, 3, 4}
	for q, want := range map[float64]float64{0: 1, 0.25: 1.75, 0.5: 2.5, 1: 4} {
		if got := quantile(s, q); !near(got, want, exact) {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestIQM(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{8, 1, 7, 2, 6, 3, 5, 4}, 4.5}, // drop 2 each end: mean(3,4,5,6)
		{[]float64{10, 1, 2, 3, 100}, 5},         // n=5 drops 1 each end: mean(2,3,10)
		{[]float64{4, 1, 3, 2}, 2.5},             // mean(2,3)
		{[]float64{5, 1, 3}, 3},                  // n<4 drops nothing
		{[]float64{-7}, -7},
	}
	for _, c := range cases {
		if got := IQM(c.xs); !near(got, c.want, exact) {
			t.Errorf("IQM(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(IQM(nil)) {
		t.Error("IQM(nil) is not NaN")
	}
}

func TestIQMIntervalHandComputed(t *testing.T) {
	// Scores {0,0,0,1}: a resample's IQM is the mean of its two middle
	// values, so it is 0 with k ≤ 1 ones, 0.5 with k = 2 and 1 with k ≥ 3,
	// k ~ Binomial(4, 1/4). P(IQM = 1) = (12+1)/256 ≈ 5.1% > 2.5%, so the
	// 97.5% quantile is 1; P(IQM = 0) = 189/256 ≈ 74% puts the 2.5% quantile
	// at 0. With 2000 replicates the share of ones has standard error
	// sqrt(.051·.949/2000) ≈ 0.005, five standard errors from 2.5%.
	iv := IQMInterval([][]float64{{0}, {0}, {0}, {1}}, 2000, 1)
	if iv.Point != 0 || iv.Low != 0 || iv.High != 1 {
		t.Errorf("IQMInterval({0,0,0,1}) = %+v, want {0 0 1}", iv)
	}
	// Two runs a < b: resamples are {a,a}, {a,b}, {b,a}, {b,b}; each end has
	// probability 1/4, far above 2.5%, so the interval is [a, b].
	iv = IQMInterval([][]float64{{69.5}, {29}}, 2000, 7)
	if iv.Point != 49.25 || iv.Low != 29 || iv.High != 69.5 {
		t.Errorf("IQMInterval({69.5, 29}) = %+v, want {49.25 29 69.5}", iv)
	}
}

func TestIQMIntervalStratified(t *testing.T) {
	// Task 0 scores 0 and task 1 scores 10 for every run. A stratified
	// resample keeps four values per task, so every replicate pools four 0s
	// and four 10s: IQM = mean(0,0,10,10) = 5 and the interval has zero
	// width. An unstratified bootstrap would mix the tasks and vary.
	scores := [][]float64{{0, 10}, {0, 10}, {0, 10}, {0, 10}}
	iv := IQMInterval(scores, 500, 3)
	if iv.Point != 5 || iv.Low != 5 || iv.High != 5 {
		t.Errorf("stratified interval = %+v, want {5 5 5}", iv)
	}
	// The point estimate pools all 8 values: drop 2 each end of
	// {1,2,3,4,5,6,7,8} -> mean(3,4,5,6) = 4.5.
	m := [][]float64{{1, 5}, {2, 6}, {3, 7}, {4, 8}}
	iv = IQMInterval(m, 500, 3)
	if iv.Point != 4.5 || !(iv.Low <= iv.Point && iv.Point <= iv.High) || iv.Low < 1 || iv.High > 8 {
		t.Errorf("interval of the 4x2 matrix = %+v", iv)
	}
}

func TestIQMIntervalIdenticalSeedsAndDeterminism(t *testing.T) {
	same := [][]float64{{0.3}, {0.3}, {0.3}, {0.3}, {0.3}}
	iv := IQMInterval(same, 300, 11)
	if iv.Point != 0.3 || iv.Low != 0.3 || iv.High != 0.3 {
		t.Errorf("identical seeds: %+v, want a zero-width interval at 0.3", iv)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	scores := make([][]float64, 9)
	for i := range scores {
		scores[i] = []float64{rng.NormFloat64()}
	}
	a, b := IQMInterval(scores, 400, 42), IQMInterval(scores, 400, 42)
	if a != b {
		t.Errorf("same seed, different intervals: %+v vs %+v", a, b)
	}
	if !(a.Low < a.Point && a.Point < a.High) {
		t.Errorf("interval %+v does not bracket its point estimate", a)
	}
}

func TestIQMIntervalPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"ragged":  func() { IQMInterval([][]float64{{1, 2}, {3}}, 10, 0) },
		"empty":   func() { IQMInterval(nil, 10, 0) },
		"no reps": func() { IQMInterval([][]float64{{1}}, 0, 0) },
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
