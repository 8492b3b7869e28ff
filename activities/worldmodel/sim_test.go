package worldmodel

import (
	"github.com/accerl/accerl/testenv"
)

// testSims records cfg's env kind with testenv's simulator, as the activities package's
// composition root does (activities.OfflineSims).
func testSims(cfg CollectConfig) func() (Sim, error) {
	return func() (Sim, error) {
		env, err := testenv.Make(cfg.Env, testenv.Options{MaxEpisodeSteps: cfg.MaxEpisodeSteps})
		if err != nil {
			return nil, err
		}
		return testSim{env}, nil
	}
}

type testSim struct{ testenv.Env }

func (s testSim) Actions() (int, []float64, []float64) {
	a := s.Env.ActionSpace()
	return a.N, a.Low, a.High
}

func (s testSim) HasSuccess() bool { _, ok := s.Env.Succeeded(false, true); return ok }

func (s testSim) Step(a []float64) ([]float64, float64, bool, bool, bool) {
	obs, r, term, trunc := s.Env.Step(a)
	ok, _ := s.Env.Succeeded(term, trunc)
	return obs, r, term, trunc, ok && (term || trunc)
}
