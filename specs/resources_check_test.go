package specs

import (
	"strings"
	"testing"
	"time"
)

// resourceSpec is a cartpole spec with extra lines added to its policy, pipeline and
// world_model blocks.
func resourceSpec(policy, pipeline, worldModel string) []byte {
	return []byte(`experiment "x" {
  seeds = [1]
  budget { env_steps = 100000 }
  env "cartpole" {}
  policy {
    ` + policy + `
  }
  pipeline {
    ` + pipeline + `
  }
  world_model {
    ` + worldModel + `
  }
}
`)
}

// TestCheckResources: specs that would exhaust memory (or panic in makeslice) are refused
// at validate with the estimate and its biggest contributor.
func TestCheckResources(t *testing.T) {
	defer func(f func() float64) { machineMemory = f }(machineMemory)
	machineMemory = func() float64 { return 16 << 30 }
	cases := []struct {
		name                         string
		policy, pipeline, worldModel string
		want                         []string // substrings of the one error; nil for valid
	}{
		{"defaults", "", "", "", nil},
		{"large but fits", "hidden = [1024, 1024]", "replay_capacity = 1000000", "enabled = true", nil},
		{"workers", "", "workers = 1000000000", "", []string{"Too many environments", "2e+09 environments", "at most 4096"}},
		{"environments", "", "workers = 128\n    envs_per_worker = 64", "", []string{"Too many environments", "8192 environments"}},
		{"wide policy", "hidden = [30000, 30000]", "", "", []string{"more memory", "53.7 GiB", "the policy's 1.8e+09 parameters", "this machine has 16 GiB"}},
		{"absurd policy", "hidden = [1e9, 1e9]", "", "", []string{"more memory", "the policy's 2e+18 parameters"}},
		{"tokens bins", "action = \"tokens\"\n    bins = 1000000000", "", "", []string{"more memory", "activations"}},
		{"replay", "", "replay_capacity = 1000000000", "", []string{"more memory", "the replay buffer"}},
		{"world model", "", "", "enabled = true\n    obs_hidden = [100000, 100000]", []string{"more memory", "the world model's"}},
		{"offline data", "", "", "enabled = true\n    offline_trajectories = 1000000000", []string{"more memory", "offline episodes"}},
		{"world model off", "", "", "obs_hidden = [100000, 100000]", nil},
		// Hand count for dim 64, 2 layers, two 32×32 cameras in 8×8 patches, chunk 1 (7
		// action tokens), V = words + 2 + 256: well under a GiB.
		{"vla fits", "action = \"tokens\"\n    vla {}", "", "", nil},
		{"vla too big", "action = \"tokens\"\n    vla {\n      dim = 2048\n      layers = 48\n      heads = 16\n    }", "", "", []string{"more memory", "the VLA policy's", "parameters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := resourceSpec(c.policy, c.pipeline, c.worldModel)
			switch {
			case strings.Contains(c.policy, "vla"):
				src = []byte(strings.Replace(string(src), `env "cartpole" {}`, `env "tabletop" {
    image_size = 32
    pixels     = true
  }`, 1))
			case strings.Contains(c.policy, "tokens"):
				src = []byte(strings.Replace(string(src), `env "cartpole" {}`, `env "pendulum" {}`, 1))
			}
			_, diags := Parse("x.hcl", src, nil)
			if c.want == nil {
				if diags.HasErrors() {
					t.Fatalf("valid spec refused: %v", diags)
				}
				return
			}
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("diags = %v, want one error", diags)
			}
			msg := errs[0].Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s\nwant it to contain %q", msg, w)
				}
			}
		})
	}
}

// TestNumberMessages: numbers beyond float64 or int64 say so instead of "must be greater
// than 0, but it is 1e+400".
func TestNumberMessages(t *testing.T) {
	cases := []struct{ attr, value, want string }{
		{"budget { env_steps = %s }", "1e300", "budget.env_steps is 1e+300, larger than 9.2e18, the most budget.env_steps can count"},
		{"budget { env_steps = %s }", "1e400", "larger than 9.2e18"},
		{"budget { env_steps = %s }", "-1e300", "smaller than -9.2e18"},
		{"algorithm \"ppo\" { learning_rate = %s }", "1e400", "algorithm.learning_rate is 1e+400, which is not a finite number"},
		{"algorithm \"ppo\" { learning_rate = %s }", "-1e400", "not a finite number"},
		{"policy { hidden = [%s] }", "1e300", "Element 0 of policy.hidden is 1e+300, larger than 9.2e18"},
		// Found by FuzzParse: big.Float's decimal conversion of these took 10 s and more.
		{"budget { env_steps = %s }", "1e9999999", "budget.env_steps is 1e9999999, larger than 9.2e18"},
		{"budget { env_steps = %s }", "1e-99999999", "it is 1e-99999999. Round it"},
		{"max_parallel = %s", "0.5e-99999999", "it is 5e-100000000"},
	}
	for _, c := range cases {
		src := "experiment \"x\" {\n  seeds = [1]\n  env \"cartpole\" {}\n  budget { env_steps = 1000 }\n  " +
			strings.Replace(c.attr, "%s", c.value, 1) + "\n}\n"
		if strings.HasPrefix(c.attr, "budget") {
			src = strings.Replace(src, "  budget { env_steps = 1000 }\n", "", 1)
		}
		start := time.Now()
		_, diags := Parse("x.hcl", []byte(src), nil)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s = %s took %v", c.attr, c.value, el)
		}
		if len(diags) != 1 || !strings.Contains(diags[0].Detail, c.want) {
			t.Errorf("%s = %s: diags = %v, want one containing %q", c.attr, c.value, diags, c.want)
		}
	}
}
