package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/workflows"
)

// Options tune a worker.
type Options struct {
	// MaxConcurrentSegments bounds how many activities this worker runs at once (0 = 4):
	// training segments, pretraining, and the short bookkeeping ones (a run's summary, the
	// report), which wait for a free slot like the rest. Each segment runs its own rollout
	// workers, inference service and trainer.
	MaxConcurrentSegments int
}

// New returns a Temporal worker on the given task queue with every accerl workflow and
// activity registered. Start it with Run or Start; it stops with Stop.
func New(c client.Client, queue string, opts Options) sdkworker.Worker {
	n := opts.MaxConcurrentSegments
	if n <= 0 {
		n = 4
	}
	w := sdkworker.New(c, queue, sdkworker.Options{
		// Every activity counts: a slot reserved for bookkeeping would be taken by a segment
		// as soon as one is queued, and the bound would not hold.
		MaxConcurrentActivityExecutionSize: n,
	})
	w.RegisterWorkflow(workflows.Experiment)
	w.RegisterWorkflow(workflows.Run)
	w.RegisterActivity(&activities.Trainer{})
	w.RegisterActivity(&activities.Reporter{})
	w.RegisterActivity(&activities.WorldModel{})
	return w
}
