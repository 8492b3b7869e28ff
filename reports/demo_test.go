package reports

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/accerl/accerl/runstore"
)

// demoTarget is the target return of the demo experiment (in its
// experiment.json).
const demoTarget = 400.0

// demoArm describes one arm of the demo experiment.
type demoArm struct {
	name      string
	stepsPerS float64
	midpoint  float64 // env steps at half the final return
	slowSeed  uint64  // this seed learns 300k steps later and misses the target; 0 for none
	async     bool    // staleness > 0, dynamic inference batches
	wm        bool    // world model: horizon and validation loss columns
}

// writeDemo writes a realistic-looking experiment under out/demo: three
// arms with different throughput and learning speed, three seeds each,
// noisy sigmoid learning curves, seeds of unequal length, one seed that
// never reaches the target, one run still going, every pipeline,
// utilisation and world-model column filled where it applies, and ten
// evaluation episodes after every segment. It returns
// the experiment directory. The golden-image test draws its figures, so a
// change here needs `go test ./reports -run Golden -regen`.
func writeDemo(t *testing.T, out string) string {
	t.Helper()
	dir := filepath.Join(out, "demo")
	arms := []demoArm{
		{name: "sync", stepsPerS: 4200, midpoint: 180e3},
		{name: "async", stepsPerS: 11800, midpoint: 200e3, slowSeed: 3, async: true},
		{name: "async-wm", stepsPerS: 10100, midpoint: 120e3, async: true, wm: true},
	}
	seeds := []uint64{1, 2, 3}
	m := runstore.ExperimentManifest{Name: "demo", SpecHash: "9c1e5f0a77d2", Baseline: "sync", Seeds: seeds, Target: new(demoTarget)}
	for _, a := range arms {
		m.Arms = append(m.Arms, a.name)
	}
	if err := runstore.WriteJSON(filepath.Join(dir, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	for ai, a := range arms {
		for _, seed := range seeds {
			writeDemoRun(t, dir, a, ai, seed)
		}
	}
	return dir
}

func writeDemoRun(t *testing.T, dir string, a demoArm, ai int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(ai)))
	runDir := runstore.RunDir(dir, a.name, seed)
	budget := int64(500e3)
	status := runstore.StatusCompleted
	if a.name == "async-wm" && seed == 3 {
		budget, status = 340e3, runstore.StatusRunning
	}
	mid := a.midpoint
	if seed == a.slowSeed {
		mid += 300e3
	}
	speed := a.stepsPerS * (1 + 0.05*rng.NormFloat64())
	// Evaluations draw from their own stream, so that the training data,
	// and with it the golden images of the other figures, do not depend on
	// them.
	evalRng := rand.New(rand.NewPCG(seed, 100+uint64(ai)))
	var steps, episodes int64
	var eps []runstore.EpisodeRow
	var rows []runstore.MetricsRow
	seg, segEnd := int32(1), int64(100e3)
	step := int64(0)
	flush := func() {
		if n := len(rows); n > 0 {
			// Ten evaluation episodes with the current policy after the
			// segment: without exploration noise they score a little
			// higher than the training episodes.
			skill := 1 / (1 + math.Exp(-(float64(steps)-mid)/40e3))
			rows[n-1].EvalReturn = math.Max(10, math.Min(500, 20+475*skill+8*evalRng.NormFloat64()))
			rows[n-1].EvalEpisodes = 10
		}
		if err := runstore.WriteSegment(runDir, seg, rows, eps); err != nil {
			t.Fatal(err)
		}
		rows, eps = nil, nil
		seg++
		segEnd += 100e3
	}
	for steps < budget {
		skill := 1 / (1 + math.Exp(-(float64(steps)-mid)/40e3))
		length := int64(20 + 460*skill + 15*rng.NormFloat64())
		length = max(10, min(500, length))
		steps += length
		episodes++
		eps = append(eps, runstore.EpisodeRow{Segment: seg, EnvSteps: steps, Return: float64(length), Length: length,
			PolicyVersion: step, Success: math.NaN()})
		if len(eps)%8 == 0 {
			rows = append(rows, demoMetrics(rng, a, seg, step, steps, speed, float64(length)))
			step++
		}
		if steps >= segEnd {
			flush()
		}
	}
	flush()
	sum := runstore.RunSummary{Status: status, EnvSteps: steps, Updates: step, Episodes: episodes, StepsPerS: speed,
		WallS: float64(steps) / speed, Segments: seg - 1, ParamsSHA256: "5d41402abc4b2a76b9719d911017c592",
		Updated: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	if err := runstore.WriteJSON(filepath.Join(runDir, runstore.SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	// A fixed manifest (not runstore.NewBuildInfo/NewHardware) keeps the golden
	// report independent of the machine that runs the test.
	man := runstore.RunManifest{Experiment: "demo", Arm: a.name, Seed: seed, SpecHash: "9c1e5f0a77d2",
		Build:    runstore.BuildInfo{GoVersion: "go1.26.8", Module: "github.com/accerl/accerl", Version: "(devel)"},
		Hardware: runstore.Hardware{CPUs: 16, CPUModel: "Demo CPU @ 3.0GHz", GPU: "NVIDIA H200", Platform: "linux/amd64"}}
	if err := runstore.WriteJSON(filepath.Join(runDir, runstore.RunFile), man); err != nil {
		t.Fatal(err)
	}
}

// demoMetrics is one metrics row of the demo: sync arms run lock-step
// (no staleness, full batches of 64, short waits, idle CPU while the
// trainer works); async arms keep the machine busy at the cost of some
// policy lag and a heavier tail of inference waits.
func demoMetrics(rng *rand.Rand, a demoArm, seg int32, step, steps int64, speed, ret float64) runstore.MetricsRow {
	r := runstore.MetricsRow{Segment: seg, Step: step, EnvSteps: steps, Updates: step + 1,
		WallS: float64(steps) / speed, EpisodeReturn: ret, Episodes: 8,
		Success: math.NaN(), StepsPerS: speed * (1 + 0.03*rng.NormFloat64()),
		Horizon: math.NaN(), WMValLoss: math.NaN(), EvalReturn: math.NaN()}
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	if a.async {
		r.Staleness = clamp(1.6+0.6*rng.NormFloat64(), 0, 6)
		r.InferenceBatch = clamp(42+9*rng.NormFloat64(), 1, 64)
		r.QueueWaitMs = 2 + rng.ExpFloat64()*2.5
		r.TrainerBusy = clamp(0.9+0.04*rng.NormFloat64(), 0, 1)
		r.CPUUtil = clamp(0.88+0.04*rng.NormFloat64(), 0, 1)
		r.GPUUtil = clamp(0.82+0.05*rng.NormFloat64(), 0, 1)
		r.GPUMem = (34 + 0.3*rng.NormFloat64()) * (1 << 30)
	} else {
		r.Staleness = 0
		r.InferenceBatch = 64
		r.QueueWaitMs = 0.6 + rng.ExpFloat64()*0.4
		r.TrainerBusy = clamp(0.45+0.05*rng.NormFloat64(), 0, 1)
		r.CPUUtil = clamp(0.52+0.08*rng.NormFloat64(), 0, 1)
		r.GPUUtil = clamp(0.38+0.1*rng.NormFloat64(), 0, 1)
		r.GPUMem = (30 + 0.2*rng.NormFloat64()) * (1 << 30)
	}
	if a.wm {
		// The validation loss falls from 1 towards 0.08; the horizon
		// schedule raises H from 5 to 50 as the loss falls below 0.6.
		loss := 0.08 + 0.92*math.Exp(-float64(steps)/90e3)
		r.WMValLoss = loss * (1 + 0.05*rng.NormFloat64())
		r.Horizon = math.Round(clamp(5+45*(0.6-loss)/0.52, 5, 50))
	}
	return r
}
