package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vlaSpec is a tabletop pixel spec with a vla block holding extra lines.
func vlaSpec(vlaBody string) []byte {
	return []byte(strings.Replace(string(resourceSpec("action = \"tokens\"\n    vla {\n"+vlaBody+"\n    }", "", "")),
		`env "cartpole" {}`, "env \"tabletop\" {\n    image_size = 32\n    pixels     = true\n  }", 1))
}

// TestVLATemperature: policy.vla.temperature (and detach_value, executed_only) reach the arm; 1 (the default) is stored as
// omitted, so a spec that writes it keeps the hash of one that does not; values outside
// (0, 10] are refused with the attribute's name and the allowed range.
func TestVLATemperature(t *testing.T) {
	parse := func(body string) *Experiment {
		t.Helper()
		exp, diags := Parse("x.hcl", vlaSpec(body), nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %v", body, diags)
		}
		return exp
	}
	arm := func(body string) Arm { return parse(body).Arms[0] }
	if got := arm("temperature = 0.5").Config.Policy.VLA.SamplingTemperature(); got != 0.5 {
		t.Errorf("temperature = 0.5 decoded as %v", got)
	}
	plain, one := arm(""), arm("temperature = 1")
	if plain.Config.Policy.VLA.SamplingTemperature() != 1 {
		t.Errorf("default temperature %v, want 1", plain.Config.Policy.VLA.SamplingTemperature())
	}
	if one.Config.Policy.VLA.Temperature != 0 {
		t.Errorf("temperature = 1 stored as %v, want 0 (omitted)", one.Config.Policy.VLA.Temperature)
	}
	h0 := parse("").Hash
	if h1 := parse("temperature = 1").Hash; h0 != h1 {
		t.Errorf("temperature = 1 changed the hash: %s vs %s", h1, h0)
	}
	if h := parse("temperature = 0.5").Hash; h == h0 {
		t.Error("temperature = 0.5 has the default's hash")
	}
	if !arm("detach_value = true").Config.Policy.VLA.DetachValue || plain.Config.Policy.VLA.DetachValue {
		t.Error("detach_value did not decode (or is on by default)")
	}
	// executed_only: off by default (and then omitted, so the hash is the plain spec's);
	// on, RL's chunk is the executed actions alone while cloning keeps the whole chunk.
	eo := arm("executed_only = true").Config.Policy
	if !eo.VLA.ExecutedOnly || plain.Config.Policy.VLA.ExecutedOnly {
		t.Error("executed_only did not decode (or is on by default)")
	}
	eo.ActionChunk, eo.ExecuteSteps = 8, 2
	if k, e := eo.RLChunk(); k != 2 || e != 2 {
		t.Errorf("executed_only RLChunk() = %d, %d; want 2, 2", k, e)
	}
	if k, e := eo.Chunk(); k != 8 || e != 2 {
		t.Errorf("executed_only Chunk() = %d, %d; want the cloned chunk 8, 2", k, e)
	}
	if h := parse("executed_only = false").Hash; h != h0 {
		t.Error("executed_only = false changed the hash")
	}
	if g := arm(`greedy = "mean"`).Config.Policy.VLA.Greedy; g != GreedyMean || plain.Config.Policy.VLA.Greedy != "" {
		t.Errorf(`greedy = "mean" decoded as %q (default %q)`, g, plain.Config.Policy.VLA.Greedy)
	}
	if h := parse(`greedy = "argmax"`).Hash; h != h0 {
		t.Error(`greedy = "argmax" changed the hash`)
	}
	if _, diags := Parse("x.hcl", vlaSpec(`greedy = "median"`), nil); !diags.HasErrors() || !strings.Contains(diags.Error(), `"argmax", "mean"`) {
		t.Errorf(`greedy = "median": diagnostics %v, want the choices`, diags)
	}
	for _, bad := range []string{"temperature = 0", "temperature = -1", "temperature = 11"} {
		_, diags := Parse("x.hcl", vlaSpec(bad), nil)
		if !diags.HasErrors() {
			t.Errorf("%q accepted", bad)
			continue
		}
		if msg := diags.Error(); !strings.Contains(msg, "policy.vla.temperature") || !strings.Contains(msg, "greater than 0") {
			t.Errorf("%q: error %q does not name policy.vla.temperature and its range", bad, msg)
		}
	}
}

// TestPretrainFrom: pretrain.from is stored absolute (a relative path taken from the
// directory accerl runs in) and is part of the hash; epochs = 0 is a clone taken as it is,
// refused without from, and from is refused on a policy without a vla block, each error
// naming the attribute and what to change.
func TestPretrainFrom(t *testing.T) {
	spec := func(pretrain string, vla bool) []byte {
		src := string(vlaSpec(""))
		if !vla {
			src = strings.Replace(src, "action = \"tokens\"\n    vla {\n\n    }", "action = \"gaussian\"", 1)
		}
		i := strings.Index(src, "  world_model {")
		return []byte(src[:i] + "  pretrain {\n" + pretrain + "\n  }\n}\n")
	}
	parse := func(pretrain string) *Experiment {
		t.Helper()
		exp, diags := Parse("x.hcl", spec(pretrain, true), nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %v", pretrain, diags)
		}
		return exp
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got := parse(`from = "clones/seed1"` + "\nepochs = 0").Arms[0].Config.Pretrain
	if want := filepath.Join(wd, "clones", "seed1"); got.From != want || got.Epochs != 0 {
		t.Errorf("from %q, epochs %d; want %q, 0", got.From, got.Epochs, want)
	}
	plain, from := parse("epochs = 3").Hash, parse(`from = "/c"`+"\nepochs = 3").Hash
	if plain == from {
		t.Error("pretrain.from did not change the hash")
	}
	for _, c := range []struct {
		pretrain string
		vla      bool
		want     []string
	}{
		{"epochs = 0", true, []string{"Cloning for no epochs", "give from"}},
		{`from = "/c"`, false, []string{"Starting from a clone needs the VLA", "pretrain.from"}},
		{"epochs = -1", true, []string{"epochs"}},
	} {
		_, diags := Parse("x.hcl", spec(c.pretrain, c.vla), nil)
		msg := diags.Error()
		for _, w := range c.want {
			if !diags.HasErrors() || !strings.Contains(msg, w) {
				t.Errorf("%q (vla %v): diagnostics %q, want an error containing %q", c.pretrain, c.vla, msg, w)
			}
		}
	}
}
