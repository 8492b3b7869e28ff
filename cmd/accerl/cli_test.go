package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
)

// runArgs runs one command line and returns its exit status (0 for success, 1 for a plain
// error) and what it wrote.
func runArgs(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	err := run(ctx, args, &out, &errOut)
	var ec exitCode
	switch {
	case err == nil:
	case errors.As(err, &ec):
		status = int(ec)
	default:
		status = 1
		errOut.WriteString("accerl: " + err.Error() + "\n")
	}
	return status, out.String(), errOut.String()
}

func TestNoArgumentsIsUsageError(t *testing.T) {
	status, stdout, stderr := runArgs(t)
	if status != 2 || stdout != "" || !strings.Contains(stderr, "Usage:") {
		t.Errorf("accerl with no arguments: status %d, stdout %q, stderr %.60q; want 2 and the usage on stderr", status, stdout, stderr)
	}
	if status, stdout, _ := runArgs(t, "--help"); status != 0 || !strings.Contains(stdout, "Usage:") {
		t.Errorf("accerl --help: status %d, want 0 and the usage on stdout", status)
	}
}

func TestOneSpecFile(t *testing.T) {
	for _, cmd := range []string{"validate", "plan", "run", "pause"} {
		status, _, stderr := runArgs(t, cmd, "a.hcl", "b.hcl")
		if status != 2 || !strings.Contains(stderr, "accerl "+cmd+" takes one ") || !strings.Contains(stderr, "given 2: a.hcl b.hcl") {
			t.Errorf("accerl %s a.hcl b.hcl: status %d, stderr %q; want 2 and that it takes one file", cmd, status, stderr)
		}
	}
}

func TestTemporalNeedsHostPort(t *testing.T) {
	for _, addr := range []string{"notahost", "localhost:", "host:port", "1.2.3.4:99999"} {
		start := time.Now()
		status, _, stderr := runArgs(t, "status", "--temporal", addr)
		if status != 2 || !strings.Contains(stderr, "--temporal needs HOST:PORT, e.g. 127.0.0.1:7233") {
			t.Errorf("--temporal %s: status %d, stderr %q", addr, status, stderr)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("--temporal %s took %v: it tried to connect", addr, el)
		}
	}
	for _, addr := range []string{"", "127.0.0.1:7233", "temporal.internal:7233", "[::1]:7233", ":7233"} {
		var h hostPort
		if err := h.Set(addr); err != nil {
			t.Errorf("--temporal %q refused: %v", addr, err)
		}
	}
}

func TestDiagnosticsEscapeControlBytes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "esc.hcl")
	bad := strings.Replace(tinySpec, `mode            = "async"`, "mode            = \"\x1b[2J\x1b]0;pwned\x07\u202easync\"", 1)
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, stderr := runArgs(t, "validate", p)
	if status != 1 {
		t.Fatalf("validate: status %d, want 1\n%s", status, stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07\u202e") {
		t.Errorf("diagnostics carry raw control characters:\n%q", stderr)
	}
	if !strings.Contains(stderr, `\x1b[2J\x1b]0;pwned\x07\u202easync`) {
		t.Errorf("diagnostics do not show the escaped text:\n%s", stderr)
	}
	// The carets stay under the escaped value: as wide as it is.
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if strings.Contains(l, `| `) && strings.Contains(l, `\x1b`) && i+1 < len(lines) {
			caret := strings.Index(lines[i+1], "^")
			if caret != strings.Index(l, `"\x1b`) || strings.Count(lines[i+1], "^") != len(`"\x1b[2J\x1b]0;pwned\x07\u202easync"`) {
				t.Errorf("underline misplaced:\n%s\n%s", l, lines[i+1])
			}
		}
	}
}

