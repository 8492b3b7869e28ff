package reports

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/accerl/accerl/runstore"
)

func TestGenerateTargetSources(t *testing.T) {
	dir := writeExperiment(t, fixtureRuns())
	var m runstore.ExperimentManifest
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.ExperimentFile), &m); err != nil {
		t.Fatal(err)
	}
	m.Target, m.RandomScore = new(fixtureTarget), new(-5.0)
	if err := runstore.WriteJSON(filepath.Join(dir, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	opts := Options{BootstrapReps: 50, SmoothWindow: 10, NoHTML: true}
	rep, err := Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := readResults(t, rep.ResultsJSON)
	if res.Target == nil || *res.Target != (TargetInfo{Return: fixtureTarget, RandomScore: -5, Source: targetFromExperiment}) {
		t.Errorf("target from experiment.json = %+v", res.Target)
	}
	// async/2 scores 40: normalised (40+5)/(45+5) = 0.9, gap 0.1; async/1
	// scores 50, gap 0. Mean 0.05.
	if g := float64(res.Arms[1].OptimalityGap); !near(g, 0.05, 1e-15) {
		t.Errorf("async gap with random score -5 = %v, want 0.05", g)
	}

	// Options override experiment.json.
	opts.Target = new(1000.0)
	rep, err = Generate(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	res = readResults(t, rep.ResultsJSON)
	if res.Target == nil || res.Target.Return != 1000 || res.Target.Source != targetFromOptions || res.Target.RandomScore != 0 {
		t.Errorf("target from options = %+v", res.Target)
	}
	// Nobody reaches 1000: every median is censored, the figure draws
	// lower bounds only.
	if s := res.Arms[0].StepsToTarget; s == nil || s.Reached != 0 || !math.IsNaN(float64(s.Median)) {
		t.Errorf("unreachable target: %+v", s)
	}

	// Without any target: no steps-to-target figure (its old files are
	// removed), no gap, and report.md says why.
	m.Target = nil
	if err := runstore.WriteJSON(filepath.Join(dir, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	rep, err = Generate(dir, Options{BootstrapReps: 50, SmoothWindow: 10, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	res = readResults(t, rep.ResultsJSON)
	if res.Target != nil || res.Arms[0].StepsToTarget != nil || !math.IsNaN(float64(res.Arms[0].OptimalityGap)) {
		t.Errorf("no target, but results = %+v / %+v", res.Target, res.Arms[0])
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0] != FigStepsToTarget {
		t.Errorf("skipped = %v, want [%s]", rep.Skipped, FigStepsToTarget)
	}
	if _, err := os.Stat(filepath.Join(dir, figuresDir, FigStepsToTarget+".png")); err == nil {
		t.Error("a stale steps_to_target.png was left behind")
	}
	md, _ := os.ReadFile(rep.Markdown)
	for _, want := range []string{"Not drawn, for lack of data:", "- Steps to target (`steps_to_target`): no target return: pass Options.Target or set \"target\" in experiment.json.",
		"| **Target return** | none (no steps-to-target figure or optimality gap) |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if bytes.Contains(md, []byte("Optimality gap")) {
		t.Error("report.md has an optimality gap column without a target")
	}
}

func TestGenerateSkipsAbsentColumns(t *testing.T) {
	runs := fixtureRuns()
	for i := range runs {
		runs[i].bare = true
	}
	dir := writeExperiment(t, runs)
	rep, err := Generate(dir, Options{BootstrapReps: 50, SmoothWindow: 10, NoHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{FigStepsToTarget, FigPipeline, FigPolicyLag, FigWorldModel}
	if !slices.Equal(rep.Skipped, want) {
		t.Errorf("skipped = %v, want %v", rep.Skipped, want)
	}
	checkFigures(t, rep, []string{FigLearningCurve, FigLearningCurveWall, FigThroughput, FigUtilization})
	md, _ := os.ReadFile(rep.Markdown)
	for _, want := range []string{
		"- Pipeline distributions (`pipeline_distributions`): the staleness, inference_batch and queue_wait_ms columns are empty (NaN) in every metrics row.",
		"- World model (`world_model`): the horizon and wm_val_loss columns are empty (NaN) in every metrics row.",
		"Panels: cpu_util. Not drawn (no data): gpu_util and gpu_mem.",
	} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// CPU only: one panel, the standard height.
	f, err := os.Open(filepath.Join(dir, figuresDir, FigUtilization+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Height != 675 {
		t.Errorf("CPU-only utilisation figure: %+v, %v; want 675 pixels high", cfg, err)
	}
}
