package workflows

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays workflow histories recorded from real runs on the
// embedded server (testdata/*.json: an experiment with async, sync and world-model arms)
// against the current workflow code. A change that would make running experiments
// non-deterministic on upgrade fails here. Re-record after an intended, versioned change with
// `ACCERL_RECORD_HISTORY=1 go test ./cmd/accerl -run TestRecordHistories`.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(Experiment)
	r.RegisterWorkflow(Run)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fh.Close() }()
			hist, err := client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			id, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".id")
			if err != nil {
				t.Fatal(err)
			}
			opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id)), RunID: "replay"}}
			if err := r.ReplayWorkflowHistoryWithOptions(nil, hist, opts); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestReplayCatchesDrift proves the replay test can fail: a recorded history whose first
// activity is not the one the workflow schedules (the experiment's PrepareExperiment renamed
// to Report) must not replay.
func TestReplayCatchesDrift(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "experiment.json"))
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`"name":\s*"PrepareExperiment"`).FindIndex(data)
	if first == nil {
		t.Fatalf("testdata/experiment.json schedules no PrepareExperiment activity; update this test")
	}
	drifted := string(data[:first[0]]) + `"name": "Report"` + string(data[first[1]:])
	hist, err := client.HistoryFromJSON(strings.NewReader(drifted), client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := os.ReadFile(filepath.Join("testdata", "experiment.id"))
	if err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(Experiment)
	r.RegisterWorkflow(Run)
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id)), RunID: "replay"}}
	if err := r.ReplayWorkflowHistoryWithOptions(nil, hist, opts); err == nil {
		t.Fatal("a history with another activity replayed without error: the replay test would not catch drift")
	}
}
