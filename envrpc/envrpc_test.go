package envrpc_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/testenv"
	"github.com/accerl/accerl/testenv/tabletop"
)

func dial(t testing.TB, cfg envrpc.Config) *envrpc.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := envrpc.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// restored dials a new client with cfg and restores a's state (MarshalBinary) into it.
func restored(t *testing.T, a *envrpc.Env, cfg envrpc.Config) *envrpc.Env {
	t.Helper()
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := dial(t, cfg)
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	return b
}

func world(name string) envrpc.Settings {
	return envrpc.Settings{envrpc.SettingWorld: envrpc.String(name)}
}

// lockstep steps a remote and an in-process environment with the same actions and resets
// (the in-process one from envrpc.ResetRNG of the seed the client draws) for steps steps,
// failing at the first difference in observation bits, reward, episode end or success.
// check compares whatever else the caller wants (frames) after every step.
func lockstep(t *testing.T, remote engine.Env, local testenv.Env, steps int, check func(step int)) {
	t.Helper()
	rr, rl := rand.New(rand.NewPCG(7, 1)), rand.New(rand.NewPCG(7, 1))
	acts := rand.New(rand.NewPCG(7, 2))
	sameObs := func(step int, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("step %d: remote obs has %d values, local %d", step, len(a), len(b))
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("step %d: obs[%d] remote %v, local %v", step, i, a[i], b[i])
			}
		}
	}
	sameObs(-1, remote.Reset(rr), local.Reset(envrpc.ResetRNG(rl.Uint64())))
	space := local.ActionSpace()
	episodes := 0
	for step := range steps {
		a := make([]float64, space.Dims())
		for i := range a {
			if space.N > 0 {
				a[i] = float64(acts.IntN(space.N))
			} else {
				a[i] = space.Low[i] + (space.High[i]-space.Low[i])*acts.Float64()
			}
		}
		got := remote.Step(a)
		obs, r, term, trunc := local.Step(a)
		sameObs(step, got.Obs, obs)
		if math.Float64bits(got.Reward) != math.Float64bits(r) || got.Terminated != term || got.Truncated != trunc {
			t.Fatalf("step %d: remote (r %v, term %v, trunc %v), local (%v, %v, %v)", step, got.Reward, got.Terminated, got.Truncated, r, term, trunc)
		}
		if check != nil {
			check(step)
		}
		if term || trunc {
			succ, ok := local.Succeeded(term, trunc)
			if got.HasSuccess != ok || (ok && got.Success != succ) {
				t.Fatalf("step %d: remote success %v (has %v), local %v (has %v)", step, got.Success, got.HasSuccess, succ, ok)
			}
			episodes++
			sameObs(step, remote.Reset(rr), local.Reset(envrpc.ResetRNG(rl.Uint64())))
		}
	}
	if episodes < 2 {
		t.Errorf("only %d episodes in %d steps; the test should cross resets", episodes, steps)
	}
}

// TestCartPoleMatchesInProcess checks that a remote CartPole steps bit-for-bit like the
// in-process one given the same seeds and actions, across episodes.
func TestCartPoleMatchesInProcess(t *testing.T) {
	srv := envrpctest.Start(t)
	remote := dial(t, envrpc.Config{Address: srv.Addr, Settings: world(testenv.KindCartPole)})
	local, _ := testenv.Make(testenv.KindCartPole, testenv.Options{})
	if remote.ObsDim() != 4 || remote.ActionSpace().N != 2 {
		t.Fatalf("remote cartpole: obs dim %d, action space %+v", remote.ObsDim(), remote.ActionSpace())
	}
	lockstep(t, remote, local, 400, nil)
}

