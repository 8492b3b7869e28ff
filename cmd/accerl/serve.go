package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/accerl/accerl/activities/telemetry"
	"github.com/accerl/accerl/reports"

	"github.com/accerl/accerl/worker"
	"github.com/accerl/accerl/workflows"
)

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report DIR   — regenerate report.md, results.json and figures/ from the metrics stored in DIR (an experiment output directory, e.g. runs/quickstart)", stderr)
	watchIt := fs.Bool("watch", false, "regenerate the report every --every until Ctrl-C, printing one line each time (follow a running experiment in report.html)")
	every := fs.Duration("every", 30*time.Second, "with --watch, how often the report is regenerated")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "experiment directory", stderr); err != nil {
		return err
	}
	if *every <= 0 {
		fmt.Fprintf(stderr, "accerl report: --every must be a positive duration such as 30s, not %v\n", *every)
		return exitCode(2)
	}
	rep, err := generateReport(fs.Arg(0))
	if err != nil {
		return err
	}
	printPartial(stdout, rep)
	fmt.Fprintf(stdout, "Report: %s\nResults: %s\n", rep.Markdown, rep.ResultsJSON)
	for _, f := range rep.Figures {
		fmt.Fprintf(stdout, "Figure: %s\n", f)
	}
	if *watchIt {
		watchReport(ctx, fs.Arg(0), *every, stdout, stderr)
	}
	return nil
}

// watchReport regenerates the report of dir every interval until ctx ends (Ctrl-C), with one
// line for each time: when, and whether the report is complete. A regeneration that fails
// is said on stderr, and the next one is tried all the same: the experiment may be writing.
func watchReport(ctx context.Context, dir string, every time.Duration, stdout, stderr io.Writer) {
	fmt.Fprintf(stdout, "Regenerating the report every %v; Ctrl-C to stop.\n", every)
	poll(ctx, every, func() bool {
		now := time.Now().Format(time.TimeOnly)
		rep, err := generateReport(dir)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s report not regenerated: %v\n", now, err)
		case rep.Partial:
			fmt.Fprintf(stdout, "%s regenerated %s (partial: %d reason(s); see the report)\n", now, rep.Markdown, len(rep.Reasons))
		default:
			fmt.Fprintf(stdout, "%s regenerated %s (complete)\n", now, rep.Markdown)
		}
		return false
	})
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", "worker --temporal HOST:PORT [flags]   — run accerl's workflows and activities for an existing Temporal server", stderr)
	tf := addTemporalFlags(fs)
	queue := fs.String("queue", workflows.TaskQueueCPU, "task queue to serve: cpu (workflows and every activity) or gpu (the training segments of runs whose spec has resources { gpu = 1 }; run it on a GPU host)")
	segments := fs.Int("max-segments", 4, "training segments this worker runs at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *queue != workflows.TaskQueueCPU && *queue != workflows.TaskQueueGPU {
		return fmt.Errorf("worker: --queue must be %q or %q, not %q", workflows.TaskQueueCPU, workflows.TaskQueueGPU, *queue)
	}
	if *queue == workflows.TaskQueueGPU {
		fmt.Fprintf(stdout, "GPU: %s\n", telemetry.GPUName())
	}
	c, err := tf.connect(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.ensureSearchAttributes(ctx, tf.namespace); err != nil {
		return err
	}
	w := worker.New(c.client, *queue, worker.Options{MaxConcurrentSegments: *segments})
	fmt.Fprintf(stdout, "Worker serving task queue %q in namespace %q. Ctrl-C to stop.\n", *queue, tf.namespace)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

func cmdServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("server", "server [flags]   — run the embedded Temporal server alone (SQLite in --state-dir)", stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "directory for the SQLite database and logs (default $ACCERL_STATE_DIR, else .accerl)")
	port := portNumber(7233)
	fs.Var(&port, "port", "frontend gRPC port on 127.0.0.1")
	namespace := fs.String("namespace", worker.DefaultNamespace, "namespace to create")
	ui := addUIFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := filepath.Abs(*stateDir)
	if err != nil {
		return err
	}
	srv, err := worker.StartServer(worker.ServerConfig{StateDir: dir, Port: int(port), Namespaces: []string{*namespace}, UIPort: ui.serverPort()})
	if err != nil {
		if errors.Is(err, worker.ErrPortInUse) {
			return fmt.Errorf("%w; pick another with --port, or stop the process that has it", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "Temporal server on %s (state in %s). Workers: accerl worker --temporal %s. Ctrl-C to stop.\n", srv.HostPort(), dir, srv.HostPort())
	printUI(stdout, stderr, srv)
	<-ctx.Done()
	return srv.Stop()
}

// printPartial says why rep is partial, one reason a line: runs not finished, and files
// that could not be read, with what to do about them.
func printPartial(w io.Writer, rep *reports.Report) {
	if !rep.Partial {
		return
	}
	fmt.Fprintln(w, "Note: the report is partial (marked so in it); it covers what could be read so far:")
	for _, r := range rep.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
}

func generateReport(dir string) (*reports.Report, error) {
	if _, err := os.Stat(filepath.Join(dir, "experiment.json")); err != nil {
		return nil, fmt.Errorf("%s is not an experiment directory (no experiment.json): give the --out directory of 'accerl run', e.g. runs/quickstart", dir)
	}
	return reports.Generate(dir, reports.Options{})
}
