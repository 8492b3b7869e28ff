package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// cell is one table cell: its text and, optionally, where it links to —
// a run's manifest.json for per-run numbers, the arm's run list for
// aggregates — so that every number can be traced to the run it comes from.
type cell struct {
	Text string
	Link string // relative URL or #anchor; empty for none
	Num  bool   // a number: right-aligned in HTML
}

// tableView is a table as formatted cells.
type tableView struct {
	Header []string
	Rows   [][]cell
}

// armRunsView is the run list of one arm.
type armRunsView struct {
	Arm    string
	Anchor string // HTML id the arm's aggregates link to
	Table  tableView
}

// reportView is the content of a report as formatted strings, shared by
// the Markdown and the HTML renderer so that both say the same thing.
type reportView struct {
	Title     string
	Facts     [][2]string // key, value; values are plain text
	Partial   bool
	Reasons   []string
	Notes     []string
	Arms      tableView
	ArmNote   string
	Targets   *targetsView // both steps-to-target measures; nil without evaluation rows or a target
	Pretrain  *targetsView // behaviour cloning and success before/after RL; nil without a pretrain block
	Tasks     *targetsView // success per task (tabletop suites); nil when no run split its evaluation by task
	PixelWM   *targetsView // the pretrained pixel world models' scores; nil without one
	Files     [][2]string  // file name, what it holds
	Figures   []*figure
	Skipped   []skippedFigure
	Runs      []armRunsView
	EnvHeader string      // where the build/hardware summary comes from
	Env       [][2]string // build and hardware facts
	Deps      [][2]string // module path, version
}

// buildView formats the experiment for the report.
func buildView(e *experimentData, res Results, tab *armTable, figs []*figure, skipped []skippedFigure, opts Options) *reportView {
	v := &reportView{Title: "Report: " + e.Name, Partial: e.Partial(), Reasons: e.Reasons, Notes: e.Notes,
		Figures: figs, Skipped: skipped}
	status := fmt.Sprintf("complete: all %d runs completed", len(e.Runs))
	if v.Partial {
		status = "PARTIAL (see below)"
	}
	target := "none (no steps-to-target figure or optimality gap)"
	if t := e.Target; t != nil {
		target = fmt.Sprintf("%s (from %s); random score %s", fmtTarget(t.Return), t.Source, fmtTarget(t.RandomScore))
	}
	v.Facts = [][2]string{
		{"Experiment", e.Name},
		{"Spec hash", orNA(e.SpecHash)},
		{"Status", status},
		{"Arms × seeds", fmt.Sprintf("%d × %d = %d runs", len(e.Arms), len(e.Seeds), len(e.Runs))},
		{"Baseline arm", orNA(e.Baseline)},
		{"Target return", target},
	}
	if ev := evaluationFact(res.Evaluation); ev != "" {
		v.Facts = append(v.Facts, [2]string{"Evaluation", ev})
	}
	if t := e.latestUpdate(); !t.IsZero() {
		v.Facts = append(v.Facts, [2]string{"Data as of", t.UTC().Format(time.RFC3339)})
	}

	anchors := runAnchors(e.Arms)
	v.Arms.Header = tab.header(plainCells)
	for i, row := range tab.rows(plainCells) {
		cells := make([]cell, len(row))
		for j, text := range row {
			cells[j] = cell{Text: text, Link: "#" + anchors[i], Num: j > 0}
		}
		v.Arms.Rows = append(v.Arms.Rows, cells)
	}
	v.ArmNote = fmt.Sprintf("Final return is the mean return of a run's last %d episodes; the IQM (interquartile mean) and every bracket are 95%% stratified-bootstrap intervals over seeds (%d replicates). "+
		"Speedup is the arm's mean env steps/s over the baseline's. P(improvement) is the probability that a seed of the arm ends with a higher final return than a seed of the baseline (ties count ½).",
		FinalEpisodes, opts.BootstrapReps)
	if e.Target != nil {
		v.ArmNote += " Steps to target is the median over seeds of the first env step at which the smoothed return reaches the target, with (reached/seeds); a seed that never reached it counts as needing more than its last env step, written >. " +
			"Steps vs baseline is that median over the baseline's (below 1: fewer steps). The optimality gap is the mean over seeds of max(0, 1 − normalised final return), normalised so that the random score is 0 and the target 1 (rliable)."
	}
	if v.Targets = buildTargetsView(e, res, anchors, opts); v.Targets != nil {
		v.ArmNote += fmt.Sprintf(" The steps-to-target column is %s; the next section sets it beside steps to target %s.",
			trainingMeasureName(opts.SmoothWindow), evalMeasureName(res.Evaluation))
	}
	v.ArmNote += " Aggregates include every run with data, finished or not; each row links to the arm's runs below, and each run's numbers link to its manifest.json."
	v.Files = [][2]string{
		{ResultsFile, "every number of this report, per run and per arm"},
		{CSVFile, "the table above, raw numbers"},
		{LaTeXFile, "the table above for a paper (booktabs)"},
	}

	v.Pretrain = buildPretrainView(e, res)
	v.Tasks = buildTaskView(e, res, opts)
	v.PixelWM = buildPixelWMView(e)

	byArm := map[string][]RunResult{}
	for _, r := range res.Runs {
		byArm[r.Arm] = append(byArm[r.Arm], r)
	}
	for i, arm := range e.Arms {
		v.Runs = append(v.Runs, armRunsView{Arm: arm, Anchor: anchors[i], Table: runTable(byArm[arm], e.Target != nil, v.Targets != nil)})
	}
	buildEnv(v, e)
	return v
}

