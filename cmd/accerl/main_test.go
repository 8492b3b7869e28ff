package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/worker"
	"github.com/accerl/accerl/workflows"
)

// tinySpec is the smallest experiment that still exercises everything: two arms (async and
// sync), one seed, several segments, on the embedded server.
const tinySpec = `
experiment "tiny" {
  seeds        = [7]
  max_parallel = 2
  budget { env_steps = 3072 }
  env "cartpole" {}
  policy { hidden = [16, 16] }
  algorithm "ppo" {
    batch_steps = 256
    epochs      = 2
    minibatches = 2
  }
  pipeline {
    mode            = "async"
    workers         = 2
    envs_per_worker = 2
    chunk_steps     = 32
    replay_capacity = 1024
  }
  checkpoint { every = 4 }
  ablation "sync" {
    pipeline { mode = "sync" }
  }
}
`

func TestEndToEndOnEmbeddedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(specPath, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	state := filepath.Join(dir, "state")
	args := []string{"run", "--state-dir", state, "--out", out, specPath}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The first run's Web UI port is taken: it says so and runs without the UI.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	var stdout, stderr bytes.Buffer
	if err := run(ctx, append([]string{"run", "--ui-port", takenPort}, args[1:]...), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Started experiment accerl/tiny/") {
		t.Errorf("first run did not start the experiment:\n%s", stdout.String())
	}
	if want := "Temporal Web UI is off: 127.0.0.1:" + takenPort + " is in use"; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "--ui-port") {
		t.Errorf("run with a taken UI port does not warn %q and name --ui-port:\n%s", want, stderr.String())
	}
	report := filepath.Join(out, "report.md")
	if !strings.Contains(stdout.String(), "Report: "+report) {
		t.Errorf("output does not say where the report is:\n%s", stdout.String())
	}
	for _, f := range []string{report, filepath.Join(out, "results.json"), filepath.Join(out, "experiment.json")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// Both runs collected exactly the budget, and stored one metrics row per update. In
	// sync mode the schedule is exact: 3072 steps at 256 per update is 12 updates, 3
	// segments of 4. Async updates take whole chunks of at least 256 steps, so there are
	// fewer of them.
	for _, arm := range []string{"base", "sync"} {
		runDir := filepath.Join(out, arm, "seed-7")
		var sum runstore.RunSummary
		if err := runstore.ReadJSON(filepath.Join(runDir, "summary.json"), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Status != "completed" || sum.EnvSteps != 3072 {
			t.Errorf("%s summary = %+v, want completed with exactly 3072 steps", arm, sum)
		}
		if arm == "sync" && (sum.Updates != 12 || sum.Segments != 3) {
			t.Errorf("sync summary = %+v, want 12 updates in 3 segments", sum)
		}
		rows, _, err := runstore.ReadRun(runDir)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(rows)) != sum.Updates || len(rows) == 0 {
			t.Errorf("%s has %d metrics rows for %d updates, want one per update", arm, len(rows), sum.Updates)
		}
	}
	segFile := filepath.Join(out, "base", "seed-7", "metrics", "seg-000001.arrow")
	before, err := os.Stat(segFile)
	if err != nil {
		t.Fatal(err)
	}

	// Running the same command again attaches to the finished experiment and trains nothing;
	// with a free UI port it serves the UI and says where.
	stdout.Reset()
	stderr.Reset()
	_ = taken.Close()
	if err := run(ctx, append([]string{"run", "--ui-port", takenPort}, args[1:]...), &stdout, &stderr); err != nil {
		t.Fatalf("second run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Attached to experiment accerl/tiny/") {
		t.Errorf("second run did not attach:\n%s", stdout.String())
	}
	if want := "Temporal Web UI: http://127.0.0.1:" + takenPort + "\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("second run does not say %q:\n%s", want, stderr.String())
	}
	after, err := os.Stat(segFile)
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second run rewrote %s", segFile)
	}

	var results struct {
		Runs []map[string]any `json:"runs"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "results.json"))
	if err := json.Unmarshal(b, &results); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(results.Runs) != 2 {
		t.Errorf("results.json has %d runs, want 2", len(results.Runs))
	}

	// status lists the experiment and both runs.
	stdout.Reset()
	if err := run(ctx, []string{"status", "--state-dir", state, "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("status: %v\n%s", err, stderr.String())
	}
	var exps []experimentStatus
	if err := json.Unmarshal(stdout.Bytes(), &exps); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout.String())
	}
	if len(exps) != 1 || len(exps[0].Runs) != 2 || exps[0].State != "completed" {
		t.Fatalf("status = %+v", exps)
	}
	// The run result is there for scripts: checksum, counters and manifest.
	r := exps[0].Runs[1]
	if r.Summary == nil || len(r.Summary.ParamsSHA256) != 64 || r.Summary.EnvSteps != 3072 || r.Manifest == nil || r.Manifest.Seed != 7 {
		t.Errorf("status --json run = %+v, want summary with SHA-256 and counters and the manifest", r)
	}

	assertSearchAttributes(ctx, t, state, exps[0].ID)
}

// serveStateDir starts the embedded server on stateDir (once no accerl process serves it) and
// returns a client of it; both stop when the test ends.
func serveStateDir(ctx context.Context, t *testing.T, stateDir string) client.Client {
	t.Helper()
	_, c := startServer(ctx, t, stateDir)
	return c
}

// startServer starts the embedded server on stateDir and returns it with a client of it;
// both stop when the test ends.
func startServer(ctx context.Context, t *testing.T, stateDir string) (*worker.Server, client.Client) {
	t.Helper()
	srv, err := worker.StartServer(worker.ServerConfig{StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.HostPort(), Namespace: worker.DefaultNamespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, c
}

// assertSearchAttributes checks that visibility queries on accerl's search attributes find the
// workflows of the tiny experiment expID, whose state is in stateDir: AccerlArm picks one
// run, AccerlExperiment the experiment and both runs, and each carries its seed and spec hash.
func assertSearchAttributes(ctx context.Context, t *testing.T, stateDir, expID string) {
	t.Helper()
	c := serveStateDir(ctx, t, stateDir)
	list := func(query string) []*workflowpb.WorkflowExecutionInfo {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatalf("list %s: %v", query, err)
		}
		return resp.Executions
	}
	// Visibility records are written by background tasks, which a restarted server may still
	// be catching up on.
	base := list(`AccerlArm="base"`)
	for deadline := time.Now().Add(30 * time.Second); len(base) == 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		base = list(`AccerlArm="base"`)
	}
	if len(base) != 1 || base[0].GetExecution().GetWorkflowId() != workflows.RunID(expID, "base/seed-7") {
		t.Fatalf(`AccerlArm="base" found %d workflows (%v), want the run %s`, len(base), base, workflows.RunID(expID, "base/seed-7"))
	}
	var seed int64
	var hash string
	fields := base[0].GetSearchAttributes().GetIndexedFields()
	if err := converter.GetDefaultDataConverter().FromPayload(fields[workflows.SearchSeed.GetName()], &seed); err != nil || seed != 7 {
		t.Errorf("run's AccerlSeed = %d (%v), want 7", seed, err)
	}
	if err := converter.GetDefaultDataConverter().FromPayload(fields[workflows.SearchSpecHash.GetName()], &hash); err != nil || !strings.HasPrefix(hash, strings.TrimPrefix(expID, "accerl/tiny/")) || len(hash) != 64 {
		t.Errorf("run's AccerlSpecHash = %q (%v), want the spec's hash, of which %s shows the start", hash, err, expID)
	}
	all := list(`AccerlExperiment="tiny" AND AccerlSpecHash="` + hash + `"`)
	var ids []string
	for _, e := range all {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	slices.Sort(ids)
	want := []string{expID, workflows.RunID(expID, "base/seed-7"), workflows.RunID(expID, "sync/seed-7")}
	if !slices.Equal(ids, want) {
		t.Errorf("AccerlExperiment and AccerlSpecHash found %v, want %v", ids, want)
	}
	if n := len(list(`AccerlSeed=7 AND AccerlArm="sync"`)); n != 1 {
		t.Errorf(`AccerlSeed=7 AND AccerlArm="sync" found %d workflows, want 1`, n)
	}
}

func TestValidateReportsPositions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.hcl")
	bad := strings.Replace(tinySpec, `mode            = "async"`, `mode            = "asynchronous"`, 1)
	bad = strings.Replace(bad, `seeds        = [7]`, `seeds        = [7]
  colour       = "blue"`, 1)
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"validate", p}, &stdout, &stderr)
	var ec exitCode
	if !errors.As(err, &ec) || ec == 0 {
		t.Fatalf("validate of a broken spec returned %v, want a non-zero exit", err)
	}
	msg := stderr.String()
	// Counting from the leading blank line: the inserted colour attribute is line 4 (its
	// name starts at column 3) and the mode attribute moved down to line 15.
	for _, want := range []string{"bad.hcl:4:3: error:", "bad.hcl:15:", "asynchronous", "colour"} {
		if !strings.Contains(msg, want) {
			t.Errorf("validate output lacks %q:\n%s", want, msg)
		}
	}
	stdout.Reset()
	stderr.Reset()
	good := filepath.Join(dir, "good.hcl")
	_ = os.WriteFile(good, []byte(tinySpec), 0o644)
	if err := run(context.Background(), []string{"validate", good}, &stdout, &stderr); err != nil {
		t.Fatalf("validate of a good spec: %v\n%s", err, stderr.String())
	}
}

func TestNaNFailsRunAfterBoundedRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	dir := t.TempDir()
	spec := strings.Replace(tinySpec, `ablation "sync" {
    pipeline { mode = "sync" }
  }`, `debug { nan_at_update = 6 }`, 1)
	spec = strings.Replace(spec, `mode            = "async"`, `mode            = "sync"`, 1)
	specPath := filepath.Join(dir, "nan.hcl")
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	state := filepath.Join(dir, "state")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"run", "--state-dir", state, "--out", out, specPath}, &stdout, &stderr)
	var ec exitCode
	if !errors.As(err, &ec) || ec != 1 {
		t.Fatalf("run with a NaN at update 6 returned %v, want exit status 1\n%s\n%s", err, stdout.String(), stderr.String())
	}
	runDir := filepath.Join(out, "base", "seed-7")
	var sum runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(runDir, "summary.json"), &sum); err != nil {
		t.Fatal(err)
	}
	// Update 6 lies in segment 2 (updates 5-8); segment 1's checkpoint and rows survive.
	if sum.Status != "failed" || !strings.Contains(sum.Error, "update 6") || !strings.Contains(sum.Error, "segment 2 failed 3 times") {
		t.Errorf("summary = %+v; want failed with a reason naming update 6 and the 3 attempts", sum)
	}
	if !strings.Contains(stdout.String(), "update 6") {
		t.Errorf("run output does not show the reason:\n%s", stdout.String())
	}
	rows, _, err := runstore.ReadRun(runDir)
	if err != nil || len(rows) != 4 {
		t.Errorf("metrics rows = %d (%v), want the 4 of segment 1", len(rows), err)
	}
	assertCheckpointsFinite(t, filepath.Join(runDir, "checkpoints"))

	stdout.Reset()
	if err := run(ctx, []string{"status", "--state-dir", state}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "failed") || !strings.Contains(stdout.String(), "update 6") {
		t.Errorf("status does not show the failure and its reason:\n%s", stdout.String())
	}
}

func TestFlagsAfterPositionalArguments(t *testing.T) {
	fs := newFlagSet("x", "x", io.Discard)
	v := addVarFlag(fs)
	out := fs.String("out", "", "")
	if err := parseFlags(fs, []string{"spec.hcl", "-var", "steps=10", "--out", "o", "--", "-weird"}); err != nil {
		t.Fatal(err)
	}
	if fs.NArg() != 2 || fs.Arg(0) != "spec.hcl" || fs.Arg(1) != "-weird" || v.vars["steps"] != "10" || *out != "o" {
		t.Errorf("args %v, vars %v, out %q", fs.Args(), v, *out)
	}
}
