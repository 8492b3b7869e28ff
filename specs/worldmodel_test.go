package specs_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/accerl/accerl/specs"
)

const worldModelSpec = `
experiment "wm" {
  budget { env_steps = 1000 }
  env "acrobot" {}

  world_model {
    enabled              = true
    offline_trajectories = 250
    behaviour            = "random"
    history              = 4
    obs_hidden           = [256, 128, 64]
    rew_hidden           = [32]
    obs_learning_rate    = 3e-4
    rew_learning_rate    = 5e-4
    reward               = "success_delta"
    pretrain_epochs      = 7
    imagination_ratio    = 0.25
    obs_every            = 20
    rew_every            = 10
    horizon {
      start     = 3
      end       = 30
      loss_high = 0.8
      loss_low  = 0.1
    }
  }

  ablation "no_wm" {
    world_model { enabled = false }
  }
  ablation "long" {
    world_model {
      horizon { end = 80 }
    }
  }
  ablation "direct" {
    world_model {
      reward    = "direct"
      rew_every = 5
    }
  }
}
`

// wmWritten is worldModelSpec's base world_model block, written out by hand.
func wmWritten() specs.WorldModel {
	return specs.WorldModel{
		Enabled: true, OfflineTrajectories: 250, Behaviour: "random", History: 4,
		ObsHidden: []int{256, 128, 64}, RewHidden: []int{32},
		ObsLearningRate: 3e-4, RewLearningRate: 5e-4, Reward: "success_delta",
		PretrainEpochs: 7, ImaginationRatio: 0.25, ObsEvery: 20, RewEvery: 10,
		Horizon: specs.Horizon{Start: 3, End: 30, LossHigh: 0.8, LossLow: 0.1},
	}
}

func TestWorldModelDecodesEveryAttribute(t *testing.T) {
	exp := mustParse(t, worldModelSpec, nil)
	if got := exp.Arms[0].Config.WorldModel; !reflect.DeepEqual(got, wmWritten()) {
		t.Errorf("base world model:\n got %+v\nwant %+v", got, wmWritten())
	}
}

func TestWorldModelAblationsOverrideOnlyWhatTheyWrite(t *testing.T) {
	exp := mustParse(t, worldModelSpec, nil)
	if got := armNames(exp); !reflect.DeepEqual(got, []string{"base", "no_wm", "long", "direct"}) {
		t.Fatalf("arms = %v", got)
	}
	base := exp.Arms[0].Config

	// no_wm switches the model off and keeps every other setting, so a
	// later ablation could switch it back on unchanged.
	off := wmWritten()
	off.Enabled = false
	// long changes only the horizon's end.
	long := wmWritten()
	long.Horizon.End = 80
	// direct changes the reward mode and the reward model's frequency.
	direct := wmWritten()
	direct.Reward, direct.RewEvery = "direct", 5
	for i, want := range []specs.WorldModel{off, long, direct} {
		arm := exp.Arms[i+1]
		if !reflect.DeepEqual(arm.Config.WorldModel, want) {
			t.Errorf("%s: world model\n got %+v\nwant %+v", arm.Name, arm.Config.WorldModel, want)
		}
		// Everything outside world_model is the base's.
		other := arm.Config
		other.WorldModel = base.WorldModel
		if !reflect.DeepEqual(other, base) {
			t.Errorf("%s: settings outside world_model differ from the base", arm.Name)
		}
	}
}

func TestWorldModelDefaults(t *testing.T) {
	// No world_model block, and an empty one, both give the documented
	// defaults (written out by hand in defaultWorldModel).
	for _, block := range []string{"", "world_model {}"} {
		exp := mustParse(t, `experiment "d" {
  budget { env_steps = 10 }
  env "cartpole" {}
  `+block+`
}`, nil)
		if got := exp.Arms[0].Config.WorldModel; !reflect.DeepEqual(got, defaultWorldModel()) {
			t.Errorf("%q: world model\n got %+v\nwant %+v", block, got, defaultWorldModel())
		}
	}
	if got := specs.DefaultConfig().WorldModel; !reflect.DeepEqual(got, defaultWorldModel()) {
		t.Errorf("DefaultConfig().WorldModel = %+v", got)
	}
}

func TestWorldModelCloneIsDeep(t *testing.T) {
	c := specs.DefaultConfig()
	cl := c.Clone()
	cl.WorldModel.ObsHidden[0] = 1
	cl.WorldModel.RewHidden[0] = 1
	if c.WorldModel.ObsHidden[0] != 128 || c.WorldModel.RewHidden[0] != 64 {
		t.Errorf("Clone shares the world model's hidden slices: %v, %v", c.WorldModel.ObsHidden, c.WorldModel.RewHidden)
	}
	px := specs.DefaultPixelWorldModel()
	c.WorldModel.Pixels = &px
	cl = c.Clone()
	cl.WorldModel.Pixels.ObsSteps++
	if c.WorldModel.Pixels.ObsSteps != px.ObsSteps || cl.WorldModel.Pixels == c.WorldModel.Pixels {
		t.Errorf("Clone shares the pixels block: obs_steps %d after the clone's was raised", c.WorldModel.Pixels.ObsSteps)
	}
}

func TestWorldModelJSONKeys(t *testing.T) {
	exp := mustParse(t, worldModelSpec, nil)
	data, err := json.Marshal(exp.Arms[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"world_model":{"enabled":true`, `"offline_trajectories":250`, `"obs_hidden":[256,128,64]`,
		`"imagination_ratio":0.25`, `"horizon":{"start":3,"end":30,"loss_high":0.8,"loss_low":0.1}`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s:\n%s", key, data)
		}
	}
	var back specs.Config
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, exp.Arms[0].Config) {
		t.Errorf("JSON round trip: %v", err)
	}
}

func TestWorldModelRangeErrorsPointAtTheLine(t *testing.T) {
	src := `experiment "r" {
  budget { env_steps = 10 }
  env "cartpole" {}
  world_model {
    imagination_ratio = 1.0
    horizon {
      loss_high = -2
    }
  }
}`
	_, diags := specs.Parse("r.hcl", []byte(src), nil)
	want := []struct {
		line   int
		detail string
	}{
		{5, "world_model.imagination_ratio must be at least 0 and less than 1, but it is 1"},
		{7, "world_model.horizon.loss_high must be greater than 0, but it is -2"},
	}
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(diags), len(want), diags.Error())
	}
	for i, w := range want {
		d := diags[i]
		if d.Summary != "Value out of range" || d.Subject == nil || d.Subject.Start.Line != w.line || !strings.Contains(d.Detail, w.detail) {
			t.Errorf("diagnostic %d: %s at %v: %s; want line %d, %q", i, d.Summary, d.Subject, d.Detail, w.line, w.detail)
		}
	}
}

func TestWorldModelHashChangesWithIt(t *testing.T) {
	plain := `experiment "h" {
  budget { env_steps = 10 }
  env "cartpole" {}
}`
	on := `experiment "h" {
  budget { env_steps = 10 }
  env "cartpole" {}
  world_model { enabled = true }
}`
	same := `experiment "h" {
  budget { env_steps = 10 }
  env "cartpole" {}
  world_model { history = 2 }
}`
	h := mustParse(t, plain, nil).Hash
	if mustParse(t, on, nil).Hash == h {
		t.Error("enabling the world model did not change the hash")
	}
	if mustParse(t, same, nil).Hash != h {
		t.Error("writing a default value changed the hash")
	}
}
