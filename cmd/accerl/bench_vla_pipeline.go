package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// vlaPipelineWorkload is one measured setting of bench vla --pipeline.
type vlaPipelineWorkload struct {
	Name    string                       `json:"name"`
	Latency testenv.Latency              `json:"latency"`
	Result  *activities.ThroughputResult `json:"result"`
}

// vlaPipelineResult is the JSON of bench vla --pipeline.
type vlaPipelineResult struct {
	Workloads []vlaPipelineWorkload `json:"workloads"`
	WallS     float64               `json:"wall_s"`
}

// vlaPipelineConfig is the micro-VLA of tabletop-spatial-vla (tabletopVLABase: plain PPO,
// which the world-model arms share) from random weights (no BC: the
// pipeline's speed does not depend on what the weights know), with updates of 512 steps and
// one epoch so that phases of seconds hold several of them.
func vlaPipelineConfig() specs.Config {
	c := tabletopVLABase("spatial")
	c.Pretrain = specs.Pretrain{}
	c.Algorithm.BatchSteps, c.Algorithm.Epochs, c.Algorithm.Minibatches = 512, 1, 4
	c.Pipeline.Inference.MaxBatch, c.Pipeline.Inference.MaxWait = 16, 0
	return c
}

// benchVLAPipeline measures the VLA through engine.BenchThroughput in two workloads: an
// env-bound one, each simulator step taking a lognormal wall time (median 20 ms: a physics
// simulator with rendering; an env step is execute_steps of them, 2 with the check's chunks 8/2), and an
// inference-bound one without latency, where the network's own compute sets the pace.
func benchVLAPipeline(ctx context.Context, phase time.Duration, jsonOut string, stdout io.Writer) error {
	c := vlaPipelineConfig()
	start := time.Now()
	var res vlaPipelineResult
	for _, w := range []struct {
		name string
		lat  testenv.Latency
	}{
		{"env-bound", testenv.Latency{Kind: testenv.LatencyLognormal, Median: 20 * time.Millisecond, Sigma: 0.5}},
		{"inference-bound", testenv.Latency{Kind: testenv.LatencyNone}},
	} {
		desc := fmt.Sprintf("tabletop spatial, pixels 32×32 × 2 cameras, micro-VLA dim %d × %d layers, chunks %d/%d (executed only: %v), %d envs, step latency %s median %v",
			c.Policy.VLA.Dim, c.Policy.VLA.Layers, c.Policy.ActionChunk, c.Policy.ExecuteSteps, c.Policy.VLA.ExecutedOnly,
			c.Pipeline.Workers*c.Pipeline.EnvsPerWorker, w.lat.Kind, w.lat.Median)
		cfg := activities.PipelineBench(c, w.lat, 1, desc)
		cfg.Rounds, cfg.PhaseDuration = 1, jsondur.Duration(phase)
		fmt.Fprintf(stdout, "%s: %s\n", w.name, desc)
		cfg.OnPhase = func(p activities.ThroughputPhase) {
			fmt.Fprintf(stdout, "  %-5s %8.1f env steps/s, mean inference batch %.1f\n", p.Mode, p.Stats.StepsPerS, p.Stats.MeanBatch)
		}
		r, err := activities.BenchThroughput(ctx, cfg)
		if err != nil {
			return fmt.Errorf("bench vla --pipeline: %w", err)
		}
		res.Workloads = append(res.Workloads, vlaPipelineWorkload{Name: w.name, Latency: w.lat, Result: r})
	}
	res.WallS = time.Since(start).Seconds()
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tmode\tenv steps/s\tmean batch\tp50 wait ms\tp99 wait ms\ttrainer busy\tasync/sync\t")
	for _, w := range res.Workloads {
		for _, m := range []struct {
			name string
			b    activities.ThroughputMode
		}{{"sync", w.Result.Sync}, {"async", w.Result.Async}} {
			ratio := ""
			if m.name == "async" {
				ratio = fmt.Sprintf("%.2f×", w.Result.Ratio)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.2f\t%.2f\t%.2f\t%.0f%%\t%s\t\n", w.Name, m.name, m.b.StepsPerS, m.b.MeanBatch, m.b.P50WaitMs, m.b.P99WaitMs, 100*m.b.TrainerBusy, ratio)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(an env step is one executed chunk of %d simulator steps; sync samples each request with its own RNG, the batch in one call with every row computed as in any other batch size (determinism), async a batch in one call with the service's RNG; measured in %.0f s)\n", c.Policy.ExecuteSteps, res.WallS)
	if jsonOut != "" {
		return writeJSONFile(jsonOut, res)
	}
	return nil
}
