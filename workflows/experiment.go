package workflows

import (
	"fmt"
	"time"

	"github.com/accerl/accerl/runstore"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/specs"
)

// ExperimentInput is a resolved spec plus where its results go.
type ExperimentInput struct {
	Experiment specs.Experiment `json:"experiment"`
	// OutDir is the experiment's output directory (runs/<name>/ by default). Workers must see
	// it at the same path.
	OutDir string `json:"out_dir"`
}

// ExperimentResult lists every run's outcome and where the report is.
type ExperimentResult struct {
	Runs   []RunResult           `json:"runs"`
	Report contract.ReportResult `json:"report"`
}

// RunDir is where run r of an experiment writes its files: <out>/<arm>/seed-<seed>, on a
// filesystem or in an object store (runstore.JoinDir; for a path it is filepath.Join, as in
// the histories recorded before object stores, so they replay unchanged).
func RunDir(outDir string, r specs.Run) string {
	return runstore.JoinDir(outDir, r.Arm, fmt.Sprintf("seed-%d", r.Seed))
}

// Experiment runs every arm × seed of a spec as a child Run workflow, at most MaxParallel at
// a time, in plan order, then builds the report. A failed run does not stop the others; it is
// reported as failed.
func Experiment(ctx workflow.Context, in ExperimentInput) (ExperimentResult, error) {
	exp := in.Experiment
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           TaskQueueCPU,
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})

	if err := workflow.ExecuteActivity(actx, contract.ActivityPrepareExperiment, contract.PrepareExperimentInput{
		ExpDir: in.OutDir, Experiment: exp, Created: workflow.Now(ctx).UTC(),
	}).Get(ctx, nil); err != nil {
		return ExperimentResult{}, err
	}

	runs := exp.Runs()
	results := make([]RunResult, len(runs))
	parallel := max(1, exp.MaxParallel)
	expID := workflow.GetInfo(ctx).WorkflowExecution.ID
	running := 0
	sel := workflow.NewSelector(ctx)
	for i, r := range runs {
		if running >= parallel {
			sel.Select(ctx)
			running--
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: RunID(expID, r.ID),
			TaskQueue:  TaskQueueCPU,
			// If the experiment is cancelled or terminated, so are its runs.
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_TERMINATE,
			// Replay-safe without a version marker: the SDK matches a recorded child start
			// by its workflow type only, so histories recorded without them still replay.
			TypedSearchAttributes: RunSearchAttributes(exp.Name, exp.Hash, r),
		})
		f := workflow.ExecuteChildWorkflow(cctx, Run, RunInput{
			ExperimentName: exp.Name, SpecHash: exp.Hash, Run: r, RunDir: RunDir(in.OutDir, r),
		})
		idx := i
		sel.AddFuture(f, func(f workflow.Future) {
			var res RunResult
			if err := f.Get(ctx, &res); err != nil {
				res = RunResult{ID: r.ID, Arm: r.Arm, Seed: r.Seed, Status: StatusFailed, Error: err.Error()}
			}
			results[idx] = res
		})
		running++
	}
	for ; running > 0; running-- {
		sel.Select(ctx)
	}

	var rep contract.ReportResult
	if err := workflow.ExecuteActivity(actx, contract.ActivityReport, contract.ReportInput{ExpDir: in.OutDir}).Get(ctx, &rep); err != nil {
		return ExperimentResult{Runs: results}, fmt.Errorf("report: %w", err)
	}
	return ExperimentResult{Runs: results, Report: rep}, nil
}
