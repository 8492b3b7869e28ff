package engine

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
)

// Pipeline modes.
const (
	// ModeAsync decouples collection from training: rollout workers never
	// wait for the trainer and the trainer never waits for a slow worker,
	// only for enough data in the replay buffer.
	ModeAsync = "async"
	// ModeSync runs the same components lock-step: every environment
	// collects its share of a batch, then the trainer updates while
	// everything else waits. It is the throughput baseline and it is
	// bit-for-bit deterministic for a fixed Seed.
	ModeSync = "sync"
)

// Config configures an Engine. It is a plain JSON-serialisable struct;
// DefaultConfig returns a working one and Validate reports every problem.
type Config struct {
	// Env is the testenv kind ("cartpole", "acrobot"); the engine's policy is
	// categorical, so the kind needs a discrete action space.
	Env string `json:"env"`
	// MaxEpisodeSteps truncates episodes; 0 takes the kind's default.
	MaxEpisodeSteps int `json:"max_episode_steps"`
	// Latency is the simulated per-step delay of every environment; slow
	// workers are the first ones (worker indices 0 … NumSlow-1).
	Latency testenv.Latency `json:"latency"`

	// Mode is ModeAsync or ModeSync.
	Mode string `json:"mode"`
	// Workers is the number of rollout workers; EnvsPerWorker the number of
	// environments each owns. Every environment steps in its own goroutine.
	Workers       int `json:"workers"`
	EnvsPerWorker int `json:"envs_per_worker"`
	// ChunkSteps is the most steps per trajectory chunk pushed to replay;
	// smaller chunks reach the trainer sooner, larger ones bootstrap less.
	ChunkSteps int `json:"chunk_steps"`
	// ReplayCapacity is the replay buffer size in steps (oldest chunks are
	// evicted first). It must be at least BatchSteps; the engine raises it
	// internally to BatchSteps+ChunkSteps-1 in async mode and to one whole
	// round in sync mode so that a batch can always be assembled.
	ReplayCapacity int `json:"replay_capacity"`
	// MaxStaleness > 0 discards chunks holding a step whose acting policy is
	// more than this many versions behind the trainer; 0 keeps everything.
	MaxStaleness int `json:"max_staleness"`
	// Lag > 0 makes inference act with the weights published Lag versions
	// ago (artificial policy lag for ablations).
	Lag int `json:"lag"`
	// MaxBatch and MaxWait are the inference service's batching rule: a
	// batch runs at MaxBatch queued requests or when the oldest has waited
	// MaxWait. A longer MaxWait grows batches but adds to every step cycle.
	MaxBatch int           `json:"max_batch"`
	MaxWait  time.Duration `json:"max_wait"`
	// BatchSteps is the number of environment steps each update consumes.
	// In sync mode every environment collects ceil(BatchSteps/envs) steps
	// per round, so a round may hold slightly more.
	BatchSteps int `json:"batch_steps"`

	// Gamma is the discount and GAELambda the GAE λ.
	Gamma     float64 `json:"gamma"`
	GAELambda float64 `json:"gae_lambda"`
	// RecomputeValues recomputes V(o_t) with the current critic before GAE
	// (policy-lag compensation); otherwise the acting policy's values are
	// used.
	RecomputeValues bool `json:"recompute_values"`
	// GlobalAdvNorm normalises advantages over the whole batch, A ← (A−μ)/
	// sqrt(σ²+1e-8), before the update. Combine it with PPO.NormAdv = false
	// to avoid normalising again per minibatch.
	GlobalAdvNorm bool `json:"global_adv_norm"`

	// Hidden and Activation shape the MLP actor-critic (e.g. [64, 64],
	// "tanh").
	Hidden     []int  `json:"hidden"`
	Activation string `json:"activation"`
	// PPO holds the update's hyperparameters.
	PPO kernels.PPOConfig `json:"ppo"`
	// AnnealLR decays the learning rate linearly from PPO.LR towards 0 over
	// TotalUpdates updates (CleanRL's schedule: update u, counted from 0,
	// uses LR·(1−u/TotalUpdates); updates past the plan keep the last
	// planned rate LR/TotalUpdates).
	AnnealLR     bool `json:"anneal_lr"`
	TotalUpdates int  `json:"total_updates"`

	// Seed determines every random stream: initial weights, environment
	// resets, action sampling, minibatch shuffles and latency draws.
	Seed uint64 `json:"seed"`
}

