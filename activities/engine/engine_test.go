package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
)

// smallConfig is a fast CartPole configuration: 4 environments, 64-step
// batches, a 16-16 network.
func smallConfig(mode string) Config {
	cfg := DefaultConfig()
	cfg.Mode = mode
	cfg.Workers, cfg.EnvsPerWorker = 2, 2
	cfg.ChunkSteps = 8
	cfg.BatchSteps = 64
	cfg.ReplayCapacity = 256
	cfg.Policy.Hidden = []int{16, 16}
	cfg.MaxWait = jsondur.Duration(200 * time.Microsecond)
	cfg.Learner.Minibatches = 2
	cfg.Learner.Epochs = 2
	cfg.Seed = 7
	return cfg
}

func mustNew(t *testing.T, cfg Config, snap *Snapshot) *Engine {
	t.Helper()
	return mustNewLat(t, cfg, snap, testenv.Latency{})
}

// mustNewLat is mustNew with the simulated step latency lat on the rollout environments.
func mustNewLat(t *testing.T, cfg Config, snap *Snapshot, lat testenv.Latency) *Engine {
	t.Helper()
	e, err := New(cfg, snap, testEnvs(cfg, lat))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustRun(t *testing.T, e *Engine, updates int, onUpdate func(UpdateReport)) SegmentStats {
	t.Helper()
	st, err := e.Run(context.Background(), updates, onUpdate)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSyncDeterminismAndResume(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"plain", func(*Config) {}},
		{"lag-recompute-anneal", func(c *Config) {
			c.Lag = 2
			c.RecomputeValues = true
			c.Learner.AdvNorm = kernels.AdvNormGlobal
			c.Learner.Schedule.Kind, c.Learner.Schedule.Total = kernels.LRLinear, 6
			c.MaxEpisodeSteps = 20 // truncations inside the run
		}},
		{"tokens-gipo", func(c *Config) {
			// Pendulum's one action dimension cut into 9 tokens;
			// truncations at 20 steps.
			c.Env, c.MaxEpisodeSteps = testenv.KindPendulum, 20
			c.Policy.Head, c.Policy.Bins = kernels.HeadTokens, 9
			c.Learner.Algo = kernels.AlgoGIPO
			c.Lag = 1
		}},
		{"gaussian-sapo", func(c *Config) {
			c.Env, c.MaxEpisodeSteps = testenv.KindMountainCarContinuous, 30
			c.Policy.Head, c.Policy.InitLogStd = kernels.HeadGaussian, -0.5
			c.Learner.Algo = kernels.AlgoSAPO
		}},
		{"grpo-repeat-starts", func(c *Config) {
			// Every start played 3 times, GRPO grouping by start; episodes end at 20
			// steps, so snapshots fall between plays of a start.
			c.AdvEstimator, c.RepeatStarts, c.MaxEpisodeSteps = AdvGRPO, 3, 20
		}},
		{"vtrace", func(c *Config) {
			c.Learner = kernels.DefaultLearnerConfig(kernels.AlgoVTrace)
			c.Lag = 1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig(ModeSync)
			tc.edit(&cfg)
			const n, k = 6, 2

			a := mustNew(t, cfg, nil)
			stA := mustRun(t, a, n, nil)
			b := mustNew(t, cfg, nil)
			mustRun(t, b, n, nil)
			if a.ParamsSHA256() != b.ParamsSHA256() {
				t.Fatalf("two fresh sync runs differ: %s vs %s", a.ParamsSHA256(), b.ParamsSHA256())
			}
			// 4 envs × ceil(64/4) = 16 steps per round.
			if stA.Updates != n || stA.EnvSteps != n*64 {
				t.Fatalf("after %d updates: %d updates, %d env steps; want %d and %d", n, stA.Updates, stA.EnvSteps, n, n*64)
			}

			// run(k) + snapshot (through JSON) + New + run(n-k) == run(n).
			c := mustNew(t, cfg, nil)
			mustRun(t, c, k, nil)
			snap, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(snap)
			if err != nil {
				t.Fatal(err)
			}
			var back Snapshot
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			d := mustNew(t, cfg, &back)
			stD := mustRun(t, d, n-k, nil)
			if d.ParamsSHA256() != a.ParamsSHA256() {
				t.Fatalf("resumed run differs from the uninterrupted one: %s vs %s", d.ParamsSHA256(), a.ParamsSHA256())
			}
			if stD.Updates != n || stD.EnvSteps != stA.EnvSteps || stD.Episodes != stA.Episodes {
				t.Fatalf("resumed counters (%d, %d, %d), uninterrupted (%d, %d, %d)",
					stD.Updates, stD.EnvSteps, stD.Episodes, stA.Updates, stA.EnvSteps, stA.Episodes)
			}

			other := cfg
			other.Seed++
			e := mustNew(t, other, nil)
			mustRun(t, e, n, nil)
			if e.ParamsSHA256() == a.ParamsSHA256() {
				t.Fatal("a different seed gave the same parameters")
			}
		})
	}
}

