package specs_test

import (
	"strings"
	"testing"

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
}
`

// The evaluation block decodes, and ablations override only what they write.
func TestEvaluationBlock(t *testing.T) {
	exp := mustParse(t, evalSpec, nil)
	want := map[string]specs.Evaluation{
		"base":   {Episodes: 10},
		"greedy": {Episodes: 10, Greedy: true},
		"off":    {Episodes: 0},
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
}

func TestEvaluationBlockRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`episodes = -1`, "evaluation.episodes"},
		{`episodes = 2.5`, "evaluation.episodes"},
		{`greedy = "yes"`, "evaluation.greedy"},
		{`episode = 3`, "episode"},
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
