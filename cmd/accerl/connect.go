package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/accerl/accerl/worker"
	"github.com/accerl/accerl/workflows"
)

// temporalFlags are the flags every command that talks to Temporal shares.
type temporalFlags struct {
	stateDir  string
	addr      string
	namespace string
}

func addTemporalFlags(fs *flag.FlagSet) *temporalFlags {
	t := &temporalFlags{}
	fs.StringVar(&t.stateDir, "state-dir", ".accerl", "directory for the embedded Temporal server's SQLite database and logs (ignored with --temporal)")
	fs.StringVar(&t.addr, "temporal", "", "host:port of an existing Temporal frontend; empty starts (or reuses) the embedded server in --state-dir")
	fs.StringVar(&t.namespace, "namespace", worker.DefaultNamespace, "Temporal namespace")
	return t
}

// conn is a Temporal connection plus what must be shut down with it.
type conn struct {
	client client.Client
	// owned is true when this process started the embedded server, so nothing else will run
	// the workflows unless this process starts a worker.
	owned  bool
	server *worker.Server
	worker sdkworker.Worker
}

// connect dials --temporal, or starts the embedded server in --state-dir, or, when another
// accerl process already serves that directory, dials that process's server.
func (t *temporalFlags) connect(ctx context.Context, stderr io.Writer) (*conn, error) {
	addr := t.addr
	c := &conn{}
	if addr == "" {
		dir, err := filepath.Abs(t.stateDir)
		if err != nil {
			return nil, err
		}
		srv, err := worker.StartServer(worker.ServerConfig{StateDir: dir, Namespaces: []string{t.namespace}})
		var busy *worker.BusyError
		switch {
		case errors.As(err, &busy):
			if busy.Addr == "" {
				return nil, fmt.Errorf("%w; it has not published its address yet, try again in a moment", err)
			}
			fmt.Fprintf(stderr, "using the Temporal server of the accerl process that owns %s (%s)\n", dir, busy.Addr)
			addr = busy.Addr
		case err != nil:
			return nil, err
		default:
			c.server, c.owned = srv, true
			addr = srv.HostPort()
		}
	}
	cl, err := client.DialContext(ctx, client.Options{
		HostPort:  addr,
		Namespace: t.namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connect to Temporal at %s: %w (is the server running? start one with 'accerl server' or drop --temporal to use the embedded one)", addr, err)
	}
	c.client = cl
	return c, nil
}

// startWorker runs an in-process worker on the CPU task queue.
func (c *conn) startWorker() error {
	c.worker = worker.New(c.client, workflows.TaskQueueCPU, worker.Options{})
	if err := c.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	return nil
}

func (c *conn) close() {
	if c.worker != nil {
		c.worker.Stop()
	}
	if c.client != nil {
		c.client.Close()
	}
	if c.server != nil {
		_ = c.server.Stop()
	}
}
