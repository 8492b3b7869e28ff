package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/tlsfiles/tlstest"
)

// accerl server refuses an --ip other hosts can reach without TLS or --insecure, an --ip
// that is no IP address, and TLS files it cannot use, each with a message that names the
// flags to fix; all before it starts a server.
func TestServerIPAndTLSProblems(t *testing.T) {
	pki := tlstest.New(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("-----BEGIN NOTHING-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ip", "0.0.0.0"}, []string{"--ip 0.0.0.0 lets other hosts reach", "--tls-cert and --tls-key", "--insecure"}},
		{[]string{"--ip", "myhost"}, []string{"--ip needs an IP address", `not "myhost"`}},
		{[]string{"--tls-cert", pki.ServerCert}, []string{pki.ServerCert + " has no key", "--tls-key"}},
		{[]string{"--tls-ca", pki.CA}, []string{"give --tls-cert and --tls-key"}},
		{[]string{"--tls-cert", garbage, "--tls-key", pki.ServerKey}, []string{garbage + " holds no PEM certificate"}},
		{[]string{"--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-ca", filepath.Join(t.TempDir(), "missing.pem")}, []string{"missing.pem: no such file"}},
	} {
		dir := filepath.Join(t.TempDir(), "state")
		start := time.Now()
		status, _, stderr := runArgs(t, append([]string{"server", "--state-dir", dir, "--no-ui"}, tc.args...)...)
		if status != 1 {
			t.Errorf("accerl server %s: status %d, want 1", strings.Join(tc.args, " "), status)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("accerl server %s: stderr %q lacks %q", strings.Join(tc.args, " "), stderr, w)
			}
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("accerl server %s created the state directory before refusing", strings.Join(tc.args, " "))
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("accerl server %s took %v to refuse", strings.Join(tc.args, " "), el)
		}
	}
	// The client flags are for a --temporal server; the embedded one has no TLS.
	status, _, stderr := runArgs(t, "status", "--state-dir", t.TempDir(), "--tls-ca", pki.CA)
	if status != 1 || !strings.Contains(stderr, "are for the server given with --temporal") {
		t.Errorf("accerl status --tls-ca without --temporal: status %d, stderr %q", status, stderr)
	}
}

// accerl server --tls-* serves mutual TLS: status --temporal with the CA and a client
// certificate lists the experiments, without them it is refused with a hint, TLS flags for
// a plaintext server are refused with a hint too, and status without --temporal, in the
// server's state directory, reaches it on 127.0.0.1 without TLS.
func TestServerTLSClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	pki := tlstest.New(t)
	dir := t.TempDir()
	// A port the kernel hands out on 127.0.0.2, which only the frontend uses.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"server", "--state-dir", dir, "--port", port, "--no-ui",
			"--ip", "127.0.0.2", "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-ca", pki.CA}, &out, &errOut)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("accerl server: %v (stderr %s)", err, errOut.String())
		}
	}()
	waitServed(t, dir, done)

	addr := "127.0.0.2:" + port
	status, stdout, stderr := runArgs(t, "status", "--temporal", addr, "--tls-ca", pki.CA, "--tls-cert", pki.ClientCert, "--tls-key", pki.ClientKey)
	if status != 0 || !strings.Contains(stdout, "No experiments yet") {
		t.Errorf("status over mutual TLS: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	status, _, stderr = runArgs(t, "status", "--temporal", addr, "--tls-ca", pki.CA)
	if status != 1 || !strings.Contains(stderr, "requires a client certificate") || strings.Contains(stderr, "is the server running") {
		t.Errorf("status without a client certificate: status %d, stderr %q; want the TLS hint alone", status, stderr)
	}
	status, _, stderr = runArgs(t, "status", "--temporal", addr)
	if status != 1 || !strings.Contains(stderr, "give --tls-ca") {
		t.Errorf("status without TLS: status %d, stderr %q; want the TLS hint", status, stderr)
	}
	local, err := os.ReadFile(filepath.Join(dir, "server.addr"))
	if err != nil {
		t.Fatal(err)
	}
	status, _, stderr = runArgs(t, "status", "--temporal", string(bytes.TrimSpace(local)), "--tls-ca", pki.CA)
	if status != 1 || !strings.Contains(stderr, "does not use TLS: drop --tls-cert, --tls-key and --tls-ca") {
		t.Errorf("status with TLS of the plaintext internal frontend: status %d, stderr %q; want the TLS hint", status, stderr)
	}
	status, stdout, stderr = runArgs(t, "status", "--state-dir", dir)
	if status != 0 || !strings.Contains(stdout, "No experiments yet") {
		t.Errorf("status in the server's state directory: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if s := out.String(); !strings.Contains(s, "Temporal server on "+addr+" with mutual TLS") || !strings.Contains(s, "without TLS at 127.0.0.1:") {
		t.Errorf("accerl server said %q; want its address, mutual TLS and the local address", s)
	}
}

// waitServed waits until the accerl process serving dir has published its address, or
// fails the test when serve ends first.
func waitServed(t *testing.T, dir string, serve <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		select {
		case err := <-serve:
			t.Fatalf("accerl server ended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if b, err := os.ReadFile(filepath.Join(dir, "server.addr")); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return
		}
	}
	t.Fatal("accerl server did not publish its address within a minute")
}
