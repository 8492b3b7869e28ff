package reports

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PCG streams of the bootstrap RNGs, one per statistic, so that each
// interval depends only on Options.Seed and its arm, never on which other
// statistics were computed before it.
const (
	streamThroughput    = bootstrapStream + 1
	streamSpeedup       = bootstrapStream + 2
	streamImprovement   = bootstrapStream + 3
	streamGap           = bootstrapStream + 4
	streamThreshold     = bootstrapStream + 5
	streamEvalThreshold = bootstrapStream + 6
	streamTaskSuccess   = bootstrapStream + 7 // per task, keyed further by task and column
)

// ProbabilityOfImprovement returns P(X > Y), the probability that a run of
// algorithm X scores higher than a run of algorithm Y on the same task,
// with a 95% stratified-bootstrap percentile interval. It is the statistic
// of rliable (Agarwal et al. 2021, section 4.3): for every task t,
//
//	P_t = 1/(n·m) · Σ_i Σ_j S(x[i][t], y[j][t]),  S(a, b) = 1 if a > b, ½ if a = b, 0 otherwise
//
// (the Mann–Whitney U statistic over n·m), and the result is the mean of
// P_t over tasks. x is scores[run][task] of X with n runs, y of Y with m
// runs; both must have the same tasks. Each of reps replicates resamples
// the runs of X and of Y independently, task by task, with replacement.
// The RNG is rand.NewPCG(seed, stream), so equal inputs give equal
// intervals. Empty or ragged matrices, a task mismatch or reps < 1 panic.
func ProbabilityOfImprovement(x, y [][]float64, reps int, seed uint64) Interval {
	rng := rand.New(rand.NewPCG(seed, streamImprovement))
	return improvementInterval(x, y, reps, rng)
}

func improvementInterval(x, y [][]float64, reps int, rng *rand.Rand) Interval {
	_, tx := checkScores("ProbabilityOfImprovement x", x)
	_, ty := checkScores("ProbabilityOfImprovement y", y)
	if tx != ty {
		panic(fmt.Sprintf("reports: ProbabilityOfImprovement: x has %d tasks, y has %d", tx, ty))
	}
	checkReps("ProbabilityOfImprovement", reps)
	point := probImprovement(x, y)
	rx, ry := newMatrix(len(x), tx), newMatrix(len(y), ty)
	stats := make([]float64, reps)
	for r := range stats {
		stratifiedResample(rx, x, rng)
		stratifiedResample(ry, y, rng)
		stats[r] = probImprovement(rx, ry)
	}
	return percentileInterval(point, stats)
}

// probImprovement is the point estimate of ProbabilityOfImprovement.
func probImprovement(x, y [][]float64) float64 {
	tasks := len(x[0])
	var sum float64
	for t := range tasks {
		var wins float64
		for _, xr := range x {
			for _, yr := range y {
				switch a, b := xr[t], yr[t]; {
				case a > b:
					wins++
				case a == b:
					wins += 0.5
				}
			}
		}
		sum += wins / float64(len(x)*len(y))
	}
	return sum / float64(tasks)
}

// OptimalityGap returns how far scores fall short of a target, the
// statistic of rliable (Agarwal et al. 2021, section 4.2) on normalised
// scores with threshold γ = 1:
//
//	s' = (s − floor) / (target − floor),  gap = mean over all runs and tasks of max(0, 1 − s')
//
// floor is the score that normalises to 0 (rliable's "random" score; pass
// 0 when returns start at zero) and target the score that normalises to 1
// (rliable's "human" score). A gap of 0 means every run reached the target;
// 1 means every run stayed at or below the floor. Scores above the target
// earn nothing extra, which is the point: the gap is not fooled by a few
// very good runs. NaN when target equals floor. Empty or ragged matrices
// panic.
func OptimalityGap(scores [][]float64, target, floor float64) float64 {
	checkScores("OptimalityGap", scores)
	return optimalityGap(scores, target, floor)
}

func optimalityGap(scores [][]float64, target, floor float64) float64 {
	if target == floor {
		return math.NaN()
	}
	var sum float64
	var n int
	for _, row := range scores {
		for _, s := range row {
			sum += math.Max(0, 1-(s-floor)/(target-floor))
			n++
		}
	}
	return sum / float64(n)
}

// OptimalityGapInterval returns OptimalityGap with a 95% stratified
// bootstrap percentile interval (runs resampled task by task), seeded like
// ProbabilityOfImprovement. Empty or ragged matrices or reps < 1 panic.
func OptimalityGapInterval(scores [][]float64, target, floor float64, reps int, seed uint64) Interval {
	rng := rand.New(rand.NewPCG(seed, streamGap))
	return gapInterval(scores, target, floor, reps, rng)
}

