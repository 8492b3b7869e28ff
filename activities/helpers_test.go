package activities

import (
	"context"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/specs"
)

// tinyCartPole is a small, fast CartPole configuration for activity tests: 4 environments
// (2 workers × 2), 128-step batches of one epoch in 2 minibatches, one 8-unit hidden layer.
func tinyCartPole(mode string, steps int64) specs.Config {
	c := specs.DefaultConfig()
	c.Env.Kind, c.Env.MaxEpisodeSteps = specs.EnvCartPole, 500
	c.Budget.EnvSteps = steps
	c.Pipeline.Mode = mode
	c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 2, 2
	c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity = 32, 512
	c.Algorithm.BatchSteps, c.Algorithm.Epochs, c.Algorithm.Minibatches = 128, 1, 2
	c.Policy.Hidden = []int{8}
	return c
}

// segmentRunner runs TrainSegment in a test activity environment.
type segmentRunner struct {
	t   *testing.T
	env *testsuite.TestActivityEnvironment
}

func newSegmentRunner(t *testing.T) segmentRunner {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&Trainer{})
	return segmentRunner{t: t, env: env}
}

// run executes one segment and fails the test on an error.
func (r segmentRunner) run(in TrainSegmentInput) TrainSegmentResult {
	r.t.Helper()
	v, err := r.env.ExecuteActivity((&Trainer{}).TrainSegment, in)
	if err != nil {
		r.t.Fatalf("segment %d: %v", in.Segment, err)
	}
	var res TrainSegmentResult
	if err := v.Get(&res); err != nil {
		r.t.Fatal(err)
	}
	return res
}

// mustRunEngine runs updates updates of eng and fails the test on an error.
func mustRunEngine(t *testing.T, eng *engine.Engine, updates int) {
	t.Helper()
	if _, err := eng.Run(context.Background(), updates, nil); err != nil {
		t.Fatal(err)
	}
}
