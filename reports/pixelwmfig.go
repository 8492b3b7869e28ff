package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FigPixelWorldModel is the figure of the runs' pretrained pixel world models.
const FigPixelWorldModel = "pixel_world_model"

// pixelWorldModelFigure draws, for every run with pixel world-model scores, M_obs's held-out
// imagined error at each step of its scoring rollouts (solid, with points) and the error of
// copying the last real frame at the same steps (dashed), in the run's arm colour: where the
// solid line lies under the dashed one the model has learned something about the motion. It
// is left out without a word when no run has a pixel world model.
func pixelWorldModelFigure(in *figureInput) (*figure, string, error) {
	e := in.e
	p := newPlot(fmt.Sprintf("%s: pixel world model, imagined error per step", e.Name), "Imagined step (open loop, from real context frames)", "MSE per pixel value ([−1, 1] units)")
	var pts []plotter.XY
	var entries []legendEntry
	runs := 0
	for i, arm := range e.Arms {
		st := styleOf(i)
		seeds := 0
		var thumb *plotter.Line
		for _, r := range e.runsOf(arm) {
			if r.PixelWM == nil || r.PixelWM.Scores == nil || r.PixelWM.Scores.Imagination.Rollouts == 0 {
				continue
			}
			im := r.PixelWM.Scores.Imagination
			var model, copyLast plotter.XYs
			for h := range min(len(im.MSE), len(im.CopyLastMSE)) {
				if !math.IsNaN(im.MSE[h]) && !math.IsNaN(im.CopyLastMSE[h]) {
					model = append(model, plotter.XY{X: float64(h + 1), Y: im.MSE[h]})
					copyLast = append(copyLast, plotter.XY{X: float64(h + 1), Y: im.CopyLastMSE[h]})
				}
			}
			if len(model) == 0 {
				continue
			}
			l, sc, err := pointsLine(st, model)
			if err != nil {
				return nil, "", fmt.Errorf("plot %s: %w", FigPixelWorldModel, err)
			}
			c, err := dashedLine(st, copyLast)
			if err != nil {
				return nil, "", fmt.Errorf("plot %s: %w", FigPixelWorldModel, err)
			}
			p.Add(l, sc, c)
			pts = append(append(pts, model...), copyLast...)
			thumb = l
			seeds++
			runs++
		}
		if seeds > 0 {
			entries = append(entries, legendEntry{seedsLabel(arm, seeds), thumb})
		}
	}
	if runs == 0 {
		return nil, "", nil
	}
	// What the dashed lines are, in the legend: a grey dashed thumbnail.
	key, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}})
	if err != nil {
		return nil, "", fmt.Errorf("plot %s: %w", FigPixelWorldModel, err)
	}
	key.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x70}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	entries = append(entries, legendEntry{"copy the last real frame", key})
	labels := addLegend(p, entries)
	p.Add(plotter.NewGrid())
	setCurveRanges(p, pts)
	p.X.Min, p.Y.Min = 0, 0
	placeLegend(p, pts, labels)
	caption := "The pretrained pixel world model on its held-out episodes: M_obs imagines frames open loop with the recorded actions from real context frames (solid, one line per run in its arm's colour), against copying the last real frame (dashed, the bar a useful model must get under). " +
		"With action chunks a step is one policy step (execute_steps actions). The report's pixel world-model table links each run's strip of real over imagined frames."
	f, err := renderFigure(FigPixelWorldModel, p.Title.Text, caption, p)
	return f, "", err
}
