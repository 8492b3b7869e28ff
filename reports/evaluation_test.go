package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstore"
)

// evalRow is a metrics row at env step steps with eps evaluation episodes
// of mean return ret.
func evalRow(steps int64, eps int64, ret float64) runstore.MetricsRow {
	return runstore.MetricsRow{EnvSteps: steps, EvalEpisodes: eps, EvalReturn: ret, EpisodeReturn: math.NaN()}
}

// evalRun is a run of 700 env steps with evaluation points at 200 (30),
// 400 (50), 500 (NaN: logged without a return) and 600 (45). The row at
// 100 has a return but no evaluation episodes, so it is no evaluation
// point; the row at 300 is an ordinary training row.
func evalRun() *runData {
	return &runData{EnvSteps: 700, Metrics: []runstore.MetricsRow{
		evalRow(100, 0, 999), evalRow(200, 10, 30), evalRow(300, 0, math.NaN()),
		evalRow(400, 10, 50), evalRow(500, 10, math.NaN()), evalRow(600, 5, 45),
	}}
}

func TestEvalCurve(t *testing.T) {
	c := evalCurve(evalRun())
	floatsNear(t, "eval x", c.X, []float64{200, 400, 500, 600}, 0)
	floatsNear(t, "eval y", c.Y, []float64{30, 50, math.NaN(), 45}, 0)
	if c := evalCurve(episodesRun(1, 2, 3)); len(c.X) != 0 {
		t.Errorf("a run without evaluation rows has an evaluation curve %+v", c)
	}
}

func TestEvalTargetOfRun(t *testing.T) {
	for _, c := range []struct {
		target float64
		want   runTarget
	}{
		// The first evaluation counts at once: no smoothing window to fill.
		{30, runTarget{Steps: 200, Budget: 700, Reached: true}},
		{45, runTarget{Steps: 400, Budget: 700, Reached: true}},
		{50, runTarget{Steps: 400, Budget: 700, Reached: true}}, // equal counts as reached
		// Nothing reaches 51; the 999 on the row without evaluation
		// episodes must not count. Censored at the run's 700 env steps.
		{51, runTarget{Steps: math.Inf(1), Budget: 700, Reached: false}},
	} {
		got, ok := evalMeasure.ofRun(evalRun(), c.target)
		if !ok || got != c.want {
			t.Errorf("target %v: %+v, %v; want %+v", c.target, got, ok, c.want)
		}
	}
	// An evaluation after the last counted env step extends the budget.
	r := evalRun()
	r.EnvSteps = 550
	if got, _ := evalMeasure.ofRun(r, 100); got.Budget != 600 {
		t.Errorf("budget = %v, want the last evaluation's 600 steps", got.Budget)
	}
	if _, ok := evalMeasure.ofRun(episodesRun(50, 60), 1); ok {
		t.Error("a run without evaluation rows has an evaluation target result")
	}
}

func TestEvaluationOf(t *testing.T) {
	e := &experimentData{Runs: []*runData{evalRun(), episodesRun(1), evalRun()}}
	got := evaluationOf(e)
	// Two runs with 4 evaluation rows each (the NaN one included), of 5
	// or 10 episodes.
	if got == nil || *got != (EvaluationInfo{Runs: 2, Points: 8, EpisodesMin: 5, EpisodesMax: 10}) {
		t.Errorf("evaluationOf = %+v", got)
	}
	if s := got.episodesText(); s != "5–10" {
		t.Errorf("episodes text = %q, want 5–10", s)
	}
	if s := (&EvaluationInfo{EpisodesMin: 10, EpisodesMax: 10}).episodesText(); s != "10" {
		t.Errorf("episodes text = %q, want 10", s)
	}
	if got := evaluationOf(&experimentData{Runs: []*runData{episodesRun(1, 2)}}); got != nil {
		t.Errorf("evaluationOf without evaluation rows = %+v, want nil", got)
	}
}

