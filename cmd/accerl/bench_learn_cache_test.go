package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstore"
)

// TestBCCache: an entry is keyed by what cloning reads, not by the RL settings; a saved
// entry (the run's bc/final and pretrain.json only) restores into a fresh run directory,
// and an absent one restores nothing.
func TestBCCache(t *testing.T) {
	c := bcCache{dir: t.TempDir()}
	cfg := tabletopVLAConfig("spatial")
	key := func(mod func()) string {
		t.Helper()
		saved := cfg
		v := *cfg.Policy.VLA
		cfg.Policy.VLA = &v
		mod()
		e, err := c.entry("chk", cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		cfg = saved
		return e
	}
	base := key(func() {})
	if got := key(func() {
		cfg.Policy.VLA.Temperature, cfg.Policy.VLA.DetachValue = 0.1, true
		cfg.Algorithm.LearningRate = 1
	}); got != base {
		t.Errorf("RL settings changed the entry: %s vs %s", got, base)
	}
	for name, mod := range map[string]func(){
		"pretrain":   func() { cfg.Pretrain.Epochs++ },
		"policy":     func() { cfg.Policy.VLA.Dim = 96 },
		"evaluation": func() { cfg.Evaluation.Episodes = 50 },
		"env":        func() { cfg.Env.ImageSize = 64 },
	} {
		if key(mod) == base {
			t.Errorf("a different %s block reuses the entry", name)
		}
	}
	if e, _ := c.entry("chk", cfg, 2); e == base {
		t.Error("another seed reuses the entry")
	}

	run := t.TempDir()
	final := activities.BCPolicyDir(run)
	for path, body := range map[string]string{
		filepath.Join(final, "policy.json"):                       "{}",
		filepath.Join(activities.BCDir(run), "epoch-000001", "x"): "epoch",
		filepath.Join(run, runstore.PretrainFile):                 `{"success":0.4}`,
		filepath.Join(run, "summary.json"):                        "{}",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if ok, err := c.restore(base, fresh); ok || err != nil {
		t.Fatalf("restore from an empty cache: %v, %v", ok, err)
	}
	if err := c.save(base, run); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.restore(base, fresh); !ok || err != nil {
		t.Fatalf("restore after save: %v, %v", ok, err)
	}
	for rel, want := range map[string]string{
		filepath.Join("bc", "final", "policy.json"): "{}",
		runstore.PretrainFile:                       `{"success":0.4}`,
	} {
		if b, err := os.ReadFile(filepath.Join(fresh, rel)); err != nil || string(b) != want {
			t.Errorf("%s restored as %q (%v), want %q", rel, b, err, want)
		}
	}
	for _, rel := range []string{filepath.Join("bc", "epoch-000001"), "summary.json"} {
		if _, err := os.Stat(filepath.Join(fresh, rel)); err == nil {
			t.Errorf("%s was cached: only the final policy and pretrain.json belong in an entry", rel)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(c.dir, "*.tmp")); len(matches) != 0 {
		t.Errorf("temporary entries left: %v", matches)
	}
}

func TestBenchLearnRLFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--temperature", "11", "tabletop-spatial-vla"}, "--temperature 11: give a sampling temperature greater than 0 and at most 10"},
		{[]string{"--temperature", "0.5", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo has no VLA policy"},
		{[]string{"--detach-value", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo has no VLA policy"},
		{[]string{"--critic-warmup", "-1", "cartpole-ppo"}, "none of them may be negative"},
		{[]string{"--batch-steps", "-5", "cartpole-ppo"}, "none of them may be negative"},
		{[]string{"--executed-only=false", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo has no VLA policy"},
		{[]string{"--adv-estimator", "rloo", "cartpole-ppo"}, `--adv-estimator "rloo": give gae or grpo`},
		{[]string{"--greedy", "median", "tabletop-spatial-vla"}, `--greedy "median": give argmax or mean`},
		{[]string{"--greedy", "mean", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo has no VLA policy"},
	} {
		status, _, stderr := runArgs(t, append([]string{"bench", "learn"}, tc.args...)...)
		if status == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want an error containing %q", tc.args, status, stderr, tc.want)
		}
	}
}

// TestEnumOverride checks the mapping of an overriding flag onto its spec field: left out
// keeps each check's (nil), the default name is stored as "" (as a spec without the field
// holds it), the other choice as itself.
func TestEnumOverride(t *testing.T) {
	for _, tc := range []struct {
		val  string
		want *string
	}{{"", nil}, {"gae", new("")}, {"grpo", new("grpo")}} {
		got, err := enumOverride("adv-estimator", tc.val, "gae", "grpo")
		if err != nil || (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.val, got, err, tc.want)
		}
	}
	if _, err := enumOverride("greedy", "median", "argmax", "mean"); err == nil || !strings.Contains(err.Error(), `--greedy "median": give argmax or mean`) {
		t.Errorf("an unknown name: %v", err)
	}
}