// TestContinuousWorldMatchesInProcess does the same for a continuous action space and a
// task without success (Pendulum), with a shortened time limit sent as a setting.
func TestContinuousWorldMatchesInProcess(t *testing.T) {
	srv := envrpctest.Start(t)
	set := world(testenv.KindPendulum)
	set[envrpc.SettingMaxEpisodeSteps] = envrpc.Int64(50)
	remote := dial(t, envrpc.Config{Address: srv.Addr, Settings: set})
	local, _ := testenv.Make(testenv.KindPendulum, testenv.Options{MaxEpisodeSteps: 50})
	if got, want := remote.ActionSpace(), local.ActionSpace(); !slices.Equal(got.Low, want.Low) || !slices.Equal(got.High, want.High) {
		t.Fatalf("action space %+v, want %+v", got, want)
	}
	lockstep(t, remote, local, 150, nil)
}

// TestTabletopFramesMatchInProcess checks a tabletop world with pixels: state, frames and
// instruction equal the in-process suite's, and a fixed initial state (the evaluation
// protocol's ResetTo) starts the same scene.
func TestTabletopFramesMatchInProcess(t *testing.T) {
	srv := envrpctest.Start(t)
	cfg := tabletop.Config{Suite: tabletop.SuiteSpatial, Tasks: []int{0, 3}, ImageSize: 16, MaxEpisodeSteps: 40}
	remote := dial(t, envrpc.Config{Address: srv.Addr, Settings: envrpc.TabletopSettings(cfg, true), Frames: true})
	local, err := tabletop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fe := remote.Frames()
	if fe.FrameBytes() != local.ImageBytesPerStep() {
		t.Fatalf("frame bytes %d, want %d", fe.FrameBytes(), local.ImageBytesPerStep())
	}
	frameOK := func(step int) {
		t.Helper()
		var want []byte
		for _, im := range local.Images() {
			want = append(want, im...)
		}
		if got := fe.Frame(nil); !bytes.Equal(got, want) {
			t.Fatalf("step %d: frames differ", step)
		}
	}
	lockstep(t, fe, local, 100, frameOK)
	if remote.Instruction() != local.Instruction() || remote.Instruction() == "" {
		t.Errorf("instruction %q, want %q", remote.Instruction(), local.Instruction())
	}
	if got, want := remote.ResetTo(3, 7), local.ResetTo(3, 7); !slices.Equal(got, want) {
		t.Errorf("ResetTo(3, 7): remote %v, local %v", got, want)
	}
	frameOK(-1)
}

// TestStateResumesBitIdentically checks checkpointing through property "state": a second
// client restored from the first's MarshalBinary steps exactly as the first one goes on.
func TestStateResumesBitIdentically(t *testing.T) {
	srv := envrpctest.Start(t)
	cfg := envrpc.Config{Address: srv.Addr, Settings: world(testenv.KindAcrobot)}
	a := dial(t, cfg)
	rng := rand.New(rand.NewPCG(3, 3))
	a.Reset(rng)
	act := func(i int) []float64 { return []float64{float64(i % 3)} }
	for i := range 37 {
		a.Step(act(i))
	}
	b := restored(t, a, cfg)
	for i := range 60 {
		ra, rb := a.Step(act(i)), b.Step(act(i))
		if !slices.Equal(ra.Obs, rb.Obs) || ra.Reward != rb.Reward || ra.Terminated != rb.Terminated || ra.Truncated != rb.Truncated {
			t.Fatalf("step %d after restore: %+v, want %+v", i, rb, ra)
		}
	}
}

