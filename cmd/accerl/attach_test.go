package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/worker"
	"github.com/accerl/accerl/workflows"
)

// finishSignal ends stubExperiment.
const finishSignal = "test-finish"

// startStub runs a worker on queue that serves fn as the workflow type name, until the test
// ends.
func startStub(t *testing.T, c client.Client, queue, name string, fn any) {
	t.Helper()
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// stubExperiment stands in for workflows.Experiment: it trains nothing and completes when
// signalled, so a test can attach to a running and then to a completed experiment in seconds.
func stubExperiment(ctx workflow.Context, in workflows.ExperimentInput) (workflows.ExperimentResult, error) {
	workflow.GetSignalChannel(ctx, finishSignal).Receive(ctx, nil)
	return workflows.ExperimentResult{}, nil
}

// A second `accerl run` of a running or finished experiment with another --out says where the
// results really go; a spec whose --out holds another spec's results is refused before it
// starts, and status lists no runs of that other spec under it.
func TestRunAttachSaysWhereResultsGo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	srv, c := startServer(ctx, t, filepath.Join(dir, "state"))
	startStub(t, c, workflows.TaskQueueCPU, "Experiment", stubExperiment)

	spec := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(spec, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	first, other := filepath.Join(dir, "first"), filepath.Join(dir, "other")
	runOut := func(out string) string {
		t.Helper()
		status, stdout, stderr := runArgs(t, "run", "--temporal", srv.HostPort(), "--no-worker", "--detach", "--out", out, spec)
		if status != 0 {
			t.Fatalf("run --out %s: status %d\n%s\n%s", out, status, stdout, stderr)
		}
		return stdout
	}
	if got := runOut(first); !strings.Contains(got, "Started experiment") || !strings.Contains(got, "Results go to "+first+"\n") {
		t.Fatalf("first run:\n%s", got)
	}
	want := "Results go to " + first + ", where the experiment was started; " + other + " is not used"
	if got := runOut(other); !strings.Contains(got, "Attached to experiment") || !strings.Contains(got, want) {
		t.Errorf("second run with another --out while the first runs:\n%s\nwant %q", got, want)
	}
	exp, err := loadSpec(spec, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	id := workflows.ExperimentID(exp.Name, exp.Hash)
	if err := c.SignalWorkflow(ctx, id, "", finishSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := runOut(other); !strings.Contains(got, "Attached to experiment") || !strings.Contains(got, want) {
		t.Errorf("re-run of the finished experiment with another --out:\n%s\nwant %q", got, want)
	}

	// A changed spec on the first one's --out is refused at once, and starts nothing.
	m := runstore.ExperimentManifest{Name: exp.Name, SpecHash: exp.Hash, Arms: []string{"base", "sync"}, Seeds: []uint64{7}}
	if err := runstore.WriteJSON(filepath.Join(first, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(dir, "changed.hcl")
	if err := os.WriteFile(changed, []byte(strings.Replace(tinySpec, "seeds        = [7]", "seeds        = [8]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := runArgs(t, "run", "--temporal", srv.HostPort(), "--no-worker", "--detach", "--out", first, changed)
	if status != 1 || !strings.Contains(stderr, first+" already holds the results of experiment "+id) || strings.Contains(stdout, "Started") {
		t.Errorf("changed spec on the same --out: status %d\n%s\n%s\nwant 1 and that %s holds %s", status, stdout, stderr, first, id)
	}

	// An experiment whose --out holds another's results (one that failed for it, as it would
	// without the check above) lists none of the other's runs.
	runs, problem := listRuns(ctx, c, experimentStatus{ID: "accerl/tiny/0123456789ab", OutDir: first, State: "failed"})
	if len(runs) != 0 || !strings.Contains(problem, "holds the results of experiment "+id) {
		t.Errorf("status of an experiment whose --out holds %s: runs %+v, problem %q", id, runs, problem)
	}
}

// An `accerl run` that uses the embedded server of another accerl process notices within
// seconds when that process exits, serves the state directory itself and finishes the
// experiment, instead of waiting for a server that will not come back.
func TestRunTakesOverWhenServerOwnerExits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts embedded Temporal servers and trains a tiny experiment")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	state, out, spec := filepath.Join(dir, "state"), filepath.Join(dir, "out"), filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(spec, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	// The other process: it serves the state directory and runs no worker.
	owner, err := worker.StartServer(worker.ServerConfig{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: owner.HostPort(), Namespace: worker.DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--state-dir", state, "--no-ui", "--out", out, spec}, &stdout, &stderr)
	}()
	exp, err := loadSpec(spec, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	id := workflows.ExperimentID(exp.Name, exp.Hash)
	for {
		if _, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before it started the experiment: %v\n%s\n%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := owner.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after its server's owner exited: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("run still waits %v after its server's owner exited\n%s\n%s", time.Since(stopped), stdout.String(), stderr.String())
	}
	if want := "The accerl process that served " + state + " exited; this process serves it now"; !strings.Contains(stderr.String(), want) {
		t.Errorf("run does not say %q:\n%s", want, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Report: "+filepath.Join(out, "report.md")) {
		t.Errorf("run did not finish the experiment:\n%s", stdout.String())
	}
}

// syncBuffer is a bytes.Buffer that a command running in another goroutine may write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stubRun stands in for workflows.Run: it ends when it is paused.
func stubRun(ctx workflow.Context, in workflows.RunInput) (workflows.RunResult, error) {
	workflow.GetSignalChannel(ctx, workflows.PauseSignal).Receive(ctx, nil)
	return workflows.RunResult{}, nil
}

// pause, resume and stop take the experiment as status prints it (accerl/NAME/HASH) or by
// its name alone when one running experiment has it.
func TestControlTakesExperimentName(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c := startServer(ctx, t, filepath.Join(t.TempDir(), "state"))
	startStub(t, c, "stub", "Run", stubRun)
	start := func(expID string) string {
		t.Helper()
		id := workflows.RunID(expID, "base/seed-7")
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "stub"}, "Run", workflows.RunInput{}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// Visibility lists a run a moment after it starts.
	waitRunning := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if ids, err := runningRuns(ctx, c); err == nil && len(ids) == n {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("running runs %v (%v), want %d", ids, err, n)
			}
		}
	}
	pause := func(arg string, wantStatus int) (stdout, stderr string) {
		t.Helper()
		status, stdout, stderr := runArgs(t, "pause", "--temporal", srv.HostPort(), arg)
		if status != wantStatus {
			t.Fatalf("pause %s: status %d, want %d\n%s\n%s", arg, status, wantStatus, stdout, stderr)
		}
		return stdout, stderr
	}
	a := workflows.ExperimentID("tiny", strings.Repeat("a", 64))
	runA := start(a)
	waitRunning(1)
	if stdout, _ := pause("tiny", 0); stdout != runA+": pause\n" {
		t.Errorf("pause tiny: %q, want the one run of %s", stdout, a)
	}
	if err := c.GetWorkflow(ctx, runA, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	b, other := workflows.ExperimentID("tiny", strings.Repeat("b", 64)), workflows.ExperimentID("tiny", strings.Repeat("c", 64))
	runB := start(b)
	start(other)
	waitRunning(2)
	if _, stderr := pause("tiny", 1); !strings.Contains(stderr, "tiny names 2 running experiments ("+b+", "+other+")") {
		t.Errorf("pause tiny with two experiments of that name: %q", stderr)
	}
	if stdout, _ := pause(b, 0); stdout != runB+": pause\n" {
		t.Errorf("pause %s: %q, want its one run", b, stdout)
	}
}

// A run on a --temporal server where no worker polls says so, and where one polls it says
// nothing.
func TestWarnNoWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, c := startServer(ctx, t, filepath.Join(t.TempDir(), "state"))
	defer func(g time.Duration) { noWorkerGrace = g }(noWorkerGrace)
	noWorkerGrace = 0
	var out bytes.Buffer
	warnNoWorker(ctx, c, "default", srv.HostPort(), true, &out)
	if want := "No worker is polling task queue \"cpu\" in namespace \"default\" of " + srv.HostPort(); !strings.Contains(out.String(), want) ||
		!strings.Contains(out.String(), "accerl worker --temporal "+srv.HostPort()) {
		t.Errorf("without a worker: %q, want it to contain %q and the command that starts one", out.String(), want)
	}
	if want := `No worker is polling task queue "gpu"`; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "--queue gpu") {
		t.Errorf("a GPU spec without a GPU worker: %q, want %q and the --queue gpu command", out.String(), want)
	}

	startStub(t, c, workflows.TaskQueueCPU, "Experiment", stubExperiment)
	// A poller shows in DescribeTaskQueue once its first long poll reached the server.
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := c.DescribeTaskQueue(ctx, workflows.TaskQueueCPU, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil && len(resp.GetPollers()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stub worker never showed as a poller: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out.Reset()
	warnNoWorker(ctx, c, "default", srv.HostPort(), false, &out)
	if out.Len() > 0 {
		t.Errorf("with a worker polling: %q, want nothing", out.String())
	}
}
