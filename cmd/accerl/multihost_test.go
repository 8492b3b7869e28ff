package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/spf13/afero"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/runstore"
)

// The multi-host test puts accerl's processes on separate network hosts: Linux network
// namespaces joined by veth pairs to a bridge in a namespace of its own, with addresses only
// inside them (10.77.0.0/24, nothing in the machine's own namespace). The Temporal server
// (`accerl server --ip`) is one host, two workers (`accerl worker --temporal`) two more, and
// the client (`accerl run --temporal --no-worker`) a fourth. They share the run directory, as
// hosts share an NFS or Lustre mount. One worker is killed with SIGKILL while it trains; its
// segments resume on the other from their last checkpoint, and in sync mode every run ends
// with the parameters of the same experiment on one host.
const (
	mhSubnet = "10.77.0."
	mhServer = mhSubnet + "1"
	mhPort   = "7233"
)

// mhHosts are the namespaces and their addresses.
var mhHosts = []struct{ name, ip string }{
	{"server", mhServer}, {"w1", mhSubnet + "2"}, {"w2", mhSubnet + "3"}, {"client", mhSubnet + "4"}, {"envs", mhEnvs},
	{"store", mhStore},
}

// mhStore is the object store's host (an S3-compatible server, see s3ServeMain).
const mhStore = mhSubnet + "6"

// s3ServerEnv makes the test binary serve S3 (gofakes3 over a directory) instead of testing:
// its value is "ADDR,DIR".
const s3ServerEnv = "ACCERL_TEST_S3"

// mhEnvs is the envserver host's address; the runs step their CartPoles there.
const mhEnvs = mhSubnet + "5"

// timelineEnv makes the test binary print the TrainSegment attempts of every run workflow of
// a Temporal server as JSON (see timelineMain): the child that reads the histories runs on
// the client host.
const timelineEnv = "ACCERL_TEST_TIMELINE"

// segmentAttempt is one start of a TrainSegment activity in a run's history.
type segmentAttempt struct {
	Run      string    `json:"run"`
	Attempt  int32     `json:"attempt"`
	Identity string    `json:"identity"` // the worker's, pid@host
	Time     time.Time `json:"time"`
	Failed   string    `json:"failed,omitempty"` // the attempt's failure: a timeout after the kill
	// End is when the attempt completed (zero if it did not: Temporal records only the last
	// attempt of an activity, so a killed attempt shows as the next one's Failed).
	End time.Time `json:"end,omitzero"`
}

// maxOverlap is the largest number of the completed attempts on host (by hostOf) that ran
// at the same moment.
func maxOverlap(tl []segmentAttempt, host string, hostOf func(string) string) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, a := range tl {
		if hostOf(a.Identity) == host && !a.End.IsZero() {
			edges = append(edges, edge{a.Time, 1}, edge{a.End, -1})
		}
	}
	// Ends sort before starts at the same instant: a slot freed and refilled is not two.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	n, top := 0, 0
	for _, e := range edges {
		n += e.delta
		top = max(top, n)
	}
	return top
}

func TestMultiHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server and three accerl processes")
	}
	if err := canNetLab(); err != nil {
		t.Skipf("%v (CI runs as root, with iproute2)", err)
	}
	prefix := fmt.Sprintf("accerl%d-", os.Getpid()%100000)
	mhNetwork(t, prefix)

	root := t.TempDir()
	writeSpec := func(name, envAddr string) string {
		path := filepath.Join(root, name)
		if err := os.WriteFile(path, []byte(multiHostRemoteSpec(envAddr)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The reference: the same experiment on one host, with an envserver of its own.
	refDir := filepath.Join(root, "ref")
	refEnvLog := filepath.Join(root, "ref-envserver.log")
	refEnvs := accerlProcess(t, refEnvLog, nil, "envserver", "--listen", "127.0.0.1:0")
	t.Cleanup(func() { _ = refEnvs.Process.Kill(); _ = refEnvs.Wait() })
	var refEnvAddr string
	waitFor(t, "the reference envserver to listen", time.Minute, func() bool {
		b, _ := os.ReadFile(refEnvLog)
		if m := servingAddr.FindStringSubmatch(string(b)); m != nil {
			refEnvAddr = m[1]
		}
		return refEnvAddr != ""
	}, refEnvLog)
	if err := runToEnd(t, refDir, writeSpec("reference.hcl", refEnvAddr)); err != nil {
		t.Fatalf("reference run: %v; log:\n%s", err, logTail(filepath.Join(refDir, "log.txt")))
	}

	// The envserver host.
	envAddr := mhEnvs + ":7000"
	envLog := filepath.Join(root, "envserver.log")
	envs := nsProcess(t, prefix+"envs", envLog, nil, "envserver", "--listen", envAddr, "--insecure")
	t.Cleanup(func() { _ = envs.Process.Kill(); _ = envs.Wait() })
	waitFor(t, "the envserver to listen", time.Minute, func() bool {
		b, _ := os.ReadFile(envLog)
		return strings.Contains(string(b), "on "+envAddr+".")
	}, envLog)
	spec := writeSpec("multihost.hcl", envAddr)

	// The same experiment twice: with the runs on a directory every host mounts, and in an
	// S3-compatible object store on a host of its own, each worker keeping its own cache.
	t.Run("shared-filesystem", func(t *testing.T) {
		out := filepath.Join(root, "shared", "out") // the hosts' common mount
		multiHostExperiment(t, prefix, filepath.Join(root, "fs"), spec, out, out, nil, filepath.Join(refDir, "out"))
	})
	t.Run("object-store", func(t *testing.T) {
		dir := filepath.Join(root, "s3", "data") // the store host's disk
		storeAddr := mhStore + ":9000"
		storeLog := filepath.Join(root, "s3", "server.log")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		store := exec.Command("ip", "netns", "exec", prefix+"store", os.Args[0], "-test.run=^$")
		store.Env = append(os.Environ(), s3ServerEnv+"="+storeAddr+","+dir)
		startLogged(t, store, storeLog)
		t.Cleanup(func() { _ = store.Process.Kill(); _ = store.Wait() })
		waitFor(t, "the S3 server to listen", time.Minute, func() bool {
			b, _ := os.ReadFile(storeLog)
			return strings.Contains(string(b), "S3 on "+storeAddr)
		}, storeLog)
		url := "s3://exp/out?endpoint=http://" + storeAddr + "&region=us-east-1&use_path_style=true"
		cache := filepath.Join(root, "s3")
		multiHostExperiment(t, prefix, cache, spec, url, filepath.Join(dir, "buckets", "exp", "out"), func(host string) []string {
			return []string{runstore.StoreCacheEnv + "=" + filepath.Join(cache, host+"-cache"),
				"AWS_ACCESS_KEY_ID=accerl", "AWS_SECRET_ACCESS_KEY=accerl-secret"}
		}, filepath.Join(refDir, "out"))
	})
}

// multiHostExperiment runs spec on the multi-host network: a Temporal server, worker w1 alone,
// then w1 SIGKILLed mid-segment and w2 joining, the client host waiting for the end. The runs
// go to out (a path every host sees, or an object-store URL), whose files this host reads
// under files; env gives each host's extra environment. It checks that both workers trained,
// that w2 retried w1's segments from their checkpoints, and that every run ends as under ref.
func multiHostExperiment(t *testing.T, prefix, root, spec, out, files string, env func(host string) []string, ref string) {
	if env == nil {
		env = func(string) []string { return nil }
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := mhServer + ":" + mhPort
	srvLog := filepath.Join(root, "server.log")
	srv := nsProcess(t, prefix+"server", srvLog, nil, "server", "--ip", mhServer, "--port", mhPort, "--insecure", "--no-ui",
		"--state-dir", filepath.Join(root, "server-state"))
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	waitFor(t, "the server to listen", time.Minute, func() bool {
		b, _ := os.ReadFile(srvLog)
		return strings.Contains(string(b), "Temporal server on "+addr)
	}, srvLog)
	workers := map[string]*exec.Cmd{}
	startWorker := func(w string) {
		cmd := nsProcess(t, prefix+w, filepath.Join(root, w+".log"), env(w), "worker", "--temporal", addr, "--max-segments", "2")
		workers[w] = cmd
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	// w1 trains alone, so that it holds two segments when it is killed (four runs want
	// segments, it takes two at a time, and a finished one's slot refills at once from the
	// two waiting); w2 joins only after the kill and takes everything over. (Joining before
	// the kill let w2 take the waiting segments, and w1 sometimes died holding none, only
	// workflow tasks: CI stop 25.) No more than two at a time may run on w1 (checked below
	// from the timeline).
	startWorker("w1")
	cliLog := filepath.Join(root, "client.log")
	cli := nsProcess(t, prefix+"client", cliLog, env("client"), "run", "--temporal", addr, "--no-worker", "--out", out, spec)
	done := waitClient(t, cli)

	// Kill w1 once it has trained a while (a run has a second checkpoint), at a moment when
	// it holds a started segment.
	waitSecondCheckpoint(t, files, cliLog)
	killed := killHoldingSegment(t, workers["w1"], prefix+"client", addr, filepath.Join(root, "w1.log"))
	startWorker("w2")
	waitFor(t, "w2 to join", time.Minute, func() bool {
		b, _ := os.ReadFile(filepath.Join(root, "w2.log"))
		return strings.Contains(string(b), "Worker serving")
	}, filepath.Join(root, "w2.log"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("accerl run on the client host: %v; log:\n%s\nw2:\n%s", err, logTail(cliLog), logTail(filepath.Join(root, "w2.log")))
		}
	case <-time.After(6 * time.Minute):
		_ = cli.Process.Kill()
		t.Fatalf("the experiment did not finish within 6 minutes of the kill; client log:\n%s\nw2 log:\n%s", logTail(cliLog), logTail(filepath.Join(root, "w2.log")))
	}

	// Which worker ran which segment: the runs' histories, read on the client host.
	tl := timeline(t, prefix+"client", addr, filepath.Join(root, "timeline.log"))
	pids := map[string]string{"w1": fmt.Sprint(workers["w1"].Process.Pid), "w2": fmt.Sprint(workers["w2"].Process.Pid)}
	hostOf := func(identity string) string {
		for w, pid := range pids {
			if strings.HasPrefix(identity, pid+"@") {
				return w
			}
		}
		return identity
	}
	ran := map[string]int{}
	resumedOnW2, retriedOnW2 := 0, 0
	var lines []string
	for _, a := range tl {
		h := hostOf(a.Identity)
		ran[h]++
		if h == "w2" && a.Time.After(killed) {
			resumedOnW2++
			if a.Attempt > 1 {
				retriedOnW2++
			}
		}
		line := fmt.Sprintf("%s  %-12s segment attempt %d on %s", a.Time.Format("15:04:05.000"), a.Run, a.Attempt, h)
		if a.Failed != "" {
			line += " — " + a.Failed
		}
		lines = append(lines, line)
	}
	t.Logf("timeline (w1 killed at %s):\n%s", killed.Format("15:04:05.000"), strings.Join(lines, "\n"))
	if ran["w1"] == 0 || ran["w2"] == 0 || resumedOnW2 == 0 || retriedOnW2 == 0 {
		t.Errorf("segments by worker %v, %d on w2 after the kill, %d of them retries of w1's: want both workers to train and w2 to take over the segments w1 was training",
			ran, resumedOnW2, retriedOnW2)
	}
	if n := maxOverlap(tl, "w1", hostOf); n > 2 {
		t.Errorf("w1, started with --max-segments 2, ran %d segments at once", n)
	}
	// Every run ends where the one-host run ended.
	sameFinalRuns(t, files, ref, 4)
	// ... by resuming from checkpoints: in sync mode a restart from scratch would end with the
	// same parameters, so the summaries must not say any segment found none.
	for seed := 1; seed <= 4; seed++ {
		var sum runstore.RunSummary
		if err := runstore.ReadJSON(filepath.Join(files, "base", fmt.Sprintf("seed-%d", seed), runstore.SummaryFile), &sum); err != nil {
			t.Fatal(err)
		}
		for _, w := range sum.Warnings {
			if strings.Contains(w, "restarts the run") || strings.Contains(w, "are redone") {
				t.Errorf("seed %d did not resume from its last checkpoint: %s", seed, w)
			}
		}
	}
}

// s3ServeMain serves S3 on addr (gofakes3, object KEY of bucket "exp" as the file
// dir/buckets/exp/KEY),
// the multi-host test's object store, until killed.
func s3ServeMain(addr, dir string) error {
	backend, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), dir))
	if err != nil {
		return err
	}
	if ok, _ := backend.BucketExists("exp"); !ok {
		if err := backend.CreateBucket("exp"); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("S3 on %s, objects under %s\n", addr, dir)
	return http.Serve(l, gofakes3.New(backend).Server())
}

// waitClient waits for cli, an `accerl run` child, in the background and returns its exit; a
// test that fails before the run ends kills it rather than leave it waiting for a server
// that is gone.
func waitClient(t *testing.T, cli *exec.Cmd) <-chan error {
	done := make(chan error, 1)
	go func() { done <- cli.Wait() }()
	t.Cleanup(func() { _ = cli.Process.Kill() })
	return done
}

// waitSecondCheckpoint waits until a run of the experiment in out has written its second
// checkpoint, failing with the log at logPath after 3 minutes.
func waitSecondCheckpoint(t *testing.T, out, logPath string) {
	t.Helper()
	waitFor(t, "a second checkpoint", 3*time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(out, "base", "seed-*", "checkpoints", "seg-000002"))
		return len(m) > 0
	}, logPath)
}

