package specs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPixelWorldModel: a world_model pixels block decodes onto DefaultPixelWorldModel with
// the attributes it writes, an ablation's block changes only its own arm, the block is
// accepted beside a VLA policy (the state-vector world model is not), and a spec without
// it keeps the hash it had before the block existed; an attribute out of range is refused.
func TestPixelWorldModel(t *testing.T) {
	spec := func(wm string) []byte {
		return []byte(`experiment "x" {
  seeds = [1]
  budget { env_steps = 4096 }
  env "tabletop" {
    suite  = "spatial"
    pixels = true
  }
  policy {
    action = "tokens"
    vla {}
  }
  ` + wm + `
}
`)
	}
	exp, diags := Parse("x.hcl", spec(`world_model {
    enabled              = true
    offline_trajectories = 40
    behaviour            = "expert_noisy"
    history              = 4
    imagination_ratio    = 0
    pixels {
      obs_steps       = 12
      behaviour_noise = 0.2
      residual        = false
      sample_steps    = 3
      rew_imagined    = 4
      self_forcing      = 4
      self_forcing_from = 10
      rew_counterfactual = 3
      rew_counterfactual_jitter = 0.3
    }
  }
  ablation "more_rew" {
    world_model {
      pixels { rew_steps = 99 }
    }
  }`), nil)
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	base, arm := exp.Arms[0].Config.WorldModel, exp.Arms[1].Config.WorldModel
	want := DefaultPixelWorldModel()
	want.ObsSteps, want.BehaviourNoise, want.Residual, want.SampleSteps, want.RewImagined = 12, 0.2, false, 3, 4
	want.SelfForcing, want.SelfForcingFrom, want.RewCounterfactual, want.RewCounterfactualJitter = 4, 10, 3, 0.3
	if base.Pixels == nil || *base.Pixels != want || base.Behaviour != WorldModelBehaviourExpertNoisy {
		t.Fatalf("base pixels = %+v (behaviour %q), want %+v (expert_noisy)", base.Pixels, base.Behaviour, want)
	}
	want.RewSteps = 99
	if arm.Pixels == nil || *arm.Pixels != want {
		t.Errorf("arm pixels = %+v, want %+v", arm.Pixels, want)
	}
	if base.Pixels.RewSteps != DefaultPixelWorldModel().RewSteps {
		t.Errorf("the ablation's block changed the base: rew_steps %d", base.Pixels.RewSteps)
	}

	// rew_imagined beyond its range is refused, naming it.
	_, diags = Parse("x.hcl", spec(`world_model {
    enabled = true
    pixels { rew_imagined = 65 }
  }`), nil)
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "rew_imagined") {
		t.Errorf("rew_imagined = 65: diagnostics %v, want an error naming it", diags)
	}

	// Self-forcing deeper than the context, or a start it never reaches, is refused with
	// what to set.
	for _, tc := range []struct{ px, want string }{
		{`self_forcing = 5`, "world_model.pixels.self_forcing = 5 replaces up to that many of M_obs's context frames with its own predictions, and world_model.history = 4 gives it only 4"},
		{`rew_counterfactual_jitter = 0.3`, "world_model.pixels.rew_counterfactual_jitter = 0.3 is the noise on the actions that drive M_rew's counterfactual endings, and rew_counterfactual is 0"},
		{`start_within = 8`, "world_model.pixels.start_within = 8 chooses where imagined rollouts start, and imagination_ratio is 0"},
		{`tempered = true`, "world_model.pixels.tempered evaluates the imagined actions at the temperature they were sampled at, and temperature is 0"},
		{`self_forcing_from = 100`, "self_forcing_from = 100 switches self-forcing on at that M_obs step, and self_forcing is 0 over obs_steps = 400"},
		{"\n      self_forcing      = 4\n      self_forcing_from = 400\n    ", "self_forcing_from = 400 switches self-forcing on at that M_obs step, and self_forcing is 4 over obs_steps = 400"},
	} {
		_, diags = Parse("x.hcl", spec(`world_model {
    enabled = true
    offline_trajectories = 40
    history = 4
    imagination_ratio = 0
    pixels { `+tc.px+` }
  }`), nil)
		found := false
		for _, d := range diags {
			found = found || strings.Contains(d.Detail, tc.want)
		}
		if !diags.HasErrors() || !found {
			t.Errorf("%s: diagnostics %v, want an error containing %q", tc.px, diags, tc.want)
		}
	}

	// Without the block nothing about the world model enters the JSON that did not before.
	plain, diags := Parse("x.hcl", spec(""), nil)
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	if plain.Arms[0].Config.WorldModel.Pixels != nil {
		t.Errorf("no pixels block, yet Pixels = %+v", plain.Arms[0].Config.WorldModel.Pixels)
	}
	b, err := json.Marshal(plain.Arms[0].Config.WorldModel)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"pixels"`) {
		t.Errorf("world model JSON without a pixels block names it: %s", b)
	}
}
