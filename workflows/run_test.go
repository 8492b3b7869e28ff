package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/specs"
)

// testRun is a run whose budget is 1000 env steps at 100 steps per update (async mode, so
// no rounding) with a checkpoint every 3 updates: segments of 3, 3, 3 and 1 updates.
func testRun() specs.Run {
	cfg := specs.DefaultConfig()
	cfg.Budget.EnvSteps = 1000
	cfg.Algorithm.BatchSteps = 100
	cfg.Pipeline.Mode = "async"
	cfg.Checkpoint.Every = 3
	return specs.Run{ID: "base/seed-1", Arm: "base", Seed: 1, Config: cfg}
}

// fakeSegments answers TrainSegment like a trainer that does exactly what it is asked:
// each update adds 100 env steps and one episode of return 10*update.
type fakeSegments struct {
	calls []activities.TrainSegmentInput
}

func (f *fakeSegments) train(_ context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
	f.calls = append(f.calls, in)
	var updates int64
	for _, c := range f.calls {
		updates += int64(c.Updates)
	}
	return activities.TrainSegmentResult{
		Counters: runstate.Counters{
			Segment: in.Segment, EnvSteps: updates * 100, Updates: updates,
			Episodes: updates, RecentReturn: float64(10 * updates), WallS: in.StartWallS + 1,
		},
		Checkpoint: "ckpt", SegmentStepsPerS: 1000,
		ParamsSHA256: "sha", BudgetReached: updates*100 >= in.Config.Budget.EnvSteps,
	}, nil
}

func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Run)
	env.RegisterWorkflow(Experiment)
	env.RegisterActivity(&activities.Trainer{})
	env.RegisterActivity(&activities.Reporter{})
	env.RegisterActivity(&activities.WorldModel{})
	return env
}

func TestRunSplitsBudgetIntoSegments(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	var finished []activities.FinishRunInput
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.FinishRunInput) (activities.FinishRunResult, error) {
		finished = append(finished, in)
		return activities.FinishRunResult{}, nil
	})
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: testRun(), RunDir: "/tmp/x"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := []int{3, 3, 3, 1}
	if len(fake.calls) != len(want) {
		t.Fatalf("got %d segments, want %d", len(fake.calls), len(want))
	}
	for i, c := range fake.calls {
		if c.Updates != want[i] || c.Segment != int32(i+1) || c.TotalUpdates != 10 {
			t.Errorf("segment %d: got updates=%d segment=%d total=%d, want %d, %d, 10", i, c.Updates, c.Segment, c.TotalUpdates, want[i], i+1)
		}
	}
	if res.Status != StatusCompleted || res.EnvSteps != 1000 || res.Updates != 10 || res.RecentReturn != 100 {
		t.Errorf("result = %+v", res)
	}
	if len(finished) != 1 || finished[0].Status != StatusCompleted {
		t.Errorf("FinishRun calls = %+v, want one with status completed", finished)
	}
}

