package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
)

func TestInjectNaNFailsThatUpdateAndKeepsParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		// want is the learner's own non-finite error: the loss is the
		// first thing a NaN advantage (ppo) or reward (vtrace) reaches.
		want string
	}{
		{"ppo", func(*Config) {}, "loss is NaN"},
		{"vtrace", func(c *Config) { c.Learner = kernels.DefaultLearnerConfig(kernels.AlgoVTrace) }, "loss is NaN"},
		{"tokens-gipo", func(c *Config) {
			c.Env, c.Policy.Head, c.Policy.Bins, c.Learner.Algo = "pendulum", kernels.HeadTokens, 7, kernels.AlgoGIPO
		}, "loss is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig(ModeSync)
			tc.edit(&cfg)
			// The reference: two clean updates.
			ref := mustNew(t, cfg, nil)
			mustRun(t, ref, 2, nil)

			cfg.InjectNaNAtUpdate = 3
			e := mustNew(t, cfg, nil)
			var seen []int64
			st, err := e.Run(context.Background(), 5, func(u UpdateReport) { seen = append(seen, u.Update) })
			if err == nil || !strings.Contains(err.Error(), "update 3 (NaN injected by InjectNaNAtUpdate)") ||
				!strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want the learner's %q error for update 3", err, tc.want)
			}
			if st.Updates != 2 || len(seen) != 2 || e.PolicyVersion() != 2 || e.tr.learner.Updates != 2 {
				t.Fatalf("after the failure: %d updates (reports %v), version %d, learner updates %d; want 2",
					st.Updates, seen, e.PolicyVersion(), e.tr.learner.Updates)
			}
			// Sync mode is deterministic, so "unchanged" means "equal to two
			// clean updates", optimiser state included.
			if e.ParamsSHA256() != ref.ParamsSHA256() {
				t.Fatal("the failed update changed the parameters")
			}
			if e.tr.learner.Opt.T != ref.tr.learner.Opt.T {
				t.Fatalf("adam step count %d, want %d", e.tr.learner.Opt.T, ref.tr.learner.Opt.T)
			}
			snap, err := e.Snapshot()
			if err != nil {
				t.Fatalf("snapshot after the failed update: %v", err)
			}
			if i := indexNonFinite(snap.Params); i >= 0 {
				t.Fatalf("snapshot parameter %d is %v", i, snap.Params[i])
			}
		})
	}
}

func TestSnapshotRefusesNonFiniteState(t *testing.T) {
	e := mustNew(t, smallConfig(ModeSync), nil)
	e.tr.model().Params()[5] = math.NaN()
	if _, err := e.Snapshot(); err == nil || !strings.Contains(err.Error(), "parameter 5 is NaN") {
		t.Fatalf("Snapshot with a NaN parameter = %v, want a refusal naming parameter 5", err)
	}
	e.tr.model().Params()[5] = 0
	e.tr.learner.Opt.V[2] = math.Inf(1)
	if _, err := e.Snapshot(); err == nil || !strings.Contains(err.Error(), "adam second moment 2 is +Inf") {
		t.Fatalf("Snapshot with an infinite Adam moment = %v, want a refusal", err)
	}
}

func indexNonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}
