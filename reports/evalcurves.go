package reports

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/accerl/accerl/runstore"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// EvalSeries is one line of an evaluation-curve figure: the evaluation
// return (Y) against the online env steps at which it was measured (X).
// Series of the same Group share a colour and one legend entry, Label
// (the label of the group's first series is used).
type EvalSeries struct {
	Group int
	Label string
	X, Y  []float64
}

// EvalCurveOptions sets the axes of [WriteEvalCurves].
type EvalCurveOptions struct {
	// YLabel names the evaluation measure ("" : "evaluation return").
	YLabel string
	// Linear draws the step axis linear from 0, keeping points at 0 steps
	// (a warm start's evaluation); otherwise it is logarithmic.
	Linear bool
}

// WriteEvalCurves draws series against online env steps, with a dashed
// horizontal line at target, and writes the figure as a PNG to path
// (atomically). The step axis is logarithmic unless opts.Linear, so that
// arms whose step counts differ by orders of magnitude both stay
// readable; points with X <= 0 cannot sit on a log axis and are left out.
// The legend goes to the corner that neither the curves nor the target
// line cross.
func WriteEvalCurves(path, title string, target float64, series []EvalSeries, opts EvalCurveOptions) error {
	yLabel := opts.YLabel
	if yLabel == "" {
		yLabel = "evaluation return"
	}
	p := newPlot(title, "online env steps (log scale)", yLabel)
	if opts.Linear {
		p.X.Label.Text = "online env steps"
	} else {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logHumanTicks{}
	}
	var all []plotter.XY
	var labels []string
	labelled := map[int]bool{}
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("eval curves: series %q has %d x and %d y values", s.Label, len(s.X), len(s.Y))
		}
		var pts plotter.XYs
		for i, x := range s.X {
			if (x > 0 || opts.Linear && x == 0) && !math.IsNaN(s.Y[i]) {
				pts = append(pts, plotter.XY{X: x, Y: s.Y[i]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("eval curves: %w", err)
		}
		l.LineStyle = styleOf(s.Group).lineStyle(vg.Points(1.2))
		p.Add(l)
		if !labelled[s.Group] {
			labelled[s.Group] = true
			p.Legend.Add(s.Label, l)
			labels = append(labels, s.Label)
		}
		all = append(all, pts...)
	}
	if len(all) == 0 {
		return fmt.Errorf("eval curves: no points with positive steps to draw")
	}
	xmin, xmax := all[0].X, all[0].X
	ymin, ymax := target, target
	for _, q := range all {
		xmin, xmax = min(xmin, q.X), max(xmax, q.X)
		ymin, ymax = min(ymin, q.Y), max(ymax, q.Y)
	}
	t, tl, err := targetLine(xmin, xmax, target)
	if err != nil {
		return fmt.Errorf("eval curves: %w", err)
	}
	p.Add(t, plotter.NewGrid())
	p.Legend.Add(tl, t)
	labels = append(labels, tl)
	p.X.Min, p.X.Max = xmin, xmax
	pad := 0.04 * (ymax - ymin)
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	// The target line is drawn too: the legend must not cover it.
	avoid := slices.Clone(all)
	for i := range 21 {
		f := float64(i) / 20
		x := xmin + f*(xmax-xmin)
		if !opts.Linear {
			x = xmin * math.Pow(xmax/xmin, f)
		}
		avoid = append(avoid, plotter.XY{X: x, Y: target})
	}
	if opts.Linear {
		placeLegend(p, avoid, labels)
	} else {
		placeLegendLogX(p, avoid, labels)
	}
	png, err := renderPNG(figHeight, p.Draw)
	if err != nil {
		return fmt.Errorf("eval curves: %w", err)
	}
	return runstore.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(png)
		return err
	})
}

