package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/runstore"
)

// The crash test runs accerl as a child process: the test binary re-executes itself with
// ACCERL_TEST_MAIN set, and TestMain then behaves as the accerl command.
const (
	mainEnv = "ACCERL_TEST_MAIN"
	argsEnv = "ACCERL_TEST_ARGS"
)

func TestMain(m *testing.M) {
	// The multi-host test's queries of a Temporal server, run on the client host.
	for _, q := range []struct {
		env  string
		main func(addr string) error
	}{{timelineEnv, timelineMain}, {heldEnv, heldMain}} {
		if addr := os.Getenv(q.env); addr != "" {
			if err := q.main(addr); err != nil {
				fmt.Fprintln(os.Stderr, q.env+":", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	if v := os.Getenv(s3ServerEnv); v != "" {
		addr, dir, _ := strings.Cut(v, ",")
		fmt.Fprintln(os.Stderr, "s3 server:", s3ServeMain(addr, dir))
		os.Exit(1)
	}
	if os.Getenv(mainEnv) == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv(argsEnv)), &args); err != nil {
			fmt.Fprintln(os.Stderr, "bad", argsEnv, err)
			os.Exit(2)
		}
		os.Args = append([]string{"accerl"}, args...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// accerlProcess starts `accerl args...` as a child process.
func accerlProcess(t *testing.T, logPath string, extraEnv []string, args ...string) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), mainEnv+"=1", argsEnv+"="+string(b)), extraEnv...)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		t.Fatal(err)
	}
	startLogged(t, cmd, logPath)
	return cmd
}

