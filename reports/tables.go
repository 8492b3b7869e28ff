package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/accerl/accerl/runstore"
)

// armTable is the per-arm results table that report.md, report.html,
// results.csv and results.tex all show.
type armTable struct {
	baseline string
	target   *TargetInfo
	eval     *EvaluationInfo // nil without evaluation rows
	arms     []ArmResult
}

func buildArmTable(e *experimentData, res Results) *armTable {
	return &armTable{baseline: e.Baseline, target: e.Target, eval: res.Evaluation, arms: res.Arms}
}

// evalTargets reports whether the table carries steps to target by
// evaluation episodes as well as by training episodes.
func (t *armTable) evalTargets() bool { return t.target != nil && t.eval != nil }

// cellStyle spells the symbols of a formatted cell for one output format.
type cellStyle struct {
	latex               bool
	times, gt, lt, none string
	ci                  func(lo, hi string) string // an interval after the point value
	esc                 func(string) string        // escapes user text (arm names)
}

var (
	plainCells = cellStyle{times: "×", gt: ">", lt: "<", none: "n/a",
		ci:  func(lo, hi string) string { return " [" + lo + ", " + hi + "]" },
		esc: func(s string) string { return s }}
	latexCells = cellStyle{latex: true, times: `$\times$`, gt: `$>$`, lt: `$<$`, none: "---",
		ci:  func(lo, hi string) string { return ` {\footnotesize[` + lo + ", " + hi + "]}" },
		esc: latexEscape}
)

// header returns the column titles in the given style.
func (t *armTable) header(st cellStyle) []string {
	h := []string{"Arm", "Runs completed", "Final return IQM [95% CI]", "Final return mean ± std",
		"Env steps/s [95% CI]", "Speedup [95% CI]", "P(improvement) [95% CI]"}
	if t.target != nil {
		which := ""
		if t.evalTargets() {
			which = " (training episodes)" // the evaluation measure has its own table in the report
		}
		h = append(h, fmt.Sprintf("Steps to return ≥ %s%s, median [95%% CI]", fmtTarget(t.target.Return), which),
			"Steps vs baseline", "Optimality gap [95% CI]")
	}
	h = append(h, "Wall time (mean)")
	if st.latex {
		r := strings.NewReplacer("%", `\%`, "±", `$\pm$`, "≥", `$\geq$`)
		for i, s := range h {
			h[i] = r.Replace(s)
		}
	}
	return h
}

// rows returns the formatted cells of every arm in the given style.
func (t *armTable) rows(st cellStyle) [][]string {
	var out [][]string
	for _, a := range t.arms {
		name := st.esc(a.Arm)
		if st.latex && strings.HasPrefix(name, "[") {
			name = "{}" + name // a row starting with [ would be read as \\'s optional argument
		}
		if a.Arm == t.baseline {
			name += " (baseline)"
		}
		iqm := withCI(st, float64(a.IQM), float64(a.IQMLow), float64(a.IQMHigh), fmtNum)
		meanStd := st.none
		switch {
		case a.FinalReturn.N == 1:
			meanStd = fmtNum(float64(a.FinalReturn.Mean)) + " (1 seed)"
		case a.FinalReturn.N > 1:
			pm := " ± "
			if st.latex {
				pm = ` $\pm$ `
			}
			meanStd = fmtNum(float64(a.FinalReturn.Mean)) + pm + fmtNum(float64(a.FinalReturn.Std))
		}
		sps := withCI(st, float64(a.StepsPerS.Mean), float64(a.StepsPerSLow), float64(a.StepsPerSHigh), fmtNum)
		speedup := withCI(st, float64(a.Speedup), float64(a.SpeedupLow), float64(a.SpeedupHigh), st.ratio)
		if a.Arm == t.baseline && !math.IsNaN(float64(a.Speedup)) {
			speedup = st.ratio(1)
		}
		prob := withCI(st, float64(a.ProbImprovement), float64(a.ProbImprovementLow), float64(a.ProbImprovementHigh), fmtProb)
		if a.Arm == t.baseline {
			prob = st.none
		}
		row := []string{name, fmt.Sprintf("%d / %d", a.Completed, a.Runs), iqm, meanStd, sps, speedup, prob}
		if t.target != nil {
			steps, vs := targetCells(st, a.StepsToTarget, a.Arm == t.baseline)
			gap := withCI(st, float64(a.OptimalityGap), float64(a.OptimalityGapLow), float64(a.OptimalityGapHigh), fmtProb)
			row = append(row, steps, vs, gap)
		}
		row = append(row, fmtWall(float64(a.WallS.Mean)))
		if st.latex && row[len(row)-1] == "n/a" {
			row[len(row)-1] = st.none
		}
		out = append(out, row)
	}
	return out
}

// ratio formats a ratio to the baseline with two decimals: 1.39×.
func (st cellStyle) ratio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + st.times }

// targetCells formats an arm's steps-to-target median with its interval
// and its ratio to the baseline's median, none for an arm without a
// result.
func targetCells(st cellStyle, s *ArmTarget, baseline bool) (steps, vs string) {
	if s == nil {
		return st.none, st.none
	}
	steps, vs = fmtSteps(st, s), st.none
	if !math.IsNaN(float64(s.Ratio)) {
		rel := map[string]string{">": st.gt, "<": st.lt}[s.RatioBound]
		vs = rel + st.ratio(float64(s.Ratio))
	}
	if baseline {
		vs = st.ratio(1)
	}
	return steps, vs
}

// withCI formats "point [low, high]", just the point when the interval has
// zero width or is unknown, and none when the point is unknown.
func withCI(st cellStyle, point, lo, hi float64, f func(float64) string) string {
	if math.IsNaN(point) {
		return st.none
	}
	s := f(point)
	if !math.IsNaN(lo) && !math.IsNaN(hi) && hi > lo {
		s += st.ci(f(lo), f(hi))
	}
	return s
}

