package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/accerl/accerl/runstore"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// metricSeries is one metrics column drawn in a panel.
type metricSeries struct {
	column string // column name in the metrics file
	label  string // axis label with its unit
	value  func(r *runstore.MetricsRow) float64
	scale  float64 // multiplies every value (100 turns a fraction into percent)
	lo, hi float64 // fixed axis range when hi > lo
}

// The metrics columns that the panel figures draw.
var (
	seriesCPU       = metricSeries{"cpu_util", "CPU utilisation (%)", func(r *runstore.MetricsRow) float64 { return r.CPUUtil }, 100, 0, 100}
	seriesGPU       = metricSeries{"gpu_util", "GPU utilisation (%)", func(r *runstore.MetricsRow) float64 { return r.GPUUtil }, 100, 0, 100}
	seriesGPUMem    = metricSeries{"gpu_mem", "GPU memory in use (GiB)", func(r *runstore.MetricsRow) float64 { return r.GPUMem }, 1.0 / (1 << 30), 0, 0}
	seriesHorizon   = metricSeries{"horizon", "Imagination horizon H (steps)", func(r *runstore.MetricsRow) float64 { return r.Horizon }, 1, 0, 0}
	seriesWMLoss    = metricSeries{"wm_val_loss", "World-model validation loss", func(r *runstore.MetricsRow) float64 { return r.WMValLoss }, 1, 0, 0}
	seriesStaleness = metricSeries{"staleness", "Policy staleness (versions behind)", func(r *runstore.MetricsRow) float64 { return r.Staleness }, 1, 0, 0}
	seriesBatch     = metricSeries{"inference_batch", "Inference batch size (requests)", func(r *runstore.MetricsRow) float64 { return r.InferenceBatch }, 1, 0, 0}
	seriesQueue     = metricSeries{"queue_wait_ms", "Inference queue wait, p99 (ms)", func(r *runstore.MetricsRow) float64 { return r.QueueWaitMs }, 1, 0, 0}
	seriesLagClip   = metricSeries{"lag_clip_frac", "Tokens outside PPO's clip range (%)", func(r *runstore.MetricsRow) float64 { return r.LagClipFrac }, 100, 0, 0}
	seriesLagLowW   = metricSeries{"lag_low_weight_frac", "Tokens with GIPO weight < 1e-3 (%)", func(r *runstore.MetricsRow) float64 { return r.LagLowWeight }, 100, 0, 0}
	seriesLagESS    = metricSeries{"lag_ess", "Effective sample size of the ratios (fraction)", func(r *runstore.MetricsRow) float64 { return r.LagESS }, 1, 0, 0}
)

