package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestRecordHistories refreshes workflows/testdata/*.json, the recorded workflow histories
// that workflows' replay test runs the current workflow code against (catching
// non-deterministic changes before they break running experiments). It only runs when
// ACCERL_RECORD_HISTORY=1:
//
//	ACCERL_RECORD_HISTORY=1 go test ./cmd/accerl -run TestRecordHistories
func TestRecordHistories(t *testing.T) {
	if os.Getenv("ACCERL_RECORD_HISTORY") != "1" {
		t.Skip("set ACCERL_RECORD_HISTORY=1 to re-record workflows/testdata histories")
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "tiny.hcl")
	// tinySpec plus an arm with the world model, so the Run history covers pretraining and
	// the horizon schedule too.
	spec := strings.Replace(tinySpec, `  ablation "sync" {`, `  ablation "wm" {
    pipeline { mode = "sync" }
    world_model {
      enabled              = true
      offline_trajectories = 10
      pretrain_epochs      = 2
      obs_hidden           = [16]
      rew_hidden           = [8]
    }
  }
  ablation "sync" {`, 1)
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"run", "--state-dir", state, "--out", filepath.Join(dir, "out"), specPath}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	c := serveStateDir(ctx, t, state)
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("..", "..", "workflows", "testdata")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, info := range resp.Executions {
		id := info.Execution.GetWorkflowId()
		var events []*historypb.HistoryEvent
		it := c.GetWorkflowHistory(ctx, id, info.Execution.GetRunId(), false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, ev)
		}
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		// accerl/tiny/<hash>[/<arm>/seed-7] -> experiment.json, run-<arm>.json
		name := strings.ToLower(info.GetType().GetName())
		if parts := strings.Split(id, "/"); len(parts) >= 5 {
			name += "-" + parts[3]
		}
		name += ".json"
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// The replayer needs the original workflow ID: child workflow IDs derive from it.
		if err := os.WriteFile(filepath.Join(out, strings.TrimSuffix(name, ".json")+".id"), []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s (%d events)", name, len(events))
	}
}
