package specs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/specs"
)

const evalSpec = `
experiment "e" {
  budget { env_steps = 1000 }
  env "cartpole" {}
  evaluation {
    episodes = 10
  }
  ablation "greedy" {
    evaluation { greedy = true }
  }
  ablation "off" {
    evaluation { episodes = 0 }
  }
  ablation "final" {
    evaluation { final_episodes = 50 }
  }
}
`

// The evaluation block decodes, and ablations override only what they write.
func TestEvaluationBlock(t *testing.T) {
	exp := mustParse(t, evalSpec, nil)
	want := map[string]specs.Evaluation{
		"base":   {Episodes: 10},
		"greedy": {Episodes: 10, Greedy: true},
		"off":    {Episodes: 0},
		"final":  {Episodes: 10, FinalEpisodes: 50},
	}
	for name, w := range want {
		a, ok := exp.Arm(name)
		if !ok {
			t.Fatalf("no arm %q", name)
		}
		if a.Config.Evaluation != w {
			t.Errorf("arm %s: evaluation %+v, want %+v", name, a.Config.Evaluation, w)
		}
	}
	// Off by default.
	if d := specs.DefaultConfig().Evaluation; d.Episodes != 0 || d.Greedy {
		t.Errorf("default evaluation %+v, want off", d)
	}
	// The headline count is final_episodes where set, else episodes.
	for name, want := range map[string]int{"base": 10, "final": 50, "off": 0} {
		if a, _ := exp.Arm(name); a.Config.Evaluation.HeadlineEpisodes() != want {
			t.Errorf("arm %s: headline episodes %d, want %d", name, a.Config.Evaluation.HeadlineEpisodes(), want)
		}
	}
}

func TestEvaluationBlockRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`episodes = -1`, "evaluation.episodes"},
		{`episodes = 2.5`, "evaluation.episodes"},
		{`greedy = "yes"`, "evaluation.greedy"},
		{`episode = 3`, "episode"},
		{`final_episodes = -3`, "evaluation.final_episodes"},
		// Evaluation off (episodes defaults to 0): nothing for final_episodes to set.
		{`final_episodes = 500`, "Set episodes (e.g. 100, played after every other segment), or drop final_episodes"},
	} {
		src := "experiment \"e\" {\n  budget { env_steps = 1000 }\n  env \"cartpole\" {}\n  evaluation {\n    " + tc.body + "\n  }\n}\n"
		_, diags := specs.Parse("test.hcl", []byte(src), nil)
		if !diags.HasErrors() {
			t.Errorf("%s: no error", tc.body)
			continue
		}
		var all strings.Builder
		for _, d := range diags {
			all.WriteString(d.Summary + ": " + d.Detail + "\n")
		}
		if !strings.Contains(all.String(), tc.want) {
			t.Errorf("%s: errors %q do not name %q", tc.body, all.String(), tc.want)
		}
	}
}

// A world model in async mode gets a warning (imagination does not slow the rollout
// workers, so it saves no real steps), pointing at the imagination ratio; sync mode or no
// world model gets none.
func TestAsyncWorldModelWarns(t *testing.T) {
	spec := func(mode string, enabled bool) string {
		return fmt.Sprintf(`experiment "e" {
  budget { env_steps = 1000 }
  env "cartpole" {}
  pipeline { mode = %q }
  world_model {
    enabled           = %v
    imagination_ratio = 0.9
  }
}
`, mode, enabled)
	}
	for _, tc := range []struct {
		mode    string
		enabled bool
		warn    bool
	}{{"async", true, true}, {"sync", true, false}, {"async", false, false}} {
		exp, diags := specs.Parse("test.hcl", []byte(spec(tc.mode, tc.enabled)), nil)
		if exp == nil || diags.HasErrors() {
			t.Fatalf("%+v: %v", tc, diags)
		}
		var warns []*hcl.Diagnostic
		for _, d := range diags {
			if d.Severity == hcl.DiagWarning {
				warns = append(warns, d)
			}
		}
		if !tc.warn {
			if len(warns) != 0 {
				t.Errorf("%+v: unexpected warnings %v", tc, warns)
			}
			continue
		}
		if len(warns) != 1 || !strings.Contains(warns[0].Detail, `pipeline.mode = "sync"`) || warns[0].Subject == nil || warns[0].Subject.Start.Line != 7 {
			t.Errorf("%+v: warnings %v, want one on line 7 (imagination_ratio) that names the fix", tc, warns)
		}
	}
}
