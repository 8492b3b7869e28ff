package activities

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// TestRemoteEnvTrainsThroughRunLocal trains a spec with env "remote" through the path of
// `accerl run` (RunLocal: segments, checkpoints, resumes) on an in-process envserver. Sync
// mode is deterministic over the wire too, and the segments resume their remote episodes
// exactly (property "state"): a run of 4-update segments ends with the parameters of a run
// in one segment.
func TestRemoteEnvTrainsThroughRunLocal(t *testing.T) {
	srv := envrpctest.Start(t)
	exp, diags := specs.Parse("remote.hcl", []byte(fmt.Sprintf(`
experiment "remote" {
  seeds  = [3]
  budget { env_steps = 1536 }
  env "remote" {
    address = %q
    world   = "cartpole"
  }
  pipeline {
    mode = "sync"
    workers = 2
    envs_per_worker = 2
    chunk_steps = 32
    replay_capacity = 512
  }
  algorithm "ppo" {
    batch_steps = 128
    epochs      = 1
    minibatches = 2
  }
  policy { hidden = [8] }
  checkpoint { every = 4 }
  ablation "one_segment" {
    checkpoint { every = 1000 }
  }
}`, srv.Addr)), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	train := func(arm specs.Arm) (string, int) {
		dir := t.TempDir()
		segments := 0
		st, err := RunLocal(context.Background(), LocalRun{Experiment: exp.Name, Arm: arm.Name, Seed: exp.Seeds[0],
			SpecHash: exp.Hash, Config: arm.Config, RunDir: dir}, func(runstate.State, TrainSegmentResult) bool {
			segments++
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		var sum runstore.RunSummary
		if err := runstore.ReadJSON(filepath.Join(dir, runstore.SummaryFile), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.Status != runstore.StatusCompleted || st.EnvSteps < 1536 || st.Episodes == 0 {
			t.Fatalf("run ended %s after %d env steps and %d episodes", sum.Status, st.EnvSteps, st.Episodes)
		}
		return st.ParamsSHA256, segments
	}
	h1, segs := train(exp.Arms[0])
	if segs < 3 {
		t.Errorf("%d segments; the test should resume from checkpoints", segs)
	}
	if h2, segs := train(exp.Arms[1]); h2 != h1 || segs != 1 {
		t.Errorf("in %d segments the run ended with parameters %s, in one %s", segs, h1, h2)
	}
}

// TestRemoteTabletopEnvsMatchInProcess builds a pixel tabletop arm's environments remote
// and in process: the evaluation environment (fixed initial states through Reset settings)
// shows the same features and frames step by step, and a rollout environment is a
// FrameEnv of the same size.
func TestRemoteTabletopEnvsMatchInProcess(t *testing.T) {
	srv := envrpctest.Start(t)
	c := pixelTabletop()
	local := EnvFactory(c, 1)
	c.Env.Remote = &specs.Remote{Addresses: []string{srv.Addr}}
	remote := EnvFactory(c, 1)
	n := c.Pipeline.Workers * c.Pipeline.EnvsPerWorker
	open := func(f engine.EnvFactory, i int) engine.FrameEnv {
		env, err := f(i)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engine.CloseEnv(env) })
		fe, ok := env.(engine.FrameEnv)
		if want := 2*32*32*3 + 2*InstructionTokens; !ok || fe.FrameBytes() != want {
			t.Fatalf("env %d: FrameEnv %v, want %d-byte frames (images and instruction)", i, ok, want)
		}
		return fe
	}
	open(remote, 0)
	le, re := open(local, n), open(remote, n)
	act := []float64{0.3, -0.2, 0.1, 0, 0, 0.5, -1}
	for ep := range 2 {
		lo, ro := le.Reset(nil), re.Reset(nil)
		for step := range 12 {
			if fmt.Sprint(lo) != fmt.Sprint(ro) || !bytes.Equal(le.Frame(nil), re.Frame(nil)) {
				t.Fatalf("episode %d step %d: remote observation or frame differs from the in-process one", ep, step)
			}
			lr, rr := le.Step(act), re.Step(act)
			lo, ro = lr.Obs, rr.Obs
			if lr.Reward != rr.Reward || lr.Terminated != rr.Terminated || lr.Truncated != rr.Truncated {
				t.Fatalf("episode %d step %d: remote %+v, in process %+v", ep, step, rr, lr)
			}
		}
	}
}

// TestRemoteSpecMismatch checks that a server whose world does not match the spec's is
// refused at engine start, naming the observation.
func TestRemoteSpecMismatch(t *testing.T) {
	worlds := envrpc.BuiltinWorlds()
	worlds[testenv.KindCartPole] = worlds[testenv.KindAcrobot] // 6-D observations, 3 actions
	srv := envrpctest.StartWorlds(t, worlds)
	c := tinyCartPole(specs.ModeSync, 1024)
	c.Env.Remote = &specs.Remote{Addresses: []string{srv.Addr}}
	_, err := NewEngine(c, 1, 8, nil)
	if err == nil || !strings.Contains(err.Error(), `observation "state" has 6 values, the spec's env has 4`) {
		t.Fatalf("engine on a mismatched server: %v", err)
	}
}

// TestRemoteEnvWarnsWhenServerReturns stops the server under a built engine and starts it
// again: training goes on, and every environment's reconnection is a warning.
func TestRemoteEnvWarnsWhenServerReturns(t *testing.T) {
	srv := envrpctest.Start(t)
	c := tinyCartPole(specs.ModeAsync, 4096)
	c.Env.Remote = &specs.Remote{Addresses: []string{srv.Addr}}
	var w envWarnings
	eng, err := engine.New(EngineConfig(c, 1, 8), nil, envFactory(c, 1, w.add))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv.Stop()
	go func() {
		time.Sleep(200 * time.Millisecond)
		srv.Restart(t)
	}()
	mustRunEngine(t, eng, 2)
	warnings := w.take()
	if len(warnings) != 4 || !strings.Contains(warnings[0], "reconnected") {
		t.Errorf("warnings = %q, want one reconnection for each of the 4 environments", warnings)
	}
}

// TestRemoteOfflineSim checks the world model's offline collector on a remote arm: it steps
// the server's world, reports success like the in-process simulator, and closes.
func TestRemoteOfflineSim(t *testing.T) {
	srv := envrpctest.Start(t)
	c := tinyCartPole(specs.ModeSync, 1024)
	c.Env.Remote = &specs.Remote{Addresses: []string{srv.Addr}}
	sim, err := OfflineSims(c.Env)()
	if err != nil {
		t.Fatal(err)
	}
	defer sim.(io.Closer).Close()
	n, _, _ := sim.Actions()
	if n != 2 || sim.ObsDim() != 4 || !sim.HasSuccess() {
		t.Fatalf("remote cartpole sim: %d actions, obs dim %d, success %v", n, sim.ObsDim(), sim.HasSuccess())
	}
	sim.Reset(rand.New(rand.NewPCG(1, 1)))
	for step := 1; ; step++ {
		_, r, term, trunc, success := sim.Step([]float64{0})
		if r != 1 || trunc {
			t.Fatalf("step %d: reward %v, truncated %v", step, r, trunc)
		}
		if term {
			if success {
				t.Error("pushing left until the pole falls counts as success")
			}
			break
		}
	}
}

// TestRemoteEnvMovesOffDeadServer builds an engine whose environments are spread over two
// servers, one of them gone: the environments homed on it move to the other, each with a
// warning, and training goes on.
func TestRemoteEnvMovesOffDeadServer(t *testing.T) {
	defer func(d time.Duration) { failoverRetry = d }(failoverRetry)
	failoverRetry = time.Second
	alive, gone := envrpctest.Start(t), envrpctest.Start(t)
	gone.Stop()
	c := tinyCartPole(specs.ModeSync, 4096)
	c.Env.Remote = &specs.Remote{Addresses: []string{alive.Addr, gone.Addr}}
	var w envWarnings
	eng, err := engine.New(EngineConfig(c, 1, 8), nil, envFactory(c, 1, w.add))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	mustRunEngine(t, eng, 2)
	warnings := w.take()
	// tinyCartPole has 4 rollout environments (0..3) and an evaluation one (4); 1 and 3 are
	// homed on the second address.
	moved := 0
	for _, msg := range warnings {
		if strings.Contains(msg, "envserver "+gone.Addr+" is unreachable") && strings.Contains(msg, "stepping it on "+alive.Addr) {
			moved++
		}
	}
	if moved < 2 {
		t.Errorf("warnings = %q, want environments 1 and 3 moved from %s to %s", warnings, gone.Addr, alive.Addr)
	}
	if !deadServers.recently(gone.Addr) || deadServers.recently(alive.Addr) {
		t.Errorf("dead servers: %v", deadServers.dead)
	}

	// With every server gone the dial fails, naming them.
	alive.Stop()
	_, err = dialRemote(c.Env, 0, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "none of the 2 envservers answered") {
		t.Errorf("all servers gone: %v", err)
	}
}
