package worker

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/accerl/accerl/tlsfiles/tlstest"
)

// dialHint dials hostPort with tf, which must fail, and returns the DialError's hint.
func dialHint(t *testing.T, ctx context.Context, hostPort string, tf TLSFiles) string {
	t.Helper()
	c, err := Dial(ctx, hostPort, DefaultNamespace, tf)
	if err == nil {
		c.Close()
		t.Fatalf("Dial %s with %+v succeeded; want it refused", hostPort, tf)
	}
	var de *DialError
	if !errors.As(err, &de) {
		t.Fatalf("Dial error %v is not a *DialError", err)
	}
	t.Logf("refused: %v", err)
	return de.Hint
}

// One embedded server with mutual TLS: a client with the CA and a client certificate runs a
// workflow; clients without a certificate, with one from another CA, or without TLS are
// refused with a hint; the server's own clients (search attributes, the Web UI, local
// processes via server.addr) reach it through the plaintext internal frontend on 127.0.0.1.
func TestServerMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	pki := tlstest.New(t)
	uiPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv, err := StartServer(ServerConfig{
		StateDir: dir,
		TLS:      TLSFiles{Cert: pki.ServerCert, Key: pki.ServerKey, CA: pki.CA},
		UIPort:   uiPort,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	if srv.LocalHostPort() == srv.HostPort() {
		t.Fatalf("LocalHostPort = HostPort = %s; want the internal frontend apart from the TLS one", srv.HostPort())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("client certificate", func(t *testing.T) {
		c, err := Dial(ctx, srv.HostPort(), DefaultNamespace, TLSFiles{Cert: pki.ClientCert, Key: pki.ClientKey, CA: pki.CA})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: DefaultNamespace})
		if err != nil || desc.GetNamespaceInfo().GetName() != DefaultNamespace {
			t.Fatalf("DescribeNamespace = %v, %v", desc, err)
		}
		// A workflow round trip needs the history, matching and worker services behind the
		// TLS frontend as well.
		runEcho(ctx, t, c, "echo-tls", "over TLS")
	})

	t.Run("no client certificate", func(t *testing.T) {
		if hint := dialHint(t, ctx, srv.HostPort(), TLSFiles{CA: pki.CA}); !strings.Contains(hint, "--tls-cert") {
			t.Errorf("hint %q does not say to give --tls-cert", hint)
		}
	})

	t.Run("certificate from another CA", func(t *testing.T) {
		if hint := dialHint(t, ctx, srv.HostPort(), TLSFiles{Cert: pki.StrangerCert, Key: pki.StrangerKey, CA: pki.CA}); !strings.Contains(hint, "got none it accepts") {
			t.Errorf("hint %q does not say the certificate was refused", hint)
		}
	})

	t.Run("server not trusted", func(t *testing.T) {
		// Without --tls-ca the client trusts only the system's roots, which do not hold the
		// test CA.
		if hint := dialHint(t, ctx, srv.HostPort(), TLSFiles{Cert: pki.ClientCert, Key: pki.ClientKey}); !strings.Contains(hint, "--tls-ca") {
			t.Errorf("hint %q does not say to give --tls-ca", hint)
		}
	})

	t.Run("plaintext client", func(t *testing.T) {
		if hint := dialHint(t, ctx, srv.HostPort(), TLSFiles{}); !strings.Contains(hint, "--tls-ca") {
			t.Errorf("hint %q does not say to give --tls-ca", hint)
		}
	})

	t.Run("TLS client of a plaintext server", func(t *testing.T) {
		if hint := dialHint(t, ctx, srv.LocalHostPort(), TLSFiles{Cert: pki.ClientCert, Key: pki.ClientKey, CA: pki.CA}); !strings.Contains(hint, "does not use TLS") {
			t.Errorf("hint %q does not say the server has no TLS", hint)
		}
	})

	t.Run("local processes", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, addrFileName))
		if err != nil || strings.TrimSpace(string(b)) != srv.LocalHostPort() {
			t.Fatalf("server.addr = %q, %v; want %s", b, err, srv.LocalHostPort())
		}
		c, err := Dial(ctx, srv.LocalHostPort(), DefaultNamespace, TLSFiles{})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})

	t.Run("web UI", func(t *testing.T) {
		url, err := srv.UI()
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, url+"/api/v1/namespaces/"+DefaultNamespace)
		var desc struct {
			NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &desc) != nil || desc.NamespaceInfo.Name != DefaultNamespace {
			t.Fatalf("GET /api/v1/namespaces/%s = %d, %.300q; want 200 with the namespace", DefaultNamespace, code, body)
		}
	})
}

