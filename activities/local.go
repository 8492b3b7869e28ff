package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// LocalRun is one run (an arm's resolved config and a seed) trained in this process by
// RunLocal.
type LocalRun struct {
	// Experiment, Arm, Seed and SpecHash identify the run, as in workflows.RunInput.
	Experiment, Arm string
	Seed            uint64
	SpecHash        string
	Config          specs.Config
	// RunDir is where the run's metrics, checkpoints and summary go, as for `accerl run`.
	RunDir string
}

// SegmentHook is called after every segment with the run's state; returning true stops the
// run there (a bench that has seen what it measures).
type SegmentHook func(st runstate.State, res TrainSegmentResult) (stop bool)

// RunLocal trains a run in this process through exactly what `accerl run` executes: the
// run's state machine (runstate.Machine: the segment plan, the horizon schedule, the budget)
// and the same activity methods the Run workflow schedules (CollectOffline,
// PretrainWorldModel, PretrainPolicy, TrainSegment, FinishRun), called directly instead of through Temporal.
// It has no durability, pause, stop or continue-as-new (those are the workflow's), so benches
// measure what users get without the orchestration. A segment that fails with a training
// error is retried from the previous checkpoint up to 3 times, as the workflow does.
func RunLocal(ctx context.Context, r LocalRun, hook SegmentHook) (runstate.State, error) {
	m := runstate.New(r.Config)
	st := m.Start(runstate.State{}, time.Now())
	if m.NeedsPretrain(st) {
		var w WorldModel
		col, err := w.CollectOffline(ctx, CollectOfflineInput{RunDir: r.RunDir, Config: r.Config, Seed: r.Seed})
		if err != nil {
			return st, fmt.Errorf("collect offline dataset: %w", err)
		}
		pre, err := w.PretrainWorldModel(ctx, PretrainWorldModelInput{RunDir: r.RunDir, SpecHash: r.SpecHash,
			Config: r.Config, Seed: r.Seed, DatasetDir: col.Dir})
		if err != nil {
			return st, fmt.Errorf("pretrain world model: %w", err)
		}
		st = m.ApplyPretrain(st, runstate.Pretrained{OfflineSteps: int64(col.Rows), WorldModelState: pre.Checkpoint,
			ValLoss: pre.ValObsLoss, HasValLoss: pre.HasValLoss})
	}
	var t Trainer
	if m.NeedsPolicyPretrain(st) {
		pre, err := t.PretrainPolicy(ctx, PretrainPolicyInput{RunDir: r.RunDir, SpecHash: r.SpecHash, Config: r.Config, Seed: r.Seed})
		if err != nil {
			return st, fmt.Errorf("pretrain policy: %w", err)
		}
		st = m.ApplyPolicyPretrain(st, pre.Pretrained())
	}
	status, errMsg := runstore.StatusCompleted, ""
	for !m.Done(st, time.Now()) {
		in := TrainSegmentInput{RunDir: r.RunDir, Experiment: r.Experiment, Arm: r.Arm, Seed: r.Seed,
			SpecHash: r.SpecHash, Config: r.Config, Plan: m.Next(st)}
		res, err := trainLocal(ctx, &t, in)
		if err != nil {
			status, errMsg = runstore.StatusFailed, err.Error()
			break
		}
		st = m.Apply(st, res)
		if hook != nil && hook(st, res) {
			break
		}
	}
	if _, err := t.FinishRun(ctx, FinishRunInput{RunDir: r.RunDir, Status: status, Error: errMsg}); err != nil {
		return st, err
	}
	if errMsg != "" {
		return st, errors.New(errMsg)
	}
	return st, nil
}

// trainLocal runs one segment, retrying training failures as workflows.Run does.
func trainLocal(ctx context.Context, t *Trainer, in TrainSegmentInput) (TrainSegmentResult, error) {
	const retries = 3
	var err error
	for range retries {
		var res TrainSegmentResult
		if res, err = t.TrainSegment(ctx, in); err == nil {
			return res, nil
		}
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != ErrTypeTraining {
			return res, fmt.Errorf("segment %d: %w", in.Segment, err)
		}
	}
	return TrainSegmentResult{}, fmt.Errorf("segment %d failed %d times: %w", in.Segment, retries, err)
}
