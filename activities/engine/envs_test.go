package engine

import (
	"time"

	"github.com/accerl/accerl/testenv"
)

// testEnvs makes cfg.Env's testenv simulators with cfg.MaxEpisodeSteps, the rollout ones
// with the simulated latency lat, as the composition root (activities.EnvFactory) does.
func testEnvs(cfg Config, lat testenv.Latency) EnvFactory {
	n := cfg.NumEnvs()
	return func(i int) (Env, error) {
		raw, err := testenv.Make(cfg.Env, testenv.Options{MaxEpisodeSteps: cfg.MaxEpisodeSteps})
		if err != nil {
			return nil, err
		}
		if i >= n {
			return testSim{raw}, nil
		}
		s := lat.ForWorker(i/cfg.EnvsPerWorker, cfg.Workers, cfg.Seed^(0x9e3779b97f4a7c15*uint64(i+1)))
		return testSim{testenv.WithLatency(raw, s, time.Sleep)}, nil
	}
}

// testSim adapts a testenv simulator to Env.
type testSim struct{ testenv.Env }

func (e testSim) ActionSpace() ActionSpace {
	s := e.Env.ActionSpace()
	return ActionSpace{N: s.N, Low: s.Low, High: s.High}
}

func (e testSim) Step(a []float64) StepResult {
	obs, r, term, trunc := e.Env.Step(a)
	res := StepResult{Obs: obs, Reward: r, Terminated: term, Truncated: trunc}
	if term || trunc {
		res.Success, res.HasSuccess = e.Env.Succeeded(term, trunc)
	}
	return res
}

// constLatency is a constant simulated step latency of d.
func constLatency(d time.Duration) testenv.Latency {
	return testenv.Latency{Kind: testenv.LatencyConstant, Median: d}
}