func TestWideStepRange(t *testing.T) {
	run := func(arm string, lastEval int64) *runData {
		return &runData{Arm: arm, Metrics: []runstore.MetricsRow{evalRow(lastEval/2, 10, 1), evalRow(lastEval, 10, 2)}}
	}
	for _, c := range []struct {
		a, b int64
		want bool
	}{
		{1000, 10000, false}, // exactly 10×: linear
		{1000, 10001, true},
		{20000, 1500, true},
	} {
		e := &experimentData{Arms: []string{"a", "b", "none"}, Runs: []*runData{run("a", c.a), run("b", c.b), episodesRun(1)}}
		if got := wideStepRange(e); got != c.want {
			t.Errorf("reach %d vs %d: log axis %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// evalFixtureRuns is fixtureRuns with 10 evaluation episodes after every
// segment. Segment ends (fixtureRuns): sync/1 at 400, 800, 1200; sync/2 at
// 300; async/1 at 1000, 2000; async/2 at 500, 1000. Steps to reach 45 by
// evaluation, worked by hand:
//
//	sync/1:  30, 50, 60 -> 800
//	sync/2:  45         -> 300 (equal counts)
//	async/1: 44, 90     -> 2000
//	async/2: 20, 30     -> never, censored at its 1,000 steps
func evalFixtureRuns() []runFixture {
	runs := fixtureRuns()
	evals := [][]float64{{30, 50, 60}, {45}, {44, 90}, {20, 30}}
	for i := range runs {
		runs[i].evals, runs[i].evalEpisodes = evals[i], 10
	}
	return runs
}

func TestGenerateEvaluation(t *testing.T) {
	dir := writeExperiment(t, evalFixtureRuns())
	opts := Options{BootstrapReps: 1000, SmoothWindow: 10, Target: new(fixtureTarget)}
	rep, err := Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped %v", rep.Skipped)
	}
	checkFigures(t, rep, append([]string{FigEvaluationCurve, FigStepsToTargetEval}, allFigures...))
	res := readResults(t, rep.ResultsJSON)
	if ev := res.Evaluation; ev == nil || *ev != (EvaluationInfo{Runs: 4, Points: 8, EpisodesMin: 10, EpisodesMax: 10}) {
		t.Errorf("evaluation = %+v, want 4 runs, 8 points of 10 episodes", ev)
	}
	want := map[string]RunTarget{
		"sync/1": {Reached: true, Steps: 800, Budget: 1200}, "sync/2": {Reached: true, Steps: 300, Budget: 300},
		"async/1": {Reached: true, Steps: 2000, Budget: 2000}, "async/2": {Reached: false, Steps: runstore.JSONFloat(math.NaN()), Budget: 1000},
	}
	for _, r := range res.Runs {
		key := r.Arm + "/" + strconv.FormatUint(r.Seed, 10)
		w, got := want[key], r.StepsToTargetEval
		if got == nil || got.Reached != w.Reached || !near(float64(got.Steps), float64(w.Steps), 0) || got.Budget != w.Budget {
			t.Errorf("%s steps_to_target_eval = %+v, want %+v", key, got, w)
		}
	}
	// sync {800, 300}: median 550; two seeds resample to 300, 550 or 800,
	// each extreme with probability 1/4 (see TestGenerateComplete), so
	// the interval is [300, 800]. async {2000, +Inf}: the median
	// interpolates towards +Inf (null in JSON); at budgets {2000, 1000}
	// it is at least 1500, so the ratio is at least 1500/550 = 30/11. Its
	// resamples give 2000 (probability 1/4) or +Inf: interval [2000, +Inf].
	ss, as := res.Arms[0].StepsToTargetEval, res.Arms[1].StepsToTargetEval
	if ss == nil || as == nil {
		t.Fatalf("steps_to_target_eval missing: sync %+v, async %+v", ss, as)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"sync median", float64(ss.Median), 550}, {"sync low", float64(ss.Low), 300}, {"sync high", float64(ss.High), 800},
		{"sync bound", float64(ss.LowerBound), 550}, {"sync ratio", float64(ss.Ratio), 1},
		{"async median", float64(as.Median), math.NaN()}, {"async bound", float64(as.LowerBound), 1500},
		{"async low", float64(as.Low), 2000}, {"async high", float64(as.High), math.NaN()},
		{"async ratio", float64(as.Ratio), 30.0 / 11},
		// The training-episode measure is the one of TestGenerateComplete, unchanged.
		{"sync training median", float64(res.Arms[0].StepsToTarget.Median), 395},
		{"async training bound", float64(res.Arms[1].StepsToTarget.LowerBound), 550},
	} {
		// 1500/550 rounds once; everything else is exact.
		if !near(c.got, c.want, exact) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if ss.Reached != 2 || ss.Seeds != 2 || ss.RatioBound != "" || as.Reached != 1 || as.Seeds != 2 || as.RatioBound != ">" {
		t.Errorf("counts: sync %+v, async %+v", ss, as)
	}

	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| **Evaluation** | 10 episodes per evaluation, not counted as env steps; 8 evaluations in 4 runs |",
		"| Steps to return ≥ 45 (training episodes), median [95% CI] |",
		"The steps-to-target column is by the mean of the last 10 training episodes; the next section sets it beside steps to target by evaluation episodes (10 per evaluation, not counted as env steps).",
		"\n## Steps to return ≥ 45\n\nEnv steps each arm needed to reach a return of 45, measured two ways. By the mean of the last 10 training episodes: ",
		"By evaluation episodes (10 per evaluation, not counted as env steps): the first evaluation whose mean return reaches the target",
		"| Arm | Steps by the mean of the last 10 training episodes, median [95% CI] | vs baseline | Steps by evaluation episodes (10 per evaluation, not counted as env steps), median [95% CI] | vs baseline |",
		"| [sync (baseline)](#runs-sync) | [395 \\[280, 510\\] (2/2)](#runs-sync) | [1.00×](#runs-sync) | [550 \\[300, 800\\] (2/2)](#runs-sync) | [1.00×](#runs-sync) |",
		"| [async](#runs-async) | [>550 (1/2)](#runs-async) | [>1.39×](#runs-async) | [>1.5k (1/2)](#runs-async) | [>2.73×](#runs-async) |",
		"| Seed | Status | Env steps | Updates | Episodes | Final return | Env steps/s | Wall time | Steps to target (training) | Steps to target (evaluation) | Params SHA-256 |",
		"| [510](sync/seed-1/manifest.json) | [800](sync/seed-1/manifest.json) |",
		"| [not reached (>1,000)](async/seed-2/manifest.json) | [not reached (>1,000)](async/seed-2/manifest.json) |",
		"![fixture: evaluation return vs environment steps](figures/evaluation_curve.png)",
		"After each training segment the current policy plays 10 evaluation episodes, which train nothing and are not counted as env steps",
		"The dashed line is the target return, 45 (from options).",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if bytes.Contains(md, []byte("logarithmic")) {
		t.Error("arms within 10× of each other in steps got a log axis")
	}
	html, err := os.ReadFile(rep.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Steps to return ≥ 45</h2>", `<a href="#runs-async">&gt;1.5k (1/2)</a>`} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	checkEvalCSV(t, rep.CSV)
}

// checkEvalCSV checks the evaluation columns of results.csv of
// TestGenerateEvaluation.
func checkEvalCSV(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil || len(records) != 3 {
		t.Fatalf("results.csv: %d records, %v", len(records), err)
	}
	col := map[string]int{}
	for i, name := range records[0] {
		col[name] = i
	}
	for _, c := range []struct {
		row          int
		column, want string
	}{
		{1, "eval_episodes_min", "10"}, {1, "eval_episodes_max", "10"},
		{1, "steps_to_target_eval_median", "550"}, {1, "steps_to_target_eval_ci_low", "300"},
		{1, "steps_to_target_eval_ci_high", "800"}, {1, "steps_ratio_eval_vs_baseline", "1"},
		{2, "steps_to_target_eval_median", "inf"}, {2, "steps_to_target_eval_lower_bound", "1500"},
		{2, "steps_to_target_eval_reached", "1"}, {2, "steps_to_target_eval_seeds", "2"},
		{2, "steps_ratio_eval_bound", ">"}, {2, "steps_to_target_median", "inf"},
	} {
		i, ok := col[c.column]
		if !ok {
			t.Errorf("results.csv has no column %q", c.column)
			continue
		}
		if got := records[c.row][i]; got != c.want {
			t.Errorf("results.csv %s/%s = %q, want %q", records[c.row][0], c.column, got, c.want)
		}
	}
	// 30/11 in shortest round-trip form.
	if got, err := strconv.ParseFloat(records[2][col["steps_ratio_eval_vs_baseline"]], 64); err != nil || got != 1500.0/550 {
		t.Errorf("async steps_ratio_eval_vs_baseline = %v (%v), want 1500/550", got, err)
	}
}

func TestGenerateWithoutEvaluation(t *testing.T) {
	// Evaluation rows but no target: the figure, without a target line,
	// and no steps-to-target measure at all.
	dir := writeExperiment(t, evalFixtureRuns())
	rep, err := Generate(dir, Options{BootstrapReps: 50, SmoothWindow: 10, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, []string{FigLearningCurve, FigLearningCurveWall, FigEvaluationCurve, FigThroughput,
		FigPipeline, FigPolicyLag, FigUtilization, FigWorldModel})
	md, _ := os.ReadFile(rep.Markdown)
	if bytes.Contains(md, []byte("dashed line")) || bytes.Contains(md, []byte("## Steps to")) {
		t.Error("report without a target has a target line or a steps-to-target section")
	}

	// The same runs rewritten without evaluation rows (a retried segment
	// replaces its files): the figure is left out without a word, its old
	// files are removed, and nothing in the outputs mentions evaluations.
	for _, r := range fixtureRuns() {
		writeFixture(t, dir, r)
	}
	rep, err = Generate(dir, Options{BootstrapReps: 50, SmoothWindow: 10, Target: new(fixtureTarget)})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, allFigures)
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped = %v; an experiment without evaluations does not skip the evaluation figure, it never has one", rep.Skipped)
	}
	for _, fig := range []string{FigEvaluationCurve, FigStepsToTargetEval} {
		for _, ext := range []string{".png", ".svg"} {
			if _, err := os.Stat(filepath.Join(dir, figuresDir, fig+ext)); err == nil {
				t.Errorf("a stale %s%s was left behind", fig, ext)
			}
		}
	}
	// report.html is left out: its inlined base64 images may spell "eval".
	for _, path := range []string{rep.Markdown, rep.CSV, rep.LaTeX, rep.ResultsJSON} {
		data, _ := os.ReadFile(path)
		if bytes.Contains(bytes.ToLower(data), []byte("eval")) {
			t.Errorf("%s mentions evaluations without evaluation rows: %s", filepath.Base(path), data[max(0, bytes.Index(bytes.ToLower(data), []byte("eval"))-80):][:160])
		}
	}
	var generic map[string]any
	raw, _ := os.ReadFile(rep.ResultsJSON)
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	if _, ok := generic["steps_to_target"]; ok {
		t.Error("results.json grew a top-level steps_to_target")
	}
}

func TestEvaluationCurveLogAxis(t *testing.T) {
	// async/1 trains for 13,000 env steps, sync at most 1,200: more than
	// 10× apart, so the step axis is logarithmic.
	runs := evalFixtureRuns()
	runs[2].returns = seq(1300, func(i int) float64 { return float64(i) / 13 })
	runs[2].segs, runs[2].evals = 3, []float64{10, 40, 95}
	dir := writeExperiment(t, runs)
	rep, err := Generate(dir, Options{BootstrapReps: 50, SmoothWindow: 10, Target: new(fixtureTarget), NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(rep.Markdown)
	if !strings.Contains(string(md), "The step axis is logarithmic because the arms' step counts differ by more than 10×.") {
		t.Errorf("report.md does not say the evaluation figure's step axis is logarithmic; skipped %v", rep.Skipped)
	}
	svg, err := os.ReadFile(filepath.Join(dir, figuresDir, FigEvaluationCurve+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	// logHumanTicks labels 1k and 10k (13,000 steps reach past 10k); a
	// linear axis from 0 to 13k would not label 1k.
	for _, label := range []string{">1k<", ">10k<", "log scale"} {
		if !bytes.Contains(svg, []byte(label)) {
			t.Errorf("evaluation_curve.svg lacks the %q label", label)
		}
	}
}
