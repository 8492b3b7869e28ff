package reports

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Marker styles shared by the bar figures: seeds as dark dots over the
// bars, unreached seeds as open triangles.
var (
	seedColor   = color.NRGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xFF}
	seedGlyph   = draw.GlyphStyle{Color: seedColor, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
	censorGlyph = draw.GlyphStyle{Color: seedColor, Radius: vg.Points(3.6), Shape: draw.TriangleGlyph{}}
)

// throughputFigure draws one bar per arm: the mean env steps per second
// across seeds with its 95% bootstrap interval, every seed as a dot, and
// the speedup over the baseline with its interval above each bar.
func throughputFigure(in *figureInput) (*figure, string, error) {
	e, res := in.e, in.res
	seeds := make([][]float64, len(res.Arms))
	top := 0.0
	for i, a := range res.Arms {
		for _, r := range e.runsOf(a.Arm) {
			if r.hasData() && r.StepsPerS > 0 && !math.IsInf(r.StepsPerS, 0) {
				seeds[i] = append(seeds[i], r.StepsPerS)
				top = math.Max(top, r.StepsPerS)
			}
		}
		top = math.Max(top, finiteOr(float64(a.StepsPerSHigh), 0))
	}
	if !(top > 0) {
		return nil, "no run has a throughput (env steps per second) yet", nil
	}
	p := newPlot(fmt.Sprintf("%s: throughput", e.Name), "", "Environment steps per second")
	names := make([]string, len(res.Arms))
	var labels plotter.XYLabels
	var points []plotter.XY
	for i, a := range res.Arms {
		names[i] = a.Arm
		m := float64(a.StepsPerS.Mean)
		x := float64(i)
		if math.IsNaN(m) {
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: 0.02 * top})
			labels.Labels = append(labels.Labels, "no data")
			continue
		}
		if err := addBar(p, i, m, styleOf(i), false, len(res.Arms)); err != nil {
			return nil, "", fmt.Errorf("plot throughput: %w", err)
		}
		hi := m
		if lo, h := float64(a.StepsPerSLow), float64(a.StepsPerSHigh); len(seeds[i]) > 1 && h > lo {
			if err := addWhisker(p, x, m, lo, h); err != nil {
				return nil, "", fmt.Errorf("plot throughput: %w", err)
			}
			hi = math.Max(hi, h)
		}
		dots, err := addSeedDots(p, x, seeds[i], len(seeds[i]))
		if err != nil {
			return nil, "", fmt.Errorf("plot throughput: %w", err)
		}
		points = append(points, dots...)
		hi = math.Max(hi, slicesMax(seeds[i]))
		label := "speedup n/a"
		switch s := float64(a.Speedup); {
		case a.Arm == res.Baseline && !math.IsNaN(s):
			label = "1.00×\n(baseline)"
		case !math.IsNaN(s):
			label = fmt.Sprintf("%.2f×\n[%.2f, %.2f]", s, float64(a.SpeedupLow), float64(a.SpeedupHigh))
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: hi + 0.03*top})
		labels.Labels = append(labels.Labels, label)
		points = append(points, barPoints(x, m)...)
	}
	ymax := 1.25 * top
	if err := addBarLabels(p, labels); err != nil {
		return nil, "", fmt.Errorf("plot throughput: %w", err)
	}
	points = append(points, labelPoints(labels, 0.12*top)...)
	finishBars(p, names, ymax)
	legendSeedsAndCI(p, "one seed", "95% CI of the mean", nil)
	placeLegend(p, points, []string{"one seed", "95% CI of the mean"})
	caption := "Environment steps per second per arm: bars are the mean across seeds, dots the individual seeds and whiskers a 95% percentile-bootstrap confidence interval of the mean. " +
		"Above each bar: the speedup over the baseline arm (ratio of mean steps per second) with its 95% interval, which resamples the seeds of both arms independently."
	f, err := renderFigure(FigThroughput, p.Title.Text, caption, p)
	return f, "", err
}

// stepsToTargetFigure draws, per arm, the median env steps the seeds need
// to reach the target return by their training episodes, with its 95%
// bootstrap interval, every seed (open triangles for seeds that never
// reached it, at their budget) and the ratio to the baseline above each bar.
func stepsToTargetFigure(in *figureInput) (*figure, string, error) {
	how := fmt.Sprintf("For each seed, the first env step at which its smoothed return curve (trailing %d-episode mean, once the window is full) reaches the target. ", in.opts.SmoothWindow)
	return targetBars(in, FigStepsToTarget, in.targets.training, "", how)
}

// stepsToTargetEvalFigure is stepsToTargetFigure by evaluation episodes;
// an experiment without evaluations has no such figure.
func stepsToTargetEvalFigure(in *figureInput) (*figure, string, error) {
	v := in.res.Evaluation
	if v == nil {
		return nil, "", nil
	}
	how := fmt.Sprintf("For each seed, the env steps of its first evaluation (%s episodes played after a training segment, not counted as env steps) whose mean return reaches the target. ", v.episodesText())
	return targetBars(in, FigStepsToTargetEval, in.targets.eval, " (evaluation episodes)", how)
}

