package specs

import (
	"strings"
	"testing"
)

// TestCriticWarmupAndSkipRewardless: algorithm.critic_warmup and skip_rewardless reach the
// arm, leave the hash of a spec that does not set them alone when off, and a warm-up that
// covers the whole run, or a negative one, is refused with the attribute's name and a fix.
func TestCriticWarmupAndSkipRewardless(t *testing.T) {
	spec := func(algo string) []byte { return algoSpec("ppo", algo, "") }
	parse := func(algo string) *Experiment {
		t.Helper()
		exp, diags := Parse("x.hcl", spec(algo), nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %v", algo, diags)
		}
		return exp
	}
	a := parse("critic_warmup = 3\n    skip_rewardless = true\n    positive_advantages = true").Arms[0].Config.Algorithm
	if a.CriticWarmup != 3 || !a.SkipRewardless || !a.PositiveAdvantages {
		t.Errorf("decoded critic_warmup %d, skip_rewardless %v, positive_advantages %v; want 3, true, true", a.CriticWarmup, a.SkipRewardless, a.PositiveAdvantages)
	}
	if h0, h1 := parse("").Hash, parse("critic_warmup = 0\n    skip_rewardless = false\n    positive_advantages = false").Hash; h0 != h1 {
		t.Errorf("writing the defaults changed the hash: %s vs %s", h1, h0)
	}
	for _, tc := range []struct{ algo, want string }{
		{"critic_warmup = -1", "algorithm.critic_warmup"},
		// 4096 env steps at 512 per update: 8 planned updates.
		{"critic_warmup = 8", "critic_warmup (8) covers all of the run's planned updates (8"},
	} {
		_, diags := Parse("x.hcl", spec(tc.algo), nil)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
			t.Errorf("%q: diagnostics %v, want an error containing %q", tc.algo, diags, tc.want)
		}
	}
	parse("critic_warmup = 7") // one policy update left: allowed
}

// TestEvaluationSampled: evaluation.sampled reaches the arm beside greedy, keeps the hash
// when off, and without greedy is refused with a fix.
func TestEvaluationSampled(t *testing.T) {
	spec := func(ev string) []byte {
		return []byte(`experiment "x" {
  seeds = [1]
  budget { env_steps = 4096 }
  env "cartpole" {}
  evaluation {
    episodes = 10
    ` + ev + `
  }
}
`)
	}
	exp, diags := Parse("x.hcl", spec("greedy = true\n    sampled = true"), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if ev := exp.Arms[0].Config.Evaluation; !ev.Greedy || !ev.Sampled {
		t.Errorf("decoded %+v, want greedy and sampled", ev)
	}
	off, _ := Parse("x.hcl", spec("greedy = true\n    sampled = false"), nil)
	plain, _ := Parse("x.hcl", spec("greedy = true"), nil)
	if off.Hash != plain.Hash {
		t.Errorf("sampled = false changed the hash: %s vs %s", off.Hash, plain.Hash)
	}
	_, diags = Parse("x.hcl", spec("sampled = true"), nil)
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Set greedy = true, or drop sampled") {
		t.Errorf("sampled without greedy: %v, want the error naming the fix", diags)
	}
}

// TestAdvEstimator: algorithm.adv_estimator decodes, "gae" (the default) keeps the plain
// spec's hash, other names are refused with the choices, and grpo is refused with v-trace
// and with imagined rollouts, each naming the fix; repeat_starts decodes, 1 keeps the hash,
// and it is refused without grpo and below 0.
func TestAdvEstimator(t *testing.T) {
	parse := func(algo, body string) *Experiment {
		t.Helper()
		exp, diags := Parse("x.hcl", algoSpec(algo, body, ""), nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %v", body, diags)
		}
		return exp
	}
	if a := parse("ppo", `adv_estimator = "grpo"`).Arms[0].Config.Algorithm; a.AdvEstimator != AdvEstimatorGRPO {
		t.Errorf("adv_estimator = grpo decoded as %q", a.AdvEstimator)
	}
	if h0, h1 := parse("ppo", "").Hash, parse("ppo", "adv_estimator = \"gae\"\n    repeat_starts = 1").Hash; h0 != h1 {
		t.Errorf(`adv_estimator = "gae" and repeat_starts = 1 changed the hash: %s vs %s`, h1, h0)
	}
	if a := parse("ppo", "adv_estimator = \"grpo\"\n    repeat_starts = 4").Arms[0].Config.Algorithm; a.RepeatStarts != 4 {
		t.Errorf("repeat_starts = 4 decoded as %d", a.RepeatStarts)
	}
	for _, tc := range []struct{ algo, body, extra, want string }{
		{"ppo", `adv_estimator = "rloo"`, "", `"gae", "grpo"`},
		{"vtrace", `adv_estimator = "grpo"`, "", `Use algorithm "ppo", "gipo" or "sapo" with grpo`},
		{"ppo", `adv_estimator = "grpo"`, "world_model {\n    enabled = true\n  }", "set world_model.imagination_ratio = 0"},
		{"ppo", `repeat_starts = 4`, "", `Set adv_estimator = "grpo", or drop repeat_starts`},
		{"ppo", "adv_estimator = \"grpo\"\n    repeat_starts = -1", "", "algorithm.repeat_starts"},
	} {
		_, diags := Parse("x.hcl", algoSpec(tc.algo, tc.body, tc.extra), nil)
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
			t.Errorf("%s %q %q: diagnostics %v, want an error containing %q", tc.algo, tc.body, tc.extra, diags, tc.want)
		}
	}
}

// algoSpec is a CartPole experiment of 4,096 env steps (8 updates of 512) whose
// algorithm block is algo's with body inside, and extra blocks after it.
func algoSpec(algo, body, extra string) []byte {
	return []byte(`experiment "x" {
  seeds = [1]
  budget { env_steps = 4096 }
  env "cartpole" {}
  algorithm "` + algo + `" {
    batch_steps = 512
    ` + body + `
  }
  ` + extra + `
}
`)
}
