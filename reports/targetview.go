package reports

import "fmt"

// targetsView is the report's "Steps to target" section: the two
// steps-to-target measures side by side. It exists only when the
// experiment has a target and evaluation rows; otherwise the training
// measure's columns in the results table are all there is.
type targetsView struct {
	Heading string
	Intro   string
	Table   tableView
	// Images are shown under the table: [alt text, path relative to the report].
	Images [][2]string
}

// buildTargetsView formats both measures for every arm; rows link to the
// arm's runs like those of the results table. It returns nil when there is
// no evaluation measure.
func buildTargetsView(e *experimentData, res Results, anchors []string, opts Options) *targetsView {
	if e.Target == nil || res.Evaluation == nil {
		return nil
	}
	target, n := fmtTarget(e.Target.Return), res.Evaluation.episodesText()
	v := &targetsView{Heading: fmt.Sprintf("Steps to return ≥ %s", target)}
	v.Intro = fmt.Sprintf("Env steps each arm needed to reach a return of %s, measured two ways. "+
		"By the mean of the last %d training episodes: the first env step at which the trailing mean return of the last %d episodes the run trained on reaches the target (the column of the results table). "+
		"By evaluation episodes (%s per evaluation, not counted as env steps): the first evaluation whose mean return reaches the target, at the run's training env steps so far; after each training segment the current policy plays %s separate episodes that train nothing. "+
		"Each cell is the median over seeds with its 95%% bootstrap interval and (reached/seeds); a seed that never reached the target counts as needing more than its last env step, written >. "+
		"vs baseline is the arm's median over the baseline's (below 1: fewer env steps).",
		target, opts.SmoothWindow, opts.SmoothWindow, n, n)
	training, eval := trainingMeasureName(opts.SmoothWindow), evalMeasureName(res.Evaluation)
	v.Table.Header = []string{"Arm",
		fmt.Sprintf("Steps %s, median [95%% CI]", training), "vs baseline",
		fmt.Sprintf("Steps %s, median [95%% CI]", eval), "vs baseline"}
	for i, a := range res.Arms {
		name, base := a.Arm, a.Arm == e.Baseline
		if base {
			name += " (baseline)"
		}
		ts, tv := targetCells(plainCells, a.StepsToTarget, base)
		es, ev := targetCells(plainCells, a.StepsToTargetEval, base)
		link := "#" + anchors[i]
		v.Table.Rows = append(v.Table.Rows, []cell{{Text: name, Link: link},
			{Text: ts, Link: link, Num: true}, {Text: tv, Link: link, Num: true},
			{Text: es, Link: link, Num: true}, {Text: ev, Link: link, Num: true}})
	}
	return v
}

// evaluationFact describes the evaluation episodes for the report's
// header; empty without any.
func evaluationFact(v *EvaluationInfo) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%s episodes per evaluation, not counted as env steps; %d evaluations in %d runs",
		v.episodesText(), v.Points, v.Runs)
}

// fmtRunTarget formats one run's steps to target for the run tables.
func fmtRunTarget(st *RunTarget) string {
	switch {
	case st != nil && st.Reached:
		return fmtInt(int64(st.Steps))
	case st != nil:
		return "not reached (>" + fmtInt(int64(st.Budget)) + ")"
	}
	return "n/a"
}

// runTargetHeaders are the run tables' steps-to-target columns: one for
// the training measure, and one more for evaluations when there are any.
func runTargetHeaders(withEval bool) []string {
	if !withEval {
		return []string{"Steps to target"}
	}
	return []string{"Steps to target (training)", "Steps to target (evaluation)"}
}
