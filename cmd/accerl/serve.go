package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/telemetry"
	"github.com/accerl/accerl/reports"
	"github.com/accerl/accerl/runstore"

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
	rep, err := generateReport(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	printPartial(stdout, rep)
	if runstore.IsStoreURL(fs.Arg(0)) {
		fmt.Fprintf(stdout, "Published to %s; the local copy is:\n", fs.Arg(0))
	}
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
		rep, err := generateReport(ctx, dir)
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
	segments := fs.Int("max-segments", 4, "activities this worker runs at once: training segments and pretraining (the short bookkeeping activities take a slot too, while they run)")
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
	fs := newFlagSet("server", "server [--ip ADDR --tls-cert FILE --tls-key FILE [--tls-ca FILE]] [--db postgres://...] [flags]   — run the embedded Temporal server alone (SQLite in --state-dir, or PostgreSQL with --db)", stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "directory for the SQLite database and logs (default $ACCERL_STATE_DIR, else .accerl)")
	port := portNumber(7233)
	fs.Var(&port, "port", "frontend gRPC port on --ip")
	ip := fs.String("ip", "127.0.0.1", "IP address the frontend listens on: one of this host's, or 0.0.0.0 for every interface, so that workers and commands on other hosts can dial it with --temporal. One other hosts can reach needs --tls-cert and --tls-key, or --insecure. The other Temporal services stay on 127.0.0.1")
	tlsFiles := addTLSFlags(fs, tlsFlagHelp{
		cert: "the frontend's certificate (PEM), which must name the host name or IP address clients dial; turns on TLS and needs --tls-key",
		ca:   "CA certificate(s) (PEM): require every client to present a certificate one of them signed (mutual TLS), which clients give with --tls-cert and --tls-key. Without it any client that reaches the port gets in",
	})
	insecure := fs.Bool("insecure", false, "allow an --ip other hosts can reach without TLS. The frontend has no authentication: anyone who reaches the port can start, stop and read every workflow, so use it only on a network you trust")
	namespace := fs.String("namespace", worker.DefaultNamespace, "namespace to create")
	db := fs.String("db", "", "keep the workflows in PostgreSQL instead of the SQLite file in --state-dir: postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=disable. The server creates DATABASE and DATABASE_visibility and their schemas when missing (the user needs CREATEDB, or create them beforehand); logs and the lock stay in --state-dir. Run one server per database")
	ui := addUIFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := filepath.Abs(*stateDir)
	if err != nil {
		return err
	}
	srv, err := worker.StartServer(worker.ServerConfig{
		StateDir: dir, DB: *db, IP: *ip, Port: int(port), TLS: *tlsFiles, Insecure: *insecure,
		Namespaces: []string{*namespace}, UIPort: ui.serverPort(),
	})
	if err != nil {
		if errors.Is(err, worker.ErrPortInUse) {
			return fmt.Errorf("%w; pick another with --port, or stop the process that has it", err)
		}
		return err
	}
	printServer(stdout, srv, *ip, *tlsFiles, dir)
	if *db != "" {
		fmt.Fprintf(stdout, "Workflows are stored in PostgreSQL: %s\n", worker.RedactURL(*db))
	}
	printUI(stdout, stderr, srv)
	<-ctx.Done()
	return srv.Stop()
}

// printServer says where srv listens (its frontend on ip), how workers join it, and, when
// its frontend has TLS, where this host's processes reach it without.
func printServer(w io.Writer, srv *worker.Server, ip string, tf worker.TLSFiles, dir string) {
	listen, join := srv.HostPort(), srv.HostPort()
	if addr := net.ParseIP(ip); addr != nil && addr.IsUnspecified() {
		_, port, _ := net.SplitHostPort(srv.HostPort())
		listen = net.JoinHostPort(ip, port) + " (every interface)"
		join = "HOST:" + port
	}
	security, flags := "", ""
	switch {
	case tf.CA != "":
		security, flags = " with mutual TLS", " --tls-ca CA.pem --tls-cert CLIENT.pem --tls-key CLIENT-KEY.pem"
	case tf.On():
		security, flags = " with TLS", " --tls-ca CA.pem"
	}
	fmt.Fprintf(w, "Temporal server on %s%s (state in %s). Workers: accerl worker --temporal %s%s. Ctrl-C to stop.\n", listen, security, dir, join, flags)
	if tf.On() {
		fmt.Fprintln(w, "Clients dial it by a host name or IP address that its certificate names.")
	}
	if srv.LocalHostPort() != srv.HostPort() {
		fmt.Fprintf(w, "Processes on this host reach it without TLS at %s (in %s), as the accerl commands without --temporal do.\n", srv.LocalHostPort(), filepath.Join(dir, "server.addr"))
	}
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

// generateReport regenerates the report of dir, an experiment directory or object-store URL.
// For a URL it works on a local copy of what the report reads (activities.ReportInputs),
// whose paths it returns, and publishes the report to the store.
func generateReport(ctx context.Context, dir string) (*reports.Report, error) {
	wc, err := runstore.OpenWorkingCopy(ctx, dir, runstore.Only(activities.ReportInputs))
	if err != nil {
		return nil, err
	}
	defer wc.Close()
	if _, err := os.Stat(filepath.Join(wc.Dir, runstore.ExperimentFile)); err != nil {
		return nil, fmt.Errorf("%s is not an experiment directory (no experiment.json): give the --out directory of 'accerl run', e.g. runs/quickstart", dir)
	}
	rep, err := reports.Generate(wc.Dir, reports.Options{})
	if err != nil {
		return nil, err
	}
	return rep, wc.Publish(ctx)
}
