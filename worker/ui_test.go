package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

// get returns the status and body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// The embedded server serves Temporal's Web UI on 127.0.0.1, whose API reaches the server's
// frontend, registers accerl's search attributes in its namespace, and stops the UI with it.
func TestServerServesWebUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(ServerConfig{StateDir: t.TempDir(), UIPort: port})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.Stop()
		}
	}()
	url, err := srv.UI()
	if want := fmt.Sprintf("http://127.0.0.1:%d", port); url != want || err != nil {
		t.Fatalf("UI() = %q, %v; want %s", url, err, want)
	}
	code, body := get(t, url+"/")
	// The page is the UI's single-page app: an HTML shell that loads its bundle from _app/.
	if code != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") || !strings.Contains(body, "_app/immutable/") {
		t.Fatalf("GET / = %d, body starts %.300q; want 200 and the UI's HTML page", code, body)
	}
	// The UI's HTTP API is a gateway to the frontend: the namespace comes back from the server.
	code, body = get(t, url+"/api/v1/namespaces/"+DefaultNamespace)
	var desc struct {
		NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &desc) != nil || desc.NamespaceInfo.Name != DefaultNamespace {
		t.Fatalf("GET /api/v1/namespaces/%s = %d, %.300q; want 200 with the namespace", DefaultNamespace, code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.HostPort(), Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sa, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range searchAttributeTypes() {
		if got := sa.GetCustomAttributes()[name]; got != typ {
			t.Errorf("search attribute %s has type %v, want %v", name, got, typ)
		}
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("the UI's port is still taken after Stop: %v", err)
	}
	_ = l.Close()
}

// A UI port another process holds is reported, not fatal: the UI server itself would exit the
// process when its bind failed.
func TestUIPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	ui, url, err := startUI(port, "127.0.0.1:7233", DefaultNamespace)
	if ui != nil || url != "" || err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("startUI on a taken port = %v, %q, %v; want an error saying it is in use", ui, url, err)
	}
}