// keepLog copies a child's log out of the test's temporary directory (which is removed when
// the test ends) into the system's, and returns where it went.
func keepLog(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	f, err := os.CreateTemp("", "accerl-stall-*.log")
	if err != nil {
		return fmt.Sprintf("(log not kept: %v)", err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return fmt.Sprintf("(log not kept: %v)", err)
	}
	return f.Name()
}

// readPretrain reads the crash run's behaviour-cloning summary under the run directory dir.
func readPretrain(t *testing.T, dir string) runstore.PretrainSummary {
	t.Helper()
	var p runstore.PretrainSummary
	if err := runstore.ReadJSON(filepath.Join(dir, "out", "base", "seed-3", runstore.PretrainFile), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// logTail returns the last lines of a child process's log, for failure messages.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// crashSpec trains long enough (a few seconds of simulated 1 ms simulator steps) to be
// killed several times, in short segments so that every kill lands in a different place.
// With worldModel, the run first collects offline data and pretrains a world model, then
// trains half on imagined data with the horizon schedule running.
//
// With tabletop the environment is the tabletop spatial suite (two of its tasks, the tokens
// head on the state features, 32×32 frames of both cameras in every step and checkpoint)
// instead of CartPole; with bc as well, the run first clones the
// expert (the pretrain block) and fine-tunes a gaussian policy in action chunks.
// crashVLAPolicy is the tiny micro-VLA of the crash cases that train one.
const crashVLAPolicy = `policy {
    action        = "tokens"
    action_chunk  = 4
    execute_steps = 2
    vla {
      dim    = 16
      layers = 1
    }
  }`

func crashSpec(c crashCase) string {
	mode, budget, worldModel, tabletop := c.mode, c.budget, c.worldModel, c.tabletop
	env := `env "cartpole" {`
	policy := `policy { hidden = [16, 16] }`
	if tabletop {
		env = `env "tabletop" {
    suite = "spatial"
    tasks = [0, 1]
    # The frames of both cameras travel through inference and every checkpoint.
    pixels     = true
    image_size = 32`
		policy = `policy {
    action = "tokens"
    hidden = [16, 16]
  }`
	}
	if c.vla {
		policy = crashVLAPolicy + `
  pretrain {
    demos_per_task = 4
    epochs         = 6
    batch          = 32
    learning_rate  = 3e-3
  }
  evaluation {
    episodes = 4
    greedy   = true
  }`
	} else if c.bc {
		policy = `policy {
    action        = "gaussian"
    hidden        = [32, 32]
    activation    = "relu"
    init_log_std  = -2
    action_chunk  = 4
    execute_steps = 2
  }
  pretrain {
    demos_per_task = 10
    epochs         = 12
  }
  evaluation {
    episodes = 4
    greedy   = true
  }`
	}
	wm := ""
	if c.pixelWM {
		// 16×16 frames keep M_obs's steps short; the step counts cross one checkpoint of
		// each model (every 25, 250 and 1,000 steps).
		env = strings.Replace(env, "image_size = 32", "image_size = 16", 1)
		// The VLA is cloned after the world model's pretraining (both warm starts, in that
		// order, as bench sample-efficiency --env tabletop runs them).
		policy = crashVLAPolicy + `
  pretrain {
    demos_per_task = 4
    epochs         = 2
    batch          = 32
    learning_rate  = 3e-3
  }`
		wm = `
  world_model {
    enabled              = true
    offline_trajectories = 10
    behaviour            = "expert_noisy"
    history              = 2
    imagination_ratio    = 0.5
    obs_every            = 1 # online fits of the pixel models every update (M_rew every second)
    rew_every            = 2
    horizon {
      start     = 2
      end       = 6
      loss_high = 2 # M_obs's one-step error over copy-last's on each update's real steps
      loss_low  = 0.2
    }
    pixels {
      obs_steps         = 30
      rew_steps         = 260
      proprio_steps     = 1010
      obs_fit_steps     = 2
      proprio_fit_steps = 4
      rew_fit_steps     = 4
    }
  }`
	}
	if worldModel {
		wm = `
  world_model {
    enabled              = true
    offline_trajectories = 60
    pretrain_epochs      = 6
    history              = 2
    obs_hidden           = [32]
    rew_hidden           = [16]
    imagination_ratio    = 0.5
    obs_every            = 1
    rew_every            = 1
    horizon {
      start     = 5
      end       = 50
      loss_high = 0.01
      loss_low  = 0.0005
    }
  }`
	}
	return fmt.Sprintf(`
experiment "crash" {
  seeds = [3]
  budget { env_steps = %d }
  %s
    latency {
      kind   = "constant"
      median = "1ms"
      slow_fraction = 0
    }
  }
  %s
  algorithm "ppo" {
    batch_steps = 256
    epochs      = 2
    minibatches = 2
  }
  pipeline {
    mode            = %q
    workers         = 4
    envs_per_worker = 2
    chunk_steps     = 32
    replay_capacity = 1024
  }
  checkpoint {
    every             = 4
    keep              = 3
    heartbeat_timeout = "3s"
  }%s
}
`, budget, env, policy, mode, wm)
}

type runOutcome struct {
	summary  runstore.RunSummary
	metrics  []runstore.MetricsRow
	episodes []runstore.EpisodeRow
}

func readOutcome(t *testing.T, out string) runOutcome {
	t.Helper()
	runDir := filepath.Join(out, "base", "seed-3")
	var o runOutcome
	if err := runstore.ReadJSON(filepath.Join(runDir, "summary.json"), &o.summary); err != nil {
		t.Fatal(err)
	}
	var err error
	if o.metrics, o.episodes, err = runstore.ReadRun(runDir); err != nil {
		t.Fatal(err)
	}
	return o
}

// runToEnd runs the spec in a child process until it exits, returning its exit error. It gives
// up only when the run stops making progress (no file under the output directory changed for
// stallLimit: no metrics segment, checkpoint, dataset shard or summary written), not after a
// fixed wall time, so a loaded machine slows the test down without failing it. The log's tail
// is part of every failure message.
func runToEnd(t *testing.T, dir, specPath string) error {
	cmd := accerlProcess(t, filepath.Join(dir, "log.txt"), nil,
		"run", "--state-dir", filepath.Join(dir, "state"), "--out", filepath.Join(dir, "out"), specPath)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	const stallLimit = 3 * time.Minute
	last, lastChange := latestChange(filepath.Join(dir, "out")), time.Now()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if m := latestChange(filepath.Join(dir, "out")); m.After(last) {
				last, lastChange = m, time.Now()
			} else if time.Since(lastChange) > stallLimit {
				// SIGQUIT makes the Go runtime write every goroutine's stack to the log
				// before it exits: where the process waits is the diagnosis.
				_ = cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
					<-done
				}
				kept := keepLog(t, filepath.Join(dir, "log.txt"))
				t.Fatalf("accerl run made no progress for %v (nothing written under %s); its goroutines are in %s; log:\n%s",
					stallLimit, filepath.Join(dir, "out"), kept, logTail(filepath.Join(dir, "log.txt")))
				return nil
			}
		}
	}
}

// latestChange is the newest modification time of any file under root (zero when there is none).
func latestChange(root string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
		return nil
	})
	return newest
}

