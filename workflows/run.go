package workflows

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/specs"
)

// RunInput starts (or, after continue-as-new, continues) one run: an arm × seed.
type RunInput struct {
	ExperimentName string    `json:"experiment_name"`
	SpecHash       string    `json:"spec_hash"`
	Run            specs.Run `json:"run"`
	// RunDir is where the run's metrics, checkpoints and summary go.
	RunDir string `json:"run_dir"`
	// State carries the run's progress across continue-as-new; zero for a new run.
	State RunState `json:"state"`
	// MaxSegmentsPerExecution bounds how many segments one workflow execution runs before it
	// continues as new, in addition to Temporal's own suggestion (0 = 200).
	MaxSegmentsPerExecution int `json:"max_segments_per_execution,omitempty"`
}

// RunState is what a run remembers between segments and across continue-as-new.
type RunState struct {
	Segment      int32   `json:"segment"` // segments completed
	EnvSteps     int64   `json:"env_steps"`
	Updates      int64   `json:"updates"`
	Episodes     int64   `json:"episodes"`
	RecentReturn float64 `json:"recent_return"`
	BestReturn   float64 `json:"best_return"`
	WallS        float64 `json:"wall_s"`
	Checkpoint   string  `json:"checkpoint"`
	ParamsSHA256 string  `json:"params_sha256"`
	// BudgetReached is set by the segment that collected and trained the last budgeted step.
	BudgetReached bool `json:"budget_reached"`
	Paused        bool `json:"paused"`
	Stopped       bool `json:"stopped"`
	// Started is the workflow time the run began, for the wall-time budget.
	Started  time.Time `json:"started"`
	Warnings []string  `json:"warnings,omitempty"`

	// Pretrained is set once the offline dataset is collected and the world model pretrained
	// (world_model.enabled with offline_trajectories > 0); WorldModelState is the pretrained
	// checkpoint the first segment starts from, OfflineSteps the dataset's transitions (env
	// steps spent before training, never counted in EnvSteps).
	Pretrained      bool   `json:"pretrained,omitempty"`
	WorldModelState string `json:"world_model_state,omitempty"`
	OfflineSteps    int64  `json:"offline_steps,omitempty"`
	// Horizon is the imagination-horizon schedule's state: H for the next segment, the best
	// validation loss seen. It lives here so that it survives crashes and continue-as-new.
	Horizon worldmodel.HorizonState `json:"horizon"`
	// ImaginedSteps counts the imagined steps trained on.
	ImaginedSteps int64 `json:"imagined_steps,omitempty"`
	// EvalReturn is the latest evaluation's mean return; HasEval is false until a segment
	// has evaluated (the spec's evaluation block).
	EvalReturn float64 `json:"eval_return,omitempty"`
	HasEval    bool    `json:"has_eval,omitempty"`
}

