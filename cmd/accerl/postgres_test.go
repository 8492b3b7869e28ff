package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/accerl/accerl/runstore"
)

// TestPostgresServer runs an experiment on `accerl server --db postgres://…` (a PostgreSQL
// cluster of Debian's postgresql package, started for the test in a temporary directory),
// kills the server with SIGKILL while the runs train, starts it again on the same database,
// and checks that the experiment completes with the parameters of the same experiment on
// the embedded SQLite server: everything Temporal knew survived in PostgreSQL.
func TestPostgresServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, a Temporal server twice and two accerl processes")
	}
	bin := postgresBin()
	if bin == "" {
		t.Skip("no PostgreSQL server binaries (initdb, pg_ctl); Debian: apt-get install postgresql (.ci/run does)")
	}
	dbURL := startPostgres(t, bin)

	root := t.TempDir()
	spec := filepath.Join(root, "pg.hcl")
	if !strings.Contains(postgresSpec, `"5ms"`) || !strings.Contains(postgresSpec, "[1, 2]") {
		t.Fatalf("postgresSpec no longer derives from multiHostSpec:\n%s", postgresSpec)
	}
	if err := os.WriteFile(spec, []byte(postgresSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	refDir := filepath.Join(root, "ref")
	if err := runToEnd(t, refDir, spec); err != nil {
		t.Fatalf("reference run: %v; log:\n%s", err, logTail(filepath.Join(refDir, "log.txt")))
	}

	port := freeTCPPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	state := filepath.Join(root, "server-state")
	startServer := func(logPath string) *exec.Cmd {
		srv := accerlProcess(t, logPath, nil, "server", "--db", dbURL, "--port", strconv.Itoa(port), "--no-ui", "--state-dir", state)
		t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
		waitFor(t, "the server to listen", 2*time.Minute, func() bool {
			b, _ := os.ReadFile(logPath)
			return strings.Contains(string(b), "Temporal server on "+addr)
		}, logPath)
		return srv
	}
	srv := startServer(filepath.Join(root, "server-1.log"))
	w := accerlProcess(t, filepath.Join(root, "worker.log"), nil, "worker", "--temporal", addr)
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	out := filepath.Join(root, "out")
	cliLog := filepath.Join(root, "client.log")
	cli := accerlProcess(t, cliLog, nil, "run", "--temporal", addr, "--no-worker", "--out", out, spec)
	done := waitClient(t, cli)
	waitSecondCheckpoint(t, out, cliLog)
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The kill must land mid-experiment for the restart to prove anything.
	for seed := 1; seed <= 2; seed++ {
		var s runstore.RunSummary
		path := filepath.Join(out, "base", fmt.Sprintf("seed-%d", seed), runstore.SummaryFile)
		if err := runstore.ReadJSON(path, &s); err == nil && s.Status == "completed" {
			t.Fatalf("seed %d had finished before the server was killed; lengthen postgresSpec", seed)
		}
	}
	_ = srv.Wait()
	t.Logf("server killed at %s", time.Now().Format("15:04:05.000"))
	startServer(filepath.Join(root, "server-2.log"))
	t.Logf("server restarted at %s", time.Now().Format("15:04:05.000"))

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("accerl run: %v; log:\n%s\nworker:\n%s", err, logTail(cliLog), logTail(filepath.Join(root, "worker.log")))
		}
	case <-time.After(6 * time.Minute):
		_ = cli.Process.Kill()
		t.Fatalf("the experiment did not finish within 6 minutes of the restart; client log:\n%s\nworker log:\n%s",
			logTail(cliLog), logTail(filepath.Join(root, "worker.log")))
	}
	if _, err := os.Stat(filepath.Join(state, "temporal.db")); err == nil {
		t.Error("the server wrote a SQLite database although --db named PostgreSQL")
	}
	sameFinalRuns(t, out, filepath.Join(refDir, "out"), 2)
}

// postgresSpec is multiHostSpec with two runs of 16 segments and a simulated 5 ms step
// (about 10 s of stepping each), so that the server can be killed while they train.
var postgresSpec = strings.NewReplacer(`experiment "multihost"`, `experiment "pg"`,
	"seeds        = [1, 2, 3, 4]", "seeds        = [1, 2]", "env_steps = 12288", "env_steps = 8192",
	`median        = "1ms"`, `median        = "5ms"`).Replace(multiHostSpec)

// postgresBin is the directory of the newest PostgreSQL server binaries Debian installed,
// or of initdb on PATH; "" when there are none.
func postgresBin() string {
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) > 0 {
		return filepath.Dir(m[len(m)-1])
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// startPostgres creates a PostgreSQL cluster in a temporary directory, starts it on a free
// port of 127.0.0.1 with trust authentication for its superuser "postgres", stops it when
// the test ends, and returns its --db URL. PostgreSQL refuses to run as root; as root the
// cluster runs as Debian's postgres user.
func startPostgres(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "accerl-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	data, logPath := filepath.Join(dir, "data"), filepath.Join(dir, "postgres.log")
	var as []string // the command prefix that runs as the cluster's owner
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user to own the cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	pg := func(name string, args ...string) {
		t.Helper()
		full := append(append(as[:len(as):len(as)], filepath.Join(bin, name)), args...)
		if out, err := exec.Command(full[0], full[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s\nlog:\n%s", strings.Join(full, " "), err, out, logTail(logPath))
		}
	}
	pg("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
	port := freeTCPPort(t)
	pg("pg_ctl", "-D", data, "-l", logPath, "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir), "start")
	t.Cleanup(func() {
		full := append(as[:len(as):len(as)], filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop")
		_ = exec.Command(full[0], full[1:]...).Run()
	})
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/accerl_test?sslmode=disable", port)
}

// freeTCPPort returns a port on 127.0.0.1 that was free a moment ago.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