// sameFinalRuns checks that runs base/seed-1..seeds under out completed with the environment
// steps and final parameters of the same runs under ref.
func sameFinalRuns(t *testing.T, out, ref string, seeds int) {
	t.Helper()
	for seed := 1; seed <= seeds; seed++ {
		run := filepath.Join("base", fmt.Sprintf("seed-%d", seed), runstore.SummaryFile)
		var got, want runstore.RunSummary
		if err := runstore.ReadJSON(filepath.Join(out, run), &got); err != nil {
			t.Fatal(err)
		}
		if err := runstore.ReadJSON(filepath.Join(ref, run), &want); err != nil {
			t.Fatal(err)
		}
		if got.Status != "completed" || got.ParamsSHA256 != want.ParamsSHA256 || got.EnvSteps != want.EnvSteps {
			t.Errorf("seed %d: %s with params %.12s after %d steps; the reference: %s, %.12s, %d",
				seed, got.Status, got.ParamsSHA256, got.EnvSteps, want.Status, want.ParamsSHA256, want.EnvSteps)
		}
	}
}

// multiHostRemoteSpec is multiHostSpec with its CartPoles on the envserver at addr (no
// simulated latency: the round trips to the envserver host are the latency).
func multiHostRemoteSpec(addr string) string {
	local := `  env "cartpole" {
    latency {
      kind          = "constant"
      median        = "1ms"
      slow_fraction = 0
    }
  }`
	if !strings.Contains(multiHostSpec, local) {
		panic("multiHostSpec's env block changed; update multiHostRemoteSpec")
	}
	// A remote CartPole steps faster than the local one with 1 ms of latency: longer
	// segments (6 updates, about 2 s) so that the kill lands inside one.
	return strings.NewReplacer(local, fmt.Sprintf(`  env "remote" {
    address = %q
    world   = "cartpole"
  }`, addr), "every             = 2", "every             = 6", "env_steps = 12288", "env_steps = 24576").Replace(multiHostSpec)
}

