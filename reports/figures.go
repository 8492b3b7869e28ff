package reports

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure names (file base names under figures/).
const (
	FigLearningCurve     = "learning_curve"
	FigLearningCurveWall = "learning_curve_wall"
	FigThroughput        = "throughput"
)

// returnCurve is a run's smoothed return against environment steps: the
// trailing moving average of the episode returns over window episodes,
// placed at the env step each episode finished. A run without an episodes
// table falls back to the episode_return column of its metrics.
func returnCurve(r *runData, window int) Curve {
	var c Curve
	if len(r.Episodes) > 0 {
		ys := make([]float64, len(r.Episodes))
		for i, e := range r.Episodes {
			c.X = append(c.X, float64(e.EnvSteps))
			ys[i] = e.Return
		}
		c.Y = SmoothTrailing(ys, window)
		return c
	}
	var ys []float64
	for _, m := range r.Metrics {
		if m.Episodes > 0 && !math.IsNaN(m.EpisodeReturn) {
			c.X = append(c.X, float64(m.EnvSteps))
			ys = append(ys, m.EpisodeReturn)
		}
	}
	c.Y = SmoothTrailing(ys, window)
	return c
}

// wallCurve maps a return curve from env steps to wall-clock seconds by
// interpolating the run's (env_steps, wall_s) metrics rows. Points outside
// the logged range are dropped rather than extrapolated.
func wallCurve(r *runData, c Curve) Curve {
	var clock Curve
	for _, m := range r.Metrics {
		if !math.IsNaN(m.WallS) {
			clock.X = append(clock.X, float64(m.EnvSteps))
			clock.Y = append(clock.Y, m.WallS)
		}
	}
	walls := Resample(clock, c.X)
	var out Curve
	for i, w := range walls {
		if !math.IsNaN(w) {
			out.X = append(out.X, w)
			out.Y = append(out.Y, c.Y[i])
		}
	}
	return out
}

// armBands aggregates the return curves of every arm; xAxis selects env
// steps or wall-clock seconds. Arms without any curve get an empty Band.
func armBands(e *experimentData, opts Options, wall bool) []Band {
	bands := make([]Band, len(e.Arms))
	for i, arm := range e.Arms {
		var curves []Curve
		for _, r := range e.runsOf(arm) {
			c := returnCurve(r, opts.SmoothWindow)
			if wall {
				c = wallCurve(r, c)
			}
			if _, _, ok := xRange(c); ok {
				curves = append(curves, c)
			}
		}
		if len(curves) == 0 {
			continue
		}
		rng := rand.New(rand.NewPCG(opts.Seed^armKey(arm), bootstrapStream))
		bands[i] = aggregateCurves(curves, opts.GridPoints, opts.Aggregate, opts.BootstrapReps, rng)
	}
	return bands
}

// bandCaption says what the line and the band of a learning curve are.
func bandCaption(opts Options) string {
	if opts.Aggregate == AggregateMean {
		return "Lines are the mean across seeds and shaded bands the min–max range across seeds"
	}
	return fmt.Sprintf("Lines are the interquartile mean (IQM) across seeds and shaded bands its 95%% stratified-bootstrap confidence interval (%d replicates)", opts.BootstrapReps)
}

// learningCurveFigure draws one line per arm with its band. It returns nil
// when no arm has a curve.
func learningCurveFigure(e *experimentData, opts Options, wall bool) (*figure, error) {
	bands := armBands(e, opts, wall)
	xLabel, name, what := "Environment steps", FigLearningCurve, "environment steps"
	scale := 1.0
	if wall {
		name, what = FigLearningCurveWall, "wall-clock time"
		xLabel, scale = wallAxis(bands)
	}
	p := newPlot(fmt.Sprintf("%s: episode return vs %s", e.Name, what), xLabel,
		fmt.Sprintf("Episode return (mean of last %d episodes)", opts.SmoothWindow))
	var points []plotter.XY
	var labels []string
	for i, b := range bands {
		if len(b.X) == 0 {
			continue
		}
		st := styleOf(i)
		upper := make(plotter.XYs, 0, 2*len(b.X))
		line := make(plotter.XYs, len(b.X))
		for j := range b.X {
			line[j] = plotter.XY{X: b.X[j] / scale, Y: b.Y[j]}
			upper = append(upper, plotter.XY{X: b.X[j] / scale, Y: b.High[j]})
		}
		for j := len(b.X) - 1; j >= 0; j-- {
			upper = append(upper, plotter.XY{X: b.X[j] / scale, Y: b.Low[j]})
		}
		label := fmt.Sprintf("%s (%d seed%s)", e.Arms[i], b.Seeds, plural(b.Seeds))
		labels = append(labels, label)
		points = append(points, upper...)
		points = append(points, line...)
		if len(b.X) == 1 {
			sc, err := plotter.NewScatter(line)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			p.Legend.Add(label, sc)
			continue
		}
		poly, err := plotter.NewPolygon(upper)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		poly.Color = st.fill(0x40)
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		l.LineStyle = st.lineStyle(vg.Points(2))
		p.Add(poly, l)
		p.Legend.Add(label, l)
	}
	if len(labels) == 0 {
		return nil, nil
	}
	p.Add(plotter.NewGrid())
	setCurveRanges(p, points)
	placeLegend(p, points, labels)
	caption := fmt.Sprintf("Episode return against %s. Each seed's returns are smoothed with a trailing %d-episode moving average and resampled onto a common grid of %d points spanning the range all seeds of the arm cover. %s.",
		what, opts.SmoothWindow, opts.GridPoints, bandCaption(opts))
	if wall {
		caption += " Wall-clock time of an episode is interpolated from the metrics rows."
	}
	return renderFigure(name, p.Title.Text, caption, p)
}

