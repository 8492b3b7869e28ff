// Package workflows holds accerl's deterministic Temporal orchestration.
//
// Experiment (one per spec) starts a child Run workflow per arm × seed, at most
// MaxParallel at a time, then calls the Report activity. Run loops training segments
// (activities.Trainer.TrainSegment) until the run's env-step budget or wall-time budget is
// spent, answers the "progress" query, obeys pause/resume/stop signals, and continues as new
// before its history grows large, carrying its state (counters, latest checkpoint) along.
// Each Run carries the search attributes AccerlExperiment, AccerlSpecHash, AccerlArm and
// AccerlSeed (search.go), which continue-as-new keeps, so visibility queries find runs.
//
// Everything here must be deterministic: no I/O, no wall clocks, no map iteration, no native
// goroutines. `go run go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0 ./workflows/...`
// checks this, and CI runs it.
package workflows