// DefaultConfig returns a small async CartPole configuration with CleanRL's
// PPO hyperparameters and no simulated latency.
func DefaultConfig() Config {
	return Config{
		Env:            testenv.KindCartPole,
		Mode:           ModeAsync,
		Workers:        4,
		EnvsPerWorker:  2,
		ChunkSteps:     64,
		ReplayCapacity: 8192,
		MaxBatch:       256,
		MaxWait:        5 * time.Millisecond,
		BatchSteps:     512,
		Gamma:          0.99,
		GAELambda:      0.95,
		Hidden:         []int{64, 64},
		Activation:     "tanh",
		PPO:            kernels.DefaultPPOConfig(),
	}
}

// NumEnvs returns Workers × EnvsPerWorker.
func (c Config) NumEnvs() int { return c.Workers * c.EnvsPerWorker }

// RoundSteps returns the steps one environment collects per sync round,
// ceil(BatchSteps / NumEnvs).
func (c Config) RoundSteps() int {
	n := c.NumEnvs()
	return (c.BatchSteps + n - 1) / n
}

// replayCapacity is the capacity the engine really uses (see ReplayCapacity).
func (c Config) replayCapacity() int {
	if c.Mode == ModeSync {
		return max(c.ReplayCapacity, c.RoundSteps()*c.NumEnvs())
	}
	return max(c.ReplayCapacity, c.BatchSteps+c.ChunkSteps-1)
}

// chunkSteps is the effective chunk length: sync rounds cut chunks anyway.
func (c Config) chunkSteps() int {
	if c.Mode == ModeSync {
		return min(c.ChunkSteps, c.RoundSteps())
	}
	return c.ChunkSteps
}

// Validate reports every problem of c in one error.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if env, err := testenv.Make(c.Env, testenv.Options{MaxEpisodeSteps: c.MaxEpisodeSteps}); err != nil {
		errs = append(errs, err)
	} else if n := env.ActionSpace().N; n < 2 {
		bad("env %q has a continuous action space; the engine's categorical policy needs a discrete one", c.Env)
	}
	if err := c.Latency.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Mode != ModeAsync && c.Mode != ModeSync {
		bad("mode must be %q or %q, got %q", ModeAsync, ModeSync, c.Mode)
	}
	if c.Workers < 1 || c.EnvsPerWorker < 1 {
		bad("workers and envs per worker must be at least 1, got %d and %d", c.Workers, c.EnvsPerWorker)
	}
	if c.ChunkSteps < 1 {
		bad("chunk steps must be at least 1, got %d", c.ChunkSteps)
	}
	if c.BatchSteps < 1 {
		bad("batch steps must be at least 1, got %d", c.BatchSteps)
	}
	if c.ReplayCapacity < c.BatchSteps || c.ReplayCapacity < c.ChunkSteps {
		bad("replay capacity %d must hold batch steps (%d) and chunk steps (%d)", c.ReplayCapacity, c.BatchSteps, c.ChunkSteps)
	}
	if c.MaxStaleness < 0 || c.Lag < 0 {
		bad("max staleness and lag must not be negative, got %d and %d", c.MaxStaleness, c.Lag)
	}
	if c.MaxStaleness > 0 && c.MaxStaleness < c.Lag {
		bad("max staleness %d is below lag %d: every sample would be dropped", c.MaxStaleness, c.Lag)
	}
	if c.MaxBatch < 1 {
		bad("max batch must be at least 1, got %d", c.MaxBatch)
	}
	if c.MaxWait < 0 {
		bad("max wait must not be negative, got %v", c.MaxWait)
	}
	if !(c.Gamma > 0 && c.Gamma <= 1) {
		bad("gamma must be in (0, 1], got %v", c.Gamma)
	}
	if !(c.GAELambda >= 0 && c.GAELambda <= 1) {
		bad("gae lambda must be in [0, 1], got %v", c.GAELambda)
	}
	ac := kernels.ActorCriticConfig{ObsDim: 1, NumActions: 2, Hidden: c.Hidden, Activation: c.Activation}
	if err := ac.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.PPO.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.PPO.Minibatches > c.BatchSteps {
		bad("%d minibatches cannot be filled from %d batch steps", c.PPO.Minibatches, c.BatchSteps)
	}
	if c.AnnealLR && c.TotalUpdates < 1 {
		bad("anneal lr needs total updates >= 1, got %d", c.TotalUpdates)
	}
	if c.TotalUpdates < 0 {
		bad("total updates must not be negative, got %d", c.TotalUpdates)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("engine config: %w", err)
	}
	return nil
}

// learningRate is the rate for the update that follows `done` completed
// updates.
func (c Config) learningRate(done int64) float64 {
	if !c.AnnealLR {
		return c.PPO.LR
	}
	t := float64(c.TotalUpdates)
	frac := math.Max(1-float64(done)/t, 1/t)
	return c.PPO.LR * frac
}