// multiHostSpec is four sync CartPole runs of 24 segments each, with a simulated 1 ms step so
// that a segment takes a moment, and a short heartbeat timeout so that the kill is noticed
// within seconds.
const multiHostSpec = `
experiment "multihost" {
  seeds        = [1, 2, 3, 4]
  max_parallel = 4
  budget { env_steps = 12288 }
  env "cartpole" {
    latency {
      kind          = "constant"
      median        = "1ms"
      slow_fraction = 0
    }
  }
  policy { hidden = [16, 16] }
  algorithm "ppo" {
    batch_steps = 256
    epochs      = 2
    minibatches = 2
  }
  pipeline {
    mode            = "sync"
    workers         = 2
    envs_per_worker = 2
  }
  checkpoint {
    every             = 2
    heartbeat_timeout = "5s"
  }
}
`

// mhNetwork creates the namespaces of mhHosts (named prefix+name) joined by a bridge
// (netLab); the test's cleanup deletes them all.
func mhNetwork(t *testing.T, prefix string) {
	t.Helper()
	hosts := make([]netHost, len(mhHosts))
	for i, h := range mhHosts {
		hosts[i] = netHost{Name: h.name, IP: h.ip}
	}
	lab, err := newNetLab(prefix, hosts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lab.Close)
}

