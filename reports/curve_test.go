package reports

import (
	"math"
	"math/rand/v2"
	"testing"
)

func floatsNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func TestSmoothTrailing(t *testing.T) {
	floatsNear(t, "window 2", SmoothTrailing([]float64{1, 2, 3, 4, 5}, 2), []float64{1, 1.5, 2.5, 3.5, 4.5}, exact)
	floatsNear(t, "window 3", SmoothTrailing([]float64{3, 0, 6, 9}, 3), []float64{3, 1.5, 3, 5}, exact)
	floatsNear(t, "window 1", SmoothTrailing([]float64{4, -1}, 1), []float64{4, -1}, exact)
	// NaNs are skipped: the window [NaN, 3] averages only 3.
	floatsNear(t, "NaN", SmoothTrailing([]float64{1, math.NaN(), 3, 5}, 2), []float64{1, 1, 3, 4}, exact)
	floatsNear(t, "all NaN", SmoothTrailing([]float64{math.NaN()}, 2), []float64{math.NaN()}, 0)
}

func TestResampleHandComputed(t *testing.T) {
	// Two samples share x = 10; the later one (7) holds there, so after
	// collapsing the curve is (0,0) (10,7) (20,27).
	c := Curve{X: []float64{0, 10, 10, 20}, Y: []float64{0, 5, 7, 27}}
	grid := []float64{-1, 0, 5, 10, 15, 20, 21}
	want := []float64{math.NaN(), 0, 3.5, 7, 17, 27, math.NaN()}
	floatsNear(t, "resample", Resample(c, grid), want, exact)
	// A NaN sample is skipped: interpolate straight from (0,1) to (4,9).
	c = Curve{X: []float64{0, 2, 4}, Y: []float64{1, math.NaN(), 9}}
	floatsNear(t, "resample over NaN", Resample(c, []float64{1, 3}), []float64{3, 7}, exact)
	// A decreasing grid works too.
	floatsNear(t, "decreasing grid", Resample(c, []float64{3, 1}), []float64{7, 3}, exact)
	floatsNear(t, "empty curve", Resample(Curve{}, []float64{1}), []float64{math.NaN()}, 0)
}

func TestCommonGrid(t *testing.T) {
	curves := []Curve{
		{X: []float64{0, 10, 20}, Y: []float64{1, 2, 3}},
		{X: []float64{5, 30}, Y: []float64{1, 2}},
	}
	floatsNear(t, "grid", CommonGrid(curves, 4), []float64{5, 10, 15, 20}, exact)
	// The leading NaN does not count as covered range: [10, 20] ∩ [5, 30].
	curves[0].Y[0] = math.NaN()
	floatsNear(t, "grid after NaN", CommonGrid(curves, 3), []float64{10, 15, 20}, exact)
	disjoint := []Curve{{X: []float64{0, 1}, Y: []float64{0, 0}}, {X: []float64{2, 3}, Y: []float64{0, 0}}}
	if g := CommonGrid(disjoint, 5); g != nil {
		t.Errorf("disjoint curves: grid %v, want nil", g)
	}
	touching := []Curve{{X: []float64{0, 2}, Y: []float64{0, 0}}, {X: []float64{2, 3}, Y: []float64{0, 0}}}
	floatsNear(t, "one shared point", CommonGrid(touching, 5), []float64{2}, 0)
	if g := CommonGrid([]Curve{{}}, 5); g != nil {
		t.Errorf("empty curve: grid %v, want nil", g)
	}
}

func TestAggregateCurvesMean(t *testing.T) {
	// Seed A: y = x on [0, 100]; seed B: y = 2x + 10 on [20, 120].
	// Common grid [20, 100] with 3 points: 20, 60, 100.
	// A: 20, 60, 100. B: 50, 130, 210. Mean: 35, 95, 155.
	a := Curve{X: []float64{0, 100}, Y: []float64{0, 100}}
	b := Curve{X: []float64{20, 120}, Y: []float64{50, 250}}
	band := aggregateCurves([]Curve{a, b}, 3, AggregateMean, 0, nil)
	floatsNear(t, "x", band.X, []float64{20, 60, 100}, exact)
	floatsNear(t, "mean", band.Y, []float64{35, 95, 155}, exact)
	floatsNear(t, "low", band.Low, []float64{20, 60, 100}, exact)
	floatsNear(t, "high", band.High, []float64{50, 130, 210}, exact)
	if band.Seeds != 2 {
		t.Errorf("Seeds = %d, want 2", band.Seeds)
	}
}

func TestAggregateCurvesIQM(t *testing.T) {
	// Four identical seeds: the IQM is the curve itself and the bootstrap
	// interval has zero width at every grid point.
	c := Curve{X: []float64{0, 10}, Y: []float64{2, 4}}
	rng := rand.New(rand.NewPCG(1, bootstrapStream))
	band := aggregateCurves([]Curve{c, c, c, c}, 3, AggregateIQM, 200, rng)
	floatsNear(t, "iqm", band.Y, []float64{2, 3, 4}, exact)
	floatsNear(t, "low", band.Low, band.Y, 0)
	floatsNear(t, "high", band.High, band.Y, 0)
	// Disjoint seeds give an empty band rather than extrapolated values.
	d := Curve{X: []float64{20, 30}, Y: []float64{1, 1}}
	if b := aggregateCurves([]Curve{c, d}, 3, AggregateIQM, 10, rng); len(b.X) != 0 || b.Seeds != 2 {
		t.Errorf("disjoint band = %+v", b)
	}
}