// fmtSteps formats a steps-to-target median with its interval; an end at
// +Inf (censored seeds) is written as more than the largest budget.
func fmtSteps(st cellStyle, s *ArmTarget) string {
	// runstore.JSONFloat keeps +Inf in memory; only its JSON form is null.
	med, lo, hi := float64(s.Median), float64(s.Low), float64(s.High)
	text := ""
	if math.IsInf(med, 1) {
		text = st.gt + humanNumber(float64(s.LowerBound))
	} else {
		// Three significant digits (247k): step counts are long, and their
		// thousands separators would read as interval separators.
		text = humanNumber(med)
		if hi > lo {
			h := humanNumber(hi)
			if math.IsInf(hi, 1) {
				h = "∞"
				if st.latex {
					h = `$\infty$`
				}
			}
			text += st.ci(humanNumber(lo), h) // lo ≤ the finite median, so finite
		}
	}
	return text + fmt.Sprintf(" (%d/%d)", s.Reached, s.Seeds)
}

// fmtProb formats a probability or a normalised gap with two decimals.
func fmtProb(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// csvHeader is the first line of results.csv.
func (t *armTable) csvHeader() []string {
	h := []string{"arm", "is_baseline", "runs", "completed", "seeds_with_data",
		"final_return_iqm", "final_return_iqm_ci_low", "final_return_iqm_ci_high", "final_return_mean", "final_return_std",
		"steps_per_s_mean", "steps_per_s_ci_low", "steps_per_s_ci_high",
		"speedup", "speedup_ci_low", "speedup_ci_high",
		"prob_improvement", "prob_improvement_ci_low", "prob_improvement_ci_high", "wall_s_mean"}
	if t.target != nil {
		h = append(h, "target", "steps_to_target_median", "steps_to_target_ci_low", "steps_to_target_ci_high",
			"steps_to_target_lower_bound", "steps_to_target_reached", "steps_to_target_seeds",
			"steps_ratio_vs_baseline", "steps_ratio_bound", "optimality_gap", "optimality_gap_ci_low", "optimality_gap_ci_high")
	}
	if t.evalTargets() {
		h = append(h, "eval_episodes_min", "eval_episodes_max", "steps_to_target_eval_median", "steps_to_target_eval_ci_low",
			"steps_to_target_eval_ci_high", "steps_to_target_eval_lower_bound", "steps_to_target_eval_reached",
			"steps_to_target_eval_seeds", "steps_ratio_eval_vs_baseline", "steps_ratio_eval_bound")
	}
	return h
}

// targetCSV is the raw fields of a steps-to-target result in results.csv,
// all empty for none: median, interval, lower bound, reached, seeds, ratio
// and its bound.
func targetCSV(s *ArmTarget) []string {
	if s == nil {
		return make([]string, 8)
	}
	f := func(v runstore.JSONFloat) string { return csvFloat(float64(v)) }
	return []string{f(s.Median), f(s.Low), f(s.High), f(s.LowerBound), strconv.Itoa(s.Reached),
		strconv.Itoa(s.Seeds), f(s.Ratio), s.RatioBound}
}

// writeCSV writes results.csv: one row per arm with raw numbers in
// shortest round-trip form, an empty field for unknown and "inf" for a
// steps-to-target median or interval end that no seed reached.
func (t *armTable) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.csvHeader()); err != nil {
		return err
	}
	for _, a := range t.arms {
		f := func(v runstore.JSONFloat) string { return csvFloat(float64(v)) }
		row := []string{a.Arm, strconv.FormatBool(a.Arm == t.baseline), strconv.Itoa(a.Runs), strconv.Itoa(a.Completed),
			strconv.Itoa(a.FinalReturn.N), f(a.IQM), f(a.IQMLow), f(a.IQMHigh), f(a.FinalReturn.Mean), f(a.FinalReturn.Std),
			f(a.StepsPerS.Mean), f(a.StepsPerSLow), f(a.StepsPerSHigh), f(a.Speedup), f(a.SpeedupLow), f(a.SpeedupHigh),
			f(a.ProbImprovement), f(a.ProbImprovementLow), f(a.ProbImprovementHigh), f(a.WallS.Mean)}
		if t.target != nil {
			row = append(row, csvFloat(t.target.Return))
			row = append(row, targetCSV(a.StepsToTarget)...)
			row = append(row, f(a.OptimalityGap), f(a.OptimalityGapLow), f(a.OptimalityGapHigh))
		}
		if t.evalTargets() {
			row = append(row, strconv.FormatInt(t.eval.EpisodesMin, 10), strconv.FormatInt(t.eval.EpisodesMax, 10))
			row = append(row, targetCSV(a.StepsToTargetEval)...)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// writeLaTeX writes results.tex, a booktabs tabular to \input into a
// paper.
func (t *armTable) writeLaTeX(w io.Writer, e *experimentData) error {
	h := t.header(latexCells)
	var b strings.Builder
	fmt.Fprintf(&b, "%% Per-arm results of experiment %q, written by accerl (reports.Generate); regenerate rather than edit.\n", e.Name)
	b.WriteString("% Needs \\usepackage{booktabs}. Brackets are 95% percentile-bootstrap intervals over seeds.\n")
	fmt.Fprintf(&b, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(h)-1))
	b.WriteString(strings.Join(h, " & ") + " \\\\\n\\midrule\n")
	for _, row := range t.rows(latexCells) {
		b.WriteString(strings.Join(row, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// latexEscape escapes LaTeX's special characters in user text.
func latexEscape(s string) string {
	return strings.NewReplacer(
		`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
		"{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	).Replace(s)
}
