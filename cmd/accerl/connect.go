package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/accerl/accerl/activities/telemetry"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/worker"
	"github.com/accerl/accerl/workflows"
)

// temporalFlags are the flags every command that talks to Temporal shares.
type temporalFlags struct {
	stateDir  string
	addr      string
	namespace string
	// tls are the files of a TLS connection to --temporal.
	tls *worker.TLSFiles
	// ui is the Web UI to serve with the embedded server when connect starts one; nil (the
	// commands that only look something up) serves none.
	ui *uiFlags
}

func addTemporalFlags(fs *flag.FlagSet) *temporalFlags {
	t := &temporalFlags{}
	fs.StringVar(&t.stateDir, "state-dir", defaultStateDir(), "directory for the embedded Temporal server's SQLite database and logs (ignored with --temporal); default $ACCERL_STATE_DIR, else .accerl, so that status works from any directory when it is set")
	fs.Var((*hostPort)(&t.addr), "temporal", "host:port of an existing Temporal frontend; empty starts (or reuses) the embedded server in --state-dir")
	fs.StringVar(&t.namespace, "namespace", worker.DefaultNamespace, "Temporal namespace")
	t.tls = addTLSFlags(fs, tlsFlagHelp{
		cert: "client certificate (PEM) to present to a --temporal server that requires one ('accerl server --tls-ca'); needs --tls-key",
		ca:   "CA certificate(s) (PEM) that verify the --temporal server's certificate, which must name the host dialled. Any --tls-* flag dials with TLS; without --tls-ca the system's roots verify the server",
	})
	return t
}

// tlsFlagHelp is the help of the --tls-cert and --tls-ca flags, which differ between the
// server and its clients.
type tlsFlagHelp struct{ cert, ca string }

// addTLSFlags adds --tls-cert, --tls-key and --tls-ca to fs.
func addTLSFlags(fs *flag.FlagSet, help tlsFlagHelp) *worker.TLSFiles {
	f := &worker.TLSFiles{}
	fs.StringVar(&f.Cert, "tls-cert", "", help.cert)
	fs.StringVar(&f.Key, "tls-key", "", "private key (PEM) of --tls-cert")
	fs.StringVar(&f.CA, "tls-ca", "", help.ca)
	return f
}

// uiFlags are the Web UI flags of the commands that start the embedded server (run, server).
type uiFlags struct {
	port portNumber
	off  bool
}

func addUIFlags(fs *flag.FlagSet) *uiFlags {
	u := &uiFlags{port: worker.DefaultUIPort}
	fs.Var(&u.port, "ui-port", "port on 127.0.0.1 where Temporal's Web UI is served with the embedded server (ignored with --temporal); when it is taken, accerl says so and goes on without the UI")
	fs.BoolVar(&u.off, "no-ui", false, "do not serve the Web UI")
	return u
}

// serverPort is worker.ServerConfig.UIPort: 0 (no UI) when u is nil or turned off.
func (u *uiFlags) serverPort() int {
	if u == nil || u.off {
		return 0
	}
	return int(u.port)
}

// printUI says where srv's Web UI is (on out), or why it is off although it was asked for
// (on warn).
func printUI(out, warn io.Writer, srv *worker.Server) {
	url, err := srv.UI()
	switch {
	case url != "":
		fmt.Fprintf(out, "Temporal Web UI: %s\n", url)
	case err != nil:
		fmt.Fprintf(warn, "Temporal Web UI is off: %v (pick another port with --ui-port N, or --no-ui to not ask for it)\n", err)
	}
}

// portNumber is a TCP port flag, checked when parsed.
type portNumber int

func (p *portNumber) String() string { return strconv.Itoa(int(*p)) }

func (p *portNumber) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("need a port number from 1 to 65535, not %q", s)
	}
	*p = portNumber(n)
	return nil
}

// hostPort is the value of --temporal: empty, or HOST:PORT with a port number. It is
// checked when the flag is parsed, so a missing port is reported as such and not as a
// failure to connect.
type hostPort string

func (h *hostPort) String() string { return string(*h) }

func (h *hostPort) Set(s string) error {
	if s != "" {
		_, port, err := net.SplitHostPort(s)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--temporal needs HOST:PORT, e.g. 127.0.0.1:7233, not %q", s)
		}
	}
	*h = hostPort(s)
	return nil
}

// conn is a Temporal connection plus what must be shut down with it.
type conn struct {
	client client.Client
	// owned is true when this process started the embedded server, so nothing else will run
	// the workflows unless this process starts a worker.
	owned   bool
	server  *worker.Server
	workers []sdkworker.Worker
	// sharedDir is the state directory whose server another accerl process runs for c, or
	// "" (c owns the server, or dials --temporal).
	sharedDir string
}

// errServerGone is watch's error when the accerl process whose server it used has exited.
var errServerGone = errors.New("the accerl process that served the state directory exited")

// ownerGone returns a channel that is closed within ownerPoll of the exit of the accerl
// process whose embedded server c uses, or nil (never ready) when c uses no such server.
// The poll stops with ctx.
func (c *conn) ownerGone(ctx context.Context) <-chan struct{} {
	if c.sharedDir == "" {
		return nil
	}
	gone := make(chan struct{})
	go poll(ctx, ownerPoll, func() bool {
		if worker.Served(c.sharedDir) {
			return false
		}
		close(gone)
		return true
	})
	return gone
}

