package reports

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure names (file base names under figures/).
const (
	FigLearningCurve     = "learning_curve"
	FigLearningCurveWall = "learning_curve_wall"
	FigEvaluationCurve   = "evaluation_curve"
	FigThroughput        = "throughput"
	FigStepsToTarget     = "steps_to_target"
	FigStepsToTargetEval = "steps_to_target_eval"
	FigPipeline          = "pipeline_distributions"
	FigPolicyLag         = "policy_lag"
	FigUtilization       = "utilization"
	FigWorldModel        = "world_model"
)

// figureInput is everything a figure may draw from.
type figureInput struct {
	e       *experimentData
	res     Results
	targets stepTargets // per arm and measure, see computeResults
	opts    Options
}

// figureSpec is one figure of the report. render returns nil and a reason
// (for report.md) when the data it needs is absent, and nil without a
// reason when the figure does not apply to the experiment at all (the
// evaluation curve of an experiment without evaluation episodes): it is
// then left out without a word.
type figureSpec struct {
	name, title string
	render      func(*figureInput) (f *figure, skipped string, err error)
}

// figureSpecs lists the report's figures in the order they appear.
func figureSpecs() []figureSpec {
	return []figureSpec{
		{FigLearningCurve, "Learning curve (env steps)", func(in *figureInput) (*figure, string, error) {
			return learningCurveFigure(in.e, in.opts, false)
		}},
		{FigLearningCurveWall, "Learning curve (wall-clock time)", func(in *figureInput) (*figure, string, error) {
			return learningCurveFigure(in.e, in.opts, true)
		}},
		{FigEvaluationCurve, "Evaluation return (env steps)", evaluationCurveFigure},
		{FigBehaviourCloning, "Behaviour cloning, then RL", behaviourCloningFigure},
		{FigThroughput, "Throughput", throughputFigure},
		{FigStepsToTarget, "Steps to target", stepsToTargetFigure},
		{FigStepsToTargetEval, "Steps to target (evaluation episodes)", stepsToTargetEvalFigure},
		{FigPipeline, "Pipeline distributions", pipelineFigure},
		{FigPolicyLag, "Policy lag: ratio and weight distributions", policyLagFigure},
		{FigUtilization, "Utilisation timeline", utilizationFigure},
		{FigWorldModel, "World model", worldModelFigure},
		{FigPixelWorldModel, "Pixel world model: imagined error per step", pixelWorldModelFigure},
	}
}

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

// armBands aggregates the curves that curveOf gives for the runs of every
// arm (return against env steps or wall-clock seconds, evaluation return).
// Arms without any curve get an empty Band.
func armBands(e *experimentData, opts Options, curveOf func(*runData) Curve) []Band {
	bands := make([]Band, len(e.Arms))
	for i, arm := range e.Arms {
		var curves []Curve
		for _, r := range e.runsOf(arm) {
			c := curveOf(r)
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

// learningCurveFigure draws one line per arm with its band.
func learningCurveFigure(e *experimentData, opts Options, wall bool) (*figure, string, error) {
	bands := armBands(e, opts, func(r *runData) Curve {
		c := returnCurve(r, opts.SmoothWindow)
		if wall {
			c = wallCurve(r, c)
		}
		return c
	})
	xLabel, name, what := "Environment steps", FigLearningCurve, "environment steps"
	scale := 1.0
	if wall {
		name, what = FigLearningCurveWall, "wall-clock time"
		xLabel, scale = wallAxis(bands)
	}
	p := newPlot(fmt.Sprintf("%s: episode return vs %s", e.Name, what), xLabel,
		fmt.Sprintf("Episode return (mean of last %d episodes)", opts.SmoothWindow))
	points, entries, err := addBands(p, e.Arms, bands, scale, 0x40)
	if err != nil {
		return nil, "", fmt.Errorf("plot %s: %w", name, err)
	}
	labels := addLegend(p, entries)
	if len(labels) == 0 {
		if wall {
			return nil, "no run has both finished episodes and wall-clock times yet", nil
		}
		return nil, "no run has finished an episode yet", nil
	}
	p.Add(plotter.NewGrid())
	setCurveRanges(p, points)
	placeLegend(p, points, labels)
	caption := fmt.Sprintf("Episode return against %s. Each seed's returns are smoothed with a trailing %d-episode moving average and resampled onto a common grid of %d points spanning the range all seeds of the arm cover. %s.",
		what, opts.SmoothWindow, opts.GridPoints, bandCaption(opts))
	if wall {
		caption += " Wall-clock time of an episode is interpolated from the metrics rows."
	}
	f, err := renderFigure(name, p.Title.Text, caption, p)
	return f, "", err
}

// legendEntry is one line of a legend; the zero value is no entry.
type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

// addLegend adds the entries that are set to p's legend in order and
// returns their labels.
func addLegend(p *plot.Plot, entries []legendEntry) []string {
	var labels []string
	for _, en := range entries {
		if en.thumb != nil {
			p.Legend.Add(en.label, en.thumb)
			labels = append(labels, en.label)
		}
	}
	return labels
}

// addBands draws every non-empty band as a line in its arm's colour over a
// filled band of the given opacity, dividing x by xScale. It returns the
// points drawn (for legend placement) and the legend entry of every arm,
// the zero entry for an arm whose band is empty.
func addBands(p *plot.Plot, arms []string, bands []Band, xScale float64, alpha uint8) ([]plotter.XY, []legendEntry, error) {
	var points []plotter.XY
	entries := make([]legendEntry, len(bands))
	for i, b := range bands {
		if len(b.X) == 0 {
			continue
		}
		st := styleOf(i)
		upper := make(plotter.XYs, 0, 2*len(b.X))
		line := make(plotter.XYs, len(b.X))
		for j := range b.X {
			line[j] = plotter.XY{X: b.X[j] / xScale, Y: b.Y[j]}
			upper = append(upper, plotter.XY{X: b.X[j] / xScale, Y: b.High[j]})
		}
		for j := len(b.X) - 1; j >= 0; j-- {
			upper = append(upper, plotter.XY{X: b.X[j] / xScale, Y: b.Low[j]})
		}
		label := seedsLabel(arms[i], b.Seeds)
		points = append(points, upper...)
		points = append(points, line...)
		if len(b.X) == 1 {
			sc, err := plotter.NewScatter(line)
			if err != nil {
				return nil, nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			entries[i] = legendEntry{label, sc}
			continue
		}
		poly, err := plotter.NewPolygon(upper)
		if err != nil {
			return nil, nil, err
		}
		poly.Color = st.fill(alpha)
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, nil, err
		}
		l.LineStyle = st.lineStyle(vg.Points(2))
		p.Add(poly, l)
		entries[i] = legendEntry{label, l}
	}
	return points, entries, nil
}

// seedsLabel is an arm's legend label: "async (3 seeds)".
func seedsLabel(arm string, seeds int) string {
	return fmt.Sprintf("%s (%d seed%s)", arm, seeds, plural(seeds))
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
