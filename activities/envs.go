package activities

import (
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
	"github.com/accerl/accerl/testenv/tabletop"
)

// This file is the composition root of environments: the engine defines the environment
// interface it steps (engine.Env) and takes a factory; testenv's simulators implement the
// rest, and here they meet.

// EnvFactory returns the factory of an arm's environments: testenv's simulator of the spec's
// env kind, its rollout environments wrapped in the spec's simulated step latency (worker w's
// environments are slow when w is among the first slow_fraction of workers; every environment
// draws its delays from its own stream under seed), and the evaluation environment (index
// workers × envs_per_worker) without latency. A tabletop arm's environments are seen through
// its features and action chunks, and it evaluates from the suite's fixed initial states
// (envs_tabletop.go). An arm with env "remote" steps its world on the spec's dm_env_rpc
// servers instead, with the same wrappers and no simulated latency (envs_remote.go); the
// client logs its warnings (a lost server).
func EnvFactory(c specs.Config, seed uint64) engine.EnvFactory {
	return envFactory(c, seed, nil)
}

// envFactory is EnvFactory with the remote environments' warnings sent to warn (nil: the
// standard logger).
func envFactory(c specs.Config, seed uint64, warn func(string)) engine.EnvFactory {
	return policyEnvFactory(c.Env, c.Policy, specLatency(c.Env.Latency), c.Pipeline.Workers, c.Pipeline.EnvsPerWorker, seed, warn, nil)
}

// LatencyEnvFactory is EnvFactory from its parts: env picks the simulator (MakeSim), lat the
// simulated latency of the workers × perWorker rollout environments; the policy acts one
// action at a time.
func LatencyEnvFactory(env specs.Env, lat testenv.Latency, workers, perWorker int, seed uint64) engine.EnvFactory {
	return policyEnvFactory(env, specs.Policy{}, lat, workers, perWorker, seed, nil, nil)
}

func policyEnvFactory(env specs.Env, pol specs.Policy, lat testenv.Latency, workers, perWorker int, seed uint64, warn func(string), meter *envrpc.Meter) engine.EnvFactory {
	n := workers * perWorker
	k, execute := pol.RLChunk() // executed_only: the engine acts with the executed actions alone
	return func(i int) (engine.Env, error) {
		var out engine.Env
		var cams frameSource
		if env.Remote != nil {
			r, err := dialRemote(env, i, warn, meter)
			if err != nil {
				return nil, err
			}
			out = r
			if f := r.Frames(); f != nil {
				cams = remoteFrames{FrameEnv: f, r: r}
			}
			if i >= n && env.Kind == specs.EnvTabletop {
				out = &fixedInitEnv{Env: r, to: r, tasks: env.Tasks}
			}
		} else {
			raw, err := MakeSim(env)
			if err != nil {
				return nil, err
			}
			out = localEnv(raw, env, lat, i, n, workers, perWorker, seed)
			if tt, ok := raw.(*tabletop.Env); ok {
				cams = tabletopFrames{tt}
			}
		}
		if env.Kind == specs.EnvTabletop {
			out = &featureEnv{Env: out}
		}
		if k > 1 {
			out = chunkEnv{Env: out, k: k, execute: execute}
		}
		if env.Kind == specs.EnvTabletop && env.Pixels {
			out = framedEnv{Env: out, cams: cams}
		}
		return out, nil
	}
}

// localEnv is environment i of n rollout environments (and the evaluation one after them)
// on the in-process simulator raw.
func localEnv(raw testenv.Env, env specs.Env, lat testenv.Latency, i, n, workers, perWorker int, seed uint64) engine.Env {
	switch {
	case i >= n && env.Kind == specs.EnvTabletop:
		return &fixedInitEnv{Env: simEnv{raw}, to: raw.(*tabletop.Env), tasks: env.Tasks}
	case i >= n:
		return simEnv{raw}
	}
	// Environments of one worker step concurrently and a sampler is not safe for
	// concurrent use, so each has its own, with its worker's slowness.
	sampler := lat.ForWorker(i/perWorker, workers, seed^(0x9e3779b97f4a7c15*uint64(i+1)))
	return simEnv{testenv.WithLatency(raw, sampler, time.Sleep)}
}