// evaluationCurveFigure draws the evaluation return against env steps.
// Per arm: every seed's evaluations as small dots joined by a thin line in
// the arm's colour (evaluations are few, so the reader should see where
// they are, and a seed whose range overlaps no other seed's still shows),
// and over the range that every seed of the arm covers, the across-seed
// aggregate with its band exactly as the learning curve draws it, so the
// two figures read alike. The target return is a dashed line. The x axis
// turns logarithmic when the arms' step counts differ by more than 10×.
// The figure is left out without a word when no run has an evaluation row.
func evaluationCurveFigure(in *figureInput) (*figure, string, error) {
	e, opts, info := in.e, in.opts, in.res.Evaluation
	if info == nil {
		return nil, "", nil
	}
	logX := wideStepRange(e)
	curveOf := evalCurve
	xLabel := "Environment steps (training only)"
	if logX {
		curveOf = func(r *runData) Curve { return positiveX(evalCurve(r)) }
		xLabel = "Environment steps (training only, log scale)"
	}
	p := newPlot(fmt.Sprintf("%s: evaluation return vs environment steps", e.Name), xLabel,
		fmt.Sprintf("Evaluation return (mean of %s episodes)", info.episodesText()))
	seedPts, seedEntries, err := addEvalSeeds(p, e, curveOf)
	if err != nil {
		return nil, "", fmt.Errorf("plot %s: %w", FigEvaluationCurve, err)
	}
	if len(seedPts) == 0 {
		return nil, "no evaluation row has a return yet", nil
	}
	points, entries, err := addBands(p, e.Arms, armBands(e, opts, curveOf), 1, 0x40)
	if err != nil {
		return nil, "", fmt.Errorf("plot %s: %w", FigEvaluationCurve, err)
	}
	points = append(points, seedPts...)
	for i, en := range entries {
		if en.thumb == nil { // the seeds share no range: only their own lines stand for the arm
			entries[i] = seedEntries[i]
		}
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
	}
	if !logX {
		xmin = math.Min(0, xmin) // the axis starts at 0, as in the learning curve
	}
	caption := fmt.Sprintf("Evaluation return against environment steps. After each training segment the current policy plays %s evaluation episodes, which train nothing and are not counted as env steps; a point is their mean return, placed at the run's training env steps so far. "+
		"Dots joined by thin lines are the evaluations of single seeds. Thick lines aggregate the seeds of an arm over the range of env steps that all of them cover, each seed's evaluations joined linearly and resampled onto a common grid of %d points. %s.",
		info.episodesText(), opts.GridPoints, bandCaption(opts))
	if t := e.Target; t != nil {
		line, label, err := targetLine(xmin, xmax, t.Return)
		if err != nil {
			return nil, "", fmt.Errorf("plot %s: %w", FigEvaluationCurve, err)
		}
		p.Add(line)
		entries = append(entries, legendEntry{label, line})
		// The legend must not hide the target line either.
		for k := 0; k <= 20; k++ {
			x := xmin + (xmax-xmin)*float64(k)/20
			if logX {
				x = xmin * math.Pow(xmax/xmin, float64(k)/20)
			}
			points = append(points, plotter.XY{X: x, Y: t.Return})
		}
		caption += fmt.Sprintf(" The dashed line is the target return, %s (from %s).", fmtTarget(t.Return), t.Source)
	}
	labels := addLegend(p, entries)
	p.Add(plotter.NewGrid())
	setCurveRanges(p, points)
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logHumanTicks{}
		p.X.Min, p.X.Max = xmin, xmax
		placeLegendLogX(p, points, labels)
		caption += " The step axis is logarithmic because the arms' step counts differ by more than 10×."
	} else {
		placeLegend(p, points, labels)
	}
	f, err := renderFigure(FigEvaluationCurve, p.Title.Text, caption, p)
	return f, "", err
}

// addEvalSeeds draws every run's evaluation points as small dots joined by
// a thin half-transparent line in its arm's colour. It returns the points
// drawn and, per arm, a legend entry for those lines (the zero entry for an
// arm without any point).
func addEvalSeeds(p *plot.Plot, e *experimentData, curveOf func(*runData) Curve) ([]plotter.XY, []legendEntry, error) {
	var all []plotter.XY
	entries := make([]legendEntry, len(e.Arms))
	for i, arm := range e.Arms {
		st := styleOf(i)
		seeds := 0
		for _, r := range e.runsOf(arm) {
			c := curveOf(r)
			var pts plotter.XYs
			for j, x := range c.X {
				if !math.IsNaN(c.Y[j]) {
					pts = append(pts, plotter.XY{X: x, Y: c.Y[j]})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, nil, err
			}
			l.LineStyle = st.lineStyle(vg.Points(0.8))
			l.LineStyle.Color = st.fill(0x80)
			sc.GlyphStyle = draw.GlyphStyle{Color: st.fill(0xA0), Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
			p.Add(l, sc)
			seeds++
			entries[i].thumb = l
			all = append(all, pts...)
		}
		entries[i].label = seedsLabel(arm, seeds)
	}
	return all, entries, nil
}

// targetLine is a dashed horizontal line at the target return from x0 to
// x1, and its legend label.
func targetLine(x0, x1, target float64) (*plotter.Line, string, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: target}, {X: x1, Y: target}})
	if err != nil {
		return nil, "", err
	}
	l.LineStyle.Color = armPalette[6]
	l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	l.LineStyle.Width = vg.Points(0.8)
	return l, "target " + trimG(target), nil
}

// placeLegendLogX is placeLegend for a plot with a logarithmic x axis whose
// range is set. placeLegend measures positions linearly, so it is given
// log10 coordinates, which are what the axis draws.
func placeLegendLogX(p *plot.Plot, points []plotter.XY, labels []string) {
	logPts := make([]plotter.XY, 0, len(points))
	for _, q := range points {
		if q.X > 0 {
			logPts = append(logPts, plotter.XY{X: math.Log10(q.X), Y: q.Y})
		}
	}
	lin := *p
	lin.X.Min, lin.X.Max = math.Log10(p.X.Min), math.Log10(p.X.Max)
	placeLegend(&lin, logPts, labels)
	p.Legend, p.Y.Max = lin.Legend, lin.Y.Max
}

// logHumanTicks labels a log axis at powers of ten (and 2× and 5× them)
// with SI suffixes.
type logHumanTicks struct{}

// Ticks implements plot.Ticker.
func (logHumanTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			v := m * base
			if v < min || v > max {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: humanNumber(v)})
		}
	}
	return ticks
}
