package activities

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// tinyBC is a small behaviour-cloning arm: spatial task 0, a few demonstrations, a small
// chunked gaussian policy, greedy evaluation from the fixed initial states.
func tinyBC() specs.Config {
	c := specs.DefaultConfig()
	c.Budget.EnvSteps = 256
	c.Env = specs.Env{Kind: specs.EnvTabletop, Suite: "spatial", Tasks: []int{0}, MaxEpisodeSteps: 220, ImageSize: 64,
		Cameras: []string{"agentview", "wrist"}, Latency: c.Env.Latency}
	c.Policy = specs.Policy{Action: specs.ActionGaussian, Hidden: []int{128, 128}, Activation: specs.ActivationReLU,
		Bins: 256, InitLogStd: -2.3, ActionChunk: 8, ExecuteSteps: 4}
	c.Pretrain = specs.DefaultPretrain()
	c.Pretrain.DemosPerTask, c.Pretrain.Epochs = 30, 15
	c.Algorithm.BatchSteps, c.Algorithm.Minibatches, c.Algorithm.Epochs = 128, 2, 1
	c.Pipeline.Mode, c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = specs.ModeSync, 2, 2
	c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity = 32, 256
	c.Evaluation = specs.Evaluation{Episodes: 10, Greedy: true}
	return c
}

