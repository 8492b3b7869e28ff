package engine

import (
	"math"
	"slices"
	"testing"
)

// TestLoadPolicy: a warm start replaces the fresh engine's parameters for the trainer and
// for acting (two engines loaded with the same parameters train identically, whatever
// their own random initialisation), and is refused when it cannot apply.
func TestLoadPolicy(t *testing.T) {
	cfg := smallConfig(ModeSync)
	donor := mustNew(t, cfg, nil)
	params := append([]float64(nil), donor.tr.model().Params()...)
	for i := range params {
		params[i] *= 0.5
	}
	run := func(seedInit uint64) string {
		c := cfg
		e := mustNew(t, c, nil)
		// A different initialisation stream must not matter after LoadPolicy.
		e.tr.model().Params()[0] += float64(seedInit)
		if err := e.LoadPolicy(params); err != nil {
			t.Fatal(err)
		}
		if pub := e.svc.published(); len(pub) != 1 || !slices.Equal(pub[0].params, params) {
			t.Fatal("the inference service does not act with the loaded parameters")
		}
		mustRun(t, e, 2, nil)
		return e.ParamsSHA256()
	}
	if a, b := run(0), run(1); a != b {
		t.Errorf("engines loaded with the same parameters trained to %s and %s", a[:12], b[:12])
	}

	e := mustNew(t, cfg, nil)
	if err := e.LoadPolicy(params[1:]); err == nil {
		t.Error("LoadPolicy accepted parameters of the wrong length")
	}
	bad := append([]float64(nil), params...)
	bad[3] = math.NaN()
	if err := e.LoadPolicy(bad); err == nil {
		t.Error("LoadPolicy accepted a NaN parameter")
	}
	mustRun(t, e, 1, nil)
	if err := e.LoadPolicy(params); err == nil {
		t.Error("LoadPolicy accepted parameters after training")
	}
}
