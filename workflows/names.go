package workflows

import (
	"fmt"
	"strings"
)

// Query and signal names understood by the Run workflow.
const (
	// ProgressQuery returns a RunProgress.
	ProgressQuery = "progress"
	// PauseSignal makes the run wait before its next segment.
	PauseSignal = "pause"
	// ResumeSignal ends a pause.
	ResumeSignal = "resume"
	// StopSignal ends the run cleanly after the current segment (which writes a checkpoint).
	StopSignal = "stop"
)

// Run statuses, as shown by progress queries, summaries and reports.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusCompleted = "completed"
	StatusStopped   = "stopped"
	StatusFailed    = "failed"
)

// Default task queues. Workflows and CPU activities use TaskQueueCPU; the training segments
// of runs whose spec asks for a GPU (resources { gpu = 1 }) use TaskQueueGPU, which
// `accerl worker --queue gpu` serves on a GPU host (SegmentQueue).
const (
	TaskQueueCPU = "cpu"
	TaskQueueGPU = "gpu"
)

// ExperimentID is the workflow ID of an experiment: its name plus the first 12 hex digits of
// the resolved-spec hash, so the same spec always maps to the same workflow (re-running attaches)
// while any change to the spec starts a new one.
func ExperimentID(name, specHash string) string {
	h := specHash
	if len(h) > 12 {
		h = h[:12]
	}
	return fmt.Sprintf("accerl/%s/%s", name, h)
}

// RunID is the workflow ID of one run (arm × seed) of an experiment.
func RunID(experimentID, runID string) string {
	return experimentID + "/" + strings.TrimPrefix(runID, "/")
}
