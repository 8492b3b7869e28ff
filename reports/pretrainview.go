package reports

import (
	"fmt"
	"math"
	"strings"
)

// buildPretrainView tabulates the runs' behaviour-cloning warm starts: the demonstrations,
// the loss over the epochs, and the success rate before RL (after cloning) beside the
// latest one, so a reader sees at a glance whether RL lifted the cloned policy or dragged
// it below. It returns nil when no run has a pretrain summary.
func buildPretrainView(e *experimentData, res Results) *targetsView {
	byRun := map[string]RunResult{}
	for _, r := range res.Runs {
		byRun[fmt.Sprintf("%s/%d", r.Arm, r.Seed)] = r
	}
	t := tableView{Header: []string{"Run", "Demos", "Demo steps", "Epochs", "BC loss (first → last)", "BC success", "Final success", "Change"}}
	// Sampled columns when any run played its evaluations sampling the actions too.
	sampled := false
	for _, r := range res.Runs {
		sampled = sampled || !math.IsNaN(float64(r.PretrainSampledSuccess)) || !math.IsNaN(float64(r.FinalSampledSuccess))
	}
	if sampled {
		t.Header = append(t.Header, "BC sampled", "Final sampled", "Change (sampled)")
	}
	for _, r := range e.Runs {
		p := r.Pretrain
		if p == nil {
			continue
		}
		rr := byRun[fmt.Sprintf("%s/%d", r.Arm, r.Seed)]
		loss := "—"
		if n := len(p.EpochLoss); n > 0 {
			loss = fmtNum(p.EpochLoss[0]) + " → " + fmtNum(p.EpochLoss[n-1])
		}
		before, after := math.NaN(), float64(rr.FinalSuccess)
		if p.HasSuccess {
			before = p.Success
		}
		row := []cell{
			{Text: fmt.Sprintf("%s/seed-%d", r.Arm, r.Seed)},
			{Text: fmt.Sprint(p.Demos), Num: true},
			{Text: fmt.Sprint(p.DemoSteps), Num: true},
			{Text: fmt.Sprint(len(p.EpochLoss)), Num: true},
			{Text: loss, Num: true},
			{Text: fmtRate(before, p.EvalEpisodes), Num: true},
			{Text: fmtRate(after, 0), Num: true},
			{Text: fmtChange(before, after), Num: true},
		}
		if sampled {
			sb, sa := float64(rr.PretrainSampledSuccess), float64(rr.FinalSampledSuccess)
			row = append(row, cell{Text: fmtRate(sb, 0), Num: true}, cell{Text: fmtRate(sa, 0), Num: true}, cell{Text: fmtChange(sb, sa), Num: true})
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	intro := []string{
		"Each run first cloned the tabletop expert from demonstrations (the spec's pretrain block), then fine-tuned the cloned policy with RL.",
		"BC loss is the training loss of the first and last epoch (the mean squared error per action value for a state policy, the cross-entropy in nats per action token for a VLA); BC success is the cloned policy's success rate before any RL, measured like the evaluations (the evaluation block's episodes from the suite's fixed initial states); final success is the latest evaluation's.",
		"The demonstrations' expert steps are not counted in env steps.",
	}
	if sampled {
		intro = append(intro, "The sampled columns play the same episodes drawing the actions as in training (the evaluation block's sampled = true) instead of taking the most likely ones.")
	}
	return &targetsView{Heading: "Behaviour cloning, then RL", Intro: strings.Join(intro, " "), Table: t}
}

// fmtChange writes the change from before to after in percentage points (— when either is
// unknown).
func fmtChange(before, after float64) string {
	if math.IsNaN(before) || math.IsNaN(after) {
		return "—"
	}
	return fmt.Sprintf("%+.1f pp", 100*(after-before))
}

// fmtRate writes a success rate as a percentage (— when unknown), with the episode count
// when known.
func fmtRate(x float64, episodes int) string {
	if math.IsNaN(x) {
		return "—"
	}
	if episodes > 0 {
		return fmt.Sprintf("%.1f%% (%d ep.)", 100*x, episodes)
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}
