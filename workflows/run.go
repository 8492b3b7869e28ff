package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/runstate"
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

// RunState is what a run remembers between segments and across continue-as-new (the run's
// state machine's state, runstate.State).
type RunState = runstate.State

// RunProgress answers the "progress" query: the run's counters and where it stands.
type RunProgress struct {
	ID     string `json:"id"`
	Arm    string `json:"arm"`
	Seed   uint64 `json:"seed"`
	Status string `json:"status"`
	runstate.Counters
	BudgetSteps int64    `json:"budget_steps"`
	Checkpoint  string   `json:"checkpoint"`
	LastError   string   `json:"last_error,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// Horizon is the imagination horizon of the next segment (0 without a world model).
	Horizon int `json:"horizon,omitempty"`
}

// RunResult is a finished run's outcome: its final counters, status and checksum.
type RunResult struct {
	ID     string `json:"id"`
	Arm    string `json:"arm"`
	Seed   uint64 `json:"seed"`
	Status string `json:"status"`
	runstate.Counters
	ParamsSHA256 string `json:"params_sha256"`
	Error        string `json:"error,omitempty"`
	// Horizon is the final imagination horizon (0 without a world model).
	Horizon int `json:"horizon,omitempty"`
}

// segmentRetries bounds how often a failing segment is retried (each time from the previous
// checkpoint) before the run is marked failed.
const segmentRetries = 3

// Run trains one arm × seed: it runs training segments until the env-step budget (or the
// wall-time budget) is spent, then records the final status. Between segments it honours pause,
// resume and stop signals; it continues as new when its history grows large.
func Run(ctx workflow.Context, in RunInput) (RunResult, error) {
	cfg := in.Run.Config
	m := runstate.New(cfg)
	st := m.Start(in.State, workflow.Now(ctx))
	status := StatusRunning
	lastErr := ""

	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RunProgress, error) {
		s := status
		if st.Paused && s == StatusRunning {
			s = StatusPaused
		}
		return RunProgress{
			ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: s, Counters: st.Counters,
			BudgetSteps: cfg.Budget.EnvSteps, Checkpoint: st.Checkpoint, LastError: lastErr,
			Warnings: st.Warnings, Horizon: st.Horizon.H,
		}, nil
	}); err != nil {
		return RunResult{}, err
	}
	listenForControl(ctx, &st)

	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           SegmentQueue(cfg),
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
			NonRetryableErrorTypes: contract.NonRetryableErrorTypes,
		},
	})

	if m.NeedsPretrain(st) {
		p, err := pretrainWorldModel(actx, in)
		if err != nil {
			status = StatusFailed
			lastErr = err.Error()
			return finishRun(ctx, in, st, status, lastErr)
		}
		st = m.ApplyPretrain(st, p)
	}

	if m.NeedsPolicyPretrain(st) {
		// Only specs with a pretrain block get here, so recorded histories of runs without
		// one replay unchanged.
		var pre contract.PretrainPolicyResult
		err := workflow.ExecuteActivity(actx, contract.ActivityPretrainPolicy, contract.PretrainPolicyInput{
			RunDir: in.RunDir, SpecHash: in.SpecHash, Config: cfg, Seed: in.Run.Seed,
		}).Get(ctx, &pre)
		if err != nil {
			status = StatusFailed
			lastErr = fmt.Sprintf("pretrain policy: %s", activityReason(err))
			return finishRun(ctx, in, st, status, lastErr)
		}
		st = m.ApplyPolicyPretrain(st, pre.Pretrained())
	}

	maxSegs := in.MaxSegmentsPerExecution
	if maxSegs <= 0 {
		maxSegs = 200
	}
	segsHere := 0
	for !st.BudgetReached {
		if err := workflow.Await(ctx, func() bool { return !st.Paused || st.Stopped }); err != nil {
			return RunResult{}, err
		}
		if m.Done(st, workflow.Now(ctx)) {
			break
		}
		if segsHere >= maxSegs || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			next := in
			next.State = st
			return RunResult{}, workflow.NewContinueAsNewError(ctx, Run, next)
		}
		res, err := trainSegment(actx, contract.TrainSegmentInput{
			RunDir: in.RunDir, Experiment: in.ExperimentName, Arm: in.Run.Arm, Seed: in.Run.Seed,
			SpecHash: in.SpecHash, Config: cfg, Plan: m.Next(st),
		})
		if err != nil {
			status = StatusFailed
			lastErr = err.Error()
			return finishRun(ctx, in, st, status, lastErr)
		}
		segsHere++
		st = m.Apply(st, res)
	}
	status = StatusCompleted
	if st.Stopped {
		status = StatusStopped
	}
	return finishRun(ctx, in, st, status, "")
}

// pretrainWorldModel collects the offline dataset and pretrains the world model (both
// activities are idempotent and resume on retry) and returns what the state machine needs.
func pretrainWorldModel(ctx workflow.Context, in RunInput) (runstate.Pretrained, error) {
	var col contract.CollectOfflineResult
	err := workflow.ExecuteActivity(ctx, contract.ActivityCollectOffline, contract.CollectOfflineInput{
		RunDir: in.RunDir, Config: in.Run.Config, Seed: in.Run.Seed,
	}).Get(ctx, &col)
	if err != nil {
		return runstate.Pretrained{}, fmt.Errorf("collect offline dataset: %s", activityReason(err))
	}
	var pre contract.PretrainWorldModelResult
	err = workflow.ExecuteActivity(ctx, contract.ActivityPretrainWorldModel, contract.PretrainWorldModelInput{
		RunDir: in.RunDir, SpecHash: in.SpecHash, Config: in.Run.Config, Seed: in.Run.Seed, DatasetDir: col.Dir,
	}).Get(ctx, &pre)
	if err != nil {
		return runstate.Pretrained{}, fmt.Errorf("pretrain world model: %s", activityReason(err))
	}
	return runstate.Pretrained{
		OfflineSteps: int64(col.Rows), WorldModelState: pre.Checkpoint,
		ValLoss: pre.ValObsLoss, HasValLoss: pre.HasValLoss,
	}, nil
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
func trainSegment(ctx workflow.Context, in contract.TrainSegmentInput) (contract.TrainSegmentResult, error) {
	var res contract.TrainSegmentResult
	reason := ""
	for attempt := 1; attempt <= segmentRetries; attempt++ {
		err := workflow.ExecuteActivity(ctx, contract.ActivityTrainSegment, in).Get(ctx, &res)
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
		if appErr.Type() != contract.ErrTypeTraining {
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
	if err := workflow.ExecuteActivity(fctx, contract.ActivityFinishRun, contract.FinishRunInput{
		RunDir: in.RunDir, Status: status, Error: errMsg,
	}).Get(ctx, nil); err != nil {
		return RunResult{}, err
	}
	return RunResult{
		ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: status, Counters: st.Counters,
		ParamsSHA256: st.ParamsSHA256, Error: errMsg, Horizon: st.Horizon.H,
	}, nil
}

// SegmentQueue is the task queue of a run's training segments and world-model pretraining:
// TaskQueueGPU when the spec's resources block asks for a GPU, else TaskQueueCPU. Workflows
// and the small bookkeeping activities always run on TaskQueueCPU.
func SegmentQueue(cfg specs.Config) string {
	if cfg.Resources.GPU > 0 {
		return TaskQueueGPU
	}
	return TaskQueueCPU
}

func heartbeatTimeout(cfg specs.Config) time.Duration {
	if cfg.Checkpoint.HeartbeatTimeout > 0 {
		return cfg.Checkpoint.HeartbeatTimeout.Std()
	}
	return 30 * time.Second
}
