package reports

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Curve is a sampled function y(x) with non-decreasing X.
type Curve struct {
	X, Y []float64
}

// SmoothTrailing returns the trailing moving average of ys over window
// values: out[i] = mean(ys[max(0, i-window+1) .. i]). The first values
// average what exists so far. NaN inputs are skipped. window < 1 panics.
func SmoothTrailing(ys []float64, window int) []float64 {
	if window < 1 {
		panic(fmt.Sprintf("reports: SmoothTrailing window must be >= 1, got %d", window))
	}
	out := make([]float64, len(ys))
	var sum float64
	var n int
	for i, y := range ys {
		if !math.IsNaN(y) {
			sum += y
			n++
		}
		if j := i - window; j >= 0 && !math.IsNaN(ys[j]) {
			sum -= ys[j]
			n--
		}
		if n == 0 {
			out[i] = math.NaN()
		} else {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// Resample evaluates c at every grid point by linear interpolation between
// the two neighbouring samples. Grid points outside [c.X[0], c.X[last]] are
// NaN: a curve is never extrapolated. Where several samples share an x (two
// episodes finishing at the same env step), the last one is the value there,
// and interpolation to its right starts from it. NaN samples are ignored.
// A curve whose X and Y lengths differ panics.
func Resample(c Curve, grid []float64) []float64 {
	if len(c.X) != len(c.Y) {
		panic(fmt.Sprintf("reports: Resample curve has %d x and %d y values", len(c.X), len(c.Y)))
	}
	// Drop NaNs and collapse runs of equal x to their last sample.
	var xs, ys []float64
	for i := range c.X {
		if math.IsNaN(c.X[i]) || math.IsNaN(c.Y[i]) {
			continue
		}
		if n := len(xs); n > 0 && xs[n-1] == c.X[i] {
			ys[n-1] = c.Y[i]
			continue
		}
		xs, ys = append(xs, c.X[i]), append(ys, c.Y[i])
	}
	out := make([]float64, len(grid))
	j := 0 // xs[j] <= g < xs[j+1] for increasing grids; searched forward
	for i, g := range grid {
		if len(xs) == 0 || g < xs[0] || g > xs[len(xs)-1] || math.IsNaN(g) {
			out[i] = math.NaN()
			continue
		}
		if i > 0 && g < grid[i-1] {
			j = 0 // grid not increasing: restart the search
		}
		for j+1 < len(xs) && xs[j+1] <= g {
			j++
		}
		if j+1 == len(xs) {
			out[i] = ys[j] // g == last x
			continue
		}
		t := (g - xs[j]) / (xs[j+1] - xs[j])
		out[i] = ys[j] + t*(ys[j+1]-ys[j])
	}
	return out
}

// CommonGrid returns n evenly spaced points covering the x range that every
// curve covers, [max of first x, min of last x], so that resampling never
// extrapolates. It returns nil when the curves share no range or a curve is
// empty; a shared range of one point yields that single point. n < 2 panics.
func CommonGrid(curves []Curve, n int) []float64 {
	if n < 2 {
		panic(fmt.Sprintf("reports: CommonGrid needs n >= 2, got %d", n))
	}
	if len(curves) == 0 {
		return nil
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, c := range curves {
		first, last, ok := xRange(c)
		if !ok {
			return nil
		}
		lo, hi = math.Max(lo, first), math.Min(hi, last)
	}
	switch {
	case lo > hi:
		return nil
	case lo == hi:
		return []float64{lo}
	}
	grid := make([]float64, n)
	for i := range grid {
		grid[i] = math.Min(lo+(hi-lo)*float64(i)/float64(n-1), hi)
	}
	grid[n-1] = hi // exact end despite rounding
	return grid
}

// xRange returns the first and last x of c that have a finite y.
func xRange(c Curve) (first, last float64, ok bool) {
	first, last = math.NaN(), math.NaN()
	for i := range c.X {
		if math.IsNaN(c.X[i]) || math.IsNaN(c.Y[i]) {
			continue
		}
		if !ok {
			first, ok = c.X[i], true
		}
		last = c.X[i]
	}
	return first, last, ok
}

// Band is an across-seed aggregate of curves on a common grid: Y is the
// centre line and [Low, High] the band around it.
type Band struct {
	X, Y, Low, High []float64
	Seeds           int // curves aggregated
}

// Aggregation selects how Generate draws learning curves across seeds.
type Aggregation string

const (
	// AggregateIQM draws the interquartile mean across seeds with a 95%
	// bootstrap confidence band (IQMInterval at every grid point).
	AggregateIQM Aggregation = "iqm"
	// AggregateMean draws the mean across seeds with a min–max band.
	AggregateMean Aggregation = "mean"
)

// aggregateCurves resamples curves onto their common grid of n points and
// aggregates them point by point. It returns a Band with no points when
// the curves share no x range.
func aggregateCurves(curves []Curve, n int, agg Aggregation, reps int, rng *rand.Rand) Band {
	grid := CommonGrid(curves, n)
	b := Band{Seeds: len(curves)}
	if grid == nil {
		return b
	}
	cols := make([][]float64, len(curves))
	for i, c := range curves {
		cols[i] = Resample(c, grid)
	}
	b.X = grid
	b.Y, b.Low, b.High = make([]float64, len(grid)), make([]float64, len(grid)), make([]float64, len(grid))
	scores := make([][]float64, len(curves))
	for i := range scores {
		scores[i] = make([]float64, 1)
	}
	vals := make([]float64, len(curves))
	for g := range grid {
		for i := range curves {
			vals[i] = cols[i][g]
			scores[i][0] = cols[i][g]
		}
		switch agg {
		case AggregateMean:
			b.Y[g] = mean(vals)
			b.Low[g], b.High[g] = minMax(vals)
		default:
			iv := iqmInterval(scores, reps, rng)
			b.Y[g], b.Low[g], b.High[g] = iv.Point, iv.Low, iv.High
		}
	}
	return b
}