// targetBars draws the steps-to-target bars of one measure: targets per arm,
// a title suffix and the caption's sentence on how a seed's steps are read.
func targetBars(in *figureInput, name string, targets []*armTarget, titleSuffix, how string) (*figure, string, error) {
	e := in.e
	if e.Target == nil {
		return nil, `no target return: pass Options.Target or set "target" in experiment.json`, nil
	}
	top := 0.0
	for _, t := range targets {
		if t == nil {
			continue
		}
		top = math.Max(top, t.Top)
	}
	if !(top > 0) {
		return nil, "no run has finished an episode yet", nil
	}
	target := fmtTarget(e.Target.Return)
	p := newPlot(fmt.Sprintf("%s: env steps to reach return %s%s", e.Name, target, titleSuffix), "",
		fmt.Sprintf("Environment steps to reach return ≥ %s", target))
	var base *armTarget
	for i, arm := range e.Arms {
		if arm == e.Baseline {
			base = targets[i]
		}
	}
	var labels plotter.XYLabels
	var points []plotter.XY
	anyCensored := false
	for i, arm := range e.Arms {
		t, x := targets[i], float64(i)
		if t == nil {
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: 0.02 * top})
			labels.Labels = append(labels.Labels, "no data")
			continue
		}
		med, hi := t.Median.Point, t.Bound
		reachedMedian := !math.IsInf(med, 1)
		if err := addBar(p, i, t.Bound, styleOf(i), !reachedMedian, len(e.Arms)); err != nil {
			return nil, "", fmt.Errorf("plot steps to target: %w", err)
		}
		points = append(points, barPoints(x, t.Bound)...)
		if reachedMedian && len(t.Runs) > 1 {
			h := t.Median.High
			if math.IsInf(h, 1) {
				h = t.Top // the interval is open upwards: draw it to the largest budget
			}
			if h > t.Median.Low {
				if err := addWhisker(p, x, med, t.Median.Low, h); err != nil {
					return nil, "", fmt.Errorf("plot steps to target: %w", err)
				}
			}
			hi = math.Max(hi, h)
		}
		var reached, censored []float64
		for _, r := range t.Runs {
			if r.Reached {
				reached = append(reached, r.Steps)
			} else {
				censored = append(censored, r.Budget)
				anyCensored = true
			}
			hi = math.Max(hi, r.censored())
		}
		dots, err := addSeedDots(p, x, append(reached, censored...), len(reached))
		if err != nil {
			return nil, "", fmt.Errorf("plot steps to target: %w", err)
		}
		points = append(points, dots...)
		first := humanNumber(med)
		if !reachedMedian {
			first = ">" + humanNumber(t.Bound)
		}
		second := "(baseline)"
		if arm != e.Baseline {
			second = "vs baseline n/a"
			if v, rel := targetRatio(t, base); !math.IsNaN(v) {
				second = fmt.Sprintf("%s%.2f× baseline", rel, v)
			}
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: hi + 0.03*top})
		labels.Labels = append(labels.Labels, first+"\n"+second)
	}
	if err := addBarLabels(p, labels); err != nil {
		return nil, "", fmt.Errorf("plot steps to target: %w", err)
	}
	points = append(points, labelPoints(labels, 0.12*top)...)
	finishBars(p, e.Arms, 1.25*top)
	var censorEntry *draw.GlyphStyle
	if anyCensored {
		censorEntry = &censorGlyph
	}
	legendSeedsAndCI(p, "seed: first step at target", "95% CI of the median", censorEntry)
	legend := []string{"seed: first step at target", "95% CI of the median"}
	if anyCensored {
		legend = append(legend, censorLabel)
	}
	placeLegend(p, points, legend)
	caption := fmt.Sprintf("Sample efficiency: environment steps each arm needs to reach an episode return of %s (target from %s). "+
		"%s"+
		"Bars are the median across seeds with a 95%% percentile-bootstrap interval. Seeds that never reached the target are censored at their last env step (open triangles) and count as needing more; "+
		"a bar with a dashed outline means the median seed did not reach it and shows a lower bound (>); a whisker that ends at the largest budget is open upwards. "+
		"Above each bar: the median and its ratio to the baseline's (below 1: fewer env steps than the baseline).",
		target, e.Target.Source, how)
	f, err := renderFigure(name, p.Title.Text, caption, p)
	return f, "", err
}

// addBar adds one bar at x = i in the arm's colour; a lower-bound bar is
// pale with a dashed outline.
func addBar(p *plot.Plot, i int, height float64, st armStyle, lowerBound bool, arms int) error {
	bar, err := plotter.NewBarChart(plotter.Values{height}, vg.Points(barWidth(arms)))
	if err != nil {
		return err
	}
	bar.XMin = float64(i)
	bar.Color = st.fill(0xB0)
	bar.LineStyle = st.lineStyle(vg.Points(1))
	bar.LineStyle.Dashes = nil
	if lowerBound {
		bar.Color = st.fill(0x30)
		bar.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(bar)
	return nil
}

// addWhisker adds a vertical interval [lo, hi] around y at x.
func addWhisker(p *plot.Plot, x, y, lo, hi float64) error {
	eb, err := plotter.NewYErrorBars(errPoint{x: x, y: y, lo: y - lo, hi: hi - y})
	if err != nil {
		return err
	}
	eb.LineStyle = whiskerStyle
	eb.CapWidth = vg.Points(10)
	p.Add(eb)
	return nil
}

var whiskerStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.4)}

