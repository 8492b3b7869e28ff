package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/workflows"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "run [flags] FILE", stderr)
	tf := addTemporalFlags(fs)
	tf.ui = addUIFlags(fs)
	vars := addVarFlag(fs)
	out := fs.String("out", "", "experiment output directory (default runs/<experiment>/): a path or a file:// URL, which workers on other hosts must see at the same path (a shared filesystem: NFS, Lustre), or an S3-compatible object store, s3://BUCKET/PREFIX[?endpoint=http://HOST:PORT&use_path_style=true&region=R], with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set on every worker (each works on a local copy under $ACCERL_STORE_CACHE, default ~/.cache/accerl/store)")
	detach := fs.Bool("detach", false, "submit the experiment and return without waiting (needs a worker elsewhere, so use it with --temporal)")
	noWorker := fs.Bool("no-worker", false, "do not run a worker in this process (use when 'accerl worker' processes serve the task queues). With --temporal no worker runs in this process either way: start 'accerl worker --temporal HOST:PORT' where the runs should train")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "spec file", stderr); err != nil {
		return err
	}
	exp, err := loadSpec(fs.Arg(0), vars, stderr)
	if err != nil {
		return err
	}
	outDir, err := storePath(*out)
	if err != nil {
		return err
	}
	if outDir == "" {
		outDir = filepath.Join("runs", exp.Name)
	}
	if !runstore.IsStoreURL(outDir) {
		if outDir, err = filepath.Abs(outDir); err != nil {
			return err
		}
	} else if err := runstore.CheckStore(ctx, outDir); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for {
		err := runExperiment(ctx, tf, exp, outDir, runOptions{detach: *detach, noWorker: *noWorker}, stdout, stderr)
		if !errors.Is(err, errServerGone) {
			return err
		}
		// The experiment is durable: what that process did is in the state directory,
		// which this process now serves, as the same command run again would.
		fmt.Fprintf(stderr, "\nThe accerl process that served %s exited; this process serves it now and reattaches.\n", tf.stateDir)
	}
}

// runOptions are run's flags that runExperiment needs besides the connection's.
type runOptions struct {
	detach, noWorker bool
}

// runExperiment connects, starts or attaches to the experiment and, unless detached, shows its
// progress until it ends. It returns errServerGone when the server it used was another accerl
// process's, and that process exited.
func runExperiment(ctx context.Context, tf *temporalFlags, exp *specs.Experiment, outDir string, opts runOptions, stdout, stderr io.Writer) error {
	c, err := tf.connect(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.close()
	if err := retryTransient(ctx, stderr, func() error { return c.ensureSearchAttributes(ctx, tf.namespace) }); err != nil {
		return err
	}
	if c.owned && !opts.noWorker {
		if err := c.startWorker(exp, stderr); err != nil {
			return err
		}
	}

	id := workflows.ExperimentID(exp.Name, exp.Hash)
	var at attachment
	err = retryTransient(ctx, stderr, func() error {
		var err error
		at, err = startOrAttach(ctx, c.client, id, workflows.ExperimentInput{Experiment: *exp, OutDir: outDir})
		return err
	})
	if err != nil {
		return err
	}
	we := at.run
	if at.attached {
		fmt.Fprintf(stdout, "Attached to experiment %s (spec hash %.12s); it was started earlier.\n", id, exp.Hash)
	} else {
		fmt.Fprintf(stdout, "Started experiment %s: %d run(s) (spec hash %.12s).\n", id, len(exp.Runs()), exp.Hash)
	}
	if at.outDir != outDir {
		fmt.Fprintf(stdout, "Results go to %s, where the experiment was started; %s is not used (an experiment keeps the --out it started with)\n", at.outDir, outDir)
	} else {
		fmt.Fprintf(stdout, "Results go to %s\n", outDir)
	}
	if opts.detach {
		fmt.Fprintf(stdout, "Detached. Follow it with 'accerl status'.\n")
		return nil
	}
	if !c.owned && c.sharedDir == "" {
		// With --temporal the workers are other processes: say so if there are none,
		// rather than show pending runs forever.
		go warnNoWorker(ctx, c.client, tf.namespace, tf.addr, wantsGPU(exp), stderr)
	}

	res, err := watch(ctx, c, we, exp, stdout)
	if err != nil {
		if errors.Is(err, errServerGone) {
			return err
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stdout, "\nInterrupted. The experiment is durable: run the same command again to continue it.\n")
			return exitCode(130)
		}
		return fmt.Errorf("experiment %s: %w", id, err)
	}
	printResults(stdout, res)
	fmt.Fprintf(stdout, "\nReport: %s\n", res.Report.Markdown)
	for _, r := range res.Runs {
		if r.Status != workflows.StatusCompleted {
			return exitCode(1)
		}
	}
	return nil
}

