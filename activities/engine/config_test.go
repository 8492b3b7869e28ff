package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // substring of the error
	}{
		{"unknown head", func(c *Config) { c.Policy.Head = "beta" }, "unknown head"},
		{"bins", func(c *Config) { c.Env, c.Policy.Head, c.Policy.Bins = "pendulum", kernels.HeadTokens, 1 }, "bins must be at least 2"},
		{"budget", func(c *Config) { c.MaxEnvSteps = -1 }, "max env steps"},
		{"nan hook", func(c *Config) { c.InjectNaNAtUpdate = -1 }, "inject nan"},
		{"mode", func(c *Config) { c.Mode = "lockstep" }, "mode must be"},
		{"workers", func(c *Config) { c.Workers = 0 }, "workers and envs per worker"},
		{"chunk", func(c *Config) { c.ChunkSteps = 0 }, "chunk steps"},
		{"replay below batch", func(c *Config) { c.ReplayCapacity = c.BatchSteps - 1 }, "replay capacity"},
		{"staleness below lag", func(c *Config) { c.MaxStaleness, c.Lag = 1, 2 }, "every sample would be dropped"},
		{"max batch", func(c *Config) { c.MaxBatch = 0 }, "max batch"},
		{"max wait", func(c *Config) { c.MaxWait = jsondur.Duration(-time.Millisecond) }, "max wait"},
		{"gamma", func(c *Config) { c.Learner.Gamma = 0 }, "gamma"},
		{"lambda", func(c *Config) { c.GAELambda = 1.5 }, "gae lambda"},
		{"activation", func(c *Config) { c.Policy.Activation = "gelu" }, "activation"},
		{"learning rate", func(c *Config) { c.Learner.Schedule.Base = 0 }, "learning rate"},
		{"algorithm", func(c *Config) { c.Learner.Algo = "trpo" }, "unknown algorithm"},
		{"adv norm", func(c *Config) { c.Learner.AdvNorm = "rank" }, "advantage normalisation"},
		{"minibatches", func(c *Config) { c.Learner.Minibatches = c.BatchSteps + 1 }, "minibatches cannot be filled"},
		{"schedule", func(c *Config) { c.Learner.Schedule.Kind, c.Learner.Schedule.Total = kernels.LRCosine, 0 }, "total updates"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
		if _, err := New(c, nil, testEnvs(c, testenv.Latency{})); err == nil {
			t.Errorf("%s: New accepted an invalid config", tc.name)
		}
	}
	// What depends on the environments is New's to check: it has them.
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // substring of the error
	}{
		{"unknown env", func(c *Config) { c.Env = "chess" }, "unknown kind"},
		{"categorical on continuous env", func(c *Config) { c.Env = "pendulum" }, `policy head "categorical" needs a discrete action space`},
		{"tokens on discrete env", func(c *Config) { c.Policy.Head = kernels.HeadTokens }, `policy head "tokens" needs a continuous action space`},
		{"gaussian on discrete env", func(c *Config) { c.Env, c.Policy.Head = "acrobot", kernels.HeadGaussian }, `policy head "gaussian" needs a continuous action space`},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v, want nil (only New knows the environments)", tc.name, err)
		}
		if _, err := New(c, nil, testEnvs(c, testenv.Latency{})); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New() = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	// Two problems are both reported.
	c := DefaultConfig()
	c.Learner.Gamma, c.MaxBatch = 2, 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "gamma") || !strings.Contains(err.Error(), "max batch") {
		t.Errorf("Validate() = %v, want both gamma and max batch", err)
	}
}

func TestEffectiveReplayAndChunk(t *testing.T) {
	c := DefaultConfig() // 8 envs, batch 512, chunk 64, capacity 8192
	c.ReplayCapacity = 512
	if got := c.replayCapacity(); got != 512+64-1 {
		t.Errorf("async capacity %d, want 575 (a batch plus a chunk less one step)", got)
	}
	c.Mode = ModeSync
	c.BatchSteps = 500 // ceil(500/8) = 63 steps per env per round = 504
	if c.RoundSteps() != 63 || c.replayCapacity() != 512 || c.chunkSteps() != 63 {
		t.Errorf("sync: round %d, capacity %d, chunk %d; want 63, 512, 63", c.RoundSteps(), c.replayCapacity(), c.chunkSteps())
	}
	c.ReplayCapacity = 500
	if c.replayCapacity() != 504 {
		t.Errorf("sync capacity %d, want one whole round (504)", c.replayCapacity())
	}
}

func TestDurationHistQuantiles(t *testing.T) {
	var h durationHist
	if h.quantileMs(0.5) != 0 || h.meanMs() != 0 {
		t.Fatal("empty histogram should report 0")
	}
	// 90 waits of 1 ms and 10 of 10 ms: p50 is 1 ms, p99 10 ms, mean 1.9 ms.
	for range 90 {
		h.add(time.Millisecond)
	}
	for range 10 {
		h.add(10 * time.Millisecond)
	}
	// Buckets are 1/16 of a doubling wide and quantiles report the bucket's
	// geometric middle: relative error at most 2^(1/32)−1 < 2.2%.
	for _, c := range []struct{ q, want float64 }{{0.5, 1}, {0.9, 1}, {0.91, 10}, {0.99, 10}} {
		if got := h.quantileMs(c.q); got < c.want/1.022 || got > c.want*1.022 {
			t.Errorf("q%.2f = %v ms, want %v ms within 2.2%%", c.q, got, c.want)
		}
	}
	if got := h.meanMs(); got != 1.9 {
		t.Errorf("mean %v ms, want 1.9 (exact sum)", got)
	}
	var g durationHist
	g.add(0)
	g.merge(&h)
	if g.n != 101 || g.quantileMs(0) != 0.5e-3 {
		t.Errorf("merged: n %d, q0 %v; want 101 and the sub-µs bucket", g.n, g.quantileMs(0))
	}
}