// runTable formats the runs of one arm. Every number links to the run's
// manifest when it has one. withEval adds steps to target by evaluation
// episodes (it needs withTarget).
func runTable(runs []RunResult, withTarget, withEval bool) tableView {
	t := tableView{Header: []string{"Seed", "Status", "Env steps", "Updates", "Episodes", "Final return", "Env steps/s", "Wall time"}}
	if withTarget {
		t.Header = append(t.Header, runTargetHeaders(withEval)...)
	}
	t.Header = append(t.Header, "Params SHA-256")
	for _, r := range runs {
		num := func(text string) cell { return cell{Text: text, Link: r.Manifest, Num: true} }
		sha := "n/a"
		if r.ParamsSHA256 != "" {
			sha = r.ParamsSHA256[:min(12, len(r.ParamsSHA256))]
		}
		row := []cell{num(strconv.FormatUint(r.Seed, 10)), {Text: r.Status},
			num(fmtInt(r.EnvSteps)), num(fmtInt(r.Updates)), num(fmtInt(r.Episodes)), num(fmtNum(float64(r.FinalMeanReturn))),
			num(fmtNum(float64(r.StepsPerS))), num(fmtWall(float64(r.WallS)))}
		if withTarget {
			row = append(row, num(fmtRunTarget(r.StepsToTarget)))
			if withEval {
				row = append(row, num(fmtRunTarget(r.StepsToTargetEval)))
			}
		}
		row = append(row, cell{Text: sha, Link: r.Manifest})
		t.Rows = append(t.Rows, row)
	}
	return t
}

// runAnchors gives every arm a distinct HTML id for its run list: "runs-"
// and the arm name in lower case with anything but letters, digits, '-'
// and '_' replaced by '-'.
func runAnchors(arms []string) []string {
	out := make([]string, len(arms))
	seen := map[string]bool{}
	for i, arm := range arms {
		var b strings.Builder
		for _, r := range strings.ToLower(arm) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
		id := "runs-" + b.String()
		for k := 2; seen[id]; k++ {
			id = fmt.Sprintf("runs-%s-%d", b.String(), k)
		}
		seen[id] = true
		out[i] = id
	}
	return out
}

// buildEnv fills the build and hardware summary from the first run
// manifest, and notes when runs ran on different hardware or builds.
func buildEnv(v *reportView, e *experimentData) {
	var first *runData
	hw := map[string]bool{}
	builds := map[string]bool{}
	for _, r := range e.Runs {
		if r.Manifest == nil {
			continue
		}
		if first == nil {
			first = r
		}
		h := r.Manifest.Hardware
		hw[fmt.Sprintf("%d × %s, %s", h.CPUs, h.CPUModel, h.GPU)] = true
		b := r.Manifest.Build
		builds[b.Module+"@"+b.Version+" "+b.Revision+" "+b.GoVersion] = true
	}
	if first == nil {
		v.EnvHeader = "No run manifest found."
		return
	}
	m := first.Manifest
	v.EnvHeader = fmt.Sprintf("From the manifest of %s/seed-%d.", first.Arm, first.Seed)
	module := orNA(m.Build.Module)
	if m.Build.Version != "" {
		module += "@" + m.Build.Version
	}
	v.Env = [][2]string{
		{"Go", orNA(m.Build.GoVersion)},
		{"Module", module},
	}
	if m.Build.Revision != "" {
		v.Env = append(v.Env, [2]string{"Revision", m.Build.Revision})
	}
	v.Env = append(v.Env,
		[2]string{"CPU", fmt.Sprintf("%s (%d logical CPUs)", orNA(m.Hardware.CPUModel), m.Hardware.CPUs)},
		[2]string{"GPU", orNA(m.Hardware.GPU)},
		[2]string{"Platform", orNA(m.Hardware.Platform)},
	)
	if len(hw) > 1 {
		v.Notes = append(v.Notes, fmt.Sprintf("Runs ran on %d different hardware configurations: %s. Throughput comparisons across them are not like for like.",
			len(hw), strings.Join(slices.Sorted(maps.Keys(hw)), "; ")))
	}
	if len(builds) > 1 {
		v.Notes = append(v.Notes, fmt.Sprintf("Runs were produced by %d different builds.", len(builds)))
	}
	for _, path := range slices.Sorted(maps.Keys(m.Build.Deps)) {
		v.Deps = append(v.Deps, [2]string{path, m.Build.Deps[path]})
	}
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// fmtNum formats a float for a table: four significant digits at most for
// small magnitudes, whole numbers with thousands separators from 1,000.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 1e3:
		return fmtInt(int64(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtInt formats an integer with thousands separators: 1234567 -> 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtStat formats "mean ± std", or just the mean for a single seed.
func fmtStat(s Stat) string {
	switch {
	case s.N == 0:
		return "n/a"
	case s.N == 1:
		return fmtNum(float64(s.Mean)) + " (1 seed)"
	}
	return fmtNum(float64(s.Mean)) + " ± " + fmtNum(float64(s.Std))
}

// fmtWall formats seconds: "42.0 s" below a minute, else "1h2m3s".
func fmtWall(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "n/a"
	case s < 60:
		return strconv.FormatFloat(s, 'f', 1, 64) + " s"
	}
	return (time.Duration(math.Round(s)) * time.Second).String()
}
