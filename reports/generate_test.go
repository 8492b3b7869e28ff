package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/runstore"
)

// runFixture is one hand-made run: its episode returns (episode i ends at
// env step 10·(i+1)), split evenly into segs segments, with one metrics row
// per 10 episodes and wall time env_steps/stepsPerS.
type runFixture struct {
	arm       string
	seed      uint64
	returns   []float64
	segs      int
	stepsPerS float64
	summary   string // "" (none), or a runstore.RunSummary status
	failure   string // the summary's error (a failed run's reason)
	warnings  []string
	manifest  bool
	bare      bool // only cpu_util of the pipeline, utilisation and world-model columns is logged
	// evals[s-1] is the mean return of the evalEpisodes evaluation episodes
	// logged on the last metrics row of segment s; NaN or a short slice
	// means no evaluation after that segment.
	evals        []float64
	evalEpisodes int64
}

// metricsRow returns a row whose every column holds a distinct value
// derived from step (the row runstore's segment tests write), so the
// fixture exercises every column the report reads.
func metricsRow(seg int32, step int64) runstore.MetricsRow {
	f := float64(step)
	return runstore.MetricsRow{
		Segment: seg, Step: step, EnvSteps: 1000 * step, Updates: step + 1, WallS: 0.5*f + 0.25,
		EpisodeReturn: 10 + f, Episodes: 2 * step, Success: 0.125, PolicyVersion: step + 7,
		Staleness: 1.5 + f, StepsPerS: 2000 + f, InferenceBatch: 32 + f, QueueWaitMs: 4.75 + f,
		TrainerBusy: 0.625, CPUUtil: 0.875, GPUUtil: 0.375, GPUMem: 1e9 + f, Horizon: 5 + f,
		WMValLoss: 0.03125 + f, PolicyLoss: -0.25 - f, ValueLoss: 1.75 + f, Entropy: 2.5 - f,
		ApproxKL: 0.01 + f, ClipFrac: 0.0625, GradNorm: 3.5 + f,
	}
}

