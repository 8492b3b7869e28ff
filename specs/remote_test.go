package specs_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/accerl/accerl/specs"
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

// TestRemoteCompression checks env "remote" { compression }: "gzip" is kept, "none" is the
// default and leaves the JSON (and so the hash) as without the attribute, anything else is
// refused naming the choices.
func TestRemoteCompression(t *testing.T) {
	src := func(c string) string {
		return `
experiment "rc" {
  budget { env_steps = 1000 }
  env "remote" {
    address = "127.0.0.1:7000"
    world   = "cartpole"
    ` + c + `
  }
}`
	}
	gz := mustParse(t, src(`compression = "gzip"`), nil)
	if c := gz.Arms[0].Config.Env.Remote.Compression; c != "gzip" {
		t.Errorf("compression = %q, want gzip", c)
	}
	none, plain := mustParse(t, src(`compression = "none"`), nil), mustParse(t, src(""), nil)
	if none.Arms[0].Config.Env.Remote.Compression != "" || none.Hash != plain.Hash || gz.Hash == plain.Hash {
		t.Errorf("none %q: hash %s, without the attribute %s, gzip %s: want none = absent ≠ gzip",
			none.Arms[0].Config.Env.Remote.Compression, none.Hash, plain.Hash, gz.Hash)
	}
	_, diags := specs.Parse("test.hcl", []byte(src(`compression = "zstd"`)), nil)
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `"none", "gzip"`) {
		t.Errorf("zstd: %v, want an error listing none and gzip", diags)
	}
}
