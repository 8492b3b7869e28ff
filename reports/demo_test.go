package reports

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// writeDemo writes a realistic-looking experiment under out/demo: three
// arms with different throughput and learning speed, three seeds each,
// noisy sigmoid learning curves, seeds of unequal length, and one run still
// going. It returns the experiment directory.
func writeDemo(t *testing.T, out string) string {
	t.Helper()
	dir := filepath.Join(out, "demo")
	arms := []struct {
		name      string
		stepsPerS float64
		midpoint  float64 // env steps at half the final return
	}{
		{"sync", 4200, 180e3},
		{"async", 11800, 200e3},
		{"async-wm", 10100, 120e3},
	}
	seeds := []uint64{1, 2, 3}
	m := ExperimentManifest{Name: "demo", SpecHash: "9c1e5f0a77d2", Baseline: "sync", Seeds: seeds}
	for _, a := range arms {
		m.Arms = append(m.Arms, a.name)
	}
	if err := WriteJSON(filepath.Join(dir, ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	for ai, a := range arms {
		for _, seed := range seeds {
			rng := rand.New(rand.NewPCG(seed, uint64(ai)))
			runDir := RunDir(dir, a.name, seed)
			budget := int64(500e3)
			status := StatusCompleted
			if a.name == "async-wm" && seed == 3 {
				budget, status = 340e3, StatusRunning
			}
			speed := a.stepsPerS * (1 + 0.05*rng.NormFloat64())
			var steps, episodes int64
			var eps []EpisodeRow
			var rows []MetricsRow
			seg, segEnd := int32(1), int64(100e3)
			step := int64(0)
			flush := func() {
				if err := WriteSegment(runDir, seg, rows, eps); err != nil {
					t.Fatal(err)
				}
				rows, eps = nil, nil
				seg++
				segEnd += 100e3
			}
			for steps < budget {
				skill := 1 / (1 + math.Exp(-(float64(steps)-a.midpoint)/40e3))
				length := int64(20 + 460*skill + 15*rng.NormFloat64())
				length = max(10, min(500, length))
				steps += length
				episodes++
				eps = append(eps, EpisodeRow{Segment: seg, EnvSteps: steps, Return: float64(length), Length: length,
					PolicyVersion: step, Success: math.NaN()})
				if len(eps)%8 == 0 {
					rows = append(rows, MetricsRow{Segment: seg, Step: step, EnvSteps: steps, Updates: step + 1,
						WallS: float64(steps) / speed, EpisodeReturn: float64(length), Episodes: 8,
						Success: math.NaN(), StepsPerS: speed, GPUUtil: math.NaN(), GPUMem: math.NaN(),
						WMValLoss: math.NaN()})
					step++
				}
				if steps >= segEnd {
					flush()
				}
			}
			flush()
			sum := RunSummary{Status: status, EnvSteps: steps, Updates: step, Episodes: episodes, StepsPerS: speed,
				WallS: float64(steps) / speed, Segments: seg - 1, ParamsSHA256: "5d41402abc4b2a76b9719d911017c592",
				Updated: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
			if err := WriteJSON(filepath.Join(runDir, SummaryFile), sum); err != nil {
				t.Fatal(err)
			}
			man := RunManifest{Experiment: "demo", Arm: a.name, Seed: seed, Build: NewBuildInfo(), Hardware: NewHardware()}
			if err := WriteJSON(filepath.Join(runDir, RunFile), man); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