func writeFixture(t *testing.T, expDir string, f runFixture) {
	t.Helper()
	dir := runstore.RunDir(expDir, f.arm, f.seed)
	n := len(f.returns)
	per := (n + f.segs - 1) / f.segs
	// Write the last segment first: the reader must order segments itself.
	for s := f.segs; s >= 1; s-- {
		lo, hi := (s-1)*per, min(s*per, n)
		var eps []runstore.EpisodeRow
		var rows []runstore.MetricsRow
		for i := lo; i < hi; i++ {
			steps := int64(10 * (i + 1))
			eps = append(eps, runstore.EpisodeRow{EnvSteps: steps, Return: f.returns[i], Length: 10, PolicyVersion: int64(i), Success: math.NaN()})
			if (i+1)%10 == 0 || i == hi-1 {
				r := metricsRow(int32(s), int64(i))
				r.EnvSteps, r.Updates, r.WallS = steps, int64(i+1), float64(steps)/f.stepsPerS
				r.EvalReturn, r.EvalEpisodes = math.NaN(), 0
				if i == hi-1 && s <= len(f.evals) && !math.IsNaN(f.evals[s-1]) {
					r.EvalReturn, r.EvalEpisodes = f.evals[s-1], f.evalEpisodes
				}
				if f.bare {
					nan := math.NaN()
					r.Staleness, r.InferenceBatch, r.QueueWaitMs = nan, nan, nan
					r.GPUUtil, r.GPUMem, r.Horizon, r.WMValLoss = nan, nan, nan, nan
					r.LagClipFrac, r.LagLowWeight, r.LagESS = nan, nan, nan
				}
				rows = append(rows, r)
			}
		}
		if err := runstore.WriteSegment(dir, int32(s), rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	if f.manifest {
		m := runstore.RunManifest{Experiment: "fixture", Arm: f.arm, Seed: f.seed, SpecHash: "f00d",
			Build:    runstore.BuildInfo{GoVersion: "go1.26.8", Module: "github.com/accerl/accerl", Version: "(devel)", Deps: map[string]string{"gonum.org/v1/plot": "v0.17.0"}},
			Hardware: runstore.Hardware{CPUs: 2, CPUModel: "Test CPU 9000", GPU: runstore.NoGPU, Platform: "linux/amd64"}}
		if err := runstore.WriteJSON(filepath.Join(dir, runstore.RunFile), m); err != nil {
			t.Fatal(err)
		}
	}
	if f.summary != "" {
		steps := int64(10 * n)
		s := runstore.RunSummary{Status: f.summary, EnvSteps: steps, Updates: int64(n), Episodes: int64(n),
			FinalReturn: math.NaN(), StepsPerS: f.stepsPerS, WallS: float64(steps) / f.stepsPerS,
			ParamsSHA256: strings.Repeat("ab", 32), Segments: int32(f.segs), Error: f.failure, Warnings: f.warnings,
			Updated: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
		if err := runstore.WriteJSON(filepath.Join(dir, runstore.SummaryFile), s); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// fixtureRuns is the 2 arms × 2 seeds experiment. Final returns (mean of
// the last 100 episodes), worked by hand:
//
//	sync/1:  returns 0..119, last 100 = 20..119, mean 69.5
//	sync/2:  30 returns 2i, all of them: 2·mean(0..29) = 29
//	async/1: 100 × 100 then 100 × 50: last 100 = 50
//	async/2: 100 × 40: 40
func fixtureRuns() []runFixture {
	return []runFixture{
		{arm: "sync", seed: 1, returns: seq(120, func(i int) float64 { return float64(i) }), segs: 3, stepsPerS: 1000, summary: runstore.StatusCompleted, manifest: true},
		{arm: "sync", seed: 2, returns: seq(30, func(i int) float64 { return 2 * float64(i) }), segs: 1, stepsPerS: 1200, summary: runstore.StatusCompleted, manifest: true},
		{arm: "async", seed: 1, returns: seq(200, func(i int) float64 { return 100 - 50*float64(i/100) }), segs: 2, stepsPerS: 3000, summary: runstore.StatusCompleted, manifest: true},
		{arm: "async", seed: 2, returns: seq(100, func(int) float64 { return 40 }), segs: 2, stepsPerS: 3600, summary: runstore.StatusCompleted, manifest: true},
	}
}

func writeExperiment(t *testing.T, runs []runFixture) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fixture")
	m := runstore.ExperimentManifest{Name: "fixture", SpecHash: "f00dcafe", Baseline: "sync", Arms: []string{"sync", "async"}, Seeds: []uint64{1, 2}}
	if err := runstore.WriteJSON(filepath.Join(dir, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		writeFixture(t, dir, r)
	}
	return dir
}

func readResults(t *testing.T, path string) Results {
	t.Helper()
	var res Results
	if err := runstore.ReadJSON(path, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// fixtureTarget is the target return of the fixture tests. Steps to reach
// it, worked by hand with SmoothWindow 10 (a curve point counts once its
// window is full, from the 10th episode; episode i ends at step 10(i+1)):
//
//	sync/1:  smoothed i−4.5 ≥ 45 from i = 50: step 510
//	sync/2:  smoothed 2i−9 ≥ 45 from i = 27: step 280
//	async/1: smoothed 100 at i = 9: step 100
//	async/2: 40 throughout: never, censored at its 1,000 steps
const fixtureTarget = 45.0

func TestGenerateComplete(t *testing.T) {
	dir := writeExperiment(t, fixtureRuns())
	opts := Options{BootstrapReps: 1000, SmoothWindow: 10, Target: new(fixtureTarget)}
	rep, err := Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Partial {
		t.Errorf("complete experiment reported partial: %v", rep.Reasons)
	}
	res := readResults(t, rep.ResultsJSON)
	if res.Experiment != "fixture" || res.SpecHash != "f00dcafe" || res.Partial || len(res.Runs) != 4 || len(res.Arms) != 2 {
		t.Fatalf("results header = %+v", res)
	}
	if res.Target == nil || res.Target.Return != fixtureTarget || res.Target.Source != targetFromOptions || res.Target.RandomScore != 0 {
		t.Errorf("results target = %+v", res.Target)
	}
	wantFinal := map[string]float64{"sync/1": 69.5, "sync/2": 29, "async/1": 50, "async/2": 40}
	wantSteps := map[string]int64{"sync/1": 1200, "sync/2": 300, "async/1": 2000, "async/2": 1000}
	wantTarget := map[string]float64{"sync/1": 510, "sync/2": 280, "async/1": 100, "async/2": math.NaN()}
	for _, r := range res.Runs {
		key := fmt.Sprintf("%s/%d", r.Arm, r.Seed)
		if !near(float64(r.FinalMeanReturn), wantFinal[key], exact) {
			t.Errorf("%s final_mean_return = %v, want %v", key, r.FinalMeanReturn, wantFinal[key])
		}
		if r.EnvSteps != wantSteps[key] || r.Status != runstore.StatusCompleted || r.ParamsSHA256 == "" || r.Experiment != "fixture" {
			t.Errorf("%s = %+v", key, r)
		}
		if want := fmt.Sprintf("%s/seed-%d/manifest.json", r.Arm, r.Seed); r.Manifest != want {
			t.Errorf("%s manifest link = %q, want %q", key, r.Manifest, want)
		}
		// results.json holds null for a run that never reached the target.
		st := r.StepsToTarget
		if st == nil || !near(float64(st.Steps), wantTarget[key], 0) || st.Reached == math.IsNaN(wantTarget[key]) {
			t.Errorf("%s steps_to_target = %+v, want %v", key, st, wantTarget[key])
		}
	}
	sync, async := res.Arms[0], res.Arms[1]
	// sync: finals 69.5 and 29 -> mean 49.25, sample std |69.5-29|/√2.
	// Steps/s 1000 and 1200 -> mean 1100. async: 50 and 40 -> 45 ± 10/√2;
	// 3000 and 3600 -> 3300, a speedup of 3300/1100 = 3.
	//
	// Two seeds per arm make every bootstrap hand-computable: a resample
	// of {a, b} is {a,a}, {a,b}, {b,a} or {b,b}, so each extreme has
	// probability 1/4, far above 2.5%, and the interval spans the extremes.
	// Steps/s means: sync [1000, 1200], async [3000, 3600]. Speedup: both
	// arms resampled, extremes 3000/1200 = 2.5 and 3600/1000 = 3.6 with
	// probability 1/16 each — still above 2.5%, five standard errors with
	// 1000 replicates (sqrt(.0625·.9375/1000) ≈ .0077).
	// P(async > sync) over the pairs (50,69.5) (50,29) (40,69.5) (40,29):
	// 2 wins of 4 = 0.5; resampling sync to {69.5,69.5} gives 0 and to
	// {29,29} gives 1, so the interval is [0, 1].
	// Optimality gap with target 45: sync mean(max(0, 1−69.5/45),
	// 1−29/45) = 8/45, resamples from 0 to 16/45; async mean(0, 1−40/45)
	// = 1/18, resamples from 0 to 1/9.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"sync mean", float64(sync.FinalReturn.Mean), 49.25},
		{"sync std", float64(sync.FinalReturn.Std), 40.5 / math.Sqrt2},
		{"sync min", float64(sync.FinalReturn.Min), 29},
		{"sync max", float64(sync.FinalReturn.Max), 69.5},
		{"sync steps/s", float64(sync.StepsPerS.Mean), 1100},
		{"sync steps/s low", float64(sync.StepsPerSLow), 1000},
		{"sync steps/s high", float64(sync.StepsPerSHigh), 1200},
		{"sync speedup", float64(sync.Speedup), 1},
		{"async mean", float64(async.FinalReturn.Mean), 45},
		{"async std", float64(async.FinalReturn.Std), 10 / math.Sqrt2},
		{"async steps/s min", float64(async.StepsPerS.Min), 3000},
		{"async steps/s max", float64(async.StepsPerS.Max), 3600},
		{"async steps/s low", float64(async.StepsPerSLow), 3000},
		{"async steps/s high", float64(async.StepsPerSHigh), 3600},
		{"async speedup", float64(async.Speedup), 3},
		{"async speedup low", float64(async.SpeedupLow), 2.5},
		{"async speedup high", float64(async.SpeedupHigh), 3.6},
		{"async P(improvement)", float64(async.ProbImprovement), 0.5},
		{"async P(improvement) low", float64(async.ProbImprovementLow), 0},
		{"async P(improvement) high", float64(async.ProbImprovementHigh), 1},
		{"sync P(improvement)", float64(sync.ProbImprovement), math.NaN()},
		{"sync gap", float64(sync.OptimalityGap), 8.0 / 45},
		{"sync gap low", float64(sync.OptimalityGapLow), 0},
		{"sync gap high", float64(sync.OptimalityGapHigh), 16.0 / 45},
		{"async gap", float64(async.OptimalityGap), 1.0 / 18},
		{"async gap high", float64(async.OptimalityGapHigh), 1.0 / 9},
		// Two seeds: IQM = mean, and the bootstrap interval spans both
		// seeds (see TestIQMIntervalHandComputed).
		{"sync iqm", float64(sync.IQM), 49.25},
		{"sync iqm low", float64(sync.IQMLow), 29},
		{"sync iqm high", float64(sync.IQMHigh), 69.5},
		{"sync wall mean", float64(sync.WallS.Mean), (1.2 + 0.25) / 2},
	}
	for _, c := range checks {
		// The gap's 1−x/45 and the speedup's 3600/1000 round once or twice.
		if !near(c.got, c.want, exact) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if sync.Completed != 2 || sync.Runs != 2 || sync.FinalReturn.N != 2 {
		t.Errorf("sync counts = %+v", sync)
	}
	// Steps to target: sync median of {510, 280} = 395, resampled medians
	// 280, 395 or 510. async {100, +Inf}: the median interpolates towards
	// +Inf, so it is censored; with async/2 at its budget the median is at
	// least (100+1000)/2 = 550, and the ratio to sync at least 550/395.
	// Resamples give 100 (1/4) or +Inf, so the interval is [100, +Inf].
	// results.json writes +Inf as null, read back as NaN.
	ss, as := sync.StepsToTarget, async.StepsToTarget
	if ss == nil || as == nil {
		t.Fatalf("steps_to_target missing: sync %+v, async %+v", ss, as)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"sync median", float64(ss.Median), 395}, {"sync low", float64(ss.Low), 280}, {"sync high", float64(ss.High), 510},
		{"sync ratio", float64(ss.Ratio), 1}, {"async median", float64(as.Median), math.NaN()},
		{"async bound", float64(as.LowerBound), 550}, {"async low", float64(as.Low), 100},
		{"async high", float64(as.High), math.NaN()}, {"async ratio", float64(as.Ratio), 550.0 / 395},
	} {
		if !near(c.got, c.want, exact) {
			t.Errorf("steps to target, %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if ss.Reached != 2 || ss.Seeds != 2 || as.Reached != 1 || as.Seeds != 2 || as.RatioBound != ">" || ss.RatioBound != "" {
		t.Errorf("steps to target counts: sync %+v, async %+v", ss, as)
	}

	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Report: fixture",
		"| **Spec hash** | f00dcafe |",
		"complete: all 4 runs completed",
		"| **Target return** | 45 (from options); random score 0 |",
		"| Arm | Runs completed | Final return IQM [95% CI] | Final return mean ± std | Env steps/s [95% CI] | Speedup [95% CI] | P(improvement) [95% CI] | Steps to return ≥ 45, median [95% CI] | Steps vs baseline | Optimality gap [95% CI] | Wall time (mean) |",
		"| [sync (baseline)](#runs-sync) | [2 / 2](#runs-sync) | [49.25 \\[29.00, 69.50\\]](#runs-sync) | [49.25 ± 28.64](#runs-sync) | [1,100 \\[1,000, 1,200\\]](#runs-sync) | [1.00×](#runs-sync) | [n/a](#runs-sync) | [395 \\[280, 510\\] (2/2)](#runs-sync) | [1.00×](#runs-sync) | [0.18 \\[0.00, 0.36\\]](#runs-sync) | [0.7 s](#runs-sync) |",
		"| [async](#runs-async) | [2 / 2](#runs-async) | [45.00 \\[40.00, 50.00\\]](#runs-async) | [45.00 ± 7.07](#runs-async) | [3,300 \\[3,000, 3,600\\]](#runs-async) | [3.00× \\[2.50×, 3.60×\\]](#runs-async) | [0.50 \\[0.00, 1.00\\]](#runs-async) | [>550 (1/2)](#runs-async) | [>1.39×](#runs-async) | [0.06 \\[0.00, 0.11\\]](#runs-async) | [0.5 s](#runs-async) |",
		"<a id=\"runs-sync\"></a>\n\n### Runs of arm sync",
		"| [1](sync/seed-1/manifest.json) | completed | [1,200](sync/seed-1/manifest.json) | [120](sync/seed-1/manifest.json) | [120](sync/seed-1/manifest.json) | [69.50](sync/seed-1/manifest.json) | [1,000](sync/seed-1/manifest.json) | [1.2 s](sync/seed-1/manifest.json) | [510](sync/seed-1/manifest.json) | [abababababab](sync/seed-1/manifest.json) |",
		"| [2](async/seed-2/manifest.json) | completed | [1,000](async/seed-2/manifest.json) | [100](async/seed-2/manifest.json) | [100](async/seed-2/manifest.json) | [40.00](async/seed-2/manifest.json) | [3,600](async/seed-2/manifest.json) | [0.3 s](async/seed-2/manifest.json) | [not reached (>1,000)](async/seed-2/manifest.json) | [abababababab](async/seed-2/manifest.json) |",
		"![fixture: episode return vs environment steps](figures/learning_curve.png)",
		"(figures/learning_curve_wall.png)",
		"(figures/throughput.png)",
		"([SVG](figures/throughput.svg))",
		"(figures/steps_to_target.png)",
		"(figures/pipeline_distributions.png)",
		"(figures/utilization.png)",
		"(figures/world_model.png)",
		"- [results.csv](results.csv): the table above, raw numbers",
		"| **Go** | go1.26.8 |",
		"| **CPU** | Test CPU 9000 (2 logical CPUs) |",
		"| **GPU** | no GPU |",
		"| gonum.org/v1/plot | v0.17.0 |",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if bytes.Contains(md, []byte("Partial report")) || bytes.Contains(md, []byte("Not drawn")) {
		t.Error("complete report says partial or skips a figure")
	}
	checkFigures(t, rep, allFigures)

	html, err := os.ReadFile(rep.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(html, []byte(`src="data:image/png;base64,`)); n != len(allFigures) {
		t.Errorf("report.html inlines %d PNGs, want %d", n, len(allFigures))
	}
	if bytes.Contains(html, []byte(`src="figures/`)) || bytes.Contains(html, []byte("ZgotmplZ")) {
		t.Error("report.html is not self-contained or has a rejected URL")
	}
	for _, want := range []string{`<h3 id="runs-async">Runs of arm async</h3>`, `<a href="#runs-sync">1.00×</a>`,
		`<a href="async/seed-2/manifest.json">3,600</a>`, `<a href="results.tex">results.tex</a>`} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	checkTables(t, rep)

	// Same data, same options: byte-identical outputs.
	before := readAll(t, rep)
	if _, err := Generate(dir, opts); err != nil {
		t.Fatal(err)
	}
	for path, data := range readAll(t, rep) {
		if !bytes.Equal(data, before[path]) {
			t.Errorf("%s changed between two identical Generate calls", path)
		}
	}
}

// allFigures is every figure a complete experiment with a target gets.
var allFigures = []string{FigLearningCurve, FigLearningCurveWall, FigThroughput, FigStepsToTarget, FigPipeline, FigPolicyLag, FigUtilization, FigWorldModel}

func readAll(t *testing.T, rep *Report) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range append([]string{rep.Markdown, rep.HTML, rep.ResultsJSON, rep.CSV, rep.LaTeX}, rep.Figures...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = data
	}
	return out
}

// checkFigures decodes every PNG (and checks its pixel size) and checks
// that every SVG is an SVG document.
func checkFigures(t *testing.T, rep *Report, names []string) {
	t.Helper()
	if len(rep.Figures) != 2*len(names) {
		t.Errorf("figures = %v, want PNG and SVG of %v", rep.Figures, names)
	}
	for _, name := range names {
		pngPath := filepath.Join(rep.Dir, figuresDir, name+".png")
		f, err := os.Open(pngPath)
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", pngPath, err)
			continue
		}
		// 7 in wide at 150 dpi; 4.5 in high, more for stacked panels.
		if b := img.Bounds(); b.Dx() != 1050 || b.Dy() < 675 {
			t.Errorf("%s is %v, want 1050 wide and at least 675 high", pngPath, b.Size())
		}
		svg, err := os.ReadFile(filepath.Join(rep.Dir, figuresDir, name+".svg"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Contains(svg, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(svg), []byte("</svg>")) {
			t.Errorf("%s.svg is not a complete SVG document", name)
		}
		// Well-formed XML: every token decodes (catches the font-family
		// rewrite breaking an attribute's quoting).
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s.svg is not well-formed XML: %v", name, err)
				break
			}
		}
	}
}

func TestGeneratePartial(t *testing.T) {
	runs := fixtureRuns()
	runs[1].summary = runstore.StatusRunning // sync/2 still running
	runs[3].summary = ""                     // async/2 has data but no summary yet
	dir := writeExperiment(t, runs)
	rep, err := Generate(dir, Options{BootstrapReps: 200, Aggregate: AggregateMean, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Partial || rep.HTML != "" {
		t.Fatalf("report = %+v, want partial and no HTML", rep)
	}
	res := readResults(t, rep.ResultsJSON)
	if !res.Partial {
		t.Error("results.json not partial")
	}
	a2 := res.Runs[3]
	// Without a summary the numbers come from the last metrics row:
	// 100 episodes of 10 steps, wall 1000/3600 s -> 3600 steps/s.
	if a2.Status != runstore.StatusRunning || a2.EnvSteps != 1000 || a2.Updates != 100 || !near(float64(a2.StepsPerS), 3600, 1e-9) ||
		float64(a2.FinalMeanReturn) != 40 || a2.ParamsSHA256 != "" {
		t.Errorf("async/2 without summary = %+v", a2)
	}
	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Partial report", "PARTIAL", "2 of 4 runs not completed: sync/seed-2 (running), async/seed-2 (running)",
		"| [sync (baseline)](#runs-sync) | [1 / 2](#runs-sync) |", "min–max"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("partial report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
		t.Error("NoHTML still wrote report.html")
	}
}

// A failed run's reason reaches the report: the partial-report reasons in report.md and
// results.json, and the run's error in results.json.
func TestGenerateSaysWhyARunFailed(t *testing.T) {
	runs := fixtureRuns()
	runs[2].summary, runs[2].failure = runstore.StatusFailed, "segment 3 failed 3 times: non-finite loss at update 7"
	runs[0].warnings = []string{"skipped checkpoint: seg-000002: sha256 mismatch"}
	dir := writeExperiment(t, runs)
	rep, err := Generate(dir, Options{BootstrapReps: 200, Aggregate: AggregateMean, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	res := readResults(t, rep.ResultsJSON)
	if r := res.Runs[2]; r.Status != runstore.StatusFailed || r.Error != runs[2].failure {
		t.Errorf("failed run in results.json: status %q, error %q; want failed with %q", r.Status, r.Error, runs[2].failure)
	}
	want := "async/seed-1 (failed: segment 3 failed 3 times: non-finite loss at update 7)"
	if !rep.Partial || !strings.Contains(strings.Join(res.PartialReasons, "; "), want) {
		t.Errorf("partial reasons %q lack %q", res.PartialReasons, want)
	}
	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte(want)) {
		t.Errorf("report.md does not say why the run failed (%q)", want)
	}
	// The warning a run met stays in its record: results.json and report.md.
	if w := res.Runs[0].Warnings; len(w) != 1 || w[0] != runs[0].warnings[0] {
		t.Errorf("results.json warnings of %s/seed-%d = %q, want %q", runs[0].arm, runs[0].seed, w, runs[0].warnings)
	}
	if !bytes.Contains(md, []byte("skipped checkpoint: seg-000002: sha256 mismatch")) {
		t.Errorf("report.md does not show the run's warning")
	}
}

// A corrupt metrics file of a finished run is named in the partial-report reasons with what
// to do about it; it is not taken for an unfinished experiment, and the run's other
// segments still count.
func TestGenerateNamesCorruptMetricsFile(t *testing.T) {
	dir := writeExperiment(t, fixtureRuns())
	bad := filepath.Join(runstore.RunDir(dir, "sync", 1), runstore.MetricsDir, runstore.SegmentFile(2))
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b[:len(b)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Generate(dir, Options{BootstrapReps: 200, Aggregate: AggregateMean, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	reasons := strings.Join(rep.Reasons, "\n")
	if !rep.Partial || !strings.Contains(reasons, "sync/seed-1: "+bad+" is corrupt") ||
		!strings.Contains(reasons, "leaves out segment 2") || !strings.Contains(reasons, "delete it") {
		t.Errorf("reasons with %s truncated:\n%s\nwant the file named as corrupt, its segment and what to do", bad, reasons)
	}
	if strings.Contains(reasons, "not completed") {
		t.Errorf("every run completed, but the reasons say otherwise:\n%s", reasons)
	}
	res := readResults(t, rep.ResultsJSON)
	if r := res.Runs[0]; r.Status != runstore.StatusCompleted || r.EnvSteps != 1200 {
		t.Errorf("sync/1 with a corrupt segment = %+v, want completed with its summary's counters", r)
	}
}

func TestGenerateMissingRunsAndManifest(t *testing.T) {
	// Only one run exists and there is no experiment.json: arms and seeds
	// are discovered, the report is partial, and nothing crashes.
	dir := filepath.Join(t.TempDir(), "lonely")
	lonely := fixtureRuns()[2]
	lonely.manifest = false
	writeFixture(t, dir, lonely)
	rep, err := Generate(dir, Options{BootstrapReps: 100})
	if err != nil {
		t.Fatal(err)
	}
	res := readResults(t, rep.ResultsJSON)
	if !rep.Partial || res.Experiment != "lonely" || len(res.Runs) != 1 || res.Baseline != "async" || float64(res.Runs[0].FinalMeanReturn) != 50 {
		t.Errorf("discovered results = %+v", res)
	}
	md, _ := os.ReadFile(rep.Markdown)
	if !bytes.Contains(md, []byte("experiment.json is missing")) || !bytes.Contains(md, []byte("No run manifest found.")) {
		t.Errorf("report.md does not explain the missing files:\n%s", md)
	}

	// A manifest promising runs that never started: every run is missing,
	// no figure can be drawn, and Generate still writes a report.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := runstore.WriteJSON(filepath.Join(empty, runstore.ExperimentFile), runstore.ExperimentManifest{Name: "empty", Arms: []string{"a"}, Seeds: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	rep, err = Generate(empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Partial || len(rep.Figures) != 0 {
		t.Errorf("empty experiment: %+v", rep)
	}
	raw, _ := os.ReadFile(rep.ResultsJSON)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	runs := generic["runs"].([]any)
	if st := runs[0].(map[string]any)["status"]; st != statusMissing {
		t.Errorf("status of a run that never started = %v, want %q", st, statusMissing)
	}
	if fr := runs[0].(map[string]any)["final_mean_return"]; fr != nil {
		t.Errorf("final_mean_return of a missing run = %v, want null", fr)
	}

	if _, err := Generate(filepath.Join(t.TempDir(), "nope"), Options{}); err == nil {
		t.Error("Generate on a missing directory succeeded")
	}
}

// TestGenerateDemo writes a realistic 3-arm experiment for a person to look
// at: ACCERL_REPORTS_DEMO=/some/dir go test ./reports -run Demo.
func TestGenerateDemo(t *testing.T) {
	out := os.Getenv("ACCERL_REPORTS_DEMO")
	if out == "" {
		t.Skip("set ACCERL_REPORTS_DEMO=<dir> to write a demo report there")
	}
	dir := writeDemo(t, out)
	rep, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, rep, append([]string{FigEvaluationCurve}, allFigures...))
	t.Logf("demo report: %s", rep.Markdown)
}
