package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/tlsfiles/tlstest"
)

func TestEnvServerRefusesNonLoopback(t *testing.T) {
	status, _, stderr := runArgs(t, "envserver", "--listen", "0.0.0.0:7000")
	if status != 1 || !strings.Contains(stderr, "not loopback") || !strings.Contains(stderr, "--insecure") {
		t.Errorf("envserver --listen 0.0.0.0:7000: status %d, stderr %q; want 1 and a refusal naming --insecure", status, stderr)
	}
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// envServerAddr waits up to 20 s for a starting envserver to print its address.
func envServerAddr(t *testing.T, out, errOut *lockedBuffer) string {
	t.Helper()
	addrRE := regexp.MustCompile(`on (127\.0\.0\.1:\d+)\.`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no envserver address in the output %q (stderr %q)", out.String(), errOut.String())
	return ""
}

// TestEnvServerServesWorlds starts `accerl envserver` on a free port, steps a CartPole on it
// and stops it with the context, as Ctrl-C does.
func TestEnvServerServesWorlds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"envserver", "--listen", "127.0.0.1:0"}, &out, &errOut) }()
	addr := envServerAddr(t, &out, &errOut)
	if !strings.Contains(out.String(), "tabletop") {
		t.Errorf("output %q does not list the tabletop world", out.String())
	}
	e, err := envrpc.Dial(ctx, envrpc.Config{Address: addr, Settings: envrpc.Settings{envrpc.SettingWorld: envrpc.String("cartpole")}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Reset(rand.New(rand.NewPCG(1, 1)))
	if r := e.Step([]float64{1}); len(r.Obs) != 4 || r.Reward != 1 {
		t.Errorf("step = %+v", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("envserver after cancel: %v", err)
	}
}

// bench throughput --remote steps its environments on envservers over dm_env_rpc, in both
// modes; a malformed address is named.
func TestBenchThroughputRemote(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	go func() { _ = run(ctx, []string{"envserver", "--listen", "127.0.0.1:0"}, &out, &errOut) }()
	addr := envServerAddr(t, &out, &errOut)
	status, stdout, stderr := runArgs(t, "bench", "throughput", "--remote", addr, "--workers", "2", "--envs-per-worker", "2",
		"--batch-steps", "64", "--rounds", "1", "--phase", "1s")
	if status != 0 {
		t.Fatalf("bench throughput --remote: status %d, stderr %q", status, stderr)
	}
	for _, want := range []string{"remote envserver", "sync", "async", "async/sync throughput ratio"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if status, _, stderr := runArgs(t, "bench", "throughput", "--remote", "nohostport"); status == 0 || !strings.Contains(stderr, `--remote "nohostport" is not host:port`) {
		t.Errorf("--remote nohostport: status %d, stderr %q", status, stderr)
	}
}

// envserver with --tls-cert/--tls-key may listen where other hosts reach it and says it uses
// TLS; a CA alone is refused, naming the flags.
func TestEnvServerTLSFlags(t *testing.T) {
	pki := tlstest.New(t)
	if status, _, stderr := runArgs(t, "envserver", "--tls-ca", pki.CA); status != 1 || !strings.Contains(stderr, "--tls-cert and --tls-key") {
		t.Errorf("--tls-ca alone: status %d, stderr %q", status, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"envserver", "--listen", "0.0.0.0:0", "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-ca", pki.CA}, &out, &errOut)
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "mutual TLS") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	cancel()
	if err := <-done; err != nil && err != context.Canceled {
		t.Errorf("envserver: %v (stderr %q)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "(mutual TLS) on") {
		t.Errorf("output %q does not say it serves with mutual TLS", out.String())
	}
}
