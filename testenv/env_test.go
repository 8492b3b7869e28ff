package testenv

import (
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	for _, c := range []struct {
		kind    string
		obs, na int
	}{{KindCartPole, 4, 2}, {KindAcrobot, 6, 3}} {
		env, err := Make(c.kind, Options{})
		if err != nil {
			t.Fatalf("Make(%q): %v", c.kind, err)
		}
		if env.ObsDim() != c.obs || env.ActionSpace().N != c.na || env.ActionSpace().Dims() != 1 {
			t.Errorf("%s: ObsDim %d, actions %+v; want %d and %d discrete", c.kind, env.ObsDim(), env.ActionSpace(), c.obs, c.na)
		}
	}
	_, err := Make("mujoco-ant", Options{})
	if err == nil || !strings.Contains(err.Error(), `"mujoco-ant"`) || !strings.Contains(err.Error(), "acrobot, cartpole") {
		t.Errorf("unknown kind: err = %v, want it to name the kind and list acrobot, cartpole", err)
	}
	if _, err := Make(KindCartPole, Options{MaxEpisodeSteps: -1}); err == nil {
		t.Error("negative step limit accepted")
	}
	if d := (ActionSpace{Low: []float64{-1, -1, -1}, High: []float64{1, 1, 1}}).Dims(); d != 3 {
		t.Errorf("continuous 3-d space Dims = %d, want 3", d)
	}
}