func TestRunProgressQueryAndStopSignal(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
		return fake.train(ctx, in)
	}).After(time.Minute) // each segment takes a minute of (test-clock) time
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)

	var mid RunProgress
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ProgressQuery)
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		if err := v.Get(&mid); err != nil {
			t.Error(err)
		}
		env.SignalWorkflow(StopSignal, nil)
	}, 90*time.Second) // during segment 2

	env.ExecuteWorkflow(Run, RunInput{Run: testRun(), RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if mid.Segment != 1 || mid.EnvSteps != 300 || mid.Status != StatusRunning || mid.BudgetSteps != 1000 {
		t.Errorf("progress during segment 2 = %+v, want segment 1 done with 300 steps", mid)
	}
	// The stop arrives during segment 2; that segment finishes (and checkpoints), then the run ends.
	if res.Status != StatusStopped || res.EnvSteps != 600 || len(fake.calls) != 2 {
		t.Errorf("result = %+v after %d segments, want stopped at 600 steps after 2", res, len(fake.calls))
	}
}

func TestRunPauseWaitsForResume(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train).After(time.Minute)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	var paused RunProgress
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(PauseSignal, nil) }, 30*time.Second)
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(ProgressQuery)
		_ = v.Get(&paused)
		env.SignalWorkflow(ResumeSignal, nil)
	}, 10*time.Hour)
	env.ExecuteWorkflow(Run, RunInput{Run: testRun(), RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	// Paused after segment 1 finished; for ten hours nothing else ran.
	if paused.Status != StatusPaused || paused.Segment != 1 {
		t.Errorf("progress while paused = %+v", paused)
	}
	if res.Status != StatusCompleted || res.EnvSteps != 1000 {
		t.Errorf("result = %+v", res)
	}
}

func TestRunTrainingErrorRetriesThenFails(t *testing.T) {
	env := newEnv(t)
	calls := 0
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
		calls++
		return activities.TrainSegmentResult{}, temporal.NewApplicationError("non-finite loss at update 7", activities.ErrTypeTraining)
	})
	var finished activities.FinishRunInput
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.FinishRunInput) (activities.FinishRunResult, error) {
		finished = in
		return activities.FinishRunResult{}, nil
	})
	env.ExecuteWorkflow(Run, RunInput{Run: testRun(), RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if calls != segmentRetries {
		t.Errorf("TrainSegment ran %d times, want %d", calls, segmentRetries)
	}
	if res.Status != StatusFailed || finished.Status != StatusFailed {
		t.Errorf("status = %q / %q, want failed", res.Status, finished.Status)
	}
	if finished.Error == "" || !containsAll(finished.Error, "non-finite loss at update 7", "segment 1") {
		t.Errorf("failure reason %q does not name the cause and segment", finished.Error)
	}
}

func TestRunContinuesAsNewCarryingState(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	env.ExecuteWorkflow(Run, RunInput{Run: testRun(), RunDir: "/tmp/x", MaxSegmentsPerExecution: 2})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("want continue-as-new after 2 segments, got %v", err)
	}
	var next RunInput
	if err := decodeArg(can, &next); err != nil {
		t.Fatal(err)
	}
	if next.State.Segment != 2 || next.State.EnvSteps != 600 || next.State.Checkpoint != "ckpt" || next.State.Started.IsZero() {
		t.Errorf("carried state = %+v", next.State)
	}
}