// columnNames lists the columns of series for messages: "a, b and c".
func columnNames(series []metricSeries) string {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.column
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// panelHeight is the height of a figure of n stacked line panels.
func panelHeight(n int) vg.Length {
	if n <= 1 {
		return figHeight
	}
	return vg.Length(2.5+2*float64(n)) * vg.Inch
}

// utilizationFigure draws CPU (and, where sampled, GPU) utilisation
// against wall-clock time.
func utilizationFigure(in *figureInput) (*figure, string, error) {
	return timelineFigure(in, FigUtilization, "utilisation", true, []metricSeries{seriesCPU, seriesGPU, seriesGPUMem},
		"Machine load against wall-clock time")
}

// worldModelFigure draws the imagination horizon and the world model's
// validation loss against env steps.
func worldModelFigure(in *figureInput) (*figure, string, error) {
	return timelineFigure(in, FigWorldModel, "world model", false, []metricSeries{seriesHorizon, seriesWMLoss},
		"World model: the imagination horizon H that the schedule chose and the world model's validation loss on real data, against environment steps")
}

// timelineFigure stacks one panel per series that has data, each with one
// line per arm: the mean across seeds on a common grid (as for learning
// curves) and a min–max band. Series whose column is NaN in every row are
// left out; with none left the figure is skipped.
func timelineFigure(in *figureInput, name, what string, wall bool, series []metricSeries, captionHead string) (*figure, string, error) {
	e, opts := in.e, in.opts
	var kept []metricSeries
	var bands [][]Band
	for _, s := range series {
		sb := make([]Band, len(e.Arms))
		any := false
		for i, arm := range e.Arms {
			var curves []Curve
			for _, r := range e.runsOf(arm) {
				if c := metricCurve(r, s, wall); len(c.X) > 0 {
					curves = append(curves, c)
				}
			}
			if len(curves) > 0 {
				sb[i] = aggregateCurves(curves, opts.GridPoints, AggregateMean, 1, nil)
				any = any || len(sb[i].X) > 0
			}
		}
		if any {
			kept, bands = append(kept, s), append(bands, sb)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Sprintf("the %s columns are empty (NaN) in every metrics row", columnNames(series)), nil
	}
	xLabel, scale := "Environment steps", 1.0
	if wall {
		xLabel, scale = wallAxis(slices.Concat(bands...))
	}
	title := fmt.Sprintf("%s: %s", e.Name, what)
	panels := make([]*plot.Plot, len(kept))
	for k, s := range kept {
		t := ""
		if k == 0 {
			t = title
		}
		p := newPlot(t, xLabel, s.label)
		points, entries, err := addBands(p, e.Arms, bands[k], scale, 0x30)
		if err != nil {
			return nil, "", fmt.Errorf("plot %s: %w", name, err)
		}
		labels := addLegend(p, entries)
		p.Add(plotter.NewGrid())
		setCurveRanges(p, points)
		if s.hi > s.lo {
			p.Y.Min, p.Y.Max = s.lo, s.hi
		} else if hi, ok := nonNegativeMax(points); ok {
			// Loads, horizons and losses: distances from zero mean
			// something, and a nearly constant series is not blown up.
			p.Y.Min, p.Y.Max = 0, 1.05*hi
			if hi == 0 {
				p.Y.Max = 1
			}
		}
		if k == 0 {
			placeLegend(p, points, labels)
		} else {
			p.Legend = plot.NewLegend() // one legend per figure, in the top panel
		}
		panels[k] = p
	}
	caption := fmt.Sprintf("%s. Lines are the mean across the seeds of an arm, resampled onto a common grid of %d points spanning the range all seeds cover, and shaded bands the min–max range across seeds. Panels: %s.",
		captionHead, opts.GridPoints, columnNames(kept))
	if skipped := len(series) - len(kept); skipped > 0 {
		var missing []metricSeries
		for _, s := range series {
			if !slices.ContainsFunc(kept, func(k metricSeries) bool { return k.column == s.column }) {
				missing = append(missing, s)
			}
		}
		caption += fmt.Sprintf(" Not drawn (no data): %s.", columnNames(missing))
	}
	f, err := renderPanels(name, title, caption, panels, panelHeight(len(panels)))
	return f, "", err
}

// metricCurve is a run's series s against wall-clock seconds or env steps,
// finite points only.
func metricCurve(r *runData, s metricSeries, wall bool) Curve {
	var c Curve
	for i := range r.Metrics {
		m := &r.Metrics[i]
		x := float64(m.EnvSteps)
		if wall {
			x = m.WallS
		}
		y := s.value(m) * s.scale
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		c.X, c.Y = append(c.X, x), append(c.Y, y)
	}
	return c
}

// nonNegativeMax returns the largest y of points and whether no y is
// negative.
func nonNegativeMax(points []plotter.XY) (float64, bool) {
	hi := 0.0
	for _, p := range points {
		if p.Y < 0 {
			return 0, false
		}
		hi = math.Max(hi, p.Y)
	}
	return hi, true
}

// pipelineFigure draws the distributions of staleness, inference batch
// size and queue wait per arm as box plots, one panel per column that has
// data. Values pool every metrics row of every seed of the arm.
func pipelineFigure(in *figureInput) (*figure, string, error) {
	return boxFigure(in, FigPipeline, "pipeline distributions",
		[]metricSeries{seriesStaleness, seriesBatch, seriesQueue},
		"Staleness is the mean policy lag of a training batch in policy versions; batch size the mean requests per inference batch; queue wait the 99th-percentile wait of an inference request in an interval.")
}

// policyLagFigure draws, per arm, how stale the training batches were as the two
// algorithms see it: the share of tokens whose ratio π_θ/π_old lies outside PPO's clip
// range, the share a GIPO weight puts below 1e-3, and the effective sample size of the
// ratios, each measured on the batch before the update's first step (so it reflects the
// policy lag alone, not the update).
func policyLagFigure(in *figureInput) (*figure, string, error) {
	return boxFigure(in, FigPolicyLag, "ratio and weight distributions",
		[]metricSeries{seriesLagClip, seriesLagLowW, seriesLagESS},
		"Each value is one training batch, measured before the update's first gradient step: the share of action tokens whose importance ratio π_θ/π_old falls outside PPO's clip range [1−ε, 1+ε], the share whose GIPO weight exp(−½(log ρ/σ)²) is below 1e-3, and the effective sample size (Σρ)²/(N Σρ²) of the ratios (1 means on-policy).")
}

// boxFigure draws one box-plot panel per series that has data, one box per arm.
func boxFigure(in *figureInput, name, what string, series []metricSeries, explain string) (*figure, string, error) {
	e := in.e
	var kept []metricSeries
	var boxes [][]*quantileBox
	for _, s := range series {
		row := make([]*quantileBox, len(e.Arms))
		any := false
		for i, arm := range e.Arms {
			var vals []float64
			for _, r := range e.runsOf(arm) {
				for j := range r.Metrics {
					vals = append(vals, s.value(&r.Metrics[j])*s.scale)
				}
			}
			// The first arm goes on top.
			if b, ok := newQuantileBox(float64(len(e.Arms)-1-i), vals, styleOf(i)); ok {
				row[i], any = b, true
			}
		}
		if any {
			kept, boxes = append(kept, s), append(boxes, row)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Sprintf("the %s columns are empty (NaN) in every metrics row", columnNames(series)), nil
	}
	names := slices.Clone(e.Arms)
	slices.Reverse(names)
	title := fmt.Sprintf("%s: %s", e.Name, what)
	panels := make([]*plot.Plot, len(kept))
	for k, s := range kept {
		t := ""
		if k == 0 {
			t = title
		}
		p := newPlot(t, s.label, "")
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, b := range boxes[k] {
			if b != nil {
				p.Add(b)
				lo, hi = math.Min(lo, b.P5), math.Max(hi, b.P95)
			}
		}
		pad := 0.05 * (hi - lo)
		if pad == 0 {
			pad = math.Max(0.5, 0.05*math.Abs(hi))
		}
		p.X.Min, p.X.Max = lo-pad, hi+pad
		if lo >= 0 && (p.X.Min < 0 || lo <= 0.5*hi) {
			p.X.Min = 0 // counts and waits: start at zero unless that squeezes the boxes
		}
		p.NominalY(names...)
		p.Y.Min, p.Y.Max = -0.6, float64(len(names))-0.4
		p.Y.Tick.Label.Font.Size = vg.Points(10)
		grid := plotter.NewGrid()
		grid.Horizontal.Width = 0
		p.Add(grid)
		panels[k] = p
	}
	caption := fmt.Sprintf("Distributions over all metrics rows (logging intervals) of every seed of an arm: boxes span the 25th to 75th percentile, the dark line is the median and whiskers reach the %gth and %gth percentiles (values beyond are not drawn). "+
		"%s Panels: %s.",
		100*whiskerLowQ, 100*whiskerHighQ, explain, columnNames(kept))
	height := vg.Length(math.Max(4.5, 0.6+float64(len(kept))*(0.85+0.32*float64(len(e.Arms))))) * vg.Inch
	f, err := renderPanels(name, title, caption, panels, height)
	return f, "", err
}