// addSeedDots spreads values beside the bar at x (in seed order, so the
// layout is stable) and draws the first reached as dots and the rest as
// censored triangles.
func addSeedDots(p *plot.Plot, x float64, values []float64, reached int) ([]plotter.XY, error) {
	if len(values) == 0 {
		return nil, nil
	}
	// In the right half of the bar, clear of the whisker at its centre:
	// from x+0.07 to at most x+0.22 (a bar is at least ±0.26 wide).
	step := 0.05
	if len(values) > 1 {
		step = math.Min(step, 0.15/float64(len(values)-1))
	}
	var dots, tris plotter.XYs
	for j, v := range values {
		pt := plotter.XY{X: x + 0.07 + float64(j)*step, Y: v}
		if j < reached {
			dots = append(dots, pt)
		} else {
			tris = append(tris, pt)
		}
	}
	for _, set := range []struct {
		xys plotter.XYs
		g   draw.GlyphStyle
	}{{dots, seedGlyph}, {tris, censorGlyph}} {
		if len(set.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = set.g
		p.Add(sc)
	}
	return append(dots, tris...), nil
}

// addBarLabels writes centred labels with their bottom at each point.
func addBarLabels(p *plot.Plot, labels plotter.XYLabels) error {
	if len(labels.XYs) == 0 {
		return nil
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign = text.XCenter
		lab.TextStyle[i].YAlign = text.YBottom
		lab.TextStyle[i].Font.Size = vg.Points(10)
		lab.TextStyle[i].Font.Variant = "Sans"
	}
	p.Add(lab)
	return nil
}

// finishBars puts the arm names on the x axis and fixes the ranges.
func finishBars(p *plot.Plot, names []string, ymax float64) {
	p.NominalX(names...)
	p.X.Label.Text = ""
	p.X.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Min, p.Y.Max = 0, ymax
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	p.Add(grid)
}

// censorLabel is the legend entry of a seed that never reached the target.
const censorLabel = "seed: not reached (at its last step)"

// legendSeedsAndCI explains the markers: a seed dot, the interval whisker
// and, when censor is not nil, the censored-seed triangle.
func legendSeedsAndCI(p *plot.Plot, seedLabel, ciLabel string, censor *draw.GlyphStyle) {
	p.Legend.Add(seedLabel, glyphThumb(seedGlyph))
	if censor != nil {
		p.Legend.Add(censorLabel, glyphThumb(*censor))
	}
	p.Legend.Add(ciLabel, whiskerThumb{})
}

// barPoints samples a bar's area for legend placement.
func barPoints(x, height float64) []plotter.XY {
	var pts []plotter.XY
	for k := 0; k <= 10; k++ {
		for _, dx := range []float64{-0.3, 0, 0.3} {
			pts = append(pts, plotter.XY{X: x + dx, Y: height * float64(k) / 10})
		}
	}
	return pts
}

// labelPoints samples the area of the labels above the bars (height in
// data units) for legend placement.
func labelPoints(labels plotter.XYLabels, height float64) []plotter.XY {
	var pts []plotter.XY
	for _, xy := range labels.XYs {
		for _, dy := range []float64{0, height / 2, height} {
			for _, dx := range []float64{-0.3, 0, 0.3} {
				pts = append(pts, plotter.XY{X: xy.X + dx, Y: xy.Y + dy})
			}
		}
	}
	return pts
}

// glyphThumb draws a glyph as a legend entry.
type glyphThumb draw.GlyphStyle

// Thumbnail implements plot.Thumbnailer.
func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle(g), c.Center())
}

// whiskerThumb draws an interval whisker as a legend entry.
type whiskerThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (whiskerThumb) Thumbnail(c *draw.Canvas) {
	ctr := c.Center()
	h := (c.Max.Y - c.Min.Y) / 2
	w := vg.Points(4)
	c.StrokeLine2(whiskerStyle, ctr.X, ctr.Y-h, ctr.X, ctr.Y+h)
	c.StrokeLine2(whiskerStyle, ctr.X-w, ctr.Y-h, ctr.X+w, ctr.Y-h)
	c.StrokeLine2(whiskerStyle, ctr.X-w, ctr.Y+h, ctr.X+w, ctr.Y+h)
}

// barWidth narrows bars as arms are added so that neighbours never touch
// (the figure is about 430 points wide inside the axes).
func barWidth(arms int) float64 {
	return math.Min(70, 300/float64(max(arms, 1)))
}

// finiteOr returns v, or alt when v is NaN or infinite.
func finiteOr(v, alt float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return alt
	}
	return v
}

// slicesMax is the largest value, or -Inf for none.
func slicesMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// fmtTarget formats a target return compactly: 475, -200, 0.95.
func fmtTarget(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
