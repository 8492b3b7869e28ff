package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

func TestSolvedAt(t *testing.T) {
	curve := []evalPoint{{256, 100}, {512, 480}, {768, 300}, {1024, 475}, {1280, 490}, {1536, 500}, {1792, 10}}
	for _, tc := range []struct {
		hold  int
		steps int64
		ok    bool
	}{
		{1, 512, true},  // the first evaluation at the target
		{2, 1024, true}, // 512 is followed by 300; 1024 and 1280 are two in a row (475 counts)
		{3, 1024, true}, // 1024, 1280, 1536
		{4, 0, false},   // never four in a row
		{1, 512, true},  // repeatable
	} {
		steps, ok := solvedAt(curve, 475, tc.hold)
		if steps != tc.steps || ok != tc.ok {
			t.Errorf("hold %d: got (%d, %v), want (%d, %v)", tc.hold, steps, ok, tc.steps, tc.ok)
		}
	}
	if _, ok := solvedAt(nil, 475, 1); ok {
		t.Error("an empty curve is solved")
	}
}

// TestSampleSeedRate: a seed's ratios by hand: both arms reached, only the world model
// (the baseline's budget a lower bound), neither, and both solved by the warm start (no
// ratio; left out of the median).
func TestSampleSeedRate(t *testing.T) {
	arm := func(steps int64, reached bool, offline int64) sampleArm {
		return sampleArm{StepsToTarget: steps, Reached: reached, EnvSteps: 16384, OfflineSteps: offline}
	}
	for _, tc := range []struct {
		name           string
		wm, base       sampleArm
		ratio, withOff float64
		bound, atStart bool
	}{
		{"both", arm(1024, true, 3072), arm(8192, true, 0), 8, 2, false, false},            // 8192/1024; 8192/(1024+3072)
		{"wm only", arm(4096, true, 4096), arm(0, false, 0), 4, 2, true, false},            // 16384/4096; 16384/8192
		{"neither", arm(0, false, 100), arm(0, false, 0), 0, 0, false, false},              // no ratio
		{"wm at 0 steps", arm(0, true, 4096), arm(2048, true, 0), 2048, 0.5, false, false}, // 2048/max(1, 0); 2048/4096
		{"warm start", arm(0, true, 4096), arm(0, true, 0), 0, 0, false, true},
	} {
		s := sampleSeed{WorldModel: tc.wm, Baseline: tc.base}
		s.rate()
		if s.Ratio != tc.ratio || s.RatioWithOffline != tc.withOff || s.RatioBound != tc.bound || s.SolvedAtWarmStart != tc.atStart {
			t.Errorf("%s: ratio %v, with offline %v, bound %v, solved at warm start %v; want %v, %v, %v, %v",
				tc.name, s.Ratio, s.RatioWithOffline, s.RatioBound, s.SolvedAtWarmStart, tc.ratio, tc.withOff, tc.bound, tc.atStart)
		}
	}
}

// A short no-world-model arm runs segments of --eval-every steps' worth of updates, evaluates
// at the end of each (as `accerl run` does with an evaluation block), and counts evaluation
// steps apart from its online steps.
func TestSampleArmEvaluatesOnSchedule(t *testing.T) {
	cfg := cleanRLConfig(specs.EnvCartPole, specs.AlgorithmPPO, 2048)
	ev := sampleEval{episodes: 2, every: 1100, hold: 1, window: 5, target: 475, keep: t.TempDir()}
	arm, err := runSampleArm(context.Background(), cfg, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	// --keep: the run directory stays, with the metrics `accerl run` writes, and is not
	// overwritten by a second run of the same arm and seed.
	kept := filepath.Join(ev.keep, "no-world-model", "seed-1")
	if rows, _, err := runstore.ReadRun(kept); err != nil || len(rows) != 4 {
		t.Errorf("kept run %s: %d metrics rows, %v; want the 4 updates'", kept, len(rows), err)
	}
	if _, err := runSampleArm(context.Background(), cfg, 1, ev); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("second run into the kept directory: %v", err)
	}
	// 512 steps per update: 1100 steps are 2 whole updates, so segments of 2 updates end at
	// 1024 and 2048 (the budget) steps.
	want := []int64{1024, 2048}
	if len(arm.Curve) != len(want) || arm.Evaluations != len(want) {
		t.Fatalf("evaluations at %v, want at %v", arm.Curve, want)
	}
	for i, p := range arm.Curve {
		if p.EnvSteps != want[i] {
			t.Fatalf("evaluation %d at %d steps, want %d", i, p.EnvSteps, want[i])
		}
	}
	if arm.EnvSteps != 2048 || arm.Updates != 4 {
		t.Fatalf("arm took %d steps in %d updates, want 2048 in 4", arm.EnvSteps, arm.Updates)
	}
	// Each evaluation plays 2 CartPole episodes; even pushing one way throughout takes about
	// 8 steps to tip the pole past 12°, so 5 per episode is a floor with a margin.
	if arm.EvalSteps < int64(2*5*len(want)) {
		t.Fatalf("evaluation steps %d, want at least %d", arm.EvalSteps, 2*5*len(want))
	}
	// Four updates of PPO do not solve CartPole.
	if arm.Reached || arm.TrainReached {
		t.Fatalf("solved CartPole in 2048 steps: %+v", arm)
	}
}