// TestReconnectAfterServerRestart stops the server mid-episode and starts it again on the
// same address: the client's step ends the episode truncated with the last observation, a
// warning says so, and the next reset plays on the new server.
func TestReconnectAfterServerRestart(t *testing.T) {
	srv := envrpctest.Start(t)
	var mu sync.Mutex
	var warnings []string
	e := dial(t, envrpc.Config{Address: srv.Addr, Settings: world(testenv.KindCartPole), Retry: 20 * time.Second,
		Warn: func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }})
	obs := e.Reset(rand.New(rand.NewPCG(1, 1)))
	res := e.Step([]float64{0})
	obs = res.Obs
	srv.Stop()
	restarted := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		srv.Restart(t)
		close(restarted)
	}()
	res = e.Step([]float64{1})
	<-restarted
	if !res.Truncated || res.Terminated || !slices.Equal(res.Obs, obs) || res.Reward != 0 {
		t.Fatalf("step across the restart = %+v, want truncated with the last observation %v", res, obs)
	}
	mu.Lock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "reconnected") {
		t.Errorf("warnings = %q, want one about the reconnection", warnings)
	}
	mu.Unlock()
	e.Reset(rand.New(rand.NewPCG(1, 2)))
	if r := e.Step([]float64{0}); r.Truncated || r.Terminated || len(r.Obs) != 4 {
		t.Errorf("first step after the reconnection = %+v", r)
	}
}

// TestDialErrors checks the errors a client meets before any step: they name the problem
// and come at once (only an unreachable server is retried).
func TestDialErrors(t *testing.T) {
	srv := envrpctest.Start(t)
	for _, tc := range []struct {
		name string
		cfg  envrpc.Config
		want string
	}{
		{"unknown world", envrpc.Config{Settings: world("libero")}, `unknown world "libero"`},
		{"bad setting", envrpc.Config{Settings: envrpc.Settings{envrpc.SettingWorld: envrpc.String("cartpole"), "suite": envrpc.String("goal")}}, `unknown setting "suite"`},
		{"bad type", envrpc.Config{Settings: envrpc.Settings{envrpc.SettingWorld: envrpc.String("tabletop"), envrpc.SettingImageSize: envrpc.String("big")}}, `setting "image_size": a string tensor is not numerical`},
		{"bad suite", envrpc.Config{Settings: envrpc.TabletopSettings(tabletop.Config{Suite: "kitchen"}, false)}, `unknown suite "kitchen"`},
		{"frames without pixels", envrpc.Config{Settings: world("cartpole"), Frames: true}, `no observation "frame"`},
		{"unreachable", envrpc.Config{Address: "127.0.0.1:1", Settings: world("cartpole"), Retry: 200 * time.Millisecond}, "unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Address == "" {
				tc.cfg.Address = srv.Addr
			}
			t0 := time.Now()
			_, err := envrpc.Dial(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dial error = %v, want one containing %q", err, tc.want)
			}
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("Dial took %s to fail", d)
			}
		})
	}
}

// TestConform checks that a world that does not match the spec's env is refused by name.
func TestConform(t *testing.T) {
	srv := envrpctest.Start(t)
	e := dial(t, envrpc.Config{Address: srv.Addr, Settings: world(testenv.KindCartPole)})
	if err := e.Conform(4, engine.ActionSpace{N: 2}, 0); err != nil {
		t.Errorf("cartpole against its own shape: %v", err)
	}
	if err := e.Conform(6, engine.ActionSpace{N: 3}, 0); err == nil || !strings.Contains(err.Error(), `observation "state" has 4 values, the spec's env has 6`) {
		t.Errorf("obs mismatch error = %v", err)
	}
	if err := e.Conform(4, engine.ActionSpace{Low: []float64{-1}, High: []float64{1}}, 0); err == nil || !strings.Contains(err.Error(), `action "action" has 2 discrete choices`) {
		t.Errorf("action mismatch error = %v", err)
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:7000", false, true},
		{"localhost:7000", false, true},
		{"[::1]:7000", false, true},
		{"0.0.0.0:7000", false, false},
		{":7000", false, false},
		{"10.1.2.3:7000", false, false},
		{"10.1.2.3:7000", true, true},
		{"nonsense", true, false},
	} {
		if err := envrpc.CheckListen(tc.addr, false, tc.insecure); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %v) = %v, want ok %v", tc.addr, tc.insecure, err, tc.ok)
		}
	}
	if err := envrpc.CheckListen("10.1.2.3:7000", true, false); err != nil {
		t.Errorf("CheckListen with TLS on: %v, want a non-loopback address allowed", err)
	}
}