func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts accerl processes for a few minutes")
	}
	for _, c := range []crashCase{
		// The first process dies inside the save of segment 3's checkpoint.
		{name: "sync", mode: "sync", budget: 49152, hooks: []string{"seg-000003"}},
		{name: "async", mode: "async", budget: 49152, hooks: []string{"seg-000003"}},
		// The first process dies while PretrainWorldModel saves its first epoch, the second
		// while imagined training saves segment 2; the horizon schedule must not notice.
		// (16,384 env steps ran in 3.5 s on an idle 2-core machine, before the fifth kill.)
		{name: "worldmodel", mode: "sync", budget: 40960, worldModel: true, hooks: []string{"step-", "seg-000002"}},
		// The tabletop suite: its environments' state (objects, joints, gripper, the task
		// sampler's failure history) is in every checkpoint.
		{name: "tabletop", mode: "sync", budget: 24576, tabletop: true, hooks: []string{"seg-000003"}},
		// Behaviour cloning, then RL: the first process dies while PretrainPolicy saves its
		// first epoch, the second while RL saves segment 2; the random kills land in either.
		{name: "bc", mode: "sync", budget: 12288, tabletop: true, bc: true, hooks: []string{"epoch-", "seg-000002"}},
		// The micro-VLA over the frames, cloned by cross-entropy, then token-level PPO: the
		// same two kills, in its BC epochs and in its RL segments.
		{name: "vla", mode: "sync", budget: 4096, tabletop: true, vla: true, hooks: []string{"epoch-", "seg-000002"}},
		// The pixel world model and a cloned VLA trained half on imagined frames, the world
		// model fitted online on every update's real steps: the first process dies while
		// pretraining saves M_obs's first checkpoint, the second while imagined training saves
		// segment 2; the resumed pretraining must end in the uninterrupted one's weights and
		// scores, and the training in its parameters and horizons (which follow M_obs's
		// online validation loss).
		{name: "pixelwm", mode: "sync", budget: 4096, tabletop: true, pixelWM: true, hooks: []string{"step-000000025", "seg-000002"}},
	} {
		t.Run(c.name, func(t *testing.T) { testCrashResume(t, c) })
	}
}

// crashCase is one crash-and-resume scenario. hooks[i] makes process i kill itself in the
// middle of saving the first checkpoint whose name starts with it; the remaining processes
// (6 in all) are killed by the test at random moments.
type crashCase struct {
	name       string
	mode       string
	budget     int64
	worldModel bool
	tabletop   bool
	bc         bool
	vla        bool
	pixelWM    bool
	hooks      []string
}