// setCurveRanges starts the x axis at 0 (steps and seconds count from the
// start of the run) and pads the y range by 5% so that lines do not run
// along the frame.
func setCurveRanges(p *plot.Plot, points []plotter.XY) {
	lo, hi := math.Inf(1), math.Inf(-1)
	xmax := 0.0
	for _, pt := range points {
		lo, hi, xmax = math.Min(lo, pt.Y), math.Max(hi, pt.Y), math.Max(xmax, pt.X)
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = math.Max(1, 0.05*math.Abs(hi))
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min = math.Min(0, p.X.Min)
	if xmax <= 0 {
		p.X.Max = 1
	}
}

// wallAxis picks seconds, minutes or hours for a wall-clock axis so that
// tick labels stay short; it returns the axis label and the divisor.
func wallAxis(bands []Band) (string, float64) {
	var hi float64
	for _, b := range bands {
		if n := len(b.X); n > 0 {
			hi = math.Max(hi, b.X[n-1])
		}
	}
	switch {
	case hi >= 3*3600:
		return "Wall-clock time (hours)", 3600
	case hi >= 3*60:
		return "Wall-clock time (minutes)", 60
	}
	return "Wall-clock time (seconds)", 1
}

// throughputFigure draws one bar per arm: mean env steps per second across
// seeds, whiskers from the slowest to the fastest seed, and the speedup
// over the baseline written above each bar. It returns nil when no arm has
// a throughput.
func throughputFigure(e *experimentData, res Results) (*figure, error) {
	p := newPlot(fmt.Sprintf("%s: throughput", e.Name), "Arm", "Environment steps per second")
	p.Legend = plot.NewLegend() // bars are labelled on the axis; no legend
	top := 0.0
	for _, a := range res.Arms {
		top = math.Max(top, math.Max(float64(a.StepsPerS.Max), float64(a.StepsPerS.Mean)))
	}
	if !(top > 0) {
		return nil, nil
	}
	names := make([]string, len(res.Arms))
	var labels plotter.XYLabels
	for i, a := range res.Arms {
		names[i] = a.Arm
		m := float64(a.StepsPerS.Mean)
		st := styleOf(i)
		if math.IsNaN(m) {
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: 0.02 * top})
			labels.Labels = append(labels.Labels, "no data")
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{m}, vg.Points(barWidth(len(res.Arms))))
		if err != nil {
			return nil, fmt.Errorf("plot throughput: %w", err)
		}
		bar.XMin = float64(i)
		bar.Color = st.fill(0xD0)
		bar.LineStyle = st.lineStyle(vg.Points(1))
		bar.LineStyle.Dashes = nil
		p.Add(bar)
		lo, hi := float64(a.StepsPerS.Min), float64(a.StepsPerS.Max)
		if a.StepsPerS.N > 1 {
			eb, err := plotter.NewYErrorBars(errPoint{x: float64(i), y: m, lo: m - lo, hi: hi - m})
			if err != nil {
				return nil, fmt.Errorf("plot throughput: %w", err)
			}
			eb.LineStyle.Width = vg.Points(1.2)
			eb.CapWidth = vg.Points(10)
			p.Add(eb)
		}
		text := "no baseline"
		if s := float64(a.Speedup); !math.IsNaN(s) {
			text = fmt.Sprintf("%.2f×", s)
			if a.Arm == res.Baseline {
				text += " (baseline)"
			}
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: math.Max(m, hi) + 0.03*top})
		labels.Labels = append(labels.Labels, text)
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, fmt.Errorf("plot throughput: %w", err)
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign = text.XCenter
		lab.TextStyle[i].YAlign = text.YBottom
		lab.TextStyle[i].Font.Size = vg.Points(10)
		lab.TextStyle[i].Font.Variant = "Sans"
	}
	p.Add(lab)
	p.NominalX(names...)
	p.X.Label.Text = ""
	p.X.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Min, p.Y.Max = 0, 1.15*top
	p.X.Min, p.X.Max = -0.6, float64(len(res.Arms))-0.4
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	p.Add(grid)
	caption := "Environment steps per second per arm: bars are the mean across seeds, whiskers span the slowest to the fastest seed, and the number above each bar is the speedup over the baseline arm (ratio of mean steps per second)."
	return renderFigure(FigThroughput, p.Title.Text, caption, p)
}

// barWidth narrows bars as arms are added so that neighbours never touch
// (the figure is about 430 points wide inside the axes).
func barWidth(arms int) float64 {
	return math.Min(70, 300/float64(max(arms, 1)))
}

// errPoint is a single asymmetric error bar.
type errPoint struct{ x, y, lo, hi float64 }

func (e errPoint) Len() int                      { return 1 }
func (e errPoint) XY(int) (float64, float64)     { return e.x, e.y }
func (e errPoint) YError(int) (float64, float64) { return e.lo, e.hi }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// armKey hashes an arm name (FNV-1a) so that each arm's bootstrap stream
// depends on its name, not on its position in the spec.
func armKey(arm string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(arm); i++ {
		h ^= uint64(arm[i])
		h *= 1099511628211
	}
	return h
}
