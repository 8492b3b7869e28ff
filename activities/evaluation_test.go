package activities

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// With an evaluation block, each segment's last metrics row carries the mean return of its
// evaluation episodes, and the evaluation trains nothing: the same segments without it end
// with the same parameters and step counts.
func TestTrainSegmentEvaluates(t *testing.T) {
	c := tinyCartPole(specs.ModeSync, 2048)
	train := func(cfg specs.Config) (string, []TrainSegmentResult) {
		runner := newSegmentRunner(t)
		dir := t.TempDir()
		var out []TrainSegmentResult
		for seg := int32(1); seg <= 2; seg++ {
			out = append(out, runner.run(TrainSegmentInput{
				RunDir: dir, Experiment: "e", Arm: "base", Seed: 3, SpecHash: "h", Config: cfg,
				Plan: runstate.Plan{Segment: seg, Updates: 3, TotalUpdates: 16},
			}))
		}
		return dir, out
	}

	withEval := c
	withEval.Evaluation = specs.Evaluation{Episodes: 3}
	dir, got := train(withEval)
	_, plain := train(c)
	for i := range got {
		if got[i].ParamsSHA256 != plain[i].ParamsSHA256 || got[i].EnvSteps != plain[i].EnvSteps || got[i].Episodes != plain[i].Episodes {
			t.Fatalf("segment %d: evaluating changed training: %+v vs %+v", i+1, got[i], plain[i])
		}
	}

	rows, _, err := runstore.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d metrics rows, want 6 (2 segments × 3 updates)", len(rows))
	}
	for i, r := range rows {
		last := i == 2 || i == 5
		switch {
		case last && (r.EvalEpisodes != 3 || !(r.EvalReturn >= 1 && r.EvalReturn <= 500)):
			// CartPole pays 1 per step for 1 to 500 steps, so a mean return lies in [1, 500].
			t.Errorf("row %d (segment end): eval %d episodes, return %v; want 3 episodes with a return in [1, 500]", i, r.EvalEpisodes, r.EvalReturn)
		case !last && (r.EvalEpisodes != 0 || !math.IsNaN(r.EvalReturn)):
			t.Errorf("row %d: eval %d episodes, return %v; want none and NaN", i, r.EvalEpisodes, r.EvalReturn)
		}
	}

	if !got[1].HasEval || got[1].EvalReturn != rows[5].EvalReturn || plain[1].HasEval {
		t.Errorf("segment 2 result: eval %v (has %v), want the metrics row's %v; without the block has %v",
			got[1].EvalReturn, got[1].HasEval, rows[5].EvalReturn, plain[1].HasEval)
	}

	var sum runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(dir, summaryFileName), &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.HasEval || sum.EvalReturn != rows[5].EvalReturn {
		t.Errorf("summary.json eval %v (has %v), want %v", sum.EvalReturn, sum.HasEval, rows[5].EvalReturn)
	}

	// The evaluation is the engine's, from the run's evaluation seed: replaying it on an
	// engine restored from segment 2's checkpoint gives the same mean.
	_, files, err := checkpoint.Load(CheckpointDir(dir, 2))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := LoadSnapshot(files)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(withEval, 3, 16, snap)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := eng.Evaluate(3, engine.EvalSeed(3), false)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Mean() != rows[5].EvalReturn {
		t.Errorf("re-evaluating the segment-2 checkpoint gives %v, the metrics row %v", ev.Mean(), rows[5].EvalReturn)
	}
}

// evaluation.final_episodes sets the episodes of the last segment's evaluation alone (the
// one that spends the budget); the segments before it play episodes.
func TestFinalEvaluationEpisodes(t *testing.T) {
	c := tinyCartPole(specs.ModeSync, 0)
	c.Budget.EnvSteps = 3 * c.StepsPerUpdate() // 3 updates: segment 2 spends the budget
	c.Evaluation = specs.Evaluation{Episodes: 2, FinalEpisodes: 5}
	runner := newSegmentRunner(t)
	dir := t.TempDir()
	var got []TrainSegmentResult
	for seg, updates := range []int{2, 1} {
		got = append(got, runner.run(TrainSegmentInput{
			RunDir: dir, Experiment: "e", Arm: "base", Seed: 3, SpecHash: "h", Config: c,
			Plan: runstate.Plan{Segment: int32(seg + 1), Updates: updates, TotalUpdates: 3},
		}))
	}
	if got[0].BudgetReached || !got[1].BudgetReached {
		t.Fatalf("budget reached after segments 1, 2: %v, %v; want false, true", got[0].BudgetReached, got[1].BudgetReached)
	}
	rows, _, err := runstore.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].EvalEpisodes != 2 || rows[2].EvalEpisodes != 5 {
		t.Fatalf("%d rows; segment ends evaluated %d and %d episodes, want 3 rows, 2 and 5", len(rows), rows[1].EvalEpisodes, rows[len(rows)-1].EvalEpisodes)
	}
}

