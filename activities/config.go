package activities

import (
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// EngineConfig translates an arm's resolved spec into the engine's configuration.
// totalUpdates is the run's planned number of updates, over which the learning rate anneals.
func EngineConfig(c specs.Config, seed uint64, totalUpdates int) engine.Config {
	return engine.Config{
		Env:             c.Env.Kind,
		MaxEpisodeSteps: c.Env.MaxEpisodeSteps,
		Latency: testenv.Latency{
			Kind:         c.Env.Latency.Kind,
			Median:       c.Env.Latency.Median,
			Sigma:        c.Env.Latency.Sigma,
			SlowFraction: c.Env.Latency.SlowFraction,
			SlowFactor:   c.Env.Latency.SlowFactor,
		},
		Mode:           c.Pipeline.Mode,
		Workers:        c.Pipeline.Workers,
		EnvsPerWorker:  c.Pipeline.EnvsPerWorker,
		ChunkSteps:     c.Pipeline.ChunkSteps,
		ReplayCapacity: c.Pipeline.ReplayCapacity,
		MaxStaleness:   c.Pipeline.MaxStaleness,
		Lag:            c.Pipeline.Lag,
		MaxBatch:       c.Pipeline.Inference.MaxBatch,
		MaxWait:        c.Pipeline.Inference.MaxWait,
		BatchSteps:     c.Algorithm.BatchSteps,
		Gamma:          c.Algorithm.Gamma,
		GAELambda:      c.Algorithm.GAELambda,
		// advantage_norm picks where advantages are normalised: over the whole training
		// batch ("global"), per minibatch as CleanRL does ("batch"), or not at all; the
		// older norm_adv = false switches both off.
		GlobalAdvNorm:   c.Algorithm.NormAdv && c.Algorithm.AdvantageNorm == specs.AdvantageNormGlobal,
		RecomputeValues: c.Algorithm.RecomputeValues,
		Hidden:          append([]int(nil), c.Policy.Hidden...),
		Activation:      c.Policy.Activation,
		PPO: kernels.PPOConfig{
			LR:            c.Algorithm.LearningRate,
			ClipCoef:      c.Algorithm.Clip,
			ValueCoef:     c.Algorithm.ValueCoef,
			EntropyCoef:   c.Algorithm.EntropyCoef,
			MaxGradNorm:   c.Algorithm.MaxGradNorm,
			Epochs:        c.Algorithm.Epochs,
			Minibatches:   c.Algorithm.Minibatches,
			NormAdv:       c.Algorithm.NormAdv && c.Algorithm.AdvantageNorm == specs.AdvantageNormBatch,
			ClipValueLoss: true,
		},
		AnnealLR:     c.Algorithm.AnnealLR,
		TotalUpdates: totalUpdates,
		Seed:         seed,
	}
}