// The tabletop arms of one seed start from one behaviour-cloned VLA: the first arm clones
// and caches it, the second restores it (same warm-start success at 0 online steps), and
// only the world-model arm records offline episodes and trains on imagined steps. Sizes are
// the crash test's tiny VLA and pixel world model, so that the test takes seconds.
func TestSampleTabletopArmsShareTheClone(t *testing.T) {
	tiny := func(grpo bool, group int) (base, wm specs.Config) {
		base = sampleTabletopConfig(tabletop.SuiteSpatial, 512, grpo)
		base.Env.Tasks, base.Env.ImageSize = []int{0, 1}, 16
		v := *base.Policy.VLA
		v.Dim, v.Layers = 16, 1
		base.Policy.VLA, base.Policy.ActionChunk, base.Policy.ExecuteSteps = &v, 4, 2
		base.Pretrain.DemosPerTask, base.Pretrain.Epochs = 4, 2
		base.Algorithm.BatchSteps, base.Algorithm.Epochs, base.Algorithm.Minibatches = 256, 1, 2
		base.Pipeline.Workers, base.Pipeline.EnvsPerWorker, base.Pipeline.ChunkSteps = 2, 2, 64
		wm = sampleTabletopWM(base, 10, 0.5, 10, 1, group)
		px := *wm.WorldModel.Pixels
		px.RewSteps, px.ProprioSteps = 50, 50
		wm.WorldModel.Pixels, wm.WorldModel.History = &px, 2
		return base, wm
	}
	base, wm := tiny(false, 0)

	ev := sampleEval{episodes: 2, every: 256, hold: 1, greedy: true, window: 5, target: 0.9,
		bc: &bcCache{dir: t.TempDir()}, check: "tabletop-spatial-vla", wm: &wmCache{dir: t.TempDir()}}
	ctx := context.Background()
	first, err := runSampleArm(ctx, base, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	second, err := runSampleArm(ctx, wm, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	if first.BCCached || !second.BCCached || first.WMCached || second.WMCached {
		t.Fatalf("clone cached: first arm %v, second %v; want the second to restore the first's", first.BCCached, second.BCCached)
	}
	for name, a := range map[string]sampleArm{"baseline": first, "world model": second} {
		if a.BCSuccess == nil || len(a.Curve) != a.Evaluations+1 || a.Curve[0] != (evalPoint{0, *a.BCSuccess}) {
			t.Fatalf("%s arm: BC success %v, curve %v after %d evaluations; want the warm start's success first, at 0 steps", name, a.BCSuccess, a.Curve, a.Evaluations)
		}
		if a.EnvSteps != 512 || a.DemoSteps == 0 {
			t.Fatalf("%s arm: %d online steps, %d demonstration steps; want the budget's 512 and the clone's demonstrations", name, a.EnvSteps, a.DemoSteps)
		}
	}
	// Greedy evaluation of the same clone on the same fixed initial states: equal exactly.
	if *first.BCSuccess != *second.BCSuccess || first.DemoSteps != second.DemoSteps {
		t.Fatalf("warm starts differ: success %v vs %v, demo steps %d vs %d", *first.BCSuccess, *second.BCSuccess, first.DemoSteps, second.DemoSteps)
	}
	if first.OfflineSteps != 0 || first.ImaginedSteps != 0 || second.OfflineSteps == 0 || second.ImaginedSteps == 0 {
		t.Fatalf("offline/imagined steps: baseline %d/%d, world model %d/%d; want only the world model's", first.OfflineSteps, first.ImaginedSteps,
			second.OfflineSteps, second.ImaginedSteps)
	}
	// --wm-cache: the world-model arm saved its pretrained world model; the same arm again
	// restores it, and its pretraining resumes at the end: the final checkpoint is the
	// cached one, its manifest (with its creation time) not rewritten.
	entry, err := ev.wm.entry(wm, 1)
	if err != nil {
		t.Fatal(err)
	}
	again := ev
	again.keep = t.TempDir()
	fourth, err := runSampleArm(ctx, wm, 1, again)
	if err != nil {
		t.Fatal(err)
	}
	if !fourth.WMCached || fourth.OfflineSteps != second.OfflineSteps || fourth.EnvSteps != 512 || fourth.ImaginedSteps == 0 {
		t.Fatalf("world-model arm again: cached %v, %d offline steps (first time %d), %d online, %d imagined; want the cached model, the same offline steps, 512 and some",
			fourth.WMCached, fourth.OfflineSteps, second.OfflineSteps, fourth.EnvSteps, fourth.ImaginedSteps)
	}
	manifests, _ := filepath.Glob(filepath.Join(entry, "pretrain", "step-*", "manifest.json"))
	if len(manifests) == 0 {
		t.Fatalf("cache entry %s holds no pretraining checkpoint", entry)
	}
	for _, m := range manifests {
		rel, _ := filepath.Rel(entry, m)
		want, _ := os.ReadFile(m)
		got, err := os.ReadFile(filepath.Join(activities.WorldModelDir(filepath.Join(again.keep, "world-model", "seed-1")), rel))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s in the restored run: %q (%v); want the cache's %q, not pretrained again", rel, got, err, want)
		}
	}
	// Another pretraining recipe is another entry.
	other := wm
	px := *wm.WorldModel.Pixels
	px.ObsSteps++
	other.WorldModel.Pixels = &px
	if e2, _ := ev.wm.entry(other, 1); e2 == entry {
		t.Fatalf("entry %s for two pretraining recipes", entry)
	}
	// --grpo-group: the world-model arm with GRPO over groups of 4 imagined rollouts runs
	// through the same path from the same clone and trains on imagined steps.
	_, grpoWM := tiny(true, 4)
	third, err := runSampleArm(ctx, grpoWM, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	if !third.BCCached || third.EnvSteps != 512 || third.ImaginedSteps == 0 || *third.BCSuccess != *first.BCSuccess {
		t.Fatalf("GRPO world-model arm: cached %v, %d online and %d imagined steps, warm start %v; want the cached clone, 512 and some", third.BCCached,
			third.EnvSteps, third.ImaginedSteps, *third.BCSuccess)
	}
	// One GRPO count per update; the critic-recipe arms record none.
	if len(third.GRPOEpisodes) != int(third.Updates) || len(third.GRPOMoved) != int(third.Updates) || len(first.GRPOEpisodes) != 0 {
		t.Fatalf("GRPO curves: %v / %v over %d updates (baseline %v); want one count per update, none without GRPO", third.GRPOEpisodes, third.GRPOMoved, third.Updates, first.GRPOEpisodes)
	}
	// The imagined rollouts' share: per update some ended (groups of 4 at horizon 2-5),
	// no more than all the ended episodes, and their successes and moved ones among them.
	im := third.Imagined
	if im == nil || len(im.Ended) != int(third.Updates) || first.Imagined != nil {
		t.Fatalf("imagined GRPO counts %+v over %d updates (baseline %+v); want one per update, none without imagination", im, third.Updates, first.Imagined)
	}
	for i, n := range im.Ended {
		if n == 0 || n > third.GRPOEpisodes[i] || im.Success[i] > n || im.Moved[i] > min(n, third.GRPOMoved[i]) {
			t.Errorf("update %d: %d imagined rollouts ended of %d episodes, %d successes, %d moved of %d", i, n, third.GRPOEpisodes[i], im.Success[i], im.Moved[i], third.GRPOMoved[i])
		}
	}
}

// Bad flags of the tabletop benchmark are refused before anything trains, naming the flag
// and what to give instead.
func TestSampleTabletopFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "tabletop", "--suite", "kitchen"}, `--suite "kitchen": choose one of goal, long, object, spatial`},
		{[]string{"--env", "tabletop", "--offline", "5"}, "--offline 5: the pixel world model holds out one episode in ten"},
		{[]string{"--env", "tabletop", "--imagination-ratio", "1"}, "--imagination-ratio 1: give a share in (0, 1)"},
		{[]string{"--obs-steps", "10"}, "--obs-steps is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--wm-fit-steps", "4"}, "--wm-fit-steps is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--env", "tabletop", "--obs-steps", "-1"}, "--obs-steps -1: give a positive number"},
		{[]string{"--env", "tabletop", "--wm-fit-steps", "-2"}, "--wm-fit-steps -2: give a positive number"},
		{[]string{"--vla-layers", "3"}, "--vla-layers is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--pretrain-from", "x.model"}, "--pretrain-from is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--grpo-group", "8"}, "--grpo-group is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--imagined-temperature", "0.3"}, "--imagined-temperature is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--graded-imagined"}, "--graded-imagined is for --env tabletop"},
		{[]string{"--rew-imagined", "4"}, "--rew-imagined is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--rew-counterfactual", "2"}, "--rew-counterfactual is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--env", "tabletop", "--rew-imagined", "65"}, "--rew-imagined 65: give the imagined endings per offline episode, 1 to 64, or 0 for none"},
		{[]string{"--env", "tabletop", "--rew-counterfactual", "-1"}, "--rew-counterfactual -1: give the imagined endings per offline episode, 1 to 64, or 0 for none"},
		{[]string{"--env", "tabletop", "--graded-imagined"}, "--graded-imagined ranks the imagined rollouts of a start against each other under GRPO; give --grpo-group 8"},
		{[]string{"--env", "tabletop", "--imagined-temperature", "11"}, "--imagined-temperature 11: give a sampling temperature in (0, 10]"},
		{[]string{"--env", "tabletop", "--imagined-temperature", "-1"}, "--imagined-temperature -1: give a sampling temperature"},
		{[]string{"--env", "tabletop", "--tempered-imagined"}, "--tempered-imagined evaluates the imagined actions at the temperature they were sampled at; give --imagined-temperature 0.3 with it"},
		{[]string{"--tempered-imagined"}, "--tempered-imagined is for --env tabletop"},
		{[]string{"--wm-cache", "x"}, "--wm-cache is for --env tabletop"},
		{[]string{"--imagined-start-within", "8"}, "--imagined-start-within is for --env tabletop"},
		{[]string{"--env", "tabletop", "--imagined-start-within", "-1"}, "--imagined-start-within -1: give the policy steps before an episode's end"},
		{[]string{"--env", "tabletop", "--grpo-group", "1"}, "--grpo-group 1: GRPO compares the imagined rollouts of a start with each other; give at least 2"},
		{[]string{"--env", "tabletop", "--grpo-group", "-3"}, "--grpo-group -3: GRPO compares"},
		{[]string{"--env", "tabletop", "--vla-layers", "-1"}, "--vla-layers -1: give the micro-VLA's transformer blocks, at least 1"},
		{[]string{"--horizon-max", "10"}, "--horizon-max is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--self-forcing", "4"}, "--self-forcing is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop"},
		{[]string{"--rew-counterfactual-jitter", "0.3"}, "--rew-counterfactual-jitter is for --env tabletop"},
		{[]string{"--env", "tabletop", "--rew-counterfactual-jitter", "0.3"}, "--rew-counterfactual-jitter 0.3: give the noise σ (action units, 0 to 2; 0.3 was measured) on the episodes' own actions that drive M_rew's counterfactual endings, with --rew-counterfactual N"},
		{[]string{"--env", "tabletop", "--rew-counterfactual", "4", "--rew-counterfactual-jitter", "3"}, "--rew-counterfactual-jitter 3: give the noise σ"},
		{[]string{"--env", "tabletop", "--horizon-max", "-1"}, "--horizon-max -1: give the longest imagination in policy steps, at least 1, or 0 for 50"},
		{[]string{"--env", "tabletop", "--self-forcing", "5"}, "--self-forcing 5 --self-forcing-from 0: give a depth of 1 to 4"},
		{[]string{"--env", "tabletop", "--self-forcing-from", "100"}, "--self-forcing 0 --self-forcing-from 100: give a depth of 1 to 4"},
		// The start must come before the pretraining's end: the default 400 steps, or --obs-steps.
		{[]string{"--env", "tabletop", "--self-forcing", "4", "--self-forcing-from", "400"}, "and a start below --obs-steps (400)"},
		{[]string{"--env", "tabletop", "--obs-steps", "2000", "--self-forcing", "4", "--self-forcing-from", "2000"}, "and a start below --obs-steps (2000)"},
		{[]string{"--env", "tabletop", "--seeds", "4", "--pretrain-from", "/nonexistent/clone-seed{seed}.model"}, "--pretrain-from /nonexistent/clone-seed4.model: no such file or directory"},
	} {
		err := benchSample(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// The header names the world-model arm's recipe before the first arm runs (here the
	// missing clone stops it).
	var out strings.Builder
	args := []string{"--env", "tabletop", "--seeds", "4", "--pretrain-from", "/nonexistent/clone.model", "--rew-counterfactual", "4",
		"--rew-counterfactual-jitter", "0.3", "--horizon-max", "10", "--self-forcing", "4", "--self-forcing-from", "100"}
	if err := benchSample(context.Background(), args, &out, io.Discard); err == nil {
		t.Fatal("a missing clone ran")
	}
	for _, want := range []string{"(4 driven by the episode's own actions with noise σ 0.3, labelled by the simulator)",
		"; imagination at most 10 policy steps", "; M_obs self-forced (depth 4) from step 100"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("header %q lacks %q", out.String(), want)
		}
	}
}

