package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
)

// TestBenchThroughputReport runs the default throughput benchmark when
// ACCERL_BENCH is set (it takes about 45 s) and logs the result as JSON.
// ACCERL_BENCH_MAXWAIT overrides MaxWait (a Go duration).
func TestBenchThroughputReport(t *testing.T) {
	if os.Getenv("ACCERL_BENCH") == "" {
		t.Skip("set ACCERL_BENCH=1 to run the throughput benchmark")
	}
	cfg := DefaultBenchConfig()
	if s := os.Getenv("ACCERL_BENCH_MAXWAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Config.MaxWait = jsondur.Duration(d)
	}
	cfg.OnPhase = func(p BenchPhase) {
		t.Logf("%s round %d: %.0f steps/s, ceiling %.0f (%.1f%%), batch %.1f of %.1f waiting, p50 %.2f ms p99 %.2f ms, trainer busy %.2f, rollout idle %.2f, updates %d",
			p.Mode, p.Round, p.Stats.StepsPerS, p.Stats.CeilingStepsPerS, 100*p.Stats.CeilingFraction,
			p.Stats.MeanBatch, p.Stats.MeanWaitingAtBatch, p.Stats.P50WaitMs, p.Stats.P99WaitMs,
			p.Stats.TrainerBusy, p.Stats.RolloutIdle, p.Stats.SegmentUpdates)
	}
	res, err := BenchThroughput(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res.Phases = nil
	out, _ := json.MarshalIndent(struct {
		Sync, Async BenchMode
		Ratio       float64
	}{res.Sync, res.Async, res.Ratio}, "", "  ")
	t.Logf("result:\n%s", out)
}

func TestBenchAggregate(t *testing.T) {
	phases := []BenchPhase{
		{Mode: ModeAsync, Stats: SegmentStats{Wall: jsondur.Duration(time.Second), SegmentEnvSteps: 100, SegmentUpdates: 1,
			CeilingStepsPerS: 200, BatchSizeHist: []int{0, 2, 1}, MeanWaitingAtBatch: 2, P50WaitMs: 1, P99WaitMs: 4,
			TrainerBusy: 0.5, RolloutIdle: 0.2}},
		{Mode: ModeSync, Stats: SegmentStats{Wall: jsondur.Duration(time.Hour), SegmentEnvSteps: 1}},
		{Mode: ModeAsync, Stats: SegmentStats{Wall: jsondur.Duration(3 * time.Second), SegmentEnvSteps: 500, SegmentUpdates: 2,
			CeilingStepsPerS: 100, BatchSizeHist: []int{0, 0, 0, 1}, MeanWaitingAtBatch: 3, P50WaitMs: 5, P99WaitMs: 3,
			TrainerBusy: 0.1, RolloutIdle: 0.6}},
	}
	m := aggregate(phases, ModeAsync)
	// 600 steps in 4 s; ceiling (200·1 + 100·3)/4 = 125; 7 requests in 4
	// batches; waiting (2·3 + 3·1)/4 = 2.25; p50 (1·3 + 5·1)/4 = 2; p99 the
	// larger one; busy (0.5 + 0.3)/4 = 0.2; idle (0.2 + 1.8)/4 = 0.5.
	want := BenchMode{Wall: jsondur.Duration(4 * time.Second), EnvSteps: 600, Updates: 3, StepsPerS: 150, CeilingStepsPerS: 125,
		CeilingFraction: 1.2, MeanBatch: 1.75, MeanWaitingAtBatch: 2.25, BatchShare: 1.75 / 2.25,
		P50WaitMs: 2, P99WaitMs: 4, TrainerBusy: 0.2, RolloutIdle: 0.5}
	// Weighted means of a few terms: a few ulps of rounding at most.
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if m.Wall != want.Wall || m.EnvSteps != want.EnvSteps || m.Updates != want.Updates ||
		!close(m.StepsPerS, want.StepsPerS) || !close(m.CeilingStepsPerS, want.CeilingStepsPerS) ||
		!close(m.CeilingFraction, want.CeilingFraction) || !close(m.MeanBatch, want.MeanBatch) ||
		!close(m.MeanWaitingAtBatch, want.MeanWaitingAtBatch) || !close(m.BatchShare, want.BatchShare) ||
		!close(m.P50WaitMs, want.P50WaitMs) || m.P99WaitMs != want.P99WaitMs ||
		!close(m.TrainerBusy, want.TrainerBusy) || !close(m.RolloutIdle, want.RolloutIdle) {
		t.Fatalf("aggregate = %+v\nwant        %+v", m, want)
	}
}

func TestBenchThroughputSmoke(t *testing.T) {
	cfg := BenchConfig{Config: smallConfig(ModeSync), Rounds: 1, PhaseDuration: jsondur.Duration(150 * time.Millisecond)}
	cfg.Envs = func(c Config) EnvFactory { return testEnvs(c, constLatency(time.Millisecond)) }
	var order []string
	cfg.OnPhase = func(p BenchPhase) { order = append(order, p.Mode) }
	res, err := BenchThroughput(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || order[0] != ModeSync || order[1] != ModeAsync || len(res.Phases) != 2 {
		t.Fatalf("phases ran in order %v, want [sync async]", order)
	}
	if res.Sync.EnvSteps == 0 || res.Async.EnvSteps == 0 {
		t.Fatalf("a mode collected nothing: sync %d, async %d steps", res.Sync.EnvSteps, res.Async.EnvSteps)
	}
	if res.Ratio != res.Async.StepsPerS/res.Sync.StepsPerS {
		t.Fatalf("ratio %v, want %v / %v", res.Ratio, res.Async.StepsPerS, res.Sync.StepsPerS)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("result does not encode: %v", err)
	}
	if _, err := BenchThroughput(context.Background(), BenchConfig{Config: cfg.Config}); err == nil {
		t.Fatal("zero rounds and duration accepted")
	}
}