func TestSegmentArithmetic(t *testing.T) {
	cfg := specs.DefaultConfig()
	cfg.Pipeline.Mode = "sync"
	cfg.Pipeline.Workers, cfg.Pipeline.EnvsPerWorker = 3, 2 // 6 envs
	cfg.Algorithm.BatchSteps = 100
	// 100 steps over 6 envs: each env collects ceil(100/6) = 17 steps, 102 per update.
	if got := cfg.StepsPerUpdate(); got != 102 {
		t.Errorf("sync StepsPerUpdate = %d, want 102", got)
	}
	cfg.Pipeline.Mode = "async"
	if got := cfg.StepsPerUpdate(); got != 100 {
		t.Errorf("async StepsPerUpdate = %d, want 100", got)
	}
	cfg.Budget.EnvSteps = 1050
	cfg.Checkpoint.Every = 4
	// 1050 - 900 = 150 steps left at 100 per update: 2 updates, under the interval of 4.
	if got := runstate.SegmentUpdates(cfg, 900, 100); got != 2 {
		t.Errorf("SegmentUpdates near the end = %d, want 2", got)
	}
	if got := runstate.SegmentUpdates(cfg, 0, 100); got != 4 {
		t.Errorf("SegmentUpdates at the start = %d, want 4", got)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func decodeArg(can *workflow.ContinueAsNewError, v any) error {
	return converter.GetDefaultDataConverter().FromPayloads(can.Input, v)
}

// wmRun is testRun with the world model on: 10 offline episodes and the default horizon
// schedule (start 5, end 50, loss_high 0.5, loss_low 0.05), so that
// H = 5 + ⌊(0.5 − L)/0.45 · 45⌋ = 5 + ⌊100·(0.5 − L)⌋ between the thresholds. The imagination
// ratio is 0 so that the 100-step batches stay 100 real steps.
func wmRun() specs.Run {
	r := testRun()
	r.Config.WorldModel.Enabled = true
	r.Config.WorldModel.OfflineTrajectories = 10
	r.Config.WorldModel.ImaginationRatio = 0
	return r
}

// wmSegments is fakeSegments reporting validation loss losses[k] after segment k+1.
type wmSegments struct {
	fakeSegments
	losses []float64
}

func (f *wmSegments) train(ctx context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
	res, err := f.fakeSegments.train(ctx, in)
	res.Horizon = in.Horizon
	res.WMValLoss, res.HasWMValLoss = f.losses[in.Segment-1], true
	return res, err
}

func mockPretraining(env *testsuite.TestWorkflowEnvironment, collects *int) {
	env.OnActivity("CollectOffline", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.CollectOfflineInput) (activities.CollectOfflineResult, error) {
		*collects++
		return activities.CollectOfflineResult{Dir: in.RunDir + "/worldmodel/dataset", Episodes: 10, Rows: 220}, nil
	})
	env.OnActivity("PretrainWorldModel", mock.Anything, mock.Anything).Return(activities.PretrainWorldModelResult{
		Checkpoint: "/tmp/x/worldmodel/pretrain/step-000000060", Steps: 60, HasValLoss: true, ValObsLoss: 0.6,
	}, nil)
}

// TestRunHorizonSchedule: pretraining reports loss 0.6 (≥ loss_high: H stays 5); the segments
// report 0.405, 0.2525, 0.3 and 0.0955, giving targets 5+⌊9.5⌋ = 14, 5+⌊24.75⌋ = 29, 5+⌊20⌋ = 25
// (below the best, so H stays 29) and 5+⌊40.45⌋ = 45. Each segment gets the H its predecessor
// earned, starting from the pretrained model.
func TestRunHorizonSchedule(t *testing.T) {
	env := newEnv(t)
	fake := &wmSegments{losses: []float64{0.405, 0.2525, 0.3, 0.0955}}
	collects := 0
	mockPretraining(env, &collects)
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: wmRun(), RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := []int{5, 14, 29, 29}
	if len(fake.calls) != len(want) {
		t.Fatalf("%d segments, want %d", len(fake.calls), len(want))
	}
	for i, c := range fake.calls {
		if c.Horizon != want[i] || c.WorldModelState != "/tmp/x/worldmodel/pretrain/step-000000060" {
			t.Errorf("segment %d: horizon %d, world model %q; want %d and the pretrained checkpoint", i+1, c.Horizon, c.WorldModelState, want[i])
		}
	}
	if collects != 1 || res.Horizon != 45 || res.OfflineSteps != 220 || res.EnvSteps != 1000 {
		t.Errorf("collects %d, result %+v; want 1 collect, final horizon 45, 220 offline and 1000 online steps", collects, res)
	}
}

// TestRunHorizonSurvivesContinueAsNew: after two segments the run continues as new carrying
// H = 29 and the pretrained state; the new execution does not pretrain again and hands H = 29
// to its first segment.
func TestRunHorizonSurvivesContinueAsNew(t *testing.T) {
	fake := &wmSegments{losses: []float64{0.405, 0.2525, 0.3, 0.0955}}
	collects := 0
	env := newEnv(t)
	mockPretraining(env, &collects)
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	env.ExecuteWorkflow(Run, RunInput{Run: wmRun(), RunDir: "/tmp/x", MaxSegmentsPerExecution: 2})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new after 2 segments, got %v", err)
	}
	var next RunInput
	if err := decodeArg(can, &next); err != nil {
		t.Fatal(err)
	}
	if h := next.State.Horizon; h.H != 29 || h.BestLoss != 0.2525 || h.Updates != 3 || !next.State.Pretrained {
		t.Fatalf("carried horizon %+v, pretrained %v; want H 29 after 3 losses, best 0.2525", h, next.State.Pretrained)
	}
	env2 := newEnv(t)
	mockPretraining(env2, &collects)
	env2.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env2.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	env2.ExecuteWorkflow(Run, next)
	var res RunResult
	if err := env2.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if collects != 1 || len(fake.calls) != 4 || fake.calls[2].Horizon != 29 || fake.calls[3].Horizon != 29 || res.Horizon != 45 {
		t.Errorf("collects %d, %d segments, horizons %d/%d after continue-as-new, final %d; want 1, 4, 29/29, 45",
			collects, len(fake.calls), fake.calls[2].Horizon, fake.calls[3].Horizon, res.Horizon)
	}
}

