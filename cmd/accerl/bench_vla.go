package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/kernels/vla"
)

// vlaPresets are the micro-VLA sizes bench vla measures, by name.
var vlaPresets = map[string]func() vla.Config{
	"default": vla.DefaultConfig,
	"small":   vla.SmallConfig,
}

// vlaBenchResult is vla.BenchResult in the JSON shape of the other benchmarks, with the ratios
// that compare the slim and the full LM head.
type vlaBenchResult struct {
	Preset string        `json:"preset"`
	Config vlaConfigJSON `json:"config"`
	// Params counts every parameter (the full V×Dim LM head included), ParamBytes their float32
	// storage; Trainable* count those with gradients and Adam state.
	Params        int `json:"params"`
	ParamBytes    int `json:"param_bytes"`
	TrainableSlim int `json:"trainable_slim"`
	TrainableFull int `json:"trainable_full"`
	// TrainBytes* are float32 parameters + gradients + Adam's two moments, activations not
	// counted; SlimMemoryRatio is slim over full.
	TrainBytesSlim  int          `json:"train_bytes_slim"`
	TrainBytesFull  int          `json:"train_bytes_full"`
	SlimMemoryRatio float64      `json:"slim_memory_ratio"`
	Act             []vlaActJSON `json:"act"`
	// SlimActSpeedup is full over slim Act latency at batch 64 (0 when batch 64 was not
	// measured).
	SlimActSpeedup float64 `json:"slim_act_speedup,omitempty"`
	// Train* are samples per second of one BC training step (forward, cross-entropy, backward,
	// Adam) at TrainBatch.
	TrainBatch       int     `json:"train_batch"`
	TrainSlim        float64 `json:"train_samples_per_s_slim"`
	TrainFull        float64 `json:"train_samples_per_s_full"`
	SlimTrainSpeedup float64 `json:"slim_train_speedup"`
	WallS            float64 `json:"wall_s"`
}

// vlaConfigJSON is the size of the measured model.
type vlaConfigJSON struct {
	ImageSize  int `json:"image_size"`
	Patch      int `json:"patch"`
	Cameras    int `json:"cameras"`
	Dim        int `json:"dim"`
	Layers     int `json:"layers"`
	Heads      int `json:"heads"`
	MLPRatio   int `json:"mlp_ratio"`
	MaxInstr   int `json:"max_instr"`
	WordVocab  int `json:"word_vocab"`
	VocabSize  int `json:"vocab_size"`
	ActionDims int `json:"action_dims"`
	Bins       int `json:"bins"`
	ProprioDim int `json:"proprio_dim"`
	PrefixLen  int `json:"prefix_len"`
}

// vlaConfigToJSON is c's sizes in the JSON shape.
func vlaConfigToJSON(c vla.Config) vlaConfigJSON {
	return vlaConfigJSON{ImageSize: c.ImageSize, Patch: c.Patch, Cameras: c.Cameras, Dim: c.Dim, Layers: c.Layers, Heads: c.Heads,
		MLPRatio: c.MLPRatio, MaxInstr: c.MaxInstr, WordVocab: c.WordVocab, VocabSize: c.VocabSize, ActionDims: c.ActionDims,
		Bins: c.Bins, ProprioDim: c.ProprioDim, PrefixLen: c.PrefixLen()}
}

// vlaActJSON is the mean latency of one Act call on a batch.
type vlaActJSON struct {
	Batch       int     `json:"batch"`
	SlimMs      float64 `json:"slim_ms"`
	FullMs      float64 `json:"full_ms"`
	SlimSpeedup float64 `json:"slim_speedup"` // full / slim
}

