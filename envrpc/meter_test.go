package envrpc_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/testenv/tabletop"
)

// TestGzipFramesMatchAndShrink steps a tabletop world with pixels through two clients, one
// plain and one with gzip, with the same actions: the gzip one must see exactly the frames of
// the in-process simulator, and its Meter fewer bytes per step.
func TestGzipFramesMatchAndShrink(t *testing.T) {
	srv := envrpctest.Start(t)
	cfg := tabletop.Config{Suite: tabletop.SuiteSpatial, Tasks: []int{0}, ImageSize: 32, MaxEpisodeSteps: 40}
	var plainM, gzipM envrpc.Meter
	plain := dial(t, envrpc.Config{Address: srv.Addr, Settings: envrpc.TabletopSettings(cfg, true), Frames: true, Meter: &plainM})
	gz := dial(t, envrpc.Config{Address: srv.Addr, Settings: envrpc.TabletopSettings(cfg, true), Frames: true, Meter: &gzipM,
		Compression: envrpc.CompressionGzip})
	local, err := tabletop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plainM.Reset() // count steps only, not the handshake
	gzipM.Reset()
	fe := gz.Frames()
	lockstep(t, fe, local, 100, func(step int) {
		t.Helper()
		var want []byte
		for _, im := range local.Images() {
			want = append(want, im...)
		}
		if got := fe.Frame(nil); !bytes.Equal(got, want) {
			t.Fatalf("step %d: gzip frames differ from the simulator's", step)
		}
	})
	pf := plain.Frames()
	action := make([]float64, pf.ActionSpace().N)
	rng := rand.New(rand.NewPCG(7, 1))
	pf.Reset(rng)
	for range 100 {
		if r := pf.Step(action); r.Terminated || r.Truncated {
			pf.Reset(rng)
		}
	}
	p, g := plainM.Stats(), gzipM.Stats()
	t.Logf("bytes per step: plain %.0f, gzip %.0f (%.2f×); step round trip p50 %.3f / %.3f ms",
		p.BytesPerStep(), g.BytesPerStep(), p.BytesPerStep()/g.BytesPerStep(), p.P50StepMs, g.P50StepMs)
	// The two 32×32 RGB frames alone are 6,144 bytes a step uncompressed.
	if p.BytesPerStep() < 6144 {
		t.Errorf("plain: %.0f bytes per step, less than its frames", p.BytesPerStep())
	}
	// Rendered scenes are flat-shaded: gzip at level 1 must at least halve them (it
	// measured 5.3× at 32×32 here; halving leaves room for other scenes and zlib versions).
	if g.BytesPerStep() > p.BytesPerStep()/2 {
		t.Errorf("gzip: %.0f bytes per step, plain %.0f: want under half", g.BytesPerStep(), p.BytesPerStep())
	}
	if g.Steps != 100 || p.Steps != 100 || g.P99StepMs <= 0 || g.P99StepMs > float64(time.Minute.Milliseconds()) {
		t.Errorf("meter steps %d / %d, p99 %.3f ms", p.Steps, g.Steps, g.P99StepMs)
	}
}

// TestMeterQuantiles checks the round-trip quantiles against a hand-made distribution.
func TestMeterQuantiles(t *testing.T) {
	var m envrpc.Meter
	for i := 1; i <= 100; i++ {
		envrpc.MeterStep(&m, time.Duration(i)*time.Millisecond)
	}
	s := m.Stats()
	// Sorted samples 1..100 ms; index int(0.5*99)=49 → 50 ms, int(0.99*99)=98 → 99 ms.
	if s.Steps != 100 || s.P50StepMs != 50 || s.P99StepMs != 99 {
		t.Errorf("stats %+v, want 100 steps, p50 50 ms, p99 99 ms", s)
	}
}
