package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/accerl/accerl/jsondur"
)

// BenchConfig configures BenchThroughput.
type BenchConfig struct {
	// Config is the workload; its Mode is overridden per phase.
	Config Config `json:"config"`
	// Envs makes each mode's environments (the composition root supplies simulators with
	// their step latency); Workload describes them for the JSON.
	Envs     func(Config) EnvFactory `json:"-"`
	Workload string                  `json:"workload"`
	// Rounds is the number of (sync, async) phase pairs; phases alternate
	// sync, async, sync, async, … so that slow drifts of the machine
	// (other processes, thermal state) hit both modes alike.
	Rounds int `json:"rounds"`
	// PhaseDuration is the wall time of one phase.
	PhaseDuration jsondur.Duration `json:"phase_duration"`
	// OnPhase, if set, is called after every phase (progress output).
	OnPhase func(BenchPhase) `json:"-"`
}

// DefaultBenchConfig is the AcceRL-style throughput workload without its
// environments, which the caller supplies in Envs (activities.ThroughputBench:
// 64 CartPole environments (16 workers × 4) whose steps take a lognormal delay
// with median 5 ms and σ = 1 (mean 8.2 ms), the first 25% of workers 3×
// slower): a 64-64 tanh MLP; 1024 environment steps per update (a sync round is then
// 16 steps per environment: long enough for the heavy tail to matter, short
// enough that updates stay frequent); 32-step chunks; two rounds of 10 s
// phases.
//
// MaxWait is 0: a batch is whatever queued up while the previous batch was
// computing. On a CPU that is the right setting for this workload. Every
// environment pays the wait on every step, and Go timers on Linux do not
// wait less than about 1.1 ms when the process is otherwise idle, so any
// positive MaxWait costs a 5 ms-median simulator over 10% of its
// throughput, while a 64-64 MLP gains little from large batches (about
// 10 µs per request either way). The AcceRL default of 5 ms is meant for GPU
// inference of large policies; set Config.MaxWait to measure it.
func DefaultBenchConfig() BenchConfig {
	cfg := DefaultConfig()
	cfg.Env = "cartpole"
	cfg.Workers, cfg.EnvsPerWorker = 16, 4
	cfg.ChunkSteps = 32
	cfg.BatchSteps = 1024
	cfg.ReplayCapacity = 8192
	cfg.MaxBatch = 256
	cfg.MaxWait = 0
	cfg.Policy.Hidden = []int{64, 64}
	cfg.Seed = 1
	return BenchConfig{Config: cfg, Rounds: 2, PhaseDuration: jsondur.Duration(10 * time.Second)}
}

// BenchPhase is one measured phase.
type BenchPhase struct {
	Mode  string       `json:"mode"`
	Round int          `json:"round"`
	Stats SegmentStats `json:"stats"`
}

// BenchMode aggregates the phases of one mode.
type BenchMode struct {
	// Wall, EnvSteps and Updates add up the phases.
	Wall     jsondur.Duration `json:"wall"`
	EnvSteps int64            `json:"env_steps"`
	Updates  int64            `json:"updates"`
	// StepsPerS is EnvSteps / Wall.
	StepsPerS float64 `json:"steps_per_s"`
	// CeilingStepsPerS is the wall-weighted mean of the phases' ceilings
	// and CeilingFraction = StepsPerS / CeilingStepsPerS.
	CeilingStepsPerS float64 `json:"ceiling_steps_per_s"`
	CeilingFraction  float64 `json:"ceiling_fraction"`
	// MeanBatch is the mean inference batch size over all batches,
	// MeanWaitingAtBatch the mean number of requests queued when a batch
	// formed, and BatchShare their ratio (the share of waiting
	// environments a batch served).
	MeanBatch          float64 `json:"mean_batch"`
	MeanWaitingAtBatch float64 `json:"mean_waiting_at_batch"`
	BatchShare         float64 `json:"batch_share"`
	// P50WaitMs is the batch-weighted mean of the phases' medians and
	// P99WaitMs the largest phase p99 (phases keep no raw waits).
	P50WaitMs float64 `json:"p50_wait_ms"`
	P99WaitMs float64 `json:"p99_wait_ms"`
	// TrainerBusy and RolloutIdle are wall-weighted means.
	TrainerBusy float64 `json:"trainer_busy"`
	RolloutIdle float64 `json:"rollout_idle"`
}

