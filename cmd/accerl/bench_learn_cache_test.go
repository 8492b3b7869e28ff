package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
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
		cfg.Evaluation.FinalEpisodes = 500 // PretrainPolicy plays the clone's evaluation again
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
	fakeClone(t, run)
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

// fakeClone writes what a run's cloning leaves in its directory: the final policy, an epoch
// checkpoint, pretrain.json, and a summary.
func fakeClone(t *testing.T, run string) {
	t.Helper()
	for path, body := range map[string]string{
		filepath.Join(activities.BCPolicyDir(run), "policy.json"): "{}",
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
}

// TestBCCacheSavesOnceCloned: around saves the entry when the run says its cloning is done
// (after its first RL segment), so a run that then fails keeps its clone, and the next run
// of the recipe starts from it.
func TestBCCacheSavesOnceCloned(t *testing.T) {
	c := &bcCache{dir: t.TempDir()}
	cfg := tabletopVLAConfig("spatial")
	entry, err := c.entry("chk", cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cached, err := c.around("chk", cfg, 1, t.TempDir(), func(func()) error {
		return errors.New("killed during RL")
	})
	if cached || err == nil || !strings.Contains(err.Error(), "killed during RL") {
		t.Fatalf("a run that failed before cloning: cached %v, error %v", cached, err)
	}
	if _, err := os.Stat(entry); err == nil {
		t.Fatal("a run that failed before its cloning was done left an entry")
	}
	run := t.TempDir()
	cached, err = c.around("chk", cfg, 1, run, func(cloned func()) error {
		fakeClone(t, run)
		cloned()
		if _, err := os.Stat(filepath.Join(entry, runstore.PretrainFile)); err != nil {
			t.Errorf("the entry was not saved when the cloning was done: %v", err)
		}
		return errors.New("killed during RL")
	})
	if cached || err == nil || !strings.Contains(err.Error(), "killed during RL") {
		t.Fatalf("a run killed during RL: cached %v, error %v", cached, err)
	}
	fresh := t.TempDir()
	cached, err = c.around("chk", cfg, 1, fresh, func(cloned func()) error {
		cloned()
		return nil
	})
	if !cached || err != nil {
		t.Fatalf("the next run: cached %v, error %v; want it to start from the saved clone", cached, err)
	}
	if b, err := os.ReadFile(filepath.Join(fresh, runstore.PretrainFile)); err != nil || string(b) != `{"success":0.4}` {
		t.Errorf("pretrain.json restored as %q (%v)", b, err)
	}

	// A run that plays the clone's evaluation again (PretrainPolicy rewrites the run's
	// pretrain.json) hands the new figures back to the entry; the policy stays as it was.
	again := t.TempDir()
	const recounted = `{"success":0.42,"eval_episodes":500}`
	cached, err = c.around("chk", cfg, 1, again, func(cloned func()) error {
		if err := os.WriteFile(filepath.Join(again, runstore.PretrainFile), []byte(recounted), 0o644); err != nil {
			return err
		}
		cloned()
		return nil
	})
	if !cached || err != nil {
		t.Fatalf("a run that evaluated the clone again: cached %v, error %v", cached, err)
	}
	for rel, want := range map[string]string{
		runstore.PretrainFile:                       recounted,
		filepath.Join("bc", "final", "policy.json"): "{}",
	} {
		if b, err := os.ReadFile(filepath.Join(entry, rel)); err != nil || string(b) != want {
			t.Errorf("the entry's %s is %q (%v) after the recount, want %q", rel, b, err, want)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(entry, "*.tmp")); len(matches) != 0 {
		t.Errorf("temporary files left in the entry: %v", matches)
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
		{[]string{"--pretrain-epochs", "-2", "tabletop-spatial-vla"}, "--pretrain-epochs -2, --checkpoint-every 0, --repeat-starts 0: none of them may be negative"},
		{[]string{"--repeat-starts", "-1", "tabletop-spatial-vla"}, "--repeat-starts -1: none of them may be negative"},
		{[]string{"--vla-layers", "-1", "tabletop-spatial-vla"}, "--vla-layers -1: give the VLA checks' transformer blocks, at least 1"},
		{[]string{"--vla-layers", "3", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo has no VLA policy"},
		{[]string{"--repeat-starts", "4", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo does not use GRPO advantages, which are what compares the plays of a start; add --adv-estimator grpo"},
		{[]string{"--pretrain-epochs", "20", "--seeds", "1", "cartpole-ppo"}, "check cartpole-ppo clones no policy (it has no pretrain block)"},
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

// TestLearnVLACheckRecipe: the VLA check runs the measured RL recipe (GRPO, positive
// advantages, T 0.03, lr 1e-5, batches of 4,096, 131,072 steps, greedy and sampled
// evaluations), the benches that start from its base keep plain PPO, and each boolean flag
// given turns its setting off as well as on.
func TestLearnVLACheckRecipe(t *testing.T) {
	c := tabletopVLAConfig("spatial")
	a, v := c.Algorithm, c.Policy.VLA
	if a.AdvEstimator != specs.AdvEstimatorGRPO || !a.PositiveAdvantages || a.LearningRate != 1e-5 || a.BatchSteps != 4096 ||
		v.Temperature != 0.03 || !v.DetachValue || !v.ExecutedOnly || !c.Evaluation.PlaysSampled() || c.Budget.EnvSteps != 131_072 {
		t.Errorf("check recipe: algorithm %+v, vla %+v, evaluation %+v, budget %d", a, *v, c.Evaluation, c.Budget.EnvSteps)
	}
	if b := tabletopVLABase("spatial"); b.Algorithm.AdvEstimator != "" || b.Algorithm.PositiveAdvantages || b.Evaluation.Sampled {
		t.Errorf("base: algorithm %+v, evaluation %+v; want plain PPO, greedy only", b.Algorithm, b.Evaluation)
	}
	gae := ""
	ov := learnOverrides{given: map[string]bool{"positive-advantages": true, "eval-sampled": true, "detach-value": true}, advEstimator: &gae}
	if err := ov.apply("tabletop-spatial-vla", &c); err != nil {
		t.Fatal(err)
	}
	if c.Algorithm.PositiveAdvantages || c.Evaluation.Sampled || c.Policy.VLA.DetachValue || c.Algorithm.AdvEstimator != "" {
		t.Errorf("=false flags and --adv-estimator gae left: algorithm %+v, vla %+v, evaluation %+v", c.Algorithm, *c.Policy.VLA, c.Evaluation)
	}
	if v.DetachValue != true {
		t.Error("apply changed the check's own VLA block")
	}
	ov = learnOverrides{given: map[string]bool{"positive-advantages": true, "skip-rewardless": true}, positiveAdv: true, skipRewardless: true}
	if err := ov.apply("tabletop-spatial-vla", &c); err != nil || !c.Algorithm.PositiveAdvantages || !c.Algorithm.SkipRewardless {
		t.Errorf("flags given true: %v, algorithm %+v", err, c.Algorithm)
	}
	// Left out, a flag keeps the check's setting.
	c = tabletopVLAConfig("spatial")
	if err := (learnOverrides{given: map[string]bool{}}).apply("tabletop-spatial-vla", &c); err != nil ||
		!c.Algorithm.PositiveAdvantages || !c.Evaluation.Sampled || !c.Policy.VLA.DetachValue {
		t.Errorf("no flags: %v, algorithm %+v, evaluation %+v", err, c.Algorithm, c.Evaluation)
	}
	// The check trains 3 transformer blocks; --vla-layers sets the network both stages
	// train, so the clone is another cache entry (--vla-layers 2: the earlier check).
	if c.Policy.VLA.Layers != 3 {
		t.Errorf("the check's VLA has %d layers, want 3", c.Policy.VLA.Layers)
	}
	shallow := twoLayerCheck(t)
	if shallow.Policy.VLA.Layers != 2 {
		t.Errorf("--vla-layers 2: vla %+v", shallow.Policy.VLA)
	}
	e3, _ := bcCache{dir: "c"}.entry("tabletop-spatial-vla", c, 1)
	e2, _ := bcCache{dir: "c"}.entry("tabletop-spatial-vla", shallow, 1)
	if e2 == e3 || !strings.HasPrefix(learnSettingsOf(shallow).String(), "VLA of 2 layers; ") ||
		!strings.HasPrefix(learnSettingsOf(c).String(), "VLA of 3 layers; ") {
		t.Errorf("--vla-layers 2: cache entry %s (3 layers: %s), settings %q (3 layers: %q)", e2, e3, learnSettingsOf(shallow), learnSettingsOf(c))
	}
	// --pretrain-epochs and --checkpoint-every set the cloning's epochs and the segment
	// length, and the result file's settings record both.
	ov = learnOverrides{given: map[string]bool{}, pretrainEpochs: 20, checkpointEvery: 4}
	if err := ov.apply("tabletop-spatial-vla", &c); err != nil || c.Pretrain.Epochs != 20 || c.Checkpoint.Every != 4 {
		t.Errorf("--pretrain-epochs 20 --checkpoint-every 4: %v, pretrain %+v, checkpoint %+v", err, c.Pretrain, c.Checkpoint)
	}
	if s := learnSettingsOf(c); s.PretrainEpochs != 20 || s.CheckpointEvery != 4 ||
		!strings.HasSuffix(s.String(), "evaluated greedy and sampled every 4 updates; cloned for 20 epochs; the clone and the final policy evaluated on 500 episodes") {
		t.Errorf("settings %+v, %q", s, s)
	}
}

// TestVLAExampleIsTheCheck: examples/vla.hcl is the recipe `bench learn tabletop-spatial-vla`
// measures (its comments quote the check's results), field for field, but for the cloning's
// epochs and the final evaluation's episodes: 12 and 100 by default, so that a first run
// stays well under an hour on 2 cores, and the check's 40 and 500 with -var epochs=40
// -var final_episodes=500; with -var layers=3 it is the check with --vla-layers 3.
func TestVLAExampleIsTheCheck(t *testing.T) {
	parse := func(vars map[string]string) specs.Config {
		t.Helper()
		exp, diags := specs.ParseFile(filepath.Join("..", "..", "examples", "vla.hcl"), vars)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return exp.Arms[0].Config
	}
	if c := parse(nil); c.Pretrain.Epochs != 12 || c.Evaluation.HeadlineEpisodes() != 100 {
		t.Errorf("examples/vla.hcl clones for %d epochs and evaluates the clone on %d episodes by default, want 12 and 100",
			c.Pretrain.Epochs, c.Evaluation.HeadlineEpisodes())
	}
	// -var layers=3 is the check itself (3 blocks, whose clones reach 89-91%).
	got, want := parse(map[string]string{"epochs": "40", "final_episodes": "500", "layers": "3"}), tabletopVLAConfig("spatial")
	// The spec keeps the MLP's default hidden layers and activation, which a VLA policy
	// never reads; the check leaves them empty (and its BC cache keys on that).
	got.Policy.Hidden, got.Policy.Activation = nil, ""
	if d := configDiff(got, want); d != "" {
		t.Errorf("examples/vla.hcl -var layers=3 differs from the check (example vs check):\n%s", d)
	}
	// By default the example trains 2 blocks, the check's --vla-layers 2: at its 12 epochs
	// 2 layers clone seed 1 to 65% where 3 clone it to 45% (the deeper network leaves its
	// loss plateau later; docs/results/vla-bc-notes.md).
	got = parse(map[string]string{"epochs": "40", "final_episodes": "500"})
	got.Policy.Hidden, got.Policy.Activation = nil, ""
	if d := configDiff(got, twoLayerCheck(t)); d != "" {
		t.Errorf("examples/vla.hcl differs from the check with --vla-layers 2 (example vs check):\n%s", d)
	}
}

// twoLayerCheck is the tabletop-spatial-vla check with --vla-layers 2: the check as it
// stood before it trained 3 layers (the example's default depth, the committed bc-cache).
func twoLayerCheck(t *testing.T) specs.Config {
	t.Helper()
	c := tabletopVLAConfig("spatial")
	if err := (learnOverrides{given: map[string]bool{}, vlaLayers: 2}).apply("tabletop-spatial-vla", &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// configDiff lists the fields where two configs differ, as JSON paths with both values,
// one per line; "" when they are equal.
func configDiff(a, b specs.Config) string {
	flat := func(c specs.Config) map[string]string {
		var v any
		j, _ := json.Marshal(c)
		_ = json.Unmarshal(j, &v)
		out := map[string]string{}
		var walk func(string, any)
		walk = func(path string, v any) {
			if m, ok := v.(map[string]any); ok {
				for k, x := range m {
					walk(path+"."+k, x)
				}
				return
			}
			j, _ := json.Marshal(v)
			out[path] = string(j)
		}
		walk("", v)
		return out
	}
	fa, fb := flat(a), flat(b)
	var out []string
	for k, x := range fa {
		if y, ok := fb[k]; !ok || x != y {
			out = append(out, fmt.Sprintf("%s: %s vs %s", k, x, y))
		}
	}
	for k, y := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, fmt.Sprintf("%s: (absent) vs %s", k, y))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestCommittedClones: the cloned policies committed under docs/results/bc-cache (one
// tar.gz per entry, made with `tar czf NAME.tar.gz -C CACHE NAME`) are entries of the
// tabletop-spatial-vla check with --vla-layers 2 (the 2-layer check they were cloned by),
// so that `bench learn tabletop-spatial-vla --vla-layers 2 --bc-cache DIR` finds them after
// they are unpacked. A change to the check's cloning recipe changes the entry names: this test then
// says which archives to delete (or to replace by clones of the new recipe).
func TestCommittedClones(t *testing.T) {
	archives, err := filepath.Glob(filepath.Join("..", "..", "docs", "results", "bc-cache", "*.tar.gz"))
	if err != nil || len(archives) == 0 {
		t.Skipf("no committed clones (%v)", err)
	}
	// They are the 2-layer check's clones (sessions 20-23): entries of --vla-layers 2.
	cfg := twoLayerCheck(t)
	c := bcCache{dir: "."}
	want := map[string]bool{}
	for seed := uint64(1); seed <= 3; seed++ {
		e, err := c.entry("tabletop-spatial-vla", cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(e)] = true
	}
	for _, a := range archives {
		if name := strings.TrimSuffix(filepath.Base(a), ".tar.gz"); !want[name] {
			t.Errorf("%s is not an entry of the tabletop-spatial-vla check with --vla-layers 2 as it now clones (entries: %v): "+
				"the recipe changed since it was committed; delete it, or commit the new recipe's clone", a, slices.Sorted(maps.Keys(want)))
		}
	}
}
