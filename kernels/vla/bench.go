package vla

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// BenchResult is what [Bench] measures for one configuration, with the
// slim and the full LM head on the same parameters.
type BenchResult struct {
	Config Config
	// Params is the number of parameters (the full V×Dim LM head and token
	// embedding included) and ParamBytes their float32 storage.
	Params, ParamBytes int
	// Trainable counts the parameters with gradients and Adam state: all of
	// them with the full head; with the slim head all but the (V−Bins)·Dim
	// non-action LM-head rows (the token-embedding table is trained in
	// full either way).
	TrainableSlim, TrainableFull int
	// TrainBytes is float32 parameters + gradients + Adam's two moments:
	// 4·(Params + 3·Trainable). Activations and optimizer scalars are not
	// counted.
	TrainBytesSlim, TrainBytesFull int
	// Act is the latency of one Act call (prefix pass + KV-cached decode
	// of ActionDims tokens, sampling) per batch size.
	Act []ActLatency
	// TrainBatch is the batch of the training measurement and TrainSlim,
	// TrainFull its throughput in samples per second: Forward, BC
	// cross-entropy, Backward, ZeroGrads and one Adam step.
	TrainBatch           int
	TrainSlim, TrainFull float64
}

// ActLatency is the mean time of one Act call on a batch.
type ActLatency struct {
	Batch      int
	Slim, Full time.Duration
}

// BenchTrainBatch is the batch size Bench trains with.
const BenchTrainBatch = 16

// Bench builds a model of cfg (seeded, random observations and
// instructions) and measures Act latency for each batch size and training
// throughput at BenchTrainBatch, with the slim and the full head. Each
// measurement runs once to warm up, then repeats until a second has passed
// (at least once) and reports the mean. At the default size on a 2-core
// CPU this takes about 15 s.
func Bench(cfg Config, batchSizes []int) (BenchResult, error) {
	return bench(cfg, batchSizes, time.Second)
}

// bench is Bench with each measurement repeated for at least minTime.
func bench(cfg Config, batchSizes []int, minTime time.Duration) (BenchResult, error) {
	if err := cfg.Validate(); err != nil {
		return BenchResult{}, fmt.Errorf("bench: %w", err)
	}
	slimCfg, fullCfg := cfg, cfg
	slimCfg.SlimHead, fullCfg.SlimHead = true, false
	r := BenchResult{Config: cfg, Params: cfg.ParamCount(), ParamBytes: cfg.ParamBytes(),
		TrainableSlim: slimCfg.TrainableCount(), TrainableFull: fullCfg.TrainableCount(),
		TrainBytesSlim: slimCfg.TrainBytes(), TrainBytesFull: fullCfg.TrainBytes(), TrainBatch: BenchTrainBatch}
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(slimCfg, rng)
	maxB := BenchTrainBatch
	for _, b := range batchSizes {
		maxB = max(maxB, b)
	}
	obs := benchObs(cfg, maxB, rng)
	for _, b := range batchSizes {
		lat := ActLatency{Batch: b}
		for _, slim := range []bool{true, false} {
			m.SetSlimHead(slim)
			d := timeIt(minTime, func() { m.Act(obs[:b], rng, false) })
			if slim {
				lat.Slim = d
			} else {
				lat.Full = d
			}
		}
		r.Act = append(r.Act, lat)
	}
	tokens := make([][]int, BenchTrainBatch)
	for i := range tokens {
		tokens[i] = make([]int, cfg.ActionDims)
		for k := range tokens[i] {
			tokens[i][k] = rng.IntN(cfg.Bins)
		}
	}
	for _, slim := range []bool{true, false} {
		m.SetSlimHead(slim)
		opt := NewAdam[float32](len(m.Grads()), 1e-4)
		var tape *Tape[float32]
		d := timeIt(minTime, func() {
			tape = m.ForwardInto(tape, obs[:BenchTrainBatch], tokens)
			_, _, dLogp := CrossEntropy(tape)
			m.ZeroGrads()
			m.Backward(tape, dLogp, nil, nil)
			opt.Step(m.Params(), m.Grads())
		})
		sps := float64(BenchTrainBatch) / d.Seconds()
		if slim {
			r.TrainSlim = sps
		} else {
			r.TrainFull = sps
		}
	}
	return r, nil
}

func timeIt(minTime time.Duration, f func()) time.Duration {
	f()
	start := time.Now()
	n := 0
	for n == 0 || time.Since(start) < minTime {
		f()
		n++
	}
	return time.Since(start) / time.Duration(n)
}

// benchObs returns n random observations: noise images, instructions of
// MaxInstr/2 … MaxInstr words, random proprio.
func benchObs(c Config, n int, rng *rand.Rand) []Obs {
	obs := make([]Obs, n)
	for i := range obs {
		o := Obs{Proprio: make([]float32, c.ProprioDim)}
		for range c.Cameras {
			im := make([]uint8, c.ImageSize*c.ImageSize*3)
			for j := range im {
				im[j] = uint8(rng.IntN(256))
			}
			o.Images = append(o.Images, im)
		}
		for range c.MaxInstr/2 + rng.IntN(c.MaxInstr-c.MaxInstr/2+1) {
			o.Instr = append(o.Instr, rng.IntN(c.WordVocab))
		}
		for j := range o.Proprio {
			o.Proprio[j] = float32(rng.NormFloat64())
		}
		obs[i] = o
	}
	return obs
}

// String renders the result as a small plain-text table.
func (r BenchResult) String() string {
	var b strings.Builder
	c := r.Config
	mib := func(n int) float64 { return float64(n) / (1 << 20) }
	fmt.Fprintf(&b, "micro-VLA dim %d, %d layers × %d heads, %d camera(s) %d×%d in %d×%d patches, prefix %d tokens, V = %d\n",
		c.Dim, c.Layers, c.Heads, c.Cameras, c.ImageSize, c.ImageSize, c.Patch, c.Patch, c.PrefixLen(), c.VocabSize)
	fmt.Fprintf(&b, "parameters %d (%.1f MiB float32)\n", r.Params, mib(r.ParamBytes))
	fmt.Fprintf(&b, "trainable  slim %d, full %d\n", r.TrainableSlim, r.TrainableFull)
	fmt.Fprintf(&b, "params+grads+Adam  slim %.1f MiB, full %.1f MiB\n", mib(r.TrainBytesSlim), mib(r.TrainBytesFull))
	fmt.Fprintf(&b, "act latency (batch: slim / full)\n")
	for _, a := range r.Act {
		fmt.Fprintf(&b, "  %4d: %v / %v\n", a.Batch, a.Slim.Round(time.Microsecond*10), a.Full.Round(time.Microsecond*10))
	}
	fmt.Fprintf(&b, "train (batch %d) samples/s  slim %.1f, full %.1f\n", r.TrainBatch, r.TrainSlim, r.TrainFull)
	return b.String()
}
