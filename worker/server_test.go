package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// echo is a trivial workflow used to prove the server persists workflow results.
func echo(ctx workflow.Context, s string) (string, error) { return "echo: " + s, nil }

func TestEmbeddedServerPersistsAndLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	dir := t.TempDir()
	srv, err := StartServer(ServerConfig{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}

	// A second server on the same state directory is refused and told where the first is.
	_, err = StartServer(ServerConfig{StateDir: dir})
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrStateDirBusy) || busy.Addr != srv.HostPort() {
		t.Fatalf("second StartServer = %v, want BusyError with address %s", err, srv.HostPort())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.HostPort(), Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	runEcho(ctx, t, c, "echo-1", "hi")
	c.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	// A restarted server on the same directory still knows the finished workflow.
	srv2, err := StartServer(ServerConfig{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv2.Stop() }()
	var got string
	c2, err := client.DialContext(ctx, client.Options{HostPort: srv2.HostPort(), Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.GetWorkflow(ctx, "echo-1", "").Get(ctx, &got); err != nil || got != "echo: hi" {
		t.Fatalf("after restart: result %q, %v", got, err)
	}
}

// runEcho runs the echo workflow with ID id on c, served by a worker it starts and stops,
// and checks its result.
func runEcho(ctx context.Context, t *testing.T, c client.Client, id, s string) {
	t.Helper()
	w := sdkworker.New(c, "test", sdkworker.Options{})
	w.RegisterWorkflow(echo)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "test"}, echo, s)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil || got != "echo: "+s {
		t.Fatalf("workflow result %q, %v", got, err)
	}
}

// Served tells a process that holds the state directory's lock from none, and leaves a free
// lock free.
func TestServed(t *testing.T) {
	dir := t.TempDir()
	if Served(dir) {
		t.Fatal("Served on a fresh directory")
	}
	lock, err := lockStateDir(dir)
	if err != nil {
		t.Fatalf("Served left the lock taken: %v", err)
	}
	if !Served(dir) {
		t.Error("Served is false while the lock is held")
	}
	_ = lock.Close()
	if Served(dir) {
		t.Error("Served is true after the lock was released")
	}
}
