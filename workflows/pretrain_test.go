package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/specs"
)

// A run with a pretrain block clones its policy once, before its first segment; every
// segment is planned with the warm start's checkpoint, and the run's counters keep the
// demonstrations and the cloned policy's success through the segments.
func TestRunPretrainsPolicyFirst(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	pretrains := 0
	env.OnActivity("PretrainPolicy", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PretrainPolicyInput) (activities.PretrainPolicyResult, error) {
		pretrains++
		if len(fake.calls) > 0 {
			t.Error("PretrainPolicy ran after a segment")
		}
		return activities.PretrainPolicyResult{Checkpoint: "/tmp/x/bc/final", DemoSteps: 5000, Success: 0.4, HasSuccess: true}, nil
	})
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	run := testRun()
	run.Config.Pretrain = specs.DefaultPretrain()
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: run, RunDir: "/tmp/x"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if pretrains != 1 || len(fake.calls) != 4 {
		t.Fatalf("%d pretrainings and %d segments, want 1 and 4", pretrains, len(fake.calls))
	}
	for _, c := range fake.calls {
		if c.PolicyState != "/tmp/x/bc/final" {
			t.Errorf("segment %d planned with policy state %q", c.Segment, c.PolicyState)
		}
	}
	if res.DemoSteps != 5000 || !res.HasPretrainSuccess || res.PretrainSuccess != 0.4 {
		t.Errorf("result counters %+v: want demo steps 5000 and pretrain success 0.4", res.Counters)
	}
}

// A failed warm start fails the run with the activity's reason and trains nothing.
func TestRunPretrainFailureFailsRun(t *testing.T) {
	env := newEnv(t)
	fake := &fakeSegments{}
	env.OnActivity("PretrainPolicy", mock.Anything, mock.Anything).Return(activities.PretrainPolicyResult{},
		temporal.NewNonRetryableApplicationError("collect demos: task 3: 0 successes in 200 attempts", activities.ErrTypeBadInput, nil))
	env.OnActivity("TrainSegment", mock.Anything, mock.Anything).Return(fake.train)
	env.OnActivity("FinishRun", mock.Anything, mock.Anything).Return(activities.FinishRunResult{}, nil)
	run := testRun()
	run.Config.Pretrain = specs.DefaultPretrain()
	env.ExecuteWorkflow(Run, RunInput{ExperimentName: "e", SpecHash: "h", Run: run, RunDir: "/tmp/x"})
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || !containsAll(res.Error, "pretrain policy", "0 successes") || len(fake.calls) != 0 {
		t.Errorf("status %q, error %q, %d segments; want failed with the reason and none", res.Status, res.Error, len(fake.calls))
	}
}