// poll calls f every interval until it returns true or ctx ends.
func poll(ctx context.Context, every time.Duration, f func() (done bool)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if f() {
				return
			}
		}
	}
}

// ownerPoll is how often a process that uses another one's server checks that it lives.
const ownerPoll = time.Second

// connect dials --temporal, or starts the embedded server in --state-dir, or, when another
// accerl process already serves that directory, dials that process's server.
func (t *temporalFlags) connect(ctx context.Context, stderr io.Writer) (*conn, error) {
	addr := t.addr
	c := &conn{}
	if addr == "" && t.tls.On() {
		return nil, errors.New("--tls-cert, --tls-key and --tls-ca are for the server given with --temporal HOST:PORT; without --temporal accerl uses the embedded server of --state-dir, which this host's processes reach without TLS on 127.0.0.1")
	}
	if addr == "" {
		dir, err := filepath.Abs(t.stateDir)
		if err != nil {
			return nil, err
		}
		srv, err := worker.StartServer(worker.ServerConfig{StateDir: dir, Namespaces: []string{t.namespace}, UIPort: t.ui.serverPort()})
		var busy *worker.BusyError
		switch {
		case errors.As(err, &busy):
			if busy.Addr == "" {
				return nil, fmt.Errorf("%w; it has not published its address yet, try again in a moment", err)
			}
			fmt.Fprintf(stderr, "using the Temporal server of the accerl process that owns %s (%s)\n", dir, busy.Addr)
			addr, c.sharedDir = busy.Addr, dir
		case err != nil:
			return nil, err
		default:
			c.server, c.owned = srv, true
			addr = srv.HostPort()
			printUI(stderr, stderr, srv)
		}
	}
	cl, err := worker.Dial(ctx, addr, t.namespace, *t.tls)
	if err != nil {
		c.close()
		if de := (*worker.DialError)(nil); errors.As(err, &de) && de.Hint == "" {
			return nil, fmt.Errorf("%w (is the server running? start one with 'accerl server' or drop --temporal to use the embedded one)", err)
		}
		return nil, err
	}
	c.client = cl
	return c, nil
}

// ensureSearchAttributes registers accerl's custom search attributes in namespace of a server
// this process did not start (StartServer registers them on its own), so that the workflows
// accerl starts can set them.
func (c *conn) ensureSearchAttributes(ctx context.Context, namespace string) error {
	if c.owned {
		return nil
	}
	if err := worker.EnsureSearchAttributes(ctx, c.client.OperatorService(), namespace); err != nil {
		return fmt.Errorf("%w; accerl's workflows set the search attributes AccerlExperiment, AccerlSpecHash, AccerlArm (Keyword) and AccerlSeed (Int): register them with 'temporal operator search-attribute create', or ask the cluster's operator to", err)
	}
	return nil
}

// startWorker runs in-process workers on both task queues: "cpu" (workflows and every
// activity) and "gpu" (the segments of runs whose spec asks for a GPU), so that a spec with
// resources { gpu = 1 } runs here too — on the CPU when this machine has no GPU, which it says
// when exp asks for one.
func (c *conn) startWorker(exp *specs.Experiment, stderr io.Writer) error {
	for _, q := range []string{workflows.TaskQueueCPU, workflows.TaskQueueGPU} {
		w := worker.New(c.client, q, worker.Options{})
		if err := w.Start(); err != nil {
			return fmt.Errorf("start worker on task queue %q: %w", q, err)
		}
		c.workers = append(c.workers, w)
	}
	if wantsGPU(exp) && telemetry.GPUName() == telemetry.NoGPU {
		fmt.Fprintln(stderr, "No GPU on this machine: segments that ask for one (resources { gpu = 1 }) run on its CPU.")
	}
	return nil
}

func (c *conn) close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, w := range c.workers {
			w.Stop()
		}
		if c.client != nil {
			c.client.Close()
		}
		if c.server != nil {
			_ = c.server.Stop()
		}
	}()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		fmt.Fprintf(os.Stderr, "accerl: the workers and the embedded Temporal server did not stop within %v; exiting anyway (everything they hold is on disk: the next command resumes from it, as after a kill -9)\n", stopTimeout)
	}
}

// stopTimeout bounds close: an embedded Temporal server's Stop has been seen to hang
// (temporalio/sdk-go#1360, its membership heartbeat), and a command whose work is done and
// durable must still exit. Its state is in its SQLite file and the lock dies with the
// process, so exiting without a clean stop is a kill -9, which the crash tests show loses
// nothing.
var stopTimeout = 30 * time.Second

// stateDirEnv names the environment variable that sets the default --state-dir.
const stateDirEnv = "ACCERL_STATE_DIR"

// defaultStateDir is --state-dir's default: $ACCERL_STATE_DIR when set, else .accerl in the
// current directory.
func defaultStateDir() string {
	if d := os.Getenv(stateDirEnv); d != "" {
		return d
	}
	return ".accerl"
}