// retryTransient runs f until it succeeds, fails with an error that is not transient, or a
// minute has passed. Right after a crash the restarted embedded server can answer "unavailable"
// or time out while it reloads its shard; that is no reason to give up on the experiment.
func retryTransient(ctx context.Context, stderr io.Writer, f func() error) error {
	deadline := time.Now().Add(time.Minute)
	wait := 200 * time.Millisecond
	for {
		err := f()
		if err == nil || !isTransient(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(stderr, "Temporal is not ready yet (%v); retrying\n", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func isTransient(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	var exhausted *serviceerror.ResourceExhausted
	var nsNotFound *serviceerror.NamespaceNotFound
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.As(err, &nsNotFound) || errors.Is(err, context.DeadlineExceeded)
}

// attachment is the experiment workflow that startOrAttach started or found.
type attachment struct {
	run client.WorkflowRun
	// attached is true when the workflow was started earlier (it runs, or it completed).
	attached bool
	// outDir is where its results go: the --out it was started with.
	outDir string
}

// startOrAttach starts the experiment workflow, or attaches to the one with the same ID: a
// running one is reused, a completed one is returned as is (so re-running a finished
// experiment trains nothing), and a failed or terminated one is started afresh. An attached
// workflow keeps the output directory it was started with, whatever in.OutDir says. A new
// one is not started on an output directory that holds another spec's results.
func startOrAttach(ctx context.Context, c client.Client, id string, in workflows.ExperimentInput) (attachment, error) {
	earlier, err := describeExperiment(ctx, c, id)
	if err != nil {
		return attachment{}, err
	}
	if earlier == nil {
		if err := checkOutDir(ctx, in.OutDir, &in.Experiment); err != nil {
			return attachment{}, err
		}
	}
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                workflows.TaskQueueCPU,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo:                     map[string]any{memoOutDir: in.OutDir, memoName: in.Experiment.Name},
		TypedSearchAttributes:    workflows.ExperimentSearchAttributes(in.Experiment.Name, in.Experiment.Hash),
	}, workflows.Experiment, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &started):
		if earlier == nil { // started by another process since the look-up
			if earlier, err = describeExperiment(ctx, c, id); err != nil {
				return attachment{}, err
			}
		}
		a := attachment{run: c.GetWorkflow(ctx, id, ""), attached: true, outDir: in.OutDir}
		if earlier != nil {
			a.outDir = cmp.Or(memoString(earlier.GetMemo(), memoOutDir), in.OutDir)
		}
		return a, nil
	case err != nil:
		return attachment{}, fmt.Errorf("start experiment %s: %w", id, err)
	case earlier != nil && we.GetRunID() == earlier.GetExecution().GetRunId():
		return attachment{run: we, attached: true, outDir: cmp.Or(memoString(earlier.GetMemo(), memoOutDir), in.OutDir)}, nil
	}
	return attachment{run: we, outDir: in.OutDir}, nil
}

// describeExperiment returns the experiment workflow id that runs or completed, or nil when
// there is none (never started, or failed, cancelled or terminated: those start afresh).
func describeExperiment(ctx context.Context, c client.Client, id string) (*workflowpb.WorkflowExecutionInfo, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("look up experiment %s: %w", id, err)
	}
	switch info := d.GetWorkflowExecutionInfo(); info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return info, nil
	}
	return nil, nil
}