func TestSyncStalenessFollowsLag(t *testing.T) {
	// In sync mode every round acts with version max(0, v−Lag) while the
	// trainer holds v, so each batch's steps are all exactly min(v, Lag)
	// versions stale: for Lag 2, updates 1…5 see 0, 1, 2, 2, 2.
	for _, lag := range []int{0, 2} {
		cfg := smallConfig(ModeSync)
		cfg.Lag = lag
		e := mustNew(t, cfg, nil)
		var got []float64
		var versions []int64
		st := mustRun(t, e, 5, func(u UpdateReport) {
			got = append(got, u.MeanStaleness)
			versions = append(versions, u.PolicyVersion)
			if len(u.StalenessHist) != int(u.MeanStaleness)+1 || u.StalenessHist[int(u.MeanStaleness)] != u.BatchSteps {
				t.Errorf("lag %d update %d: staleness histogram %v for %d steps of staleness %v",
					lag, u.Update, u.StalenessHist, u.BatchSteps, u.MeanStaleness)
			}
		})
		for v, s := range got {
			if want := float64(min(v, lag)); s != want {
				t.Fatalf("lag %d: mean staleness per update %v, want min(v, %d)", lag, got, lag)
			}
			if versions[v] != int64(v+1) {
				t.Fatalf("published versions %v, want 1..5", versions)
			}
		}
		wantHist := make([]int, lag+1)
		for v := range 5 {
			wantHist[min(v, lag)] += 64
		}
		for k := range wantHist {
			if k >= len(st.StalenessHist) || st.StalenessHist[k] != wantHist[k] {
				t.Fatalf("lag %d: segment staleness histogram %v, want %v", lag, st.StalenessHist, wantHist)
			}
		}
	}
}

func TestAsyncRunStopsCleanlyAndResumes(t *testing.T) {
	cfg := smallConfig(ModeAsync)
	lat := constLatency(200 * time.Microsecond)
	before := runtime.NumGoroutine()
	e := mustNewLat(t, cfg, nil, lat)
	var reports []UpdateReport
	st := mustRun(t, e, 4, func(u UpdateReport) { reports = append(reports, u) })
	if st.Updates != 4 || st.SegmentUpdates != 4 || len(reports) != 4 || e.PolicyVersion() != 4 {
		t.Fatalf("segment: %d updates (%d reports), version %d; want 4", st.Updates, len(reports), e.PolicyVersion())
	}
	for i, u := range reports {
		if u.Update != int64(i+1) || u.PolicyVersion != int64(i+1) || u.BatchSteps < 64 || u.BatchSteps > 64+7 {
			// Take returns whole chunks of at most 8 steps: 64..71 steps.
			t.Fatalf("report %d: update %d version %d batch %d", i, u.Update, u.PolicyVersion, u.BatchSteps)
		}
	}
	if st.SegmentEnvSteps < 4*64 || st.EnvSteps != st.SegmentEnvSteps {
		t.Fatalf("collected %d steps (run-wide %d), want at least the 256 trained on", st.SegmentEnvSteps, st.EnvSteps)
	}
	waitGoroutines(t, before)

	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	f := mustNewLat(t, cfg, &back, lat)
	if f.ParamsSHA256() != e.ParamsSHA256() || f.PolicyVersion() != 4 {
		t.Fatal("restored engine has different parameters or version")
	}
	_, held := f.replay.Len()
	partial := 0
	for _, s := range f.slots {
		if s.chunk != nil {
			partial += s.chunk.Len()
		}
	}
	// Every collected step is either trained on, dropped, still in replay
	// or in a partial chunk.
	trained := 0
	for _, u := range reports {
		trained += u.BatchSteps
	}
	if int64(trained)+st.Dropped+int64(held+partial) != st.EnvSteps {
		t.Fatalf("steps: %d trained + %d dropped + %d held + %d partial != %d collected", trained, st.Dropped, held, partial, st.EnvSteps)
	}
	st2 := mustRun(t, f, 2, nil)
	if st2.Updates != 6 || st2.EnvSteps <= st.EnvSteps || st2.SegmentEnvSteps != st2.EnvSteps-st.EnvSteps {
		t.Fatalf("resumed segment: %d updates, %d steps (%d this segment) after %d", st2.Updates, st2.EnvSteps, st2.SegmentEnvSteps, st.EnvSteps)
	}
	waitGoroutines(t, before)
}

