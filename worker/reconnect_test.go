package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// shout is the activity of waitThenShout.
func shout(_ context.Context, s string) (string, error) { return strings.ToUpper(s), nil }

// waitThenShout waits for a "go" signal carrying a word, then runs the shout activity on it.
func waitThenShout(ctx workflow.Context) (string, error) {
	var word string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &word)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, shout, word).Get(ctx, &out)
	return out, err
}

// A worker and a client that stay up while their server goes away and comes back (same
// state directory, same port: a cluster restart) carry on by themselves: the workflow
// started before the outage is signalled after it, and the same worker, never restarted,
// runs its workflow task and its activity.
func TestWorkerReconnectsAfterServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server twice")
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerConfig{StateDir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.HostPort(), Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := sdkworker.New(c, "reconnect", sdkworker.Options{})
	w.RegisterWorkflow(waitThenShout)
	w.RegisterActivity(shout)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "rc-1", TaskQueue: "reconnect"}, waitThenShout); err != nil {
		t.Fatal(err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the worker's polls fail meanwhile
	srv2, err := StartServer(ServerConfig{StateDir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv2.Stop() }()

	// The client's first calls may land while the server is still coming up; retry them
	// until the context ends, as `accerl run` does.
	for {
		err = c.SignalWorkflow(ctx, "rc-1", "", "go", "back")
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("signal after the restart: %v", err)
	}
	var got string
	if err := c.GetWorkflow(ctx, "rc-1", "").Get(ctx, &got); err != nil || got != "BACK" {
		t.Fatalf("workflow result %q, %v; want BACK from the worker that outlived the server", got, err)
	}
}