// A tabletop run's evaluation records the success rate of its episodes in the eval_success
// column of the segment's last metrics row (and CartPole's, whose success is balancing to the
// time limit, a share in [0, 1]); an untrained policy on the tabletop succeeds on none.
func TestEvalSuccessColumn(t *testing.T) {
	runner := newSegmentRunner(t)
	cfg := specs.DefaultConfig()
	cfg.Budget.EnvSteps = 512
	cfg.Env = specs.Env{Kind: specs.EnvTabletop, Suite: "goal", Tasks: []int{1}, MaxEpisodeSteps: 30, ImageSize: 64,
		Cameras: []string{"agentview", "wrist"}, Latency: cfg.Env.Latency}
	cfg.Policy.Action = specs.ActionTokens
	cfg.Policy.Hidden = []int{8}
	cfg.Algorithm.BatchSteps, cfg.Algorithm.Minibatches, cfg.Algorithm.Epochs = 256, 2, 1
	cfg.Pipeline.Mode, cfg.Pipeline.Workers, cfg.Pipeline.EnvsPerWorker = specs.ModeSync, 2, 1
	cfg.Pipeline.ChunkSteps, cfg.Pipeline.ReplayCapacity = 64, 512
	cfg.Evaluation.Episodes = 2
	dir := t.TempDir()
	res := runner.run(TrainSegmentInput{RunDir: dir, Experiment: "e", Arm: "base", Seed: 1, SpecHash: "h", Config: cfg,
		Plan: runstate.Plan{Segment: 1, Updates: 1, TotalUpdates: 2}})
	if !res.HasEvalSuccess || res.EvalSuccess != 0 || res.SegmentEvalSteps != 60 {
		t.Errorf("result: eval success %v (has %v), %d eval steps; want 0 of 2 episodes of 30 steps", res.EvalSuccess, res.HasEvalSuccess, res.SegmentEvalSteps)
	}
	rows, _, err := runstore.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; last.EvalEpisodes != 2 || last.EvalSuccess != 0 {
		t.Errorf("last metrics row: eval_episodes %d, eval_success %v; want 2 and 0", last.EvalEpisodes, last.EvalSuccess)
	}
	// summary.json splits the evaluation by task: the arm's one task, both episodes.
	var sum runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(dir, summaryFileName), &sum); err != nil {
		t.Fatal(err)
	}
	want := runstore.TaskSuccess{Task: 1, Instruction: tabletop.Instruction("goal", 1), Episodes: 2}
	if len(sum.EvalTasks) != 1 || sum.EvalTasks[0] != want || sum.EvalSampledTasks != nil {
		t.Errorf("summary's eval tasks %+v, sampled %+v; want [%+v] and none", sum.EvalTasks, sum.EvalSampledTasks, want)
	}
}

// metrics { tensorboard = false } writes no event files; the default writes one per segment.
func TestTensorBoardOptOut(t *testing.T) {
	for _, off := range []bool{false, true} {
		c := tinyCartPole(specs.ModeSync, 1024)
		c.Metrics.NoTensorBoard = off
		dir := t.TempDir()
		newSegmentRunner(t).run(TrainSegmentInput{RunDir: dir, Experiment: "e", Arm: "base", Seed: 3, SpecHash: "h", Config: c,
			Plan: runstate.Plan{Segment: 1, Updates: 1, TotalUpdates: 8}})
		_, err := os.Stat(filepath.Join(dir, runstore.TensorBoardDir, runstore.TensorBoardFile(1)))
		if off != os.IsNotExist(err) {
			t.Errorf("tensorboard off %v: event file stat error %v", off, err)
		}
	}
}

// evaluation.sampled plays the same episodes a second time sampling, beside the greedy
// evaluation: the segment's last row carries both (each equal to replaying it on the
// segment's checkpoint), the other rows NaN, and training is the same as without it.
func TestTrainSegmentSampledEvaluation(t *testing.T) {
	c := tinyCartPole(specs.ModeSync, 2048)
	runner := newSegmentRunner(t)
	run := func(ev specs.Evaluation) (string, TrainSegmentResult) {
		cfg := c
		cfg.Evaluation = ev
		dir := t.TempDir()
		return dir, runner.run(TrainSegmentInput{RunDir: dir, Experiment: "e", Arm: "base", Seed: 3, SpecHash: "h", Config: cfg,
			Plan: runstate.Plan{Segment: 1, Updates: 3, TotalUpdates: 16}})
	}
	both := specs.Evaluation{Episodes: 4, Greedy: true, Sampled: true}
	dir, got := run(both)
	_, greedyOnly := run(specs.Evaluation{Episodes: 4, Greedy: true})
	if got.ParamsSHA256 != greedyOnly.ParamsSHA256 || got.EvalReturn != greedyOnly.EvalReturn {
		t.Fatalf("the sampled evaluation changed training or the greedy evaluation: %+v vs %+v", got, greedyOnly)
	}
	rows, _, err := runstore.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:len(rows)-1] {
		if !math.IsNaN(r.EvalSampledReturn) || !math.IsNaN(r.EvalSampledSuccess) {
			t.Errorf("row %d: sampled eval %v / %v, want NaN off the segment's end", r.Step, r.EvalSampledReturn, r.EvalSampledSuccess)
		}
	}
	last := rows[len(rows)-1]
	_, files, err := checkpoint.Load(CheckpointDir(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := LoadSnapshot(files)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(c, 3, 16, snap)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, greedy := range []bool{true, false} {
		ev, err := eng.Evaluate(4, engine.EvalSeed(3), greedy)
		if err != nil {
			t.Fatal(err)
		}
		want, gotRet, gotSucc := ev.Mean(), last.EvalReturn, last.EvalSuccess
		if !greedy {
			gotRet, gotSucc = last.EvalSampledReturn, last.EvalSampledSuccess
		}
		if gotRet != want || gotSucc != ev.SuccessRate() {
			t.Errorf("greedy %v: row has return %v, success %v; replaying the checkpoint gives %v, %v", greedy, gotRet, gotSucc, want, ev.SuccessRate())
		}
	}
	if last.EvalReturn == last.EvalSampledReturn {
		t.Logf("greedy and sampled returns are equal (%v): possible, but the comparison above is then weaker", last.EvalReturn)
	}
}
