package activities

import (
	"context"
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// The throughput benchmark's types, for the CLI (which does not import the engine).
type (
	ThroughputConfig = engine.BenchConfig
	ThroughputResult = engine.BenchResult
	ThroughputPhase  = engine.BenchPhase
	ThroughputMode   = engine.BenchMode
	// EngineSettings is the engine's configuration (engine.Config), which ThroughputConfig
	// carries; Envs the factory of an engine's environments.
	EngineSettings = engine.Config
	Envs           = engine.EnvFactory
)

// ThroughputLatency is the default throughput workload's simulated step latency: lognormal,
// median 5 ms, σ = 1 (mean 8.2 ms), the first 25% of the workers 3× slower — the wall time of
// an external physics simulator, not CPU work.
var ThroughputLatency = testenv.Latency{Kind: testenv.LatencyLognormal, Median: 5 * time.Millisecond, Sigma: 1,
	SlowFraction: 0.25, SlowFactor: 3}

// ThroughputBench returns the default throughput workload (engine.DefaultBenchConfig) with
// its environments: CartPole with ThroughputLatency.
func ThroughputBench() ThroughputConfig {
	cfg := engine.DefaultBenchConfig()
	cfg.Envs = func(c engine.Config) engine.EnvFactory {
		return LatencyEnvFactory(specs.Env{Kind: specs.EnvCartPole, MaxEpisodeSteps: c.MaxEpisodeSteps}, ThroughputLatency, c.Workers, c.EnvsPerWorker, c.Seed)
	}
	cfg.Workload = "cartpole, lognormal step latency median 5ms sigma 1, first 25% of workers 3x slower"
	return cfg
}

// BenchThroughput measures the same workload in sync and async mode (engine.BenchThroughput).
func BenchThroughput(ctx context.Context, cfg ThroughputConfig) (*ThroughputResult, error) {
	return engine.BenchThroughput(ctx, cfg)
}

// PipelineBench is the throughput workload of an arm: its resolved config c as TrainSegment
// runs it (EngineConfig, the arm's environments with their policy wrappers: action chunks,
// frames), with the simulated step latency lat instead of the spec's, measured in sync and
// async mode by engine.BenchThroughput. `accerl bench vla --pipeline` runs the micro-VLA
// through it.
func PipelineBench(c specs.Config, lat testenv.Latency, seed uint64, workload string) ThroughputConfig {
	return PipelineBenchMetered(c, lat, seed, workload, nil)
}

// PipelineBenchMetered is PipelineBench with a remote arm's connections counting their bytes
// and Step round trips in meter (`accerl bench throughput --remote N`).
func PipelineBenchMetered(c specs.Config, lat testenv.Latency, seed uint64, workload string, meter *envrpc.Meter) ThroughputConfig {
	cfg := engine.DefaultBenchConfig()
	cfg.Config = EngineConfig(c, seed, int(c.TotalUpdates()))
	cfg.Config.MaxEnvSteps = 0 // phases are timed, not budgeted
	cfg.Envs = func(ec engine.Config) engine.EnvFactory {
		return policyEnvFactory(c.Env, c.Policy, lat, ec.Workers, ec.EnvsPerWorker, ec.Seed, nil, meter)
	}
	cfg.Workload = workload
	return cfg
}