// TestTabletopWMFlagsApply: the world-model arm's pixel flags land in the pixels block and
// the horizon schedule that `accerl run` reads, and nothing else moves.
func TestTabletopWMFlagsApply(t *testing.T) {
	base := sampleTabletopWM(sampleTabletopConfig("spatial", 4096, true), 200, 0.5, 2000, 8, 8)
	f := tabletopWMFlags{temperature: 0.3, tempered: true, startWithin: 8, graded: true, rewImagined: 1, rewCounterfactual: 4, rewCounterfactualJitter: 0.3, selfForcing: 4, selfForcingFrom: 1600, horizonMax: 3}
	got := base.Clone()
	f.apply(&got)
	want := base.Clone()
	px := want.WorldModel.Pixels
	px.Temperature, px.Graded, px.RewImagined, px.RewCounterfactual, px.SelfForcing, px.SelfForcingFrom = 0.3, true, 1, 4, 4, 1600
	px.RewCounterfactualJitter, px.Tempered, px.StartWithin = 0.3, true, 8
	// A cap below the schedule's start of 5 starts it at the cap.
	want.WorldModel.Horizon.Start, want.WorldModel.Horizon.End = 3, 3
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("applied flags:\n got %+v %+v\nwant %+v %+v", got.WorldModel, *got.WorldModel.Pixels, want.WorldModel, *want.WorldModel.Pixels)
	}
	// No cap keeps the schedule 5..50; a cap above the start keeps the start.
	for cap, want := range map[int]specs.Horizon{0: {Start: 5, End: 50}, 10: {Start: 5, End: 10}} {
		c := base.Clone()
		tabletopWMFlags{horizonMax: cap}.apply(&c)
		if h := c.WorldModel.Horizon; h.Start != want.Start || h.End != want.End {
			t.Errorf("--horizon-max %d: horizon %d..%d, want %d..%d", cap, h.Start, h.End, want.Start, want.End)
		}
	}
}