func TestRunCancelled(t *testing.T) {
	for _, mode := range []string{ModeAsync, ModeSync} {
		cfg := smallConfig(mode)
		lat := constLatency(time.Millisecond)
		before := runtime.NumGoroutine()
		e := mustNewLat(t, cfg, nil, lat)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		_, err := e.Run(ctx, 1<<30, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: Run after its deadline returned %v", mode, err)
		}
		// A 1 ms step plus the last update is all a stop may wait for;
		// 2 s leaves room for a loaded machine.
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s: Run took %v to stop", mode, d)
		}
		waitGoroutines(t, before)
		if _, err := e.Snapshot(); err != nil {
			t.Fatalf("%s: snapshot after a cancelled run: %v", mode, err)
		}
	}
}

// waitGoroutines fails unless the goroutine count drops back to n within a
// second (exiting goroutines may take a moment to be accounted).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left running, started with %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSnapshotRejectsMismatch(t *testing.T) {
	cfg := smallConfig(ModeSync)
	e := mustNew(t, cfg, nil)
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Workers = 3
	if _, err := New(other, snap, testEnvs(other, testenv.Latency{})); err == nil {
		t.Fatal("snapshot of 4 envs accepted by a 6-env config")
	}
	other = cfg
	other.Policy.Hidden = []int{8}
	if _, err := New(other, snap, testEnvs(other, testenv.Latency{})); err == nil {
		t.Fatal("snapshot accepted by a different network")
	}
	bad := *snap
	bad.Params = append([]float64(nil), snap.Params...)
	bad.Params[3] = math.NaN()
	if _, err := New(cfg, &bad, testEnvs(cfg, testenv.Latency{})); err == nil {
		t.Fatal("snapshot with a NaN parameter accepted")
	}
	// A format-1 snapshot (before heads existed) is a categorical one.
	old := *snap
	old.Format, old.Head = 1, ""
	if _, err := New(cfg, &old, testEnvs(cfg, testenv.Latency{})); err != nil {
		t.Fatalf("format-1 snapshot refused by a categorical config: %v", err)
	}

	// Same env, another head: refused by name, before any shape check.
	tok := smallConfig(ModeSync)
	tok.Env, tok.Policy.Head, tok.Policy.Bins = testenv.KindPendulum, kernels.HeadTokens, 4
	tsnap, err := mustNew(t, tok, nil).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	gauss := tok
	gauss.Policy.Head = kernels.HeadGaussian
	if _, err := New(gauss, tsnap, testEnvs(gauss, testenv.Latency{})); err == nil || !strings.Contains(err.Error(), "tokens policy") {
		t.Fatalf("tokens snapshot restored into a gaussian config: %v", err)
	}
	// A replayed token outside the bins is refused, not left to panic in
	// the learner.
	tsnap.Envs[1].Partial = chunkOf(1, 0, 2, 0)
	tsnap.Envs[1].Partial.Obs = make([]float64, 2*3)
	tsnap.Envs[1].Partial.Actions[1] = 4
	if _, err := New(tok, tsnap, testEnvs(tok, testenv.Latency{})); err == nil || !strings.Contains(err.Error(), "action token 4 at 1, outside [0, 4)") {
		t.Fatalf("out-of-range token accepted: %v", err)
	}
}

// panickyEnv is CartPole that panics on its fifth step, like a simulator
// rejecting an action.
type panickyEnv struct {
	Env
	steps int
}

func (p *panickyEnv) Step(a []float64) StepResult {
	if p.steps++; p.steps == 5 {
		panic("simulator exploded")
	}
	return p.Env.Step(a)
}

func TestEnvPanicBecomesRunError(t *testing.T) {
	for _, mode := range []string{ModeAsync, ModeSync} {
		cfg := smallConfig(mode)
		before := runtime.NumGoroutine()
		e, err := New(cfg, nil, func(i int) (Env, error) {
			env, err := testEnvs(cfg, testenv.Latency{})(i)
			if i == 2 {
				return &panickyEnv{Env: env}, err
			}
			return env, err
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run(context.Background(), 3, nil)
		if err == nil || !strings.Contains(err.Error(), "env 2 panicked: simulator exploded") {
			t.Fatalf("%s: Run returned %v, want the env 2 panic", mode, err)
		}
		waitGoroutines(t, before)
	}
}