func TestEscapeControl(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\twith tab": "plain text\twith tab",
		"\x1b[31mred":          `\x1b[31mred`,
		"bad \xff byte":        `bad \xff byte`,
		"del\x7f":              `del\x7f`,
		"c1 \u009b":            `c1 \u009b`,
		"rtl \u202e":           `rtl \u202e`,
		"ünïcödé ok":           "ünïcödé ok",
	} {
		if got := escapeControl(in); got != want {
			t.Errorf("escapeControl(%q) = %q, want %q", in, got, want)
		}
	}
}

// accerl version names the Go version and, in a module build (as `go test` is), the pinned
// Temporal server and SDK the binary carries.
func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "accerl ") || !strings.Contains(out, runtime.Version()) ||
		!strings.Contains(out, "go.temporal.io/server v1.32.1") || !strings.Contains(out, "go.temporal.io/sdk v1.50.0") {
		t.Errorf("version output:\n%s\nwant accerl, the Go version and the pinned Temporal server and SDK", out)
	}
}

// ACCERL_STATE_DIR sets --state-dir's default, so status finds the server from any directory.
func TestStateDirFromEnvironment(t *testing.T) {
	t.Setenv(stateDirEnv, "/srv/accerl-state")
	if got := defaultStateDir(); got != "/srv/accerl-state" {
		t.Errorf("default state dir = %q, want $%s", got, stateDirEnv)
	}
	t.Setenv(stateDirEnv, "")
	if got := defaultStateDir(); got != ".accerl" {
		t.Errorf("default state dir without $%s = %q, want .accerl", stateDirEnv, got)
	}
}

// --ui-port takes a port number; 0 is not one (--no-ui turns the UI off).
func TestUIPortNeedsPortNumber(t *testing.T) {
	for _, cmd := range []string{"run", "server"} {
		for _, p := range []string{"0", "65536", "web"} {
			status, _, stderr := runArgs(t, cmd, "--ui-port", p, "a.hcl")
			if status != 2 || !strings.Contains(stderr, "need a port number from 1 to 65535") {
				t.Errorf("accerl %s --ui-port %s: status %d, stderr %q; want 2 and what a port is", cmd, p, status, stderr)
			}
		}
	}
}

// accerl server says why it cannot serve: a --port that is no port number is a usage error,
// and a port another process holds is named on stderr, not left in the server log with a
// bare exit status 1.
func TestServerPortProblems(t *testing.T) {
	for _, p := range []string{"0", "70000", "web"} {
		status, _, stderr := runArgs(t, "server", "--state-dir", t.TempDir(), "--port", p)
		if status != 2 || !strings.Contains(stderr, "need a port number from 1 to 65535") {
			t.Errorf("accerl server --port %s: status %d, stderr %q; want 2 and what a port is", p, status, stderr)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	status, _, stderr := runArgs(t, "server", "--state-dir", t.TempDir(), "--port", port, "--no-ui")
	if status != 1 || !strings.Contains(stderr, "127.0.0.1:"+port+" is in use by another process") || !strings.Contains(stderr, "--port") {
		t.Errorf("accerl server --port %s (taken): status %d, stderr %q; want 1, the port in use and --port", port, status, stderr)
	}
}

// stuckWorker is a worker whose Stop blocks until release is closed.
type stuckWorker struct {
	sdkworker.Worker
	release chan struct{}
}

func (w stuckWorker) Stop() { <-w.release }

// TestCloseIsBounded checks that a command exits even when stopping its worker (or the
// embedded server) hangs: close returns after stopTimeout.
func TestCloseIsBounded(t *testing.T) {
	defer func(d time.Duration) { stopTimeout = d }(stopTimeout)
	stopTimeout = 50 * time.Millisecond
	w := stuckWorker{release: make(chan struct{})}
	defer close(w.release)
	done := make(chan struct{})
	go func() { (&conn{workers: []sdkworker.Worker{w}}).close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // 200× the bound: only a close that waits for Stop gets here
		t.Fatal("close waited for a worker that does not stop")
	}
}