// RunProgress answers the "progress" query.
type RunProgress struct {
	ID           string   `json:"id"`
	Arm          string   `json:"arm"`
	Seed         uint64   `json:"seed"`
	Status       string   `json:"status"`
	Segment      int32    `json:"segment"`
	EnvSteps     int64    `json:"env_steps"`
	BudgetSteps  int64    `json:"budget_steps"`
	Updates      int64    `json:"updates"`
	Episodes     int64    `json:"episodes"`
	RecentReturn float64  `json:"recent_return"`
	StepsPerS    float64  `json:"steps_per_s"`
	WallS        float64  `json:"wall_s"`
	Checkpoint   string   `json:"checkpoint"`
	LastError    string   `json:"last_error,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	// Horizon is the imagination horizon of the next segment (0 without a world model).
	Horizon int `json:"horizon,omitempty"`
	// EvalReturn is the latest evaluation's mean return, when HasEval.
	EvalReturn float64 `json:"eval_return,omitempty"`
	HasEval    bool    `json:"has_eval,omitempty"`
}

// RunResult is a finished run's outcome.
type RunResult struct {
	ID           string  `json:"id"`
	Arm          string  `json:"arm"`
	Seed         uint64  `json:"seed"`
	Status       string  `json:"status"`
	EnvSteps     int64   `json:"env_steps"`
	Updates      int64   `json:"updates"`
	FinalReturn  float64 `json:"final_return"`
	StepsPerS    float64 `json:"steps_per_s"`
	WallS        float64 `json:"wall_s"`
	ParamsSHA256 string  `json:"params_sha256"`
	Error        string  `json:"error,omitempty"`
	// Horizon is the final imagination horizon; OfflineSteps the env steps spent on the offline
	// dataset; ImaginedSteps the imagined steps trained on (all 0 without a world model).
	Horizon       int   `json:"horizon,omitempty"`
	OfflineSteps  int64 `json:"offline_steps,omitempty"`
	ImaginedSteps int64 `json:"imagined_steps,omitempty"`
	// EvalReturn is the last evaluation's mean return, when HasEval (the spec's evaluation
	// block).
	EvalReturn float64 `json:"eval_return,omitempty"`
	HasEval    bool    `json:"has_eval,omitempty"`
}

// segmentRetries bounds how often a failing segment is retried (each time from the previous
// checkpoint) before the run is marked failed.
const segmentRetries = 3

// Run trains one arm × seed: it runs training segments until the env-step budget (or the
// wall-time budget) is spent, then records the final status. Between segments it honours pause,
// resume and stop signals; it continues as new when its history grows large.
func Run(ctx workflow.Context, in RunInput) (RunResult, error) {
	st := in.State
	if st.Started.IsZero() {
		st.Started = workflow.Now(ctx)
	}
	cfg := in.Run.Config
	status := StatusRunning
	lastErr := ""

	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RunProgress, error) {
		s := status
		if st.Paused && s == StatusRunning {
			s = StatusPaused
		}
		return RunProgress{
			ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: s, Segment: st.Segment,
			EnvSteps: st.EnvSteps, BudgetSteps: cfg.Budget.EnvSteps, Updates: st.Updates,
			Episodes: st.Episodes, RecentReturn: st.RecentReturn, StepsPerS: safeRate(st.EnvSteps, st.WallS),
			WallS: st.WallS, Checkpoint: st.Checkpoint, LastError: lastErr, Warnings: st.Warnings,
			Horizon: st.Horizon.H, EvalReturn: st.EvalReturn, HasEval: st.HasEval,
		}, nil
	}); err != nil {
		return RunResult{}, err
	}
	listenForControl(ctx, &st)

	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           TaskQueueCPU,
		StartToCloseTimeout: 24 * time.Hour,
		// A crashed worker is noticed when its heartbeats stop; the retry then resumes
		// from the previous checkpoint. Heartbeats are sent after every update.
		HeartbeatTimeout: heartbeatTimeout(cfg),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			// Crashes and timeouts retry without limit: they are the infrastructure's fault
			// and cost at most one segment. Failures of the training itself are not retried
			// here but counted by trainSegment.
			NonRetryableErrorTypes: activities.NonRetryableErrorTypes,
		},
	})

	wm := cfg.WorldModel
	sched := horizonSchedule(wm)
	if wm.Enabled && st.Horizon.H == 0 {
		st.Horizon = sched.Init()
	}
	if wm.Enabled && wm.OfflineTrajectories > 0 && !st.Pretrained {
		if err := pretrainWorldModel(actx, in, &st, sched); err != nil {
			status = StatusFailed
			lastErr = err.Error()
			return finishRun(ctx, in, st, status, lastErr)
		}
	}

	perUpdate := StepsPerUpdate(cfg)
	totalUpdates := int(ceilDiv(cfg.Budget.EnvSteps, perUpdate))
	maxSegs := in.MaxSegmentsPerExecution
	if maxSegs <= 0 {
		maxSegs = 200
	}
	segsHere := 0
	for !st.BudgetReached {
		if err := workflow.Await(ctx, func() bool { return !st.Paused || st.Stopped }); err != nil {
			return RunResult{}, err
		}
		if st.Stopped {
			break
		}
		if cfg.Budget.WallTime > 0 && workflow.Now(ctx).Sub(st.Started) >= cfg.Budget.WallTime {
			break
		}
		if segsHere >= maxSegs || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			next := in
			next.State = st
			return RunResult{}, workflow.NewContinueAsNewError(ctx, Run, next)
		}
		updates := SegmentUpdates(cfg, st.EnvSteps, perUpdate)
		seg := st.Segment + 1
		res, err := trainSegment(actx, activities.TrainSegmentInput{
			RunDir: in.RunDir, Experiment: in.ExperimentName, Arm: in.Run.Arm, Seed: in.Run.Seed,
			SpecHash: in.SpecHash, Config: cfg, Segment: seg, Updates: updates,
			TotalUpdates: totalUpdates, StartWallS: st.WallS,
			Horizon: st.Horizon.H, WorldModelState: st.WorldModelState,
		})
		if err != nil {
			status = StatusFailed
			lastErr = err.Error()
			return finishRun(ctx, in, st, status, lastErr)
		}
		segsHere++
		st.Segment = res.Segment
		st.EnvSteps = res.EnvSteps
		st.Updates = res.Updates
		st.Episodes = res.Episodes
		st.RecentReturn = res.RecentReturn
		if res.RecentReturn > st.BestReturn || st.Segment == 1 {
			st.BestReturn = res.RecentReturn
		}
		st.WallS = res.WallS
		st.Checkpoint = res.Checkpoint
		st.ParamsSHA256 = res.ParamsSHA256
		st.BudgetReached = res.BudgetReached
		st.Warnings = append(st.Warnings, res.Warnings...)
		st.ImaginedSteps = res.ImaginedSteps
		if res.HasEval {
			st.EvalReturn, st.HasEval = res.EvalReturn, true
		}
		if wm.Enabled && res.HasWMValLoss {
			st.Horizon = sched.Next(st.Horizon, res.WMValLoss)
		}
	}
	status = StatusCompleted
	if st.Stopped {
		status = StatusStopped
	}
	return finishRun(ctx, in, st, status, "")
}

// horizonSchedule is the spec's horizon block as a worldmodel.HorizonSchedule.
func horizonSchedule(w specs.WorldModel) worldmodel.HorizonSchedule {
	h := w.Horizon
	return worldmodel.HorizonSchedule{Start: h.Start, End: h.End, LossHigh: h.LossHigh, LossLow: h.LossLow}
}

// pretrainWorldModel collects the offline dataset and pretrains the world model (both
// activities are idempotent and resume on retry), records the result in st and feeds the
// pretraining validation loss to the horizon schedule.
func pretrainWorldModel(ctx workflow.Context, in RunInput, st *RunState, sched worldmodel.HorizonSchedule) error {
	var wm *activities.WorldModel
	var col activities.CollectOfflineResult
	err := workflow.ExecuteActivity(ctx, wm.CollectOffline, activities.CollectOfflineInput{
		RunDir: in.RunDir, Config: in.Run.Config, Seed: in.Run.Seed,
	}).Get(ctx, &col)
	if err != nil {
		return fmt.Errorf("collect offline dataset: %s", activityReason(err))
	}
	var pre activities.PretrainWorldModelResult
	err = workflow.ExecuteActivity(ctx, wm.PretrainWorldModel, activities.PretrainWorldModelInput{
		RunDir: in.RunDir, SpecHash: in.SpecHash, Config: in.Run.Config, Seed: in.Run.Seed, DatasetDir: col.Dir,
	}).Get(ctx, &pre)
	if err != nil {
		return fmt.Errorf("pretrain world model: %s", activityReason(err))
	}
	st.Pretrained = true
	st.WorldModelState = pre.Checkpoint
	st.OfflineSteps = int64(col.Rows)
	if pre.HasValLoss {
		st.Horizon = sched.Next(st.Horizon, pre.ValObsLoss)
	}
	return nil
}

// activityReason is an activity error's own message without Temporal's wrapping.
func activityReason(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	return err.Error()
}

// trainSegment runs one segment. A segment that fails with a training error (say, a
// non-finite loss) is retried from the previous checkpoint up to segmentRetries times in all;
// bad configuration fails at once.
func trainSegment(ctx workflow.Context, in activities.TrainSegmentInput) (activities.TrainSegmentResult, error) {
	var trainer *activities.Trainer
	var res activities.TrainSegmentResult
	reason := ""
	for attempt := 1; attempt <= segmentRetries; attempt++ {
		err := workflow.ExecuteActivity(ctx, trainer.TrainSegment, in).Get(ctx, &res)
		if err == nil {
			return res, nil
		}
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) {
			return res, fmt.Errorf("segment %d: %w", in.Segment, err)
		}
		// The application error's message is the activity's own error text; the full
		// error adds Temporal's wrapping (event IDs, types), which nobody needs to read.
		reason = appErr.Message()
		if appErr.Type() != activities.ErrTypeTraining {
			return res, fmt.Errorf("segment %d: %s", in.Segment, reason)
		}
	}
	return res, fmt.Errorf("segment %d failed %d times: %s", in.Segment, segmentRetries, reason)
}

// listenForControl keeps pause/resume/stop signals flowing into st for the life of this
// workflow execution.
func listenForControl(ctx workflow.Context, st *RunState) {
	pause := workflow.GetSignalChannel(ctx, PauseSignal)
	resume := workflow.GetSignalChannel(ctx, ResumeSignal)
	stop := workflow.GetSignalChannel(ctx, StopSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); st.Paused = true })
			sel.AddReceive(resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); st.Paused = false })
			sel.AddReceive(stop, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); st.Stopped = true })
			sel.Select(ctx)
		}
	})
}

func finishRun(ctx workflow.Context, in RunInput, st RunState, status, errMsg string) (RunResult, error) {
	fctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           TaskQueueCPU,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var trainer *activities.Trainer
	if err := workflow.ExecuteActivity(fctx, trainer.FinishRun, activities.FinishRunInput{
		RunDir: in.RunDir, Status: status, Error: errMsg,
	}).Get(ctx, nil); err != nil {
		return RunResult{}, err
	}
	return RunResult{
		ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: status,
		EnvSteps: st.EnvSteps, Updates: st.Updates, FinalReturn: st.RecentReturn,
		StepsPerS: safeRate(st.EnvSteps, st.WallS), WallS: st.WallS,
		ParamsSHA256: st.ParamsSHA256, Error: errMsg,
		Horizon: st.Horizon.H, OfflineSteps: st.OfflineSteps, ImaginedSteps: st.ImaginedSteps,
		EvalReturn: st.EvalReturn, HasEval: st.HasEval,
	}, nil
}

func heartbeatTimeout(cfg specs.Config) time.Duration {
	if cfg.Checkpoint.HeartbeatTimeout > 0 {
		return cfg.Checkpoint.HeartbeatTimeout
	}
	return 30 * time.Second
}

// StepsPerUpdate is how many real env steps one trainer update consumes. With the world model
// on, only the share the imagination ratio leaves to real data counts, max(1, batch −
// round(ratio·batch)) (engine.Config.RealBatchSteps). In sync mode every env collects the same
// whole number of steps per round, so that is rounded up to a multiple of the number of envs;
// in async mode it is used as is (an update takes more real steps while B_img is short, so the
// plan is an upper bound on the updates).
func StepsPerUpdate(cfg specs.Config) int64 {
	b := int64(max(1, cfg.Algorithm.BatchSteps))
	if w := cfg.WorldModel; w.Enabled {
		b = max(1, b-int64(math.Round(w.ImaginationRatio*float64(b))))
	}
	if cfg.Pipeline.Mode == "sync" {
		n := int64(max(1, cfg.Pipeline.Workers*cfg.Pipeline.EnvsPerWorker))
		return ceilDiv(b, n) * n
	}
	return b
}

// SegmentUpdates is the number of updates the next segment runs: the spec's checkpoint
// interval, or fewer when the remaining budget needs fewer (at least one).
func SegmentUpdates(cfg specs.Config, envSteps, perUpdate int64) int {
	remaining := ceilDiv(cfg.Budget.EnvSteps-envSteps, perUpdate)
	every := int64(max(1, cfg.Checkpoint.Every))
	return int(max(1, min(every, remaining)))
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

func safeRate(steps int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(steps) / secs
}
