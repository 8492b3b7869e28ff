package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/runstore"
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

// bench throughput --remote N starts N envservers (this test binary as accerl) and compares
// in-process environments with the same ones behind them, per compression.
func TestBenchThroughputRemoteServers(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three sync/async pairs")
	}
	useTestEnvServers(t)
	out := filepath.Join(t.TempDir(), "remote.json")
	status, stdout, stderr := runArgs(t, "bench", "throughput", "--remote", "1", "--env", "tabletop", "--rounds", "1", "--phase", "1s", "--json", out)
	if status != 0 {
		t.Fatalf("status %d\nstdout %s\nstderr %s", status, stdout, stderr)
	}
	var res remoteBenchResult
	if err := runstore.ReadJSON(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Variants) != 3 || res.Variants[0].Wire != nil || res.Variants[1].Compression != "none" || res.Variants[2].Compression != "gzip" {
		t.Fatalf("variants %+v", res.Variants)
	}
	plain, gz := res.Variants[1], res.Variants[2]
	// Two 32×32 RGB frames are 6,144 bytes a step before any framing.
	if plain.BytesPerStep < 6144 || gz.BytesPerStep <= 0 || gz.BytesPerStep > plain.BytesPerStep/2 {
		t.Errorf("bytes per step: none %.0f, gzip %.0f; want none above the frames' 6144 and gzip under half of it (envrpc measured 5.3×)",
			plain.BytesPerStep, gz.BytesPerStep)
	}
	for _, v := range res.Variants {
		if v.Result.Sync.StepsPerS <= 0 || v.Result.Async.StepsPerS <= 0 {
			t.Errorf("%s: no steps: %+v", v.Name, v.Result)
		}
	}
	if !strings.Contains(stdout, "bytes/step") || !strings.Contains(stdout, "remote/gzip") {
		t.Errorf("table missing:\n%s", stdout)
	}
	for args, want := range map[string]string{
		"--remote 0":                    "start 1 to 64 envservers",
		"--remote 1 --compression zstd": `--compression "zstd": choose none or gzip`,
		"--remote 1 --env mujoco":       `--env "mujoco": choose cartpole or tabletop`,
	} {
		status, _, stderr := runArgs(t, append([]string{"bench", "throughput"}, strings.Fields(args)...)...)
		if status == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: status %d, stderr %q, want %q", args, status, stderr, want)
		}
	}
}

// useTestEnvServers makes the benchmarks start their envservers as this test binary running
// accerl's main, until the test ends.
func useTestEnvServers(t *testing.T) {
	old := accerlCommand
	t.Cleanup(func() { accerlCommand = old })
	accerlCommand = func(args ...string) (*exec.Cmd, error) {
		b, _ := json.Marshal(args)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), mainEnv+"=1", argsEnv+"="+string(b))
		return cmd, nil
	}
}

// bench learn --remote N trains the checks on N envservers; sync mode makes the run
// repeatable there too.
func TestBenchLearnRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a short CartPole run twice")
	}
	useTestEnvServers(t)
	dir := t.TempDir()
	learn := func(name string) learnResult {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		status, stdout, stderr := runArgs(t, "bench", "learn", "--seeds", "1", "--steps", "2048", "--remote", "1", "--json", out, "cartpole-ppo")
		if status != 0 && status != 1 { // 1: the short budget misses the threshold
			t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
		}
		if !strings.Contains(stdout, "Environments on 1 envserver(s): 127.0.0.1:") {
			t.Errorf("output does not say where the environments run:\n%s", stdout)
		}
		var res []learnResult
		if err := runstore.ReadJSON(out, &res); err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Remote != 1 || len(res[0].Seeds) != 1 || res[0].Seeds[0].EnvSteps < 2048 {
			t.Fatalf("results %+v", res)
		}
		return res[0]
	}
	a, b := learn("a"), learn("b")
	if a.Seeds[0].FinalReturn != b.Seeds[0].FinalReturn || a.Seeds[0].Episodes != b.Seeds[0].Episodes {
		t.Errorf("two sync runs on envservers differ: %+v vs %+v", a.Seeds[0], b.Seeds[0])
	}
	if status, _, stderr := runArgs(t, "bench", "learn", "--remote", "-1", "cartpole-ppo"); status == 0 || !strings.Contains(stderr, "start 0 (in process) to 64 envservers") {
		t.Errorf("--remote -1: status %d, stderr %q", status, stderr)
	}
}