// checkOutDir refuses an output directory that holds the results of another spec, which
// the experiment's first activity would refuse too, after its retries, as a failed
// experiment.
func checkOutDir(ctx context.Context, outDir string, exp *specs.Experiment) error {
	var m runstore.ExperimentManifest
	if err := runstore.ReadStoreJSON(ctx, runstore.JoinDir(outDir, runstore.ExperimentFile), &m); err != nil || m.SpecHash == exp.Hash {
		return nil // no results yet (or none readable: the activity reports that)
	}
	return fmt.Errorf("%s already holds the results of experiment %s (spec hash %.12s; this spec's is %.12s): give this one another --out, or remove that directory",
		outDir, workflows.ExperimentID(m.Name, m.SpecHash), m.SpecHash, exp.Hash)
}

// Memo keys of the experiment workflow.
const (
	memoOutDir = "out_dir"
	memoName   = "name"
)

// memoString is the string stored under key in a workflow's memo, or "".
func memoString(m *commonpb.Memo, key string) string {
	var s string
	if f, ok := m.GetFields()[key]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(f, &s)
	}
	return s
}

// watch shows progress until the experiment finishes and returns its result.
// It returns errServerGone, within seconds, when c's server was another accerl process's
// and that process exited: its clients would otherwise retry as if the server restarted.
func watch(ctx context.Context, conn *conn, we client.WorkflowRun, exp *specs.Experiment, stdout io.Writer) (workflows.ExperimentResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, gone := conn.client, conn.ownerGone(ctx)
	done := make(chan error, 1)
	var res workflows.ExperimentResult
	go func() {
		for {
			err := we.Get(ctx, &res)
			if err == nil || !isTransient(err) || ctx.Err() != nil {
				done <- err
				return
			}
			time.Sleep(time.Second)
		}
	}()

	runs := exp.Runs()
	view := newProgressView(stdout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var reach reachability
	for {
		hctx, hcancel := context.WithTimeout(ctx, 2*time.Second)
		_, herr := c.CheckHealth(hctx, &client.CheckHealthRequest{})
		hcancel()
		if ctx.Err() == nil {
			view.note = reach.observe(herr, time.Now())
		}
		view.render(queryAll(ctx, c, we.GetID(), runs))
		select {
		case err := <-done:
			view.render(queryAll(context.Background(), c, we.GetID(), runs))
			view.finish()
			return res, err
		case <-ctx.Done():
			view.finish()
			return res, ctx.Err()
		case <-gone:
			view.finish()
			return res, errServerGone
		case <-tick.C:
		}
	}
}

// queryAll asks every run workflow for its progress; a run that has not started (or whose
// worker does not answer in time) shows as pending.
func queryAll(ctx context.Context, c client.Client, expID string, runs []specs.Run) []workflows.RunProgress {
	out := make([]workflows.RunProgress, len(runs))
	for i, r := range runs {
		out[i] = queryRun(ctx, c, workflows.RunID(expID, r.ID), r)
	}
	return out
}

func queryRun(ctx context.Context, c client.Client, wfID string, r specs.Run) workflows.RunProgress {
	p := workflows.RunProgress{ID: r.ID, Arm: r.Arm, Seed: r.Seed, Status: workflows.StatusPending, BudgetSteps: r.Config.Budget.EnvSteps}
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, wfID, "", workflows.ProgressQuery)
	if err != nil {
		return p
	}
	if v.Get(&p) == nil && p.Status == workflows.StatusRunning {
		withLiveProgress(qctx, c, wfID, &p)
	}
	return p
}

// noWorkerGrace is how long run waits for a worker to poll the workflow task queue of a
// --temporal server before it says that there is none.
var noWorkerGrace = 10 * time.Second