// MakeSim builds one in-process simulator of the spec's env block: a classic-control task
// (testenv.Make) or a tabletop suite (tabletop.New; the state-vector observation, images
// rendered only for pixel policies). For env "remote" it builds the world's in-process
// twin, whose shapes the servers' must match.
func MakeSim(e specs.Env) (testenv.Env, error) {
	if e.Kind == specs.EnvTabletop {
		return tabletop.New(tabletopConfig(e))
	}
	return testenv.Make(e.Kind, testenv.Options{MaxEpisodeSteps: e.MaxEpisodeSteps})
}

func tabletopConfig(e specs.Env) tabletop.Config {
	return tabletop.Config{Suite: e.Suite, Tasks: e.Tasks, ImageSize: e.ImageSize, Cameras: e.Cameras, MaxEpisodeSteps: e.MaxEpisodeSteps}
}

// specLatency is the spec's latency block as testenv's latency model.
func specLatency(l specs.Latency) testenv.Latency {
	return testenv.Latency{Kind: l.Kind, Median: l.Median.Std(), Sigma: l.Sigma, SlowFraction: l.SlowFraction, SlowFactor: l.SlowFactor}
}

// simEnv adapts a testenv simulator to engine.Env: the same methods, with the engine's action
// space type, and the episode's success (testenv.Env.Succeeded) in the step that ends it.
type simEnv struct{ testenv.Env }

func (e simEnv) ActionSpace() engine.ActionSpace {
	s := e.Env.ActionSpace()
	return engine.ActionSpace{N: s.N, Low: s.Low, High: s.High}
}

func (e simEnv) Step(action []float64) engine.StepResult {
	obs, r, term, trunc := e.Env.Step(action)
	res := engine.StepResult{Obs: obs, Reward: r, Terminated: term, Truncated: trunc}
	if term || trunc {
		res.Success, res.HasSuccess = e.Env.Succeeded(term, trunc)
	}
	return res
}

// OfflineSims returns the simulator factory CollectOffline records an arm's offline dataset
// with: the spec's env, without latency (collection is not a throughput measurement); a
// remote arm's first server.
func OfflineSims(e specs.Env) func() (worldmodel.Sim, error) {
	return func() (worldmodel.Sim, error) {
		if e.Remote != nil {
			r, err := dialRemote(e, 0, nil, nil)
			if err != nil {
				return nil, err
			}
			return remoteSim{r}, nil
		}
		env, err := MakeSim(e)
		if err != nil {
			return nil, err
		}
		return offlineSim{env}, nil
	}
}

// offlineSim adapts a testenv simulator to worldmodel.Sim.
type offlineSim struct{ testenv.Env }

func (s offlineSim) Actions() (n int, low, high []float64) {
	a := s.Env.ActionSpace()
	return a.N, a.Low, a.High
}

func (s offlineSim) HasSuccess() bool {
	_, ok := s.Env.Succeeded(false, true)
	return ok
}

func (s offlineSim) Step(action []float64) (obs []float64, reward float64, terminated, truncated, success bool) {
	obs, reward, terminated, truncated = s.Env.Step(action)
	if terminated || truncated {
		success, _ = s.Env.Succeeded(terminated, truncated)
	}
	return obs, reward, terminated, truncated, success
}

// NewEngine builds the engine of an arm with the resolved config c and seed (totalUpdates is
// the run's planned updates, for learning-rate annealing) on the arm's environments
// (EnvFactory), continuing from snap when it is not nil. TrainSegment builds its engine this
// way.
func NewEngine(c specs.Config, seed uint64, totalUpdates int, snap *engine.Snapshot) (*engine.Engine, error) {
	return engine.New(EngineConfig(c, seed, totalUpdates), snap, EnvFactory(c, seed))
}
