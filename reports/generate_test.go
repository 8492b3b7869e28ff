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
	summary   string // "" (none), or a RunSummary status
	manifest  bool
}

func writeFixture(t *testing.T, expDir string, f runFixture) {
	t.Helper()
	dir := RunDir(expDir, f.arm, f.seed)
	n := len(f.returns)
	per := (n + f.segs - 1) / f.segs
	// Write the last segment first: the reader must order segments itself.
	for s := f.segs; s >= 1; s-- {
		lo, hi := (s-1)*per, min(s*per, n)
		var eps []EpisodeRow
		var rows []MetricsRow
		for i := lo; i < hi; i++ {
			steps := int64(10 * (i + 1))
			eps = append(eps, EpisodeRow{EnvSteps: steps, Return: f.returns[i], Length: 10, PolicyVersion: int64(i), Success: math.NaN()})
			if (i+1)%10 == 0 || i == hi-1 {
				r := metricsRow(int32(s), int64(i))
				r.EnvSteps, r.Updates, r.WallS = steps, int64(i+1), float64(steps)/f.stepsPerS
				rows = append(rows, r)
			}
		}
		if err := WriteSegment(dir, int32(s), rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	if f.manifest {
		m := RunManifest{Experiment: "fixture", Arm: f.arm, Seed: f.seed, SpecHash: "f00d",
			Build:    BuildInfo{GoVersion: "go1.26.8", Module: "github.com/accerl/accerl", Version: "(devel)", Deps: map[string]string{"gonum.org/v1/plot": "v0.17.0"}},
			Hardware: Hardware{CPUs: 2, CPUModel: "Test CPU 9000", GPU: NoGPU, Platform: "linux/amd64"}}
		if err := WriteJSON(filepath.Join(dir, RunFile), m); err != nil {
			t.Fatal(err)
		}
	}
	if f.summary != "" {
		steps := int64(10 * n)
		s := RunSummary{Status: f.summary, EnvSteps: steps, Updates: int64(n), Episodes: int64(n),
			FinalReturn: math.NaN(), StepsPerS: f.stepsPerS, WallS: float64(steps) / f.stepsPerS,
			ParamsSHA256: strings.Repeat("ab", 32), Segments: int32(f.segs),
			Updated: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
		if err := WriteJSON(filepath.Join(dir, SummaryFile), s); err != nil {
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
		{arm: "sync", seed: 1, returns: seq(120, func(i int) float64 { return float64(i) }), segs: 3, stepsPerS: 1000, summary: StatusCompleted, manifest: true},
		{arm: "sync", seed: 2, returns: seq(30, func(i int) float64 { return 2 * float64(i) }), segs: 1, stepsPerS: 1200, summary: StatusCompleted, manifest: true},
		{arm: "async", seed: 1, returns: seq(200, func(i int) float64 { return 100 - 50*float64(i/100) }), segs: 2, stepsPerS: 3000, summary: StatusCompleted, manifest: true},
		{arm: "async", seed: 2, returns: seq(100, func(int) float64 { return 40 }), segs: 2, stepsPerS: 3600, summary: StatusCompleted, manifest: true},
	}
}

func writeExperiment(t *testing.T, runs []runFixture) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fixture")
	m := ExperimentManifest{Name: "fixture", SpecHash: "f00dcafe", Baseline: "sync", Arms: []string{"sync", "async"}, Seeds: []uint64{1, 2}}
	if err := WriteJSON(filepath.Join(dir, ExperimentFile), m); err != nil {
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
	if err := ReadJSON(path, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGenerateComplete(t *testing.T) {
	dir := writeExperiment(t, fixtureRuns())
	rep, err := Generate(dir, Options{BootstrapReps: 1000, SmoothWindow: 10})
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
	wantFinal := map[string]float64{"sync/1": 69.5, "sync/2": 29, "async/1": 50, "async/2": 40}
	wantSteps := map[string]int64{"sync/1": 1200, "sync/2": 300, "async/1": 2000, "async/2": 1000}
	for _, r := range res.Runs {
		key := fmt.Sprintf("%s/%d", r.Arm, r.Seed)
		if !near(float64(r.FinalMeanReturn), wantFinal[key], exact) {
			t.Errorf("%s final_mean_return = %v, want %v", key, r.FinalMeanReturn, wantFinal[key])
		}
		if r.EnvSteps != wantSteps[key] || r.Status != StatusCompleted || r.ParamsSHA256 == "" || r.Experiment != "fixture" {
			t.Errorf("%s = %+v", key, r)
		}
	}
	sync, async := res.Arms[0], res.Arms[1]
	// sync: finals 69.5 and 29 -> mean 49.25, sample std |69.5-29|/√2.
	// Steps/s 1000 and 1200 -> mean 1100. async: 50 and 40 -> 45 ± 10/√2;
	// 3000 and 3600 -> 3300, a speedup of 3300/1100 = 3.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"sync mean", float64(sync.FinalReturn.Mean), 49.25},
		{"sync std", float64(sync.FinalReturn.Std), 40.5 / math.Sqrt2},
		{"sync min", float64(sync.FinalReturn.Min), 29},
		{"sync max", float64(sync.FinalReturn.Max), 69.5},
		{"sync steps/s", float64(sync.StepsPerS.Mean), 1100},
		{"sync speedup", float64(sync.Speedup), 1},
		{"async mean", float64(async.FinalReturn.Mean), 45},
		{"async std", float64(async.FinalReturn.Std), 10 / math.Sqrt2},
		{"async steps/s min", float64(async.StepsPerS.Min), 3000},
		{"async steps/s max", float64(async.StepsPerS.Max), 3600},
		{"async speedup", float64(async.Speedup), 3},
		// Two seeds: IQM = mean, and the bootstrap interval spans both
		// seeds (see TestIQMIntervalHandComputed).
		{"sync iqm", float64(sync.IQM), 49.25},
		{"sync iqm low", float64(sync.IQMLow), 29},
		{"sync iqm high", float64(sync.IQMHigh), 69.5},
		{"sync wall mean", float64(sync.WallS.Mean), (1.2 + 0.25) / 2},
	}
	for _, c := range checks {
		if !near(c.got, c.want, exact) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if sync.Completed != 2 || sync.Runs != 2 || sync.FinalReturn.N != 2 {
		t.Errorf("sync counts = %+v", sync)
	}

	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Report: fixture",
		"| **Spec hash** | f00dcafe |",
		"complete: all 4 runs completed",
		"| sync (baseline) | 2 / 2 | 49.25 ± 28.64 | 49.25 [29.00, 69.50] | 1,100 ± 141.4 | 0.7 s | 1.00× |",
		"| async | 2 / 2 | 45.00 ± 7.07 | 45.00 [40.00, 50.00] | 3,300 ± 424.3 | 0.5 s | 3.00× |",
		"| sync | 1 | completed | 1,200 | 120 | 120 | 69.50 | 1,000 | 1.2 s | abababababab |",
		"| async | 2 | completed | 1,000 | 100 | 100 | 40.00 | 3,600 | 0.3 s | abababababab |",
		"![fixture: episode return vs environment steps](figures/learning_curve.png)",
		"(figures/learning_curve_wall.png)",
		"(figures/throughput.png)",
		"([SVG](figures/throughput.svg))",
		"| **Go** | go1.26.8 |",
		"| **CPU** | Test CPU 9000 (2 logical CPUs) |",
		"| **GPU** | no GPU |",
		"| gonum.org/v1/plot | v0.17.0 |",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if bytes.Contains(md, []byte("Partial report")) {
		t.Error("complete report says partial")
	}
	checkFigures(t, rep, []string{FigLearningCurve, FigLearningCurveWall, FigThroughput})

	html, err := os.ReadFile(rep.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(html, []byte(`src="data:image/png;base64,`)); n != 3 {
		t.Errorf("report.html inlines %d PNGs, want 3", n)
	}
	if bytes.Contains(html, []byte(`src="figures/`)) || bytes.Contains(html, []byte("ZgotmplZ")) {
		t.Error("report.html is not self-contained or has a rejected URL")
	}

	// Same data, same options: byte-identical outputs.
	before := readAll(t, rep)
	if _, err := Generate(dir, Options{BootstrapReps: 1000, SmoothWindow: 10}); err != nil {
		t.Fatal(err)
	}
	for path, data := range readAll(t, rep) {
		if !bytes.Equal(data, before[path]) {
			t.Errorf("%s changed between two identical Generate calls", path)
		}
	}
}

func readAll(t *testing.T, rep *Report) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range append([]string{rep.Markdown, rep.HTML, rep.ResultsJSON}, rep.Figures...) {
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
		// 7 × 4.5 in at 150 dpi.
		if b := img.Bounds(); b.Dx() != 1050 || b.Dy() != 675 {
			t.Errorf("%s is %v, want 1050×675", pngPath, b.Size())
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
	runs[1].summary = StatusRunning // sync/2 still running
	runs[3].summary = ""            // async/2 has data but no summary yet
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
	if a2.Status != StatusRunning || a2.EnvSteps != 1000 || a2.Updates != 100 || !near(float64(a2.StepsPerS), 3600, 1e-9) ||
		float64(a2.FinalMeanReturn) != 40 || a2.ParamsSHA256 != "" {
		t.Errorf("async/2 without summary = %+v", a2)
	}
	md, err := os.ReadFile(rep.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Partial report", "PARTIAL", "2 of 4 runs not completed: sync/seed-2 (running), async/seed-2 (running)",
		"| sync (baseline) | 1 / 2 |", "min–max"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("partial report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
		t.Error("NoHTML still wrote report.html")
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
	if err := WriteJSON(filepath.Join(empty, ExperimentFile), ExperimentManifest{Name: "empty", Arms: []string{"a"}, Seeds: []uint64{1, 2}}); err != nil {
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
	checkFigures(t, rep, []string{FigLearningCurve, FigLearningCurveWall, FigThroughput})
	t.Logf("demo report: %s", rep.Markdown)
}