// warnNoWorker writes a warning to w when, noWorkerGrace after the start, no worker polls
// the "cpu" task queue (where every workflow task goes) of namespace on the server at addr,
// and, when gpu is set (the spec asks for a GPU), none polls "gpu" for the segments.
func warnNoWorker(ctx context.Context, cl client.Client, namespace, addr string, gpu bool, w io.Writer) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(noWorkerGrace):
	}
	type queue struct {
		name  string
		kind  enumspb.TaskQueueType
		flags string // of the worker command that serves it
	}
	queues := []queue{{workflows.TaskQueueCPU, enumspb.TASK_QUEUE_TYPE_WORKFLOW, ""}}
	if gpu {
		queues = append(queues, queue{workflows.TaskQueueGPU, enumspb.TASK_QUEUE_TYPE_ACTIVITY, " --queue gpu"})
	}
	for _, q := range queues {
		resp, err := cl.DescribeTaskQueue(ctx, q.name, q.kind)
		if err != nil || len(resp.GetPollers()) > 0 {
			continue
		}
		fmt.Fprintf(w, "\nNo worker is polling task queue %q in namespace %q of %s, so the runs wait. Start one where they should train: accerl worker --temporal %s%s\n",
			q.name, namespace, addr, addr, q.flags)
	}
}

// wantsGPU reports whether an arm of exp asks for a GPU (its segments go to the "gpu" queue).
func wantsGPU(exp *specs.Experiment) bool {
	for _, a := range exp.Arms {
		if a.Config.Resources.GPU > 0 {
			return true
		}
	}
	return false
}

// storePath is the experiment directory of an --out value: a path as it is, a file:// URL
// (file:///shared/runs, or file://localhost/shared/runs) as its path, or an object-store URL
// (s3://bucket/prefix?endpoint=...) checked and kept (runstore.ParseStoreURL). Other schemes
// are refused with what accerl can store to.
func storePath(out string) (string, error) {
	scheme, _, ok := strings.Cut(out, "://")
	if !ok || strings.ContainsAny(scheme, "/\\") {
		return out, nil // a plain path (which may contain "://" further on)
	}
	u, err := url.Parse(out)
	if err != nil {
		return "", fmt.Errorf("--out %q: %v", out, err)
	}
	switch {
	case u.Scheme == "s3":
		d, err := runstore.ParseStoreURL(out)
		if err != nil {
			return "", fmt.Errorf("--out: %v", err)
		}
		return d, nil
	case u.Scheme != "file":
		return "", fmt.Errorf("--out %q: accerl stores runs on a filesystem (a path, or file:///path on a filesystem every worker mounts at that path: NFS, Lustre) or in an S3-compatible object store (s3://bucket/prefix), not in %s://", out, u.Scheme)
	case u.Host != "" && u.Host != "localhost":
		return "", fmt.Errorf("--out %q: a file:// URL names a path on this host (file:///shared/runs); mount %s's filesystem here instead", out, u.Host)
	case u.Path == "" || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("--out %q: want file:///absolute/path, with nothing after the path", out)
	}
	return u.Path, nil
}

// reachability follows whether the Temporal server answers run's health checks, for the
// note under the progress bars: while it does not, the runs show what they last showed
// ("pending" at the start), which would read as a stall without it.
type reachability struct {
	since time.Time // when the checks started failing; zero while the server answers
}

// unreachableGrace is how long the server may fail health checks before run says so (a
// restart of the embedded server takes a few seconds).
const unreachableGrace = 5 * time.Second

// observe records one health check's error (nil: it answered) at now and returns the note
// to show, or "".
func (r *reachability) observe(err error, now time.Time) string {
	if err == nil {
		r.since = time.Time{}
		return ""
	}
	if r.since.IsZero() {
		r.since = now
	}
	if now.Sub(r.since) < unreachableGrace {
		return ""
	}
	return fmt.Sprintf("Temporal server unreachable since %s (%s).\nNothing is lost: the runs resume when it is back; Ctrl-C leaves them for later.",
		r.since.Format("15:04:05"), shortError(err))
}

// shortError is the innermost cause in err's first line: gRPC nests them as "rpc error: code
// = Unavailable desc = connection error: desc = \"transport: …: connect: connection
// refused\"", of which "connection refused" says it.
func shortError(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = strings.TrimRight(msg, `"`)
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