func testCrashResume(t *testing.T, c crashCase) {
	mode := c.mode
	root := t.TempDir()
	specPath := filepath.Join(root, "crash.hcl")
	if err := os.WriteFile(specPath, []byte(crashSpec(c)), 0o644); err != nil {
		t.Fatal(err)
	}

	// The reference: the same spec, straight through.
	refDir := filepath.Join(root, "ref")
	if err := runToEnd(t, refDir, specPath); err != nil {
		t.Fatalf("reference run: %v; log:\n%s", err, logTail(filepath.Join(refDir, "log.txt")))
	}
	ref := readOutcome(t, filepath.Join(refDir, "out"))

	// The crashed run: SIGKILL the whole process (server, worker and all) again and again.
	dir := filepath.Join(root, "crashed")
	rng := rand.New(rand.NewPCG(42, 7))
	const kills = 6
	for i := range kills {
		var env []string
		hooked := i < len(c.hooks)
		if hooked {
			// Die in the middle of writing a checkpoint: after its files, before the rename.
			env = []string{checkpoint.KillDuringSaveEnv + "=" + c.hooks[i]}
		}
		cmd := accerlProcess(t, filepath.Join(dir, "log.txt"), env,
			"run", "--state-dir", filepath.Join(dir, "state"), "--out", filepath.Join(dir, "out"), specPath)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// The embedded server takes about a second to start; kill between 1.5 and 4 s in.
		// Hooked processes are left to kill themselves through the checkpoint hook; they get
		// as long as the run keeps writing (see runToEnd), up to 10 minutes.
		wait := 1500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond)))
		if hooked {
			wait = 10 * time.Minute
		}
		select {
		case err := <-done:
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if hooked && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				continue // the checkpoint hook killed it, as planned
			}
			if err == nil {
				t.Fatalf("kill %d: accerl finished before it could be killed; make the spec longer; log:\n%s", i, logTail(filepath.Join(dir, "log.txt")))
			}
			// A restarted process that gives up (say, on an error from a server still
			// recovering) is what a user would see too; say so, and let the next restart and
			// the checks on the final outcome decide whether anything was lost.
			t.Logf("kill %d: accerl exited by itself (%v) before it could be killed; log:\n%s", i, err, logTail(filepath.Join(dir, "log.txt")))
		case <-time.After(wait):
			if hooked {
				_ = cmd.Process.Kill()
				t.Fatalf("the checkpoint hook did not kill accerl while it saved %s*; log:\n%s", c.hooks[i], logTail(filepath.Join(dir, "log.txt")))
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
	}
	if err := runToEnd(t, dir, specPath); err != nil {
		t.Fatalf("final run after %d kills: %v; log:\n%s", kills, err, logTail(filepath.Join(dir, "log.txt")))
	}
	got := readOutcome(t, filepath.Join(dir, "out"))

	budget := c.budget
	for name, o := range map[string]runOutcome{"reference": ref, "crashed": got} {
		if o.summary.Status != "completed" || o.summary.EnvSteps != budget {
			t.Errorf("%s run: status %s, %d env steps; want completed with exactly %d", name, o.summary.Status, o.summary.EnvSteps, budget)
		}
		// Every update has exactly one metrics row: keys 1..N, none missing, none twice.
		for i, r := range o.metrics {
			if r.Step != int64(i+1) {
				t.Fatalf("%s run: metrics row %d has step %d; rows are missing or duplicated", name, i, r.Step)
			}
		}
		if n := int64(len(o.metrics)); n != o.summary.Updates {
			t.Errorf("%s run: %d metrics rows for %d updates", name, n, o.summary.Updates)
		}
		if last := o.metrics[len(o.metrics)-1]; last.EnvSteps != budget {
			t.Errorf("%s run: last metrics row at %d env steps, want %d", name, last.EnvSteps, budget)
		}
	}
	if mode == "sync" {
		// Sync mode is deterministic: the killed and resumed run must end bit-for-bit where
		// the uninterrupted one did, episode by episode.
		if got.summary.ParamsSHA256 != ref.summary.ParamsSHA256 {
			t.Errorf("final parameters differ after crashes: %s vs uninterrupted %s", got.summary.ParamsSHA256, ref.summary.ParamsSHA256)
		}
		if len(got.episodes) != len(ref.episodes) {
			t.Errorf("%d episodes after crashes, %d without", len(got.episodes), len(ref.episodes))
		}
		// The horizon schedule (world model only) took the same path: H per update.
		for i := range min(len(got.metrics), len(ref.metrics)) {
			g, r := got.metrics[i].Horizon, ref.metrics[i].Horizon
			if g != r && !(math.IsNaN(g) && math.IsNaN(r)) {
				t.Errorf("update %d ran at horizon %v after crashes, %v without", i+1, g, r)
				break
			}
		}
		for i := range min(len(got.episodes), len(ref.episodes)) {
			g, r := got.episodes[i], ref.episodes[i]
			// Success is NaN (not applicable) in both, and NaN != NaN: compare the rest.
			if g.Segment != r.Segment || g.EnvSteps != r.EnvSteps || g.Return != r.Return || g.Length != r.Length || g.PolicyVersion != r.PolicyVersion {
				t.Errorf("episode %d differs after crashes: %+v vs %+v", i, g, r)
				break
			}
		}
	}
	if c.bc {
		// The warm start is deterministic too: the resumed pretraining ended with the same
		// losses and success as the uninterrupted one.
		a, b := readPretrain(t, refDir), readPretrain(t, dir)
		if !slices.Equal(a.EpochLoss, b.EpochLoss) || a.Success != b.Success || !b.HasSuccess || b.Demos != 20 {
			t.Errorf("pretraining after crashes: %d demos, losses %v, success %v (has %v); uninterrupted: %v, %v",
				b.Demos, b.EpochLoss, b.Success, b.HasSuccess, a.EpochLoss, a.Success)
		}
	}
	if c.pixelWM {
		// The clone came after the world model's pretraining, and resumed to the same losses.
		a, b := readPretrain(t, refDir), readPretrain(t, dir)
		if b.Demos != 8 || len(b.EpochLoss) != 2 || !slices.Equal(a.EpochLoss, b.EpochLoss) {
			t.Errorf("cloning after crashes: %d demos, losses %v; uninterrupted: %v (want 8 demos, 2 epochs)", b.Demos, b.EpochLoss, a.EpochLoss)
		}
		// The online fits ran: every update measured M_obs on its real steps, and the
		// horizon schedule followed that loss up from its start.
		for i, r := range got.metrics {
			if math.IsNaN(r.WMValLoss) || !(r.WMValLoss > 0) {
				t.Errorf("update %d: world-model validation loss %v, want M_obs's measured ratio", i+1, r.WMValLoss)
				break
			}
		}
		if h := got.metrics[len(got.metrics)-1].Horizon; !(h > 2) {
			t.Errorf("the horizon ended at %v, want it above its start of 2 (loss_high 2)", h)
		}
		// Pretraining resumed to the same weights, curves and scores.
		for _, rel := range []string{runstore.PixelWorldModelFile, "worldmodel/pretrain/step-000001300/obs.bin", "worldmodel/pretrain/step-000001300/rew.bin"} {
			a, errA := os.ReadFile(filepath.Join(refDir, "out", "base", "seed-3", rel))
			b, errB := os.ReadFile(filepath.Join(dir, "out", "base", "seed-3", rel))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("%s differs after crashes (or is missing: %v, %v)", rel, errA, errB)
			}
		}
	}
	// No half-written checkpoint is ever left where a loader would look.
	dirs, err := checkpoint.List(filepath.Join(dir, "out", "base", "seed-3", "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, _, err := checkpoint.Load(d); err != nil {
			t.Errorf("checkpoint %s does not verify: %v", d, err)
		}
	}
}
