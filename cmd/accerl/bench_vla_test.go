package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels/vla"
)

// vlaResult derives the slim-vs-full ratios from vla.Bench's result (the measurement itself
// takes about a minute; kernels/vla tests it).
func TestVLAResultRatios(t *testing.T) {
	cfg := vla.DefaultConfig()
	r := vla.BenchResult{Config: cfg, Params: 100, ParamBytes: 400, TrainableSlim: 40, TrainableFull: 100,
		TrainBytesSlim: 4 * (100 + 3*40), TrainBytesFull: 4 * (100 + 3*100),
		Act:        []vla.ActLatency{{Batch: 1, Slim: time.Millisecond, Full: 2 * time.Millisecond}, {Batch: 64, Slim: 10 * time.Millisecond, Full: 35 * time.Millisecond}},
		TrainBatch: 16, TrainSlim: 30, TrainFull: 20}
	res := vlaResult("default", r, 3*time.Second)
	// Exact binary fractions and ratios of small integers: compare within rounding only.
	near := func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
	if !near(res.SlimMemoryRatio, 880.0/1600) || !near(res.SlimActSpeedup, 3.5) || !near(res.SlimTrainSpeedup, 1.5) {
		t.Errorf("ratios memory %g, act@64 %g, train %g; want 0.55, 3.5, 1.5", res.SlimMemoryRatio, res.SlimActSpeedup, res.SlimTrainSpeedup)
	}
	if len(res.Act) != 2 || !near(res.Act[0].FullMs, 2) || !near(res.Act[0].SlimSpeedup, 2) || res.Config.PrefixLen != cfg.PrefixLen() {
		t.Errorf("act %+v, config %+v", res.Act, res.Config)
	}
	var b bytes.Buffer
	printVLA(&b, res)
	for _, want := range []string{"parameters 100", "params+grads+Adam MiB", "act batch 64 ms", "3.50× full/slim", "train batch 16 samples/s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