// BenchResult is BenchThroughput's outcome.
type BenchResult struct {
	Config BenchConfig `json:"bench_config"`
	Sync   BenchMode   `json:"sync"`
	Async  BenchMode   `json:"async"`
	// Ratio is Async.StepsPerS / Sync.StepsPerS.
	Ratio  float64      `json:"async_sync_ratio"`
	Phases []BenchPhase `json:"phases"`
}

// BenchThroughput measures environment throughput of the same workload in
// sync and async mode. It builds one engine per mode and alternates phases
// of PhaseDuration each (sync first), each phase a Run stopped by its
// deadline, so both engines keep training across their phases.
func BenchThroughput(ctx context.Context, cfg BenchConfig) (*BenchResult, error) {
	if cfg.Rounds < 1 || cfg.PhaseDuration <= 0 {
		return nil, fmt.Errorf("bench throughput: rounds (%d) and phase duration (%v) must be positive", cfg.Rounds, cfg.PhaseDuration)
	}
	if cfg.Envs == nil {
		return nil, errors.New("bench throughput: no environments (BenchConfig.Envs)")
	}
	engines := map[string]*Engine{}
	for _, mode := range []string{ModeSync, ModeAsync} {
		c := cfg.Config
		c.Mode = mode
		e, err := New(c, nil, cfg.Envs(c))
		if err != nil {
			return nil, fmt.Errorf("bench throughput: %w", err)
		}
		engines[mode] = e
	}
	res := &BenchResult{Config: cfg}
	for round := range cfg.Rounds {
		for _, mode := range []string{ModeSync, ModeAsync} {
			phaseCtx, cancel := context.WithTimeout(ctx, cfg.PhaseDuration.Std())
			// Far more updates than a phase can finish: the deadline ends it.
			st, err := engines[mode].Run(phaseCtx, 1<<30, nil)
			cancel()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("bench throughput: %w", ctx.Err())
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("bench throughput: %s phase %d: %w", mode, round, err)
			}
			p := BenchPhase{Mode: mode, Round: round, Stats: st}
			res.Phases = append(res.Phases, p)
			if cfg.OnPhase != nil {
				cfg.OnPhase(p)
			}
		}
	}
	res.Sync = aggregate(res.Phases, ModeSync)
	res.Async = aggregate(res.Phases, ModeAsync)
	res.Ratio = ratio(res.Async.StepsPerS, res.Sync.StepsPerS)
	return res, nil
}

func aggregate(phases []BenchPhase, mode string) BenchMode {
	var m BenchMode
	var wall, ceil, busy, idle, batches, requests, waiting, p50 float64
	for _, p := range phases {
		if p.Mode != mode {
			continue
		}
		s := p.Stats
		w := s.Wall.Seconds()
		m.Wall += s.Wall
		m.EnvSteps += s.SegmentEnvSteps
		m.Updates += s.SegmentUpdates
		wall += w
		ceil += s.CeilingStepsPerS * w
		busy += s.TrainerBusy * w
		idle += s.RolloutIdle * w
		var b, r float64
		for k, c := range s.BatchSizeHist {
			b += float64(c)
			r += float64(k * c)
		}
		batches += b
		requests += r
		waiting += s.MeanWaitingAtBatch * b
		p50 += s.P50WaitMs * b
		m.P99WaitMs = max(m.P99WaitMs, s.P99WaitMs)
	}
	m.StepsPerS = ratio(float64(m.EnvSteps), wall)
	m.CeilingStepsPerS = ratio(ceil, wall)
	m.CeilingFraction = ratio(m.StepsPerS, m.CeilingStepsPerS)
	m.MeanBatch = ratio(requests, batches)
	m.MeanWaitingAtBatch = ratio(waiting, batches)
	m.BatchShare = ratio(m.MeanBatch, m.MeanWaitingAtBatch)
	m.P50WaitMs = ratio(p50, batches)
	m.TrainerBusy = ratio(busy, wall)
	m.RolloutIdle = ratio(idle, wall)
	return m
}
