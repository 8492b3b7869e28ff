package specs_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRemoteEnv checks env "remote": the arm resolves as its world's kind with the
// servers' addresses, its settings decode as the world's attributes, an ablation's remote
// block inherits world and addresses, and a local env block makes the arm local again.
func TestRemoteEnv(t *testing.T) {
	exp := mustParse(t, `
experiment "rr" {
  budget { env_steps = 1000 }
  env "remote" {
    address  = "127.0.0.1:7000"
    world    = "tabletop"
    settings = { suite = "goal", tasks = [1, 4], "image_size" = 32, pixels = true }
  }
  policy { action = "tokens" }
  ablation "object" {
    env "remote" { settings = { suite = "object" } }
  }
  ablation "spread" {
    env "remote" {
      addresses = ["10.0.0.5:7000", "[::1]:7001"]
      world     = "cartpole"
      max_episode_steps = 100
    }
    policy { action = "categorical" }
  }
  ablation "local" {
    env "tabletop" {}
  }
}`, nil)
	base := exp.Arms[0].Config.Env
	if base.Kind != "tabletop" || base.Remote == nil || !reflect.DeepEqual(base.Remote.Addresses, []string{"127.0.0.1:7000"}) ||
		base.Suite != "goal" || !reflect.DeepEqual(base.Tasks, []int{1, 4}) || base.ImageSize != 32 || !base.Pixels || base.MaxEpisodeSteps != 300 {
		t.Errorf("base env = %+v (remote %+v), want remote tabletop goal [1 4] 32 px with pixels, 300 steps", base, base.Remote)
	}
	obj := exp.Arms[1].Config.Env
	if obj.Kind != "tabletop" || obj.Remote == nil || obj.Remote.Addresses[0] != "127.0.0.1:7000" || obj.Suite != "object" || !obj.Pixels || obj.MaxEpisodeSteps != 280 {
		t.Errorf("object ablation env = %+v, want the base's server and world with suite object, 280 steps", obj)
	}
	spread := exp.Arms[2].Config.Env
	if spread.Kind != "cartpole" || !reflect.DeepEqual(spread.Remote.Addresses, []string{"10.0.0.5:7000", "[::1]:7001"}) ||
		spread.Suite != "" || spread.Pixels || spread.MaxEpisodeSteps != 100 {
		t.Errorf("spread ablation env = %+v (remote %+v)", spread, spread.Remote)
	}
	if loc := exp.Arms[3].Config.Env; loc.Remote != nil || loc.Kind != "tabletop" || loc.Suite != "goal" {
		t.Errorf("local ablation env = %+v, want in-process tabletop (inheriting suite goal)", loc)
	}
	if b, _ := json.Marshal(exp.Arms[3].Config.Env); strings.Contains(string(b), "remote") {
		t.Errorf("local env JSON %s mentions remote", b)
	}
	if b, _ := json.Marshal(base); !strings.Contains(string(b), `"remote":{"addresses":["127.0.0.1:7000"]}`) {
		t.Errorf("remote env JSON %s lacks the addresses", b)
	}
}