func runPretrain(t *testing.T, in PretrainPolicyInput) PretrainPolicyResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&Trainer{})
	v, err := env.ExecuteActivity((&Trainer{}).PretrainPolicy, in)
	if err != nil {
		t.Fatal(err)
	}
	var res PretrainPolicyResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPretrainPolicyResumes: PretrainPolicy checkpoints every epoch; after a crash (the
// final checkpoint and the later epochs gone) it resumes from the newest epoch and ends
// with exactly the parameters of the uninterrupted run; after completion it returns the
// stored result. Its success rate is the one the engine the segments use measures with the
// loaded parameters, and the first segment starts from them.
func TestPretrainPolicyResumes(t *testing.T) {
	c := tinyBC()
	dir := t.TempDir()
	in := PretrainPolicyInput{RunDir: dir, SpecHash: "h", Config: c, Seed: 1}
	first := runPretrain(t, in)
	if first.Demos != 30 || first.DemoSteps <= 0 || len(first.EpochLoss) != 15 || first.ResumedFrom != 0 || !first.HasSuccess || first.EvalEpisodes != 10 {
		t.Fatalf("result %+v: want 30 demos, 15 epoch losses, a fresh start and a success rate over 10 episodes", first)
	}
	if first.EpochLoss[14] >= first.EpochLoss[0] {
		t.Errorf("BC loss %v did not fall", first.EpochLoss)
	}
	var sum runstore.PretrainSummary
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.PretrainFile), &sum); err != nil || sum.Demos != 30 || !slices.Equal(sum.EpochLoss, first.EpochLoss) {
		t.Fatalf("pretrain.json %+v (%v), want the result's demos and losses", sum, err)
	}
	want, err := loadBCPolicy(first.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}

	// The engine of the run's segments, loaded with the warm start, measures the same success.
	eng, err := NewEngine(c, 1, int(c.TotalUpdates()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.LoadPolicy(want.Params); err != nil {
		t.Fatal(err)
	}
	ev, err := eng.Evaluate(c.Evaluation.Episodes, engine.EvalSeed(1), true)
	if err != nil {
		t.Fatal(err)
	}
	if ev.SuccessRate() != first.Success {
		t.Errorf("engine measures success %v with the warm start, PretrainPolicy reported %v", ev.SuccessRate(), first.Success)
	}
	// Split by task (one task here): its episodes and successes are the evaluation's, in
	// the result and in pretrain.json.
	wantTasks := []runstore.TaskSuccess{{Task: 0, Instruction: tabletop.Instruction("spatial", 0), Episodes: 10, Successes: ev.Successes}}
	if !slices.Equal(first.Tasks, wantTasks) || !slices.Equal(sum.Tasks, wantTasks) {
		t.Errorf("per-task success: result %+v, pretrain.json %+v; want %+v", first.Tasks, sum.Tasks, wantTasks)
	}
	if n := countTrue(ev.Succeeded); n != ev.Successes || len(ev.Succeeded) != 10 {
		t.Errorf("Succeeded %v has %d of %d true, want %d", ev.Succeeded, n, len(ev.Succeeded), ev.Successes)
	}
	t.Logf("BC success %.2f, loss %.4f → %.4f", first.Success, first.EpochLoss[0], first.EpochLoss[14])

	// Crash after epoch 14 was saved: its checkpoint and epoch 13's are on disk.
	for _, d := range []string{"final", "epoch-000015"} {
		if err := os.RemoveAll(filepath.Join(BCDir(dir), d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(BCDir(dir), "epoch-000014")); err != nil {
		t.Fatalf("epoch 14's checkpoint is gone (pruned too eagerly?): %v", err)
	}
	resumed := runPretrain(t, in)
	if resumed.ResumedFrom != 14 || !slices.Equal(resumed.EpochLoss, first.EpochLoss) || resumed.Success != first.Success {
		t.Errorf("resumed: from epoch %d, losses %v, success %v; want from 14 with %v and %v", resumed.ResumedFrom, resumed.EpochLoss, resumed.Success, first.EpochLoss, first.Success)
	}
	got, err := loadBCPolicy(resumed.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Params, want.Params) {
		t.Error("the resumed warm start's parameters differ from the uninterrupted one's")
	}
	again := runPretrain(t, in)
	if again.ResumedFrom != resumed.ResumedFrom || again.WallS != resumed.WallS {
		t.Errorf("a retry after completion redid the work: %+v", again)
	}
	// A finished warm start copied into another run directory (a moved run, or bench
	// learn's --bc-cache) refers to the copy, not to where it was saved.
	moved := t.TempDir()
	if err := os.CopyFS(moved, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	// The original is out of the way while the copy is read.
	if err := os.Rename(BCDir(dir), BCDir(dir)+".away"); err != nil {
		t.Fatal(err)
	}
	copied := runPretrain(t, PretrainPolicyInput{RunDir: moved, SpecHash: "h", Config: c, Seed: 1})
	if want := BCPolicyDir(moved); copied.Checkpoint != want || copied.WallS != resumed.WallS {
		t.Errorf("copied run: checkpoint %q (wall %v), want %q without cloning again", copied.Checkpoint, copied.WallS, want)
	}
	if err := os.Rename(BCDir(dir)+".away", BCDir(dir)); err != nil {
		t.Fatal(err)
	}

	// A finished warm start asked for a sampled evaluation it does not have (bench learn
	// --eval-sampled on a --bc-cache copy) plays it, on the engine's sampling with the
	// loaded parameters, and keeps everything else.
	sampled := c
	sampled.Evaluation.Sampled = true
	withSampled := runPretrain(t, PretrainPolicyInput{RunDir: moved, SpecHash: "h", Config: sampled, Seed: 1})
	evS, err := eng.Evaluate(c.Evaluation.Episodes, engine.EvalSeed(1), false)
	if err != nil {
		t.Fatal(err)
	}
	if !withSampled.HasSampledSuccess || withSampled.SampledSuccess != evS.SuccessRate() || withSampled.Success != first.Success || withSampled.WallS != resumed.WallS {
		t.Errorf("sampled evaluation of a finished warm start: %+v; want sampled success %v beside success %v, nothing cloned again",
			withSampled, evS.SuccessRate(), first.Success)
	}
	if err := runstore.ReadJSON(filepath.Join(moved, runstore.PretrainFile), &sum); err != nil || !sum.HasSampledSuccess || sum.SampledSuccess != evS.SuccessRate() {
		t.Errorf("pretrain.json after the sampled evaluation: %+v (%v)", sum, err)
	}
	wantSampled := []runstore.TaskSuccess{{Task: 0, Instruction: tabletop.Instruction("spatial", 0), Episodes: 10, Successes: evS.Successes}}
	if !slices.Equal(withSampled.SampledTasks, wantSampled) || !slices.Equal(sum.SampledTasks, wantSampled) {
		t.Errorf("sampled split: result %+v, pretrain.json %+v; want %+v", withSampled.SampledTasks, sum.SampledTasks, wantSampled)
	}

	// A clone saved by a build that did not split its evaluations by task gets the split
	// when a run loads it, from the same episodes (nothing cloned again).
	old, err := loadBCPolicy(BCPolicyDir(moved))
	if err != nil {
		t.Fatal(err)
	}
	old.Result.Tasks, old.Result.SampledTasks = nil, nil
	if err := saveBCPolicy(BCPolicyDir(moved), "h", old); err != nil {
		t.Fatal(err)
	}
	split := runPretrain(t, PretrainPolicyInput{RunDir: moved, SpecHash: "h", Config: sampled, Seed: 1})
	if !slices.Equal(split.Tasks, wantTasks) || !slices.Equal(split.SampledTasks, wantSampled) || split.Success != first.Success || split.WallS != resumed.WallS {
		t.Errorf("older clone: tasks %+v, sampled %+v, success %v, wall %v; want %+v, %+v, %v, %v",
			split.Tasks, split.SampledTasks, split.Success, split.WallS, wantTasks, wantSampled, first.Success, resumed.WallS)
	}

	// The first segment starts from the warm start (a wrong-sized policy is refused).
	runner := newSegmentRunner(t)
	res := runner.run(TrainSegmentInput{RunDir: dir, Experiment: "e", Arm: "base", Seed: 1, SpecHash: "h", Config: c,
		Plan: runstate.Plan{Segment: 1, Updates: 1, TotalUpdates: 2, PolicyState: first.Checkpoint}})
	if res.EnvSteps <= 0 {
		t.Errorf("segment 1 from the warm start: %+v", res)
	}
	other := c
	other.Policy.Hidden = []int{32}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&Trainer{})
	if _, err := env.ExecuteActivity((&Trainer{}).TrainSegment, TrainSegmentInput{RunDir: t.TempDir(), Experiment: "e", Arm: "base",
		Seed: 1, SpecHash: "h", Config: other, Plan: runstate.Plan{Segment: 1, Updates: 1, TotalUpdates: 2, PolicyState: first.Checkpoint}}); err == nil {
		t.Error("a segment of a different network accepted the warm start")
	}
}

// stepEnv is a 1-D environment that pays 1 per step, records the actions it gets and ends
// after limit steps.
type stepEnv struct {
	got   []float64
	limit int
}

func (e *stepEnv) ObsDim() int { return 1 }
func (e *stepEnv) ActionSpace() engine.ActionSpace {
	return engine.ActionSpace{Low: []float64{-1}, High: []float64{1}}
}
func (e *stepEnv) Reset(*rand.Rand) []float64 { e.got = nil; return []float64{0} }
func (e *stepEnv) Step(a []float64) engine.StepResult {
	e.got = append(e.got, a...)
	return engine.StepResult{Obs: []float64{0}, Reward: 1, Terminated: len(e.got) >= e.limit}
}
func (e *stepEnv) MarshalBinary() ([]byte, error) { return nil, nil }
func (e *stepEnv) UnmarshalBinary([]byte) error   { return nil }

// TestChunkEnv: a chunk of k actions runs its first execute ones, sums their rewards, and
// stops where the episode ends.
func TestChunkEnv(t *testing.T) {
	inner := &stepEnv{limit: 5}
	e := chunkEnv{Env: inner, k: 3, execute: 2}
	if s := e.ActionSpace(); len(s.Low) != 3 || len(s.High) != 3 || s.N != 0 {
		t.Fatalf("chunk action space %+v, want 3 continuous dims", s)
	}
	e.Reset(nil)
	r := e.Step([]float64{0.1, 0.2, 0.3})
	if r.Reward != 2 || r.Terminated || !slices.Equal(inner.got, []float64{0.1, 0.2}) {
		t.Fatalf("first chunk: reward %v, terminated %v, executed %v; want 2, false, [0.1 0.2]", r.Reward, r.Terminated, inner.got)
	}
	e.Step([]float64{0.4, 0.5, 0.6})
	r = e.Step([]float64{0.7, 0.8, 0.9})
	if r.Reward != 1 || !r.Terminated || !slices.Equal(inner.got, []float64{0.1, 0.2, 0.4, 0.5, 0.7}) {
		t.Errorf("last chunk: reward %v, terminated %v, executed %v; want 1 (ended after one step), true", r.Reward, r.Terminated, inner.got)
	}
}

// TestBCVLAConfigFromSpec checks that a spec's vla, chunk, env and pretrain blocks reach the
// VLA cloner's config, soft labels included.
func TestBCVLAConfigFromSpec(t *testing.T) {
	exp, diags := specs.Parse("vla.hcl", []byte(`
experiment "v" {
  budget { env_steps = 1024 }
  env "tabletop" {
    suite      = "spatial"
    pixels     = true
    image_size = 32
  }
  policy {
    action        = "tokens"
    action_chunk  = 8
    execute_steps = 2
    vla {
      dim    = 32
      layers = 1
    }
  }
  pretrain {
    epochs      = 3
    batch       = 16
    label_sigma = 3
    shift       = 1
  }
}`), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := BCVLAConfig(exp.Arms[0].Config, 7)
	if got.Chunk != 8 || got.Execute != 2 || got.Dim != 32 || got.Layers != 1 || got.ImageSize != 32 || got.Epochs != 3 ||
		got.Batch != 16 || got.LabelSigma != 3 || got.Shift != 1 || got.Seed != 7 {
		t.Errorf("BCVLAConfig = %+v", got)
	}
}

// TestExecutedOnlyWarmStart: an arm with policy.vla.executed_only starts its engine from a
// policy cloned on whole chunks cut to the executed actions' tokens (vla.KeepActions), and
// plays the same greedy evaluation as the arm that decodes whole chunks (the decoding is
// causal over the action tokens). The cloned parameters here are a random VLA of the clone's
// shape: what is checked is the mapping, not the policy.
func TestExecutedOnlyWarmStart(t *testing.T) {
	c := tinyVLAArm()
	v := *c.Policy.VLA
	c.Evaluation = specs.Evaluation{Episodes: 3, Greedy: true}
	mc := BCVLAConfig(c, 0).ModelConfig()
	params := vla.NewNet[float64](mc, rand.New(rand.NewPCG(5, 6))).Params()
	play := func(c specs.Config) (engine.EvalResult, string) {
		t.Helper()
		var r engine.EvalResult
		var sum string
		err := withCloneEngine(c, 1, params, func(eng *engine.Engine) error {
			sum = eng.ParamsSHA256()
			var err error
			r, err = eng.Evaluate(c.Evaluation.Episodes, engine.EvalSeed(1), true)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return r, sum
	}
	whole, wholeSum := play(c)
	eo := c
	ev := v
	ev.ExecutedOnly = true
	eo.Policy.VLA = &ev
	cut, cutSum := play(eo)
	if !slices.Equal(whole.Returns, cut.Returns) || !slices.Equal(whole.Lengths, cut.Lengths) {
		t.Errorf("greedy evaluation: whole chunks %v / %v, executed actions only %v / %v", whole.Returns, whole.Lengths, cut.Returns, cut.Lengths)
	}
	kept, _, err := vla.KeepActions(mc, params, 2*tabletop.ActionDim)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, p := range kept {
		h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(p)))
	}
	if got := hex.EncodeToString(h.Sum(nil)); cutSum != got || cutSum == wholeSum {
		t.Errorf("the executed-only engine's parameters hash to %s, the cut clone's to %s (the whole clone's: %s)", cutSum, got, wholeSum)
	}
}

// TestPlaySampledAgain: a finished clone's sampled evaluation is played (again) when the
// arm asks for one and the clone has none, or has one at another VLA temperature (a clone
// reused by `bench learn --bc-cache` under a new policy.vla.temperature); an MLP arm's has
// no temperature.
func TestPlaySampledAgain(t *testing.T) {
	mlp := tinyBC()
	mlp.Evaluation.Sampled = true
	vlaArm := mlp
	v := specs.DefaultVLA()
	v.Temperature = 0.1
	vlaArm.Policy.VLA = &v
	played := func(temp float64) PretrainPolicyResult {
		return PretrainPolicyResult{HasSampledSuccess: true, SampledSuccess: 0.2, SampledTemperature: temp}
	}
	for _, tc := range []struct {
		name string
		c    specs.Config
		r    PretrainPolicyResult
		want bool
	}{
		{"mlp, none played", mlp, PretrainPolicyResult{}, true},
		{"mlp, played", mlp, played(0), false},
		{"vla, played at its temperature", vlaArm, played(0.1), false},
		{"vla, played at another", vlaArm, played(0.03), true},
		{"vla, played before temperatures were recorded", vlaArm, played(0), true},
		{"greedy only", tinyBC(), PretrainPolicyResult{}, false},
	} {
		if got := playSampledAgain(tc.c, tc.r); got != tc.want {
			t.Errorf("%s: play again %v, want %v", tc.name, got, tc.want)
		}
	}
}

// splitAgain asks for the per-task split a tabletop clone lacks, greedy and sampled each on
// its own, and never for other environments.
func TestSplitAgain(t *testing.T) {
	arm := tinyBC()
	arm.Evaluation.Sampled = true
	ts := []runstore.TaskSuccess{{Task: 0, Episodes: 10}}
	both := PretrainPolicyResult{HasSuccess: true, HasSampledSuccess: true}
	for _, tc := range []struct {
		name            string
		c               specs.Config
		r               PretrainPolicyResult
		greedy, sampled bool
	}{
		{"older clone", arm, both, true, true},
		{"split", arm, PretrainPolicyResult{HasSuccess: true, HasSampledSuccess: true, Tasks: ts, SampledTasks: ts}, false, false},
		{"greedy split only", arm, PretrainPolicyResult{HasSuccess: true, HasSampledSuccess: true, Tasks: ts}, false, true},
		{"greedy arm", tinyBC(), both, true, false},
		{"cartpole", tinyCartPole(specs.ModeSync, 1024), both, false, false},
	} {
		if g, s := splitAgain(tc.c, tc.r); g != tc.greedy || s != tc.sampled {
			t.Errorf("%s: split again %v / %v, want %v / %v", tc.name, g, s, tc.greedy, tc.sampled)
		}
	}
}

// countAgain asks for the clone's evaluation again when it played another number of
// episodes than the headline count (final_episodes, else episodes), and never without an
// evaluation or a success to measure.
func TestCountAgain(t *testing.T) {
	arm := tinyBC()
	arm.Evaluation.Episodes = 10
	final := arm
	final.Evaluation.FinalEpisodes = 50
	off := arm
	off.Evaluation.Episodes = 0
	played := func(n int) PretrainPolicyResult { return PretrainPolicyResult{HasSuccess: true, EvalEpisodes: n} }
	for _, tc := range []struct {
		name string
		c    specs.Config
		r    PretrainPolicyResult
		want bool
	}{
		{"episodes, played", arm, played(10), false},
		{"final_episodes, played on episodes", final, played(10), true},
		{"final_episodes, played", final, played(50), false},
		{"final_episodes dropped", arm, played(50), true},
		{"no success measured", final, PretrainPolicyResult{EvalEpisodes: 10}, false},
		{"evaluation off", off, played(10), false},
	} {
		if got := countAgain(tc.c, tc.r); got != tc.want {
			t.Errorf("%s: count again %v, want %v", tc.name, got, tc.want)
		}
	}
}

// LoadClonedParams finds the cloned policy under a run directory and in its final
// checkpoint directory alike, refuses a checkpoint whose policy file was altered after it
// was written, and names both places it looked when neither holds one.
func TestLoadClonedParams(t *testing.T) {
	run := t.TempDir()
	want := []float64{0.25, -1.5, 3}
	if err := saveBCPolicy(BCPolicyDir(run), "h", bcPolicy{Params: want}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{run, BCPolicyDir(run)} {
		got, err := LoadClonedParams(dir)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("LoadClonedParams(%s) = %v, %v; want %v", dir, got, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(BCPolicyDir(run), bcPolicyFile), []byte(`{"params":[9]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadClonedParams(run); err == nil {
		t.Error("an altered policy file: no error")
	}
	empty := t.TempDir()
	if _, err := LoadClonedParams(empty); err == nil || !strings.Contains(err.Error(), BCPolicyDir(empty)) {
		t.Errorf("an empty directory: error %v, want one naming %s", err, BCPolicyDir(empty))
	}
}

// TestPretrainFrom: pretrain.from starts the cloning from an earlier run's clone. With
// epochs = 0 the new run's warm start is that clone (refolded through its own
// standardisation of the same demonstrations: equal up to float32 rounding); with one more
// epoch the training continues from it, so that epoch's mean loss is below the first
// epoch of the clone started from random weights; a path holding no clone is a bad-input
// error naming pretrain.from.
func TestPretrainFrom(t *testing.T) {
	c := tinyVLAArm()
	c.Pretrain = specs.DefaultPretrain()
	c.Pretrain.DemosPerTask, c.Pretrain.Epochs, c.Pretrain.Batch, c.Pretrain.LearningRate, c.Pretrain.LabelSigma = 2, 1, 16, 3e-3, 3
	c.Evaluation = specs.Evaluation{Episodes: 2, Greedy: true}
	first := t.TempDir()
	base := runPretrain(t, PretrainPolicyInput{RunDir: first, SpecHash: "h", Config: c, Seed: 1})
	want, err := loadBCPolicy(base.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	from := c
	from.Pretrain.From, from.Pretrain.Epochs = first, 0
	same := runPretrain(t, PretrainPolicyInput{RunDir: t.TempDir(), SpecHash: "h2", Config: from, Seed: 1})
	got, err := loadBCPolicy(same.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Params) != len(want.Params) || len(same.EpochLoss) != 0 {
		t.Fatalf("epochs 0: %d parameters (want %d), %d epoch losses (want 0)", len(got.Params), len(want.Params), len(same.EpochLoss))
	}
	for i := range want.Params {
		// float32 storage of the unfolded network: relative rounding 2^-24 per operand, over
		// the proprio layer's few terms, far below 1e-5.
		if d := math.Abs(got.Params[i] - want.Params[i]); d > 1e-5*(1+math.Abs(want.Params[i])) {
			t.Fatalf("epochs 0: parameter %d is %v, the clone's %v", i, got.Params[i], want.Params[i])
		}
	}
	from.Pretrain.Epochs = 1
	more := runPretrain(t, PretrainPolicyInput{RunDir: t.TempDir(), SpecHash: "h3", Config: from, Seed: 1})
	if len(more.EpochLoss) != 1 || more.EpochLoss[0] >= base.EpochLoss[0] {
		t.Errorf("one more epoch from the clone: losses %v, want one below the first clone's first epoch %v", more.EpochLoss, base.EpochLoss)
	}
	from.Pretrain.From = t.TempDir()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&Trainer{})
	_, err = env.ExecuteActivity((&Trainer{}).PretrainPolicy, PretrainPolicyInput{RunDir: t.TempDir(), SpecHash: "h4", Config: from, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "pretrain.from") {
		t.Errorf("from a directory without a clone: err %v, want one naming pretrain.from", err)
	}
}

// tinyVLAArm is a sync pixel tabletop arm (tasks 0 and 1) with a one-layer VLA of width 16
// and chunks of 8 actions, 2 executed.
func tinyVLAArm() specs.Config {
	c := pixelTabletop()
	c.Pipeline.Mode = specs.ModeSync
	v := specs.DefaultVLA()
	v.Dim, v.Layers, v.Heads = 16, 1, 1
	c.Policy = specs.Policy{Action: specs.ActionTokens, Bins: 256, ActionChunk: 8, ExecuteSteps: 2, VLA: &v}
	return c
}