func benchVLA(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var presets []string
	for name := range vlaPresets {
		presets = append(presets, name)
	}
	slices.Sort(presets)
	fs := newFlagSet("bench vla", "bench vla [flags]   — size, training memory, Act latency and training throughput of the micro-VLA with the slim (action rows only) and the full LM head; about a minute at the default size on two cores", stderr)
	preset := fs.String("preset", "default", "model size: "+strings.Join(presets, ", ")+"; small is the RL-sized model (width 64, 2 layers, 32×32 cameras, V = 4096), about 10× cheaper per sample (see 'go doc ./kernels/vla SmallConfig')")
	batchList := fs.String("batch", "1,16,64,256", "comma-separated Act batch sizes; each adds a few seconds, and the slim speedup is reported at 64")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	pipeline := fs.Bool("pipeline", false, "instead, run the VLA policy of 'bench learn tabletop-spatial-vla' through the RL pipeline (rollout, batched inference, token-level PPO) in sync and async mode, env-bound (simulated step latency) and inference-bound (none); about 2 minutes")
	phase := fs.Duration("phase", 20*time.Second, "with --pipeline: wall time of each sync or async phase")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench vla: unexpected argument %q", fs.Arg(0))
	}
	if *pipeline {
		return benchVLAPipeline(ctx, *phase, *jsonOut, stdout)
	}
	mk, ok := vlaPresets[*preset]
	if !ok {
		return fmt.Errorf("bench vla: unknown preset %q (known: %s)", *preset, strings.Join(presets, ", "))
	}
	batches, err := parseBatches(*batchList)
	if err != nil {
		return fmt.Errorf("bench vla: %w", err)
	}
	cfg := mk()
	fmt.Fprintf(stdout, "Measuring the %s micro-VLA: Act at batch %s, training at batch %d...\n", *preset, *batchList, vla.BenchTrainBatch)
	start := time.Now()
	// vla.Bench takes no context; run it aside so that an interrupt still ends the command.
	type outcome struct {
		r   vla.BenchResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := vla.Bench(cfg, batches)
		done <- outcome{r, err}
	}()
	var o outcome
	select {
	case <-ctx.Done():
		return ctx.Err()
	case o = <-done:
	}
	if o.err != nil {
		return fmt.Errorf("bench vla: %w", o.err)
	}
	res := vlaResult(*preset, o.r, time.Since(start))
	printVLA(stdout, res)
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}

func vlaResult(preset string, r vla.BenchResult, wall time.Duration) vlaBenchResult {
	c := r.Config
	res := vlaBenchResult{Preset: preset,
		Config: vlaConfigToJSON(c),
		Params: r.Params, ParamBytes: r.ParamBytes, TrainableSlim: r.TrainableSlim, TrainableFull: r.TrainableFull,
		TrainBytesSlim: r.TrainBytesSlim, TrainBytesFull: r.TrainBytesFull,
		SlimMemoryRatio: float64(r.TrainBytesSlim) / float64(r.TrainBytesFull),
		TrainBatch:      r.TrainBatch, TrainSlim: r.TrainSlim, TrainFull: r.TrainFull, WallS: wall.Seconds()}
	if r.TrainFull > 0 {
		res.SlimTrainSpeedup = r.TrainSlim / r.TrainFull
	}
	for _, a := range r.Act {
		j := vlaActJSON{Batch: a.Batch, SlimMs: float64(a.Slim) / 1e6, FullMs: float64(a.Full) / 1e6}
		if a.Slim > 0 {
			j.SlimSpeedup = float64(a.Full) / float64(a.Slim)
		}
		if a.Batch == 64 {
			res.SlimActSpeedup = j.SlimSpeedup
		}
		res.Act = append(res.Act, j)
	}
	return res
}

func printVLA(w io.Writer, r vlaBenchResult) {
	c := r.Config
	mib := func(n int) float64 { return float64(n) / (1 << 20) }
	fmt.Fprintf(w, "micro-VLA %s: dim %d, %d layers × %d heads, %d camera(s) %d×%d in %d×%d patches, prefix %d tokens, V = %d\n",
		r.Preset, c.Dim, c.Layers, c.Heads, c.Cameras, c.ImageSize, c.ImageSize, c.Patch, c.Patch, c.PrefixLen, c.VocabSize)
	fmt.Fprintf(w, "parameters %d (%.1f MiB float32)\n\n", r.Params, mib(r.ParamBytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tslim head\tfull head\tratio\t")
	fmt.Fprintf(tw, "trainable parameters\t%d\t%d\t%.2f× slim/full\t\n", r.TrainableSlim, r.TrainableFull, float64(r.TrainableSlim)/float64(r.TrainableFull))
	fmt.Fprintf(tw, "params+grads+Adam MiB\t%.1f\t%.1f\t%.2f× slim/full\t\n", mib(r.TrainBytesSlim), mib(r.TrainBytesFull), r.SlimMemoryRatio)
	for _, a := range r.Act {
		fmt.Fprintf(tw, "act batch %d ms\t%.2f\t%.2f\t%.2f× full/slim\t\n", a.Batch, a.SlimMs, a.FullMs, a.SlimSpeedup)
	}
	fmt.Fprintf(tw, "train batch %d samples/s\t%.1f\t%.1f\t%.2f× slim/full\t\n", r.TrainBatch, r.TrainSlim, r.TrainFull, r.SlimTrainSpeedup)
	tw.Flush()
	fmt.Fprintf(w, "(memory excludes activations; act is one prefix pass plus %d KV-cached decode steps; measured in %.0f s)\n", c.ActionDims, r.WallS)
}

// parseBatches reads a comma-separated list of positive batch sizes.
func parseBatches(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("--batch: %q is not a positive batch size (want e.g. 1,16,64)", strings.TrimSpace(f))
		}
		out = append(out, b)
	}
	return out, nil
}
