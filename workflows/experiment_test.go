package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/specs"
)

func testExperiment() specs.Experiment {
	base := testRun().Config
	sync := base
	sync.Pipeline.Mode = "sync"
	return specs.Experiment{
		Name: "exp", Seeds: []uint64{1, 2}, MaxParallel: 1, Baseline: "base", Hash: "0123456789abcdef",
		Arms: []specs.Arm{{Name: "base", Config: base}, {Name: "sync", Config: sync}},
	}
}

func TestExperimentRunsEveryArmAndSeedThenReports(t *testing.T) {
	env := newEnv(t)
	var prepared activities.PrepareExperimentInput
	env.OnActivity("PrepareExperiment", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PrepareExperimentInput) (activities.PrepareExperimentResult, error) {
		prepared = in
		return activities.PrepareExperimentResult{}, nil
	})
	var started []RunInput
	running, maxRunning := 0, 0
	env.OnWorkflow(Run, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in RunInput) (RunResult, error) {
		started = append(started, in)
		sa := workflow.GetTypedSearchAttributes(ctx)
		arm, _ := sa.GetKeyword(SearchArm)
		seed, _ := sa.GetInt64(SearchSeed)
		name, _ := sa.GetKeyword(SearchExperiment)
		hash, _ := sa.GetKeyword(SearchSpecHash)
		if arm != in.Run.Arm || seed != int64(in.Run.Seed) || name != "exp" || hash != "0123456789abcdef" {
			t.Errorf("run %s has search attributes arm %q, seed %d, experiment %q, hash %q", in.Run.ID, arm, seed, name, hash)
		}
		running++
		maxRunning = max(maxRunning, running)
		defer func() { running-- }()
		if in.Run.Arm == "sync" && in.Run.Seed == 2 {
			return RunResult{ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: StatusFailed, Error: "boom"}, nil
		}
		return RunResult{ID: in.Run.ID, Arm: in.Run.Arm, Seed: in.Run.Seed, Status: StatusCompleted, Counters: runstate.Counters{EnvSteps: 1000}}, nil
	})
	reports := 0
	env.OnActivity("Report", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ReportInput) (activities.ReportResult, error) {
		reports++
		if len(started) != 4 {
			t.Errorf("report ran after %d runs, want all 4 first", len(started))
		}
		return activities.ReportResult{Markdown: in.ExpDir + "/report.md"}, nil
	})

	env.ExecuteWorkflow(Experiment, ExperimentInput{Experiment: testExperiment(), OutDir: "/out/exp"})
	var res ExperimentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"base/seed-1", "base/seed-2", "sync/seed-1", "sync/seed-2"}
	if len(res.Runs) != len(wantIDs) {
		t.Fatalf("got %d runs, want %d", len(res.Runs), len(wantIDs))
	}
	for i, id := range wantIDs {
		if res.Runs[i].ID != id {
			t.Errorf("run %d = %s, want %s (results keep plan order)", i, res.Runs[i].ID, id)
		}
		if started[i].RunDir != "/out/exp/"+id {
			t.Errorf("run dir %q, want /out/exp/%s", started[i].RunDir, id)
		}
	}
	if res.Runs[3].Status != StatusFailed || res.Runs[0].Status != StatusCompleted {
		t.Errorf("statuses = %s, %s; want completed ... failed", res.Runs[0].Status, res.Runs[3].Status)
	}
	if maxRunning > 1 {
		t.Errorf("%d runs ran at once, MaxParallel is 1", maxRunning)
	}
	if reports != 1 || res.Report.Markdown != "/out/exp/report.md" {
		t.Errorf("report ran %d times, result %+v", reports, res.Report)
	}
	if prepared.Experiment.Hash != "0123456789abcdef" || len(prepared.Experiment.Arms) != 2 || prepared.ExpDir != "/out/exp" || prepared.Created.IsZero() {
		t.Errorf("experiment manifest = %+v", prepared)
	}
}

func TestExperimentID(t *testing.T) {
	if got := ExperimentID("quickstart", "0123456789abcdef0123"); got != "accerl/quickstart/0123456789ab" {
		t.Errorf("ExperimentID = %s", got)
	}
	if got := RunID("accerl/q/abc", "base/seed-1"); got != "accerl/q/abc/base/seed-1" {
		t.Errorf("RunID = %s", got)
	}
}