// nsProcess is accerlProcess inside network namespace ns.
func nsProcess(t *testing.T, ns, logPath string, extraEnv []string, args ...string) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), mainEnv+"=1", argsEnv+"="+string(b)), extraEnv...)
	startLogged(t, cmd, logPath)
	return cmd
}

// startLogged starts cmd with its output appended to logPath.
func startLogged(t *testing.T, cmd *exec.Cmd, logPath string) {
	t.Helper()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every 200 ms for up to limit, failing with the log at logPath.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool, logPath string) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited %v for %s; log %s:\n%s", limit, what, logPath, logTail(logPath))
}

// timeline runs timelineMain on host ns against the server at addr and decodes its output.
func timeline(t *testing.T, ns, addr, logPath string) []segmentAttempt {
	t.Helper()
	var tl []segmentAttempt
	out := nsQuery(t, ns, timelineEnv+"="+addr, &tl)
	_ = os.WriteFile(logPath, out, 0o644)
	return tl
}

// nsQuery runs the test binary on host ns with env set (timelineEnv or heldEnv and the
// server's address), decodes the JSON it prints into v and returns the output.
func nsQuery(t *testing.T, ns, env string, v any) []byte {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v; output %s", env, err, out)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s: %v; output %s", env, err, out)
	}
	return out
}

// timelineMain prints, as JSON, every TrainSegment start of every Run workflow on the server
// at addr, oldest first, with the worker identity that took it.
func timelineMain(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	var out []segmentAttempt
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 100, NextPageToken: token})
		if err != nil {
			return err
		}
		for _, ex := range resp.GetExecutions() {
			if ex.GetType().GetName() != "Run" {
				continue
			}
			id := ex.GetExecution().GetWorkflowId()
			run := id // the workflow id ends in the run's arm/seed-N
			if parts := strings.Split(id, "/"); len(parts) >= 2 {
				run = strings.Join(parts[len(parts)-2:], "/")
			}
			hist := c.GetWorkflowHistory(ctx, id, ex.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			scheduled := map[int64]bool{}
			started := map[int64]int{} // started event id -> index in out
			for hist.HasNext() {
				ev, err := hist.Next()
				if err != nil {
					return err
				}
				switch ev.GetEventType() {
				case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
					if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == contract.ActivityTrainSegment {
						scheduled[ev.GetEventId()] = true
					}
				case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
					if i, ok := started[ev.GetActivityTaskCompletedEventAttributes().GetStartedEventId()]; ok {
						out[i].End = ev.GetEventTime().AsTime()
					}
				case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
					a := ev.GetActivityTaskStartedEventAttributes()
					if scheduled[a.GetScheduledEventId()] {
						started[ev.GetEventId()] = len(out)
						out = append(out, segmentAttempt{Run: run, Attempt: a.GetAttempt(), Identity: a.GetIdentity(), Time: ev.GetEventTime().AsTime()})
						if f := a.GetLastFailure(); f != nil && a.GetAttempt() > 1 {
							out[len(out)-1].Failed = "retry after: " + f.GetMessage()
						}
					}
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.SortFunc(out, func(a, b segmentAttempt) int { return a.Time.Compare(b.Time) })
	return json.NewEncoder(os.Stdout).Encode(out)
}
