package engine

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
)

// headCase is one action head with a representative loss.
type headCase struct {
	name  string
	reach bool // use the two-dimensional reachEnv instead of cfg.Env
	edit  func(*Config)
}

var headCases = []headCase{
	{"categorical-ppo-cartpole", false, func(*Config) {}},
	{"categorical-vtrace-acrobot", false, func(c *Config) {
		c.Env = testenv.KindAcrobot
		c.Learner = kernels.DefaultLearnerConfig(kernels.AlgoVTrace)
	}},
	{"tokens-gipo-pendulum", false, func(c *Config) {
		c.Env, c.Policy.Head, c.Policy.Bins = testenv.KindPendulum, kernels.HeadTokens, 16
		c.Learner.Algo = kernels.AlgoGIPO
	}},
	{"tokens-vtrace-reach", true, func(c *Config) {
		c.Env, c.Policy.Head, c.Policy.Bins, c.Policy.EmbedDim = testenv.KindPendulum, kernels.HeadTokens, 8, 4
		c.Learner = kernels.DefaultLearnerConfig(kernels.AlgoVTrace)
	}},
	{"gaussian-sapo-pendulum", false, func(c *Config) {
		c.Env, c.Policy.Head = testenv.KindPendulum, kernels.HeadGaussian
		c.Learner.Algo = kernels.AlgoSAPO
	}},
	{"gaussian-ppo-kl-reach", true, func(c *Config) {
		c.Env, c.Policy.Head = testenv.KindMountainCarContinuous, kernels.HeadGaussian
		c.Learner.KLCoef = 0.1
		c.Learner.AdvNorm = kernels.AdvNormGlobal
	}},
}

func (h headCase) engine(t *testing.T, cfg Config, snap *Snapshot) *Engine {
	t.Helper()
	return h.engineLat(t, cfg, snap, testenv.Latency{})
}

// engineLat is engine with the simulated step latency lat (testenv simulators only).
func (h headCase) engineLat(t *testing.T, cfg Config, snap *Snapshot, lat testenv.Latency) *Engine {
	t.Helper()
	if h.reach {
		return newReachEngine(t, cfg, snap)
	}
	return mustNewLat(t, cfg, snap, lat)
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func TestHeadsAndAlgorithms(t *testing.T) {
	for _, h := range headCases {
		t.Run(h.name, func(t *testing.T) {
			cfg := smallConfig(ModeSync)
			cfg.Lag = 1
			h.edit(&cfg)
			e := h.engine(t, cfg, nil)
			tps, shape := e.tr.model().TokensPerStep(), e.shape
			var reports []UpdateReport
			mustRun(t, e, 3, func(u UpdateReport) { reports = append(reports, u) })
			if len(reports) != 3 {
				t.Fatalf("%d reports, want 3", len(reports))
			}
			for _, u := range reports {
				s := u.Stats
				if !finite(s.PolicyLoss, s.ValueLoss, s.Entropy, s.ApproxKL, s.GradNorm, s.Lag.ApproxKL, s.Lag.MaxAbsLogRatio) ||
					!(s.LR > 0) || s.LR != u.LR {
					t.Fatalf("update %d: non-finite or missing stats %+v", u.Update, s)
				}
				if s.Lag.Tokens != u.BatchSteps*tps {
					t.Fatalf("update %d: lag over %d tokens, want %d steps × %d tokens", u.Update, s.Lag.Tokens, u.BatchSteps, tps)
				}
				for _, f := range []float64{s.ClipFrac, s.LowWeightFrac, s.Lag.ClipFrac, s.Lag.LowWeightFrac} {
					if !(f >= 0 && f <= 1) {
						t.Fatalf("update %d: fraction %v outside [0, 1] in %+v", u.Update, f, s)
					}
				}
				if !(s.ESS > 0 && s.ESS <= 1+1e-12) || !(s.Lag.ESS > 0 && s.Lag.ESS <= 1+1e-12) { // ESS ≤ 1 up to rounding
					t.Fatalf("update %d: ESS %v, lag ESS %v outside (0, 1]", u.Update, s.ESS, s.Lag.ESS)
				}
			}
			// Update 1 trains on data acted by the very parameters it
			// starts from: every ratio is 1 up to the rounding difference
			// between one-row sampling and the batched evaluation (1e-9 is
			// far above float64 noise on these small logits, far below any
			// real policy change).
			if l := reports[0].Stats.Lag; l.MaxAbsLogRatio > 1e-9 || l.ClipFrac != 0 || math.Abs(l.ESS-1) > 1e-9 {
				t.Fatalf("update 1 is on-policy but its lag stats are %+v", l)
			}
			// With Lag 1, update 2's data was acted by version 0 while the
			// trainer holds version 1: the ratios must show it.
			if l := reports[1].Stats.Lag; !(l.MaxAbsLogRatio > 1e-9) || !(l.ApproxKL > 0) {
				t.Fatalf("update 2 trains on one-version-old data but its lag stats are %+v", l)
			}
			b := &e.tr.batch
			if len(b.Actions) != b.N*shape.Tokens || len(b.ContActions) != b.N*shape.Reals || len(b.LogProbs) != b.N*tps {
				t.Fatalf("batch of %d steps has %d tokens, %d reals, %d log-probs; shape %+v",
					b.N, len(b.Actions), len(b.ContActions), len(b.LogProbs), shape)
			}

			// The same configuration runs asynchronously.
			cfg.Mode = ModeAsync
			a := h.engineLat(t, cfg, nil, constLatency(100*time.Microsecond))
			st, err := a.Run(context.Background(), 2, func(u UpdateReport) {
				if !finite(u.Stats.PolicyLoss, u.Stats.ValueLoss, u.Stats.Lag.ESS) {
					t.Errorf("async update %d: non-finite stats %+v", u.Update, u.Stats)
				}
			})
			if err != nil || st.Updates != 2 {
				t.Fatalf("async: %d updates, err %v", st.Updates, err)
			}
		})
	}
}

func TestTwoDimTokensHeadDeterministicAndResumable(t *testing.T) {
	h := headCases[3] // tokens head, two action dimensions, vtrace
	cfg := smallConfig(ModeSync)
	cfg.Lag = 1
	h.edit(&cfg)
	cfg.Learner.Algo = kernels.AlgoPPO // with GAE, value recomputation and batch normalisation
	cfg.Learner.Epochs, cfg.Learner.Minibatches = 2, 2
	cfg.Learner.AdvNorm = kernels.AdvNormBatch
	cfg.RecomputeValues = true
	const n, k = 5, 2

	a := h.engine(t, cfg, nil)
	mustRun(t, a, n, nil)
	b := h.engine(t, cfg, nil)
	mustRun(t, b, k, nil)
	c := h.engine(t, cfg, snapshot(t, b))
	st := mustRun(t, c, n-k, nil)
	if c.ParamsSHA256() != a.ParamsSHA256() || st.Updates != n {
		t.Fatalf("two action tokens per step: resumed run differs (%d updates)", st.Updates)
	}
	if tps := a.tr.model().TokensPerStep(); tps != 2 {
		t.Fatalf("reach tokens head has %d tokens per step, want 2", tps)
	}
}
