package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
)

// framePolicy is echoPolicy that also reads frames: it records, per ActActions call, the
// frames the service handed over.
type framePolicy struct {
	echoPolicy
	frames [][]byte
	seen   [][]byte
}

func (p *framePolicy) SetFrames(f [][]byte) { p.frames = f }

func (p *framePolicy) ActActions(obs []float64, n int, rng *rand.Rand, a kernels.Actions, logp, values []float64) {
	if len(p.frames) != n {
		panic("framePolicy: frames do not match the batch")
	}
	for _, f := range p.frames {
		p.seen = append(p.seen, slices.Clone(f))
	}
	p.echoPolicy.ActActions(obs, n, rng, a, logp, values)
}

// A FrameReader policy gets each request's frame, row for row, in batched and in
// per-request mode.
func TestInferencePassesFrames(t *testing.T) {
	for _, perRequest := range []bool{false, true} {
		clock := newFakeClock()
		pol := &framePolicy{}
		s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 3, MaxWait: 5 * time.Millisecond, Clock: clock, PerRequestRNG: perRequest},
			pol, rand.New(rand.NewPCG(1, 2)))
		recs := startService(t, s)
		ctx := context.Background()
		reqs := []*Request{req(0), req(1), req(2)}
		for i, r := range reqs {
			r.Frame = []byte{byte(10 + i), byte(20 + i)}
			r.RNG = rand.New(rand.NewPCG(uint64(i), 0))
			if err := s.Submit(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		nextBatch(t, recs)
		for i, r := range reqs {
			if _, err := r.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pol.seen[i], r.Frame) || r.Tokens[0] != i {
				t.Errorf("per-request %v: row %d saw frame %v with action %d, want %v and %d", perRequest, i, pol.seen[i], r.Tokens[0], r.Frame, i)
			}
		}
	}
}

// framedSim gives CartPole frames: 4 bytes per observation, each value quantised, so a
// frame is a function of the observation it belongs to.
type framedSim struct {
	testSim
	last []float64
}

func frameOfObs(obs []float64) []byte {
	f := make([]byte, len(obs))
	for i, v := range obs {
		f[i] = byte(int(math.Round(v*40)) + 128)
	}
	return f
}

func (e *framedSim) FrameBytes() int { return e.ObsDim() }
func (e *framedSim) Frame(dst []byte) []byte {
	return append(dst, frameOfObs(e.last)...)
}
func (e *framedSim) Reset(rng *rand.Rand) []float64 {
	e.last = e.testSim.Reset(rng)
	return e.last
}
func (e *framedSim) Step(a []float64) StepResult {
	r := e.testSim.Step(a)
	e.last = r.Obs
	return r
}

func framedEnvs(cfg Config) EnvFactory {
	inner := testEnvs(cfg, testenv.Latency{})
	return func(i int) (Env, error) {
		e, err := inner(i)
		if err != nil {
			return nil, err
		}
		return &framedSim{testSim: e.(testSim)}, nil
	}
}

// With a FrameEnv every stored step carries the frame of its own observation (and the
// next and terminal observations theirs), a snapshot keeps them, and an engine restored
// from the snapshot trains exactly as the uninterrupted one (sync mode).
func TestReplayCarriesFrames(t *testing.T) {
	// Async mode: rollout runs ahead of the trainer, so replay still holds chunks when a
	// run returns.
	acfg := smallConfig(ModeAsync)
	ae, err := New(acfg, nil, framedEnvs(acfg))
	if err != nil {
		t.Fatal(err)
	}
	d := ae.obsDim
	check := func(what string, frames []byte, obs []float64) {
		t.Helper()
		if !slices.Equal(frames, frameOfObs(obs)) {
			t.Fatalf("%s: frames %v, want those of the observations %v", what, frames, frameOfObs(obs))
		}
	}
	chunks, terminal := 0, 0
	for round := 0; round < 50 && (chunks == 0 || terminal == 0); round++ {
		mustRun(t, ae, 1, nil)
		snap, err := ae.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range snap.Replay {
			for s := range c.Len() {
				check("step frame", c.Frames[s*d:(s+1)*d], c.Obs[s*d:(s+1)*d])
			}
			check("next frame", c.NextFrame, c.NextObs)
			check("terminal frame", c.TerminalFrame, c.TerminalObs)
			chunks++
			if len(c.TerminalFrame) > 0 {
				terminal++
			}
		}
		for _, es := range snap.Envs {
			check("env frame", es.Frame, es.Obs)
		}
	}
	if chunks == 0 || terminal == 0 {
		t.Fatalf("%d chunks, %d terminated: the check saw too little", chunks, terminal)
	}

	cfg := smallConfig(ModeSync)
	e, err := New(cfg, nil, framedEnvs(cfg))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, e, 2, nil)
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, es := range snap.Envs {
		check("env frame", es.Frame, es.Obs)
	}
	restored, err := New(cfg, snap, framedEnvs(cfg))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, restored, 2, nil)
	mustRun(t, e, 2, nil)
	if restored.ParamsSHA256() != e.ParamsSHA256() {
		t.Error("the engine restored with frames diverged from the uninterrupted one")
	}

	// A snapshot without frames does not restore into an engine with frames.
	plain := mustNew(t, cfg, nil)
	mustRun(t, plain, 1, nil)
	ps, err := plain.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, ps, framedEnvs(cfg)); err == nil {
		t.Error("a snapshot without frames restored into an engine whose environments have frames")
	}
}
