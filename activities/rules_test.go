package activities

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/specs"
)

// engineRuleCases pairs each rule that engine.Config.Validate enforces across fields with a
// spec that violates it. accerl validate must reject the spec (with the diagnostic and a
// subject inside the offending ablation), and the same violation applied to a valid config
// by hand must fail the engine's checks (engine.New: its Config.Validate, and the policy
// head against the environments' action space), so that no spec passes validate and then
// fails in its first segment.
var engineRuleCases = []struct {
	name     string
	ablation string                // the body of ablation "x", on top of ruleBase
	diag     string                // the diagnostic's summary
	mutate   func(c *specs.Config) // the same violation, applied by hand
	engine   string                // a phrase of the engine's own error
}{
	{
		name:     "minibatches above batch steps",
		ablation: "algorithm \"ppo\" {\n    minibatches = 16\n    batch_steps = 8\n  }",
		diag:     "More minibatches than batch steps",
		mutate:   func(c *specs.Config) { c.Algorithm.Minibatches, c.Algorithm.BatchSteps = 16, 8 },
		engine:   "minibatches cannot be filled",
	},
	{
		name:     "staleness bound below lag",
		ablation: "pipeline {\n    lag           = 3\n    max_staleness = 1\n  }",
		diag:     "Staleness bound below the policy lag",
		mutate:   func(c *specs.Config) { c.Pipeline.Lag, c.Pipeline.MaxStaleness = 3, 1 },
		engine:   "is below lag",
	},
	{
		name:     "categorical head on a continuous env",
		ablation: "env \"pendulum\" {}",
		diag:     "Action head does not suit the environment",
		mutate:   func(c *specs.Config) { c.Env.Kind, c.Env.MaxEpisodeSteps = specs.EnvPendulum, 200 },
		engine:   "needs a discrete action space",
	},
	{
		name:     "tokens head on a discrete env",
		ablation: "policy { action = \"tokens\" }",
		diag:     "Action head does not suit the environment",
		mutate:   func(c *specs.Config) { c.Policy.Action = specs.ActionTokens },
		engine:   "needs a continuous action space",
	},
	{
		name:     "warmup longer than the run",
		ablation: "algorithm \"ppo\" {\n    anneal_lr      = true\n    warmup_updates = 100\n  }",
		diag:     "Warmup longer than the run",
		mutate:   func(c *specs.Config) { c.Algorithm.AnnealLR, c.Algorithm.WarmupUpdates = true, 100 },
		engine:   "must exceed warmup",
	},
	{
		name:     "replay smaller than a batch",
		ablation: "pipeline { replay_capacity = 256 }",
		diag:     "Replay capacity smaller than batch",
		mutate:   func(c *specs.Config) { c.Pipeline.ReplayCapacity = 256 },
		engine:   "must hold batch steps",
	},
}

// ruleBase is a valid experiment; each case adds ablation "x". Its budget is 20 updates of
// 512 steps, so a warmup of 100 updates cannot fit.
const ruleBase = `experiment "rules" {
  budget { env_steps = 10240 }
  env "cartpole" {}
  algorithm "ppo" { batch_steps = 512 }
  pipeline { replay_capacity = 2048 }
  ablation "x" {
  %s
  }
}
`

func TestValidateRejectsEverySpecTheEngineWould(t *testing.T) {
	base, diags := specs.Parse("base.hcl", []byte(strings.Replace(ruleBase, "%s", "", 1)), nil)
	if diags.HasErrors() {
		t.Fatalf("the base spec must be valid: %v", diags)
	}
	baseCfg := base.Arms[0].Config
	if err := EngineConfig(baseCfg, 1, int(baseCfg.TotalUpdates())).Validate(); err != nil {
		t.Fatalf("the base config must pass the engine: %v", err)
	}
	for _, tc := range engineRuleCases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(ruleBase, "%s", tc.ablation, 1)
			_, diags := specs.Parse("rules.hcl", []byte(src), nil)
			d := findDiag(diags, tc.diag)
			if d == nil {
				t.Fatalf("validate did not report %q; got: %v", tc.diag, diags)
			}
			// The ablation starts on line 6 and ends 2 lines before the end of the file.
			last := strings.Count(src, "\n") - 2
			if d.Subject == nil || d.Subject.Start.Line < 6 || d.Subject.Start.Line > last {
				t.Errorf("diagnostic subject %v is not inside the ablation (lines 6-%d)", d.Subject, last)
			}
			if !strings.Contains(d.Detail, "Raise") && !strings.Contains(d.Detail, "Lower") && !strings.Contains(d.Detail, "Use") {
				t.Errorf("detail %q does not say how to fix it", d.Detail)
			}

			cfg := baseCfg.Clone()
			tc.mutate(&cfg)
			_, err := NewEngine(cfg, 1, int(cfg.TotalUpdates()), nil)
			if err == nil || !strings.Contains(err.Error(), tc.engine) {
				t.Errorf("the engine's check = %v, want an error containing %q (the rule this case stands for)", err, tc.engine)
			}
		})
	}
}

func findDiag(diags hcl.Diagnostics, summary string) *hcl.Diagnostic {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == summary {
			return d
		}
	}
	return nil
}