// A frontend that other hosts could reach is refused without TLS unless insecure, and an
// --ip that is not an IP address is refused; loopback addresses need neither.
func TestCheckBind(t *testing.T) {
	for _, tc := range []struct {
		ip            string
		tls, insecure bool
		want          string // "" for no error
	}{
		{"", false, false, ""},
		{"127.0.0.1", false, false, ""},
		{"127.0.0.2", false, false, ""},
		{"::1", false, false, ""},
		{"0.0.0.0", false, false, "--tls-cert and --tls-key"},
		{"10.1.2.3", false, false, "--insecure"},
		{"0.0.0.0", true, false, ""},
		{"0.0.0.0", false, true, ""},
		{"myhost", true, false, "needs an IP address"},
		{"127.0.0.1:7233", false, false, "needs an IP address"},
	} {
		err := CheckBind(tc.ip, tc.tls, tc.insecure)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckBind(%q, tls %v, insecure %v) = %v; want an error containing %q", tc.ip, tc.tls, tc.insecure, err, tc.want)
		}
	}
	// StartServer checks before it touches the state directory.
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := StartServer(ServerConfig{StateDir: dir, IP: "0.0.0.0"}); err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("StartServer on 0.0.0.0 without TLS = %v; want the refusal", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused StartServer created %s", dir)
	}
}

// Bad TLS files are reported with the file at fault, before any server starts.
func TestTLSFilesErrors(t *testing.T) {
	pki := tlstest.New(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name string
		tf   TLSFiles
		want string
	}{
		{"cert without key", TLSFiles{Cert: pki.ServerCert}, "--tls-key"},
		{"key without cert", TLSFiles{Key: pki.ServerKey}, "--tls-cert"},
		{"CA alone", TLSFiles{CA: pki.CA}, "--tls-cert and --tls-key"},
		{"unreadable cert", TLSFiles{Cert: missing, Key: pki.ServerKey}, missing},
		{"cert not PEM", TLSFiles{Cert: garbage, Key: pki.ServerKey}, garbage + " holds no PEM certificate"},
		{"key not PEM", TLSFiles{Cert: pki.ServerCert, Key: garbage}, garbage},
		{"key of another cert", TLSFiles{Cert: pki.ServerCert, Key: pki.ClientKey}, "does not match"},
		{"CA not PEM", TLSFiles{Cert: pki.ServerCert, Key: pki.ServerKey, CA: garbage}, garbage},
	} {
		_, err := frontendTLS(tc.tf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: frontendTLS = %v; want an error containing %q", tc.name, err, tc.want)
		}
	}
	// A client may give a CA alone (server TLS without client certificates), but not half
	// a key pair.
	if cfg, err := (TLSFiles{CA: pki.CA}).ClientConfig(); err != nil || cfg == nil || cfg.RootCAs == nil {
		t.Errorf("ClientConfig with a CA alone = %v, %v", cfg, err)
	}
	if _, err := (TLSFiles{Cert: pki.ClientCert}).ClientConfig(); err == nil || !strings.Contains(err.Error(), "--tls-key") {
		t.Errorf("ClientConfig with a certificate alone = %v; want it to ask for --tls-key", err)
	}
	if cfg, err := (TLSFiles{}).ClientConfig(); cfg != nil || err != nil {
		t.Errorf("ClientConfig without files = %v, %v; want nil (plaintext)", cfg, err)
	}
}