// wmCache.save copies a finished pretraining's world-model directory into its entry, keeps
// an entry saved before (another bench's), leaves no temporary directory behind, and saves
// nothing for a run whose pretraining left no scores.
func TestWMCacheSave(t *testing.T) {
	c := wmCache{dir: t.TempDir()}
	run := func(scores, marker string) string {
		dir := t.TempDir()
		wm := activities.WorldModelDir(dir)
		if err := os.MkdirAll(filepath.Join(wm, "pretrain"), 0o755); err != nil {
			t.Fatal(err)
		}
		if scores != "" {
			if err := os.WriteFile(filepath.Join(wm, activities.PixelScoresFile), []byte(scores), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(wm, "pretrain", "marker"), []byte(marker), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	entry := filepath.Join(c.dir, "pixel-wm-spatial-seed1-abc")
	if err := c.save(entry, run("", "unfinished")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err == nil {
		t.Fatal("saved an entry for a pretraining that left no scores")
	}
	if err := c.save(entry, run("{}", "first")); err != nil {
		t.Fatal(err)
	}
	if err := c.save(entry, run("{}", "second")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(entry, "pretrain", "marker")); err != nil || string(b) != "first" {
		t.Fatalf("entry holds %q (%v), want the first save's", b, err)
	}
	left, _ := os.ReadDir(c.dir)
	if len(left) != 1 {
		t.Fatalf("cache directory holds %d entries, want the one (no temporary left)", len(left))
	}
}
