package worker

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/server/schema/sqlite"

	"github.com/accerl/accerl/workflows"
)

// A state directory whose namespace was created before accerl had search attributes gets
// them when the server starts, in time for the first workflow that sets them, and a
// visibility query on them finds that workflow.
func TestStartServerAddsSearchAttributesToOldNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	dir := t.TempDir()
	old := sqlConfig(dir)
	if err := sqlite.SetupSchema(old); err != nil {
		t.Fatal(err)
	}
	ns, err := sqlite.NewNamespaceConfig(clusterName, DefaultNamespace, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.CreateNamespaces(old, ns); err != nil {
		t.Fatal(err)
	}

	srv, err := StartServer(ServerConfig{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.HostPort(), Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := sdkworker.New(c, "sa", sdkworker.Options{})
	w.RegisterWorkflow(echo)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "sa-1", TaskQueue: "sa",
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SearchArm.ValueSet("base"), workflows.SearchSeed.ValueSet(7)),
	}, echo, "hi")
	if err != nil {
		t.Fatalf("start a workflow with accerl's search attributes: %v", err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Visibility is written asynchronously after the workflow closes.
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: `AccerlArm="base" AND AccerlSeed=7`})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Executions) == 1 && resp.Executions[0].GetExecution().GetWorkflowId() == "sa-1" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("query found %d workflows, want sa-1", len(resp.Executions))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