func TestStepsPerUpdateWithWorldModel(t *testing.T) {
	cfg := specs.DefaultConfig()
	cfg.Algorithm.BatchSteps = 100
	cfg.WorldModel.Enabled = true
	cfg.WorldModel.ImaginationRatio = 0.75
	cfg.Pipeline.Mode = "async"
	// 100 − round(75) = 25 real steps per update.
	if got := cfg.StepsPerUpdate(); got != 25 {
		t.Errorf("async StepsPerUpdate = %d, want 25", got)
	}
	cfg.Pipeline.Mode = "sync"
	cfg.Pipeline.Workers, cfg.Pipeline.EnvsPerWorker = 3, 2
	// 25 over 6 envs: ceil(25/6) = 5 each, 30 per update.
	if got := cfg.StepsPerUpdate(); got != 30 {
		t.Errorf("sync StepsPerUpdate = %d, want 30", got)
	}
}

// The latest evaluation a segment reports is the run's until a newer one comes; a segment
// without one leaves it as it was.
func TestRunKeepsLatestEvaluation(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	evals := map[int32]float64{1: 12.5, 3: 40} // segments 2 and 4 do not evaluate
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
		res, err := fake.train(ctx, in)
		if v, ok := evals[in.Segment]; ok {
			res.EvalReturn, res.HasEval = v, true
		}
		return res, err
	})
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: testRun(), RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.HasEval || res.EvalReturn != 40 {
		t.Errorf("final evaluation %v (has %v), want 40 from segment 3", res.EvalReturn, res.HasEval)
	}
	v, err := env.QueryWorkflow(ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p RunProgress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if !p.HasEval || p.EvalReturn != 40 {
		t.Errorf("progress evaluation %v (has %v), want 40", p.EvalReturn, p.HasEval)
	}
}

// A spec that asks for a GPU sends its training segments to the gpu task queue, and FinishRun
// stays on cpu. The activities are mocked by method value, and every mocked call must happen.
func TestGPURunSchedulesSegmentsOnTheGPUQueue(t *testing.T) {
	env := newEnv(t)
	var trainer *activities.Trainer
	fake := &fakeSegments{}
	var queues []string
	env.OnActivity(trainer.TrainSegment, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
		queues = append(queues, activity.GetInfo(ctx).TaskQueue)
		return fake.train(ctx, in)
	}).Times(4)
	var finishQueue string
	env.OnActivity(trainer.FinishRun, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.FinishRunInput) (activities.FinishRunResult, error) {
		finishQueue = activity.GetInfo(ctx).TaskQueue
		return activities.FinishRunResult{}, nil
	}).Once()
	run := testRun()
	run.Config.Resources.GPU = 1
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: run, RunDir: "/tmp/x"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	env.AssertExpectations(t)
	for i, q := range queues {
		if q != TaskQueueGPU {
			t.Errorf("segment %d ran on task queue %q, want %q", i+1, q, TaskQueueGPU)
		}
	}
	if finishQueue != TaskQueueCPU {
		t.Errorf("FinishRun ran on %q, want %q", finishQueue, TaskQueueCPU)
	}
}

// A spec that asks for a GPU sends its training segments to the gpu task queue; the others
// stay on cpu.
func TestSegmentQueue(t *testing.T) {
	cfg := testRun().Config
	if q := SegmentQueue(cfg); q != TaskQueueCPU {
		t.Errorf("without resources: queue %q, want %q", q, TaskQueueCPU)
	}
	cfg.Resources.GPU = 1
	if q := SegmentQueue(cfg); q != TaskQueueGPU {
		t.Errorf("resources { gpu = 1 }: queue %q, want %q", q, TaskQueueGPU)
	}
}
