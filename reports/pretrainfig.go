package reports

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// FigBehaviourCloning is the figure of the runs' behaviour-cloning warm starts.
const FigBehaviourCloning = "behaviour_cloning"

// behaviourCloningFigure draws, for every run with a pretrain summary, its BC loss per epoch
// (top panel) and its success rate from the cloned policy (at 0 env steps) through every
// evaluation of RL (bottom panel), in its arm's colour. It is left out without a word when no
// run has a warm start.
func behaviourCloningFigure(in *figureInput) (*figure, string, error) {
	e := in.e
	loss := newPlot(fmt.Sprintf("%s: behaviour cloning, then RL", e.Name), "BC epoch", "BC loss (MSE per value, or nats per VLA token)")
	succ := newPlot("", "Environment steps of RL (training only)", "Success rate (evaluation episodes)")
	var lossPts, succPts []plotter.XY
	var entries []legendEntry
	runs := 0
	anySampled := false
	for i, arm := range e.Arms {
		st := styleOf(i)
		seeds := 0
		var thumb *plotter.Line
		for _, r := range e.runsOf(arm) {
			p := r.Pretrain
			if p == nil || len(p.EpochLoss) == 0 {
				continue
			}
			var lp plotter.XYs
			for k, l := range p.EpochLoss {
				if !math.IsNaN(l) && !math.IsInf(l, 0) {
					lp = append(lp, plotter.XY{X: float64(k + 1), Y: l})
				}
			}
			var sp plotter.XYs
			if p.HasSuccess {
				sp = append(sp, plotter.XY{X: 0, Y: p.Success})
			}
			var sampled plotter.XYs // evaluation.sampled: the same episodes played sampling
			if p.HasSampledSuccess {
				sampled = append(sampled, plotter.XY{X: 0, Y: p.SampledSuccess})
			}
			for _, m := range r.Metrics {
				if m.EvalEpisodes > 0 && !math.IsNaN(m.EvalSuccess) {
					sp = append(sp, plotter.XY{X: float64(m.EnvSteps), Y: m.EvalSuccess})
				}
				if m.EvalEpisodes > 0 && !math.IsNaN(m.EvalSampledSuccess) {
					sampled = append(sampled, plotter.XY{X: float64(m.EnvSteps), Y: m.EvalSampledSuccess})
				}
			}
			if len(sampled) > 0 {
				l, err := dashedLine(st, sampled)
				if err != nil {
					return nil, "", fmt.Errorf("plot %s: %w", FigBehaviourCloning, err)
				}
				succ.Add(l)
				succPts = append(succPts, sampled...)
				anySampled = true
			}
			for _, set := range []struct {
				p   *plot.Plot
				pts plotter.XYs
				all *[]plotter.XY
			}{{loss, lp, &lossPts}, {succ, sp, &succPts}} {
				if len(set.pts) == 0 {
					continue
				}
				l, sc, err := pointsLine(st, set.pts)
				if err != nil {
					return nil, "", fmt.Errorf("plot %s: %w", FigBehaviourCloning, err)
				}
				set.p.Add(l, sc)
				*set.all = append(*set.all, set.pts...)
				thumb = l
			}
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
	labels := addLegend(loss, entries)
	for _, p := range []*plot.Plot{loss, succ} {
		p.Add(plotter.NewGrid())
	}
	setCurveRanges(loss, lossPts)
	loss.Y.Min = 0
	setCurveRanges(succ, succPts)
	succ.X.Min, succ.Y.Min, succ.Y.Max = 0, 0, 1
	placeLegend(loss, lossPts, labels)
	caption := "Behaviour cloning, then RL. Top: the training loss of every BC epoch: for a state policy the mean squared error per action value (the log-std is frozen while cloning, so this is the least-squares loss the clone minimises), for a VLA the cross-entropy in nats per action token. " +
		"Bottom: the success rate of the cloned policy before RL (at 0 env steps), then of every evaluation after an RL segment, each measured on the evaluation block's episodes from the suite's fixed initial states. One line per run, in its arm's colour."
	if anySampled {
		caption += " Dashed: the same evaluation episodes played sampling the actions as training does (evaluation.sampled), the policy RL optimises."
	}
	f, err := renderPanels(FigBehaviourCloning, loss.Title.Text, caption, []*plot.Plot{loss, succ}, panelHeight(2))
	return f, "", err
}