func gapInterval(scores [][]float64, target, floor float64, reps int, rng *rand.Rand) Interval {
	runs, tasks := checkScores("OptimalityGapInterval", scores)
	checkReps("OptimalityGapInterval", reps)
	point := optimalityGap(scores, target, floor)
	if math.IsNaN(point) {
		return Interval{Point: point, Low: point, High: point}
	}
	rs := newMatrix(runs, tasks)
	stats := make([]float64, reps)
	for r := range stats {
		stratifiedResample(rs, scores, rng)
		stats[r] = optimalityGap(rs, target, floor)
	}
	return percentileInterval(point, stats)
}

// meanInterval is the mean of xs with a 95% percentile-bootstrap interval.
func meanInterval(xs []float64, reps int, rng *rand.Rand) Interval {
	return oneSampleInterval(xs, reps, rng, mean)
}

// medianInterval is the median of xs with a 95% percentile-bootstrap
// interval. xs may hold +Inf (a seed that never reached a target): the
// median, and either end, is +Inf when the rank it falls on is.
func medianInterval(xs []float64, reps int, rng *rand.Rand) Interval {
	med := func(s []float64) float64 {
		s = slices.Clone(s)
		slices.Sort(s)
		return quantile(s, 0.5)
	}
	return oneSampleInterval(xs, reps, rng, med)
}

// oneSampleInterval bootstraps stat over xs resampled with replacement. An
// empty xs gives NaN everywhere.
func oneSampleInterval(xs []float64, reps int, rng *rand.Rand, stat func([]float64) float64) Interval {
	if len(xs) == 0 {
		return Interval{Point: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	checkReps("bootstrap", reps)
	point := stat(xs)
	sample := make([]float64, len(xs))
	stats := make([]float64, reps)
	for r := range stats {
		for i := range sample {
			sample[i] = xs[rng.IntN(len(xs))]
		}
		stats[r] = stat(sample)
	}
	return percentileInterval(point, stats)
}

// ratioInterval is mean(num)/mean(den) with a 95% percentile-bootstrap
// interval that resamples num and den independently (two separate sets of
// runs, like two arms' throughputs). Empty inputs give NaN everywhere.
func ratioInterval(num, den []float64, reps int, rng *rand.Rand) Interval {
	nan := Interval{Point: math.NaN(), Low: math.NaN(), High: math.NaN()}
	if len(num) == 0 || len(den) == 0 {
		return nan
	}
	checkReps("ratio bootstrap", reps)
	point := mean(num) / mean(den)
	sn, sd := make([]float64, len(num)), make([]float64, len(den))
	stats := make([]float64, reps)
	for r := range stats {
		for i := range sn {
			sn[i] = num[rng.IntN(len(num))]
		}
		for i := range sd {
			sd[i] = den[rng.IntN(len(den))]
		}
		stats[r] = mean(sn) / mean(sd)
	}
	return percentileInterval(point, stats)
}

// percentileInterval sorts the replicate statistics and takes their 2.5%
// and 97.5% quantiles around point.
func percentileInterval(point float64, stats []float64) Interval {
	slices.Sort(stats)
	return Interval{Point: point, Low: quantile(stats, 0.025), High: quantile(stats, 0.975)}
}

// stratifiedResample fills dst, shaped like scores, with runs drawn with
// replacement from scores independently for every task (column).
func stratifiedResample(dst, scores [][]float64, rng *rand.Rand) {
	runs := len(scores)
	for t := range scores[0] {
		for i := range dst {
			dst[i][t] = scores[rng.IntN(runs)][t]
		}
	}
}

func newMatrix(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
	}
	return m
}

// checkScores panics unless scores is a non-empty rectangular matrix, and
// returns its shape.
func checkScores(what string, scores [][]float64) (runs, tasks int) {
	if len(scores) == 0 || len(scores[0]) == 0 {
		panic(fmt.Sprintf("reports: %s needs at least one run and one task", what))
	}
	tasks = len(scores[0])
	for i, row := range scores {
		if len(row) != tasks {
			panic(fmt.Sprintf("reports: %s score row %d has %d tasks, want %d", what, i, len(row), tasks))
		}
	}
	return len(scores), tasks
}

func checkReps(what string, reps int) {
	if reps < 1 {
		panic(fmt.Sprintf("reports: %s needs reps >= 1, got %d", what, reps))
	}
}
