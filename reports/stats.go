package reports

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// bootstrapStream is the PCG stream of every bootstrap RNG in this package,
// so that a report's confidence intervals depend only on Options.Seed.
const bootstrapStream = 0x7265706f727473 // "reports"

// Interval is a point estimate with a confidence interval [Low, High].
type Interval struct {
	Point, Low, High float64
}

// mean returns the arithmetic mean of xs, NaN for an empty slice.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sampleStd returns the sample standard deviation of xs (divisor n-1), 0 for
// one value and NaN for none.
func sampleStd(xs []float64) float64 {
	switch len(xs) {
	case 0:
		return math.NaN()
	case 1:
		return 0
	}
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// minMax returns the smallest and largest of xs, NaN for an empty slice.
func minMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// finite returns the finite values of xs in order.
func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// quantile returns the q-quantile of sorted (ascending) by linear
// interpolation between closest ranks, the default of numpy.percentile:
// h = (n-1)·q, result = x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1] - x[⌊h⌋]). +Inf values
// are allowed: a quantile that interpolates towards one is +Inf.
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	frac := h - float64(lo)
	// Infinite values (a seed that never reached a target counts as +Inf)
	// would turn the interpolation into NaN; equal neighbours and exact
	// ranks need no interpolation anyway.
	if frac == 0 || sorted[lo] == sorted[lo+1] {
		return sorted[lo]
	}
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

// IQM returns the interquartile mean of xs: sort, drop ⌊n/4⌋ values from
// each end and average the rest. This is scipy.stats.trim_mean(xs, 0.25),
// the aggregate that rliable (Agarwal et al. 2021) reports; for n < 4
// nothing is dropped and it equals the mean. NaN for an empty slice.
func IQM(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return iqmSorted(s)
}

func iqmSorted(s []float64) float64 {
	cut := int(0.25 * float64(len(s)))
	return mean(s[cut : len(s)-cut])
}

// IQMInterval returns the IQM of a score matrix scores[run][task] (all
// values pooled) with a 95% stratified-bootstrap percentile confidence
// interval, the method of rliable: each of reps replicates resamples the
// runs of every task independently with replacement, and Low/High are the
// 2.5% and 97.5% quantiles of the replicate IQMs. The RNG is
// rand.NewPCG(seed, bootstrapStream), so equal inputs give equal intervals.
// Identical runs give a zero-width interval. A ragged or empty matrix, or
// reps < 1, panics.
func IQMInterval(scores [][]float64, reps int, seed uint64) Interval {
	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	return iqmInterval(scores, reps, rng)
}

// iqmInterval is IQMInterval with a caller-owned RNG, so that the grid
// points of a learning curve draw from one deterministic stream.
func iqmInterval(scores [][]float64, reps int, rng *rand.Rand) Interval {
	runs := len(scores)
	if runs == 0 || len(scores[0]) == 0 {
		panic("reports: IQMInterval needs at least one run and one task")
	}
	if reps < 1 {
		panic(fmt.Sprintf("reports: IQMInterval needs reps >= 1, got %d", reps))
	}
	tasks := len(scores[0])
	pooled := make([]float64, 0, runs*tasks)
	for i, row := range scores {
		if len(row) != tasks {
			panic(fmt.Sprintf("reports: IQMInterval score row %d has %d tasks, want %d", i, len(row), tasks))
		}
		pooled = append(pooled, row...)
	}
	point := IQM(pooled)
	stats := make([]float64, reps)
	sample := make([]float64, runs*tasks)
	for r := range stats {
		k := 0
		for t := range tasks {
			for range runs {
				sample[k] = scores[rng.IntN(runs)][t]
				k++
			}
		}
		slices.Sort(sample)
		stats[r] = iqmSorted(sample)
	}
	slices.Sort(stats)
	return Interval{Point: point, Low: quantile(stats, 0.025), High: quantile(stats, 0.975)}
}
