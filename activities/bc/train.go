package bc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Config is a BC run's model and optimisation settings.
type Config struct {
	Hidden     []int  // actor trunk widths (the critic, unused by BC, gets the same)
	Activation string // kernels.ActTanh or kernels.ActReLU
	// Chunk is how many future actions one query predicts (K); the
	// training target of step t is a_t … a_{t+K−1}, the episode's last
	// action repeated past its end. 1 is single-step BC.
	Chunk int
	// Execute is how many actions of each predicted chunk run before the
	// policy is queried again (1 ≤ Execute ≤ Chunk): 1 is fully closed
	// loop, Chunk fully open loop within the chunk.
	Execute     int
	Epochs      int
	Batch       int
	LR          float64 // Adam's initial learning rate, decayed linearly to LR/10 over the run
	MaxGradNorm float64 // global gradient-norm clip; 0 disables it
	// RawFeatures drops the fingertip-relative offsets of [Features] and
	// feeds the bare observation (for ablations).
	RawFeatures bool
	Seed        uint64
}

// DefaultConfig is the measured recipe: on the spatial suite, 50 DART
// demonstrations per task (noise 0.1), all ten tasks in one policy,
// greedy success 0.67 over the first 10 fixed initial states per task with
// demonstrations of seed 7, and with seed 1 0.32 over those and 0.364 over
// all 50 (`accerl bench bc --init-states 50`): the seed matters a lot.
// Chunk 4 / execute 2: 0.16; chunk 1: 0 on task 0 alone, where chunk 4 gets
// 0.55.
func DefaultConfig() Config {
	return Config{Hidden: []int{256, 256}, Activation: kernels.ActReLU, Chunk: 8, Execute: 4,
		Epochs: 30, Batch: 128, LR: 1e-3, MaxGradNorm: 1, Seed: 1}
}

// Model is a trained BC policy with its feature pipeline.
type Model struct {
	Policy  *kernels.Policy
	Norm    Normaliser
	Chunk   int
	Execute int
	Raw     bool
}

// features writes the standardised features of obs into out.
func (m *Model) features(obs []float64, out []float64) []float64 {
	if m.Raw {
		out = append(out[:0], obs...)
	} else {
		out = Features(obs, out)
	}
	m.Norm.apply(out)
	return out
}

// TrainResult reports a BC run's losses.
type TrainResult struct {
	Samples    int
	EpochLoss  []float64 // mean squared error per action value, per epoch
	FinalLoss  float64
	NumParams  int
	FeatureDim int
}

// Train fits a Model to demos by least squares on the (chunked) expert
// actions: a gaussian-head policy whose log-std stays frozen at its
// initial value, so −log π is ½‖a − μ‖²/σ² plus a constant.
func Train(cfg Config, demos []Demo) (*Model, TrainResult, error) {
	if cfg.Chunk < 1 || cfg.Execute < 1 || cfg.Execute > cfg.Chunk {
		return nil, TrainResult{}, fmt.Errorf("bc train: chunk %d, execute %d: want 1 ≤ execute ≤ chunk", cfg.Chunk, cfg.Execute)
	}
	if len(demos) == 0 || cfg.Epochs < 1 || cfg.Batch < 1 {
		return nil, TrainResult{}, fmt.Errorf("bc train: %d demos, %d epochs, batch %d", len(demos), cfg.Epochs, cfg.Batch)
	}
	m := &Model{Chunk: cfg.Chunk, Execute: cfg.Execute, Raw: cfg.RawFeatures}
	dim := FeatureDim
	if cfg.RawFeatures {
		dim = tabletop.ObsDim
	}
	ad := tabletop.ActionDim * cfg.Chunk
	var x, y []float64
	var row []float64
	for _, d := range demos {
		for t, o := range d.Obs {
			if cfg.RawFeatures {
				row = append(row[:0], o...)
			} else {
				row = Features(o, row)
			}
			x = append(x, row...)
			for k := range cfg.Chunk {
				y = append(y, d.Actions[min(t+k, len(d.Actions)-1)]...)
			}
		}
	}
	n := len(x) / dim
	m.Norm = fitNormaliser(x, dim)
	m.Norm.apply(x)

	low, high := make([]float64, ad), make([]float64, ad)
	for i := range low {
		low[i], high[i] = -1, 1
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xbc))
	m.Policy = kernels.NewPolicy(kernels.PolicyConfig{ObsDim: dim, Head: kernels.HeadGaussian, ActionDims: ad,
		Low: low, High: high, Hidden: cfg.Hidden, Activation: cfg.Activation}, rng)
	var logStd kernels.ParamSpan
	for _, s := range m.Policy.Layout() {
		if s.Name == "actor_logstd" {
			logStd = s
		}
	}
	opt := kernels.NewAdam(m.Policy.NumParams(), cfg.LR)
	res := TrainResult{Samples: n, NumParams: m.Policy.NumParams(), FeatureDim: dim}
	b := min(cfg.Batch, n)
	bx, by := make([]float64, b*dim), make([]float64, b*ad)
	logp, ent, val := make([]float64, b), make([]float64, b), make([]float64, b)
	dlogp, dzero, dval := make([]float64, b), make([]float64, b), make([]float64, b)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	steps, total := 0, cfg.Epochs*(n/b)
	for range cfg.Epochs {
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		sum := 0.0
		for start := 0; start+b <= n; start += b {
			for r, i := range perm[start : start+b] {
				copy(bx[r*dim:(r+1)*dim], x[i*dim:(i+1)*dim])
				copy(by[r*ad:(r+1)*ad], y[i*ad:(i+1)*ad])
			}
			opt.LR = cfg.LR * (1 - 0.9*float64(steps)/float64(total))
			m.Policy.ZeroGrads()
			m.Policy.Evaluate(bx, b, kernels.Actions{Continuous: by}, logp, ent, val)
			for i := range dlogp {
				dlogp[i] = -1 / float64(b) // the loss is −mean log π
			}
			m.Policy.Backward(dlogp, dzero, dval)
			clear(m.Policy.Grads()[logStd.Offset : logStd.Offset+logStd.Size()])
			if cfg.MaxGradNorm > 0 {
				kernels.ClipGradNorm(m.Policy.Grads(), cfg.MaxGradNorm)
			}
			opt.Step(m.Policy.Params(), m.Policy.Grads())
			sum += meanSquaredError(logp, ad)
			steps++
		}
		l := sum / float64(n/b)
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return nil, res, fmt.Errorf("bc train: loss %v at epoch %d", l, len(res.EpochLoss))
		}
		res.EpochLoss = append(res.EpochLoss, l)
	}
	res.FinalLoss = res.EpochLoss[len(res.EpochLoss)-1]
	return m, res, nil
}

// meanSquaredError recovers the mean squared error per action value from
// log-densities at σ = 1 (log-std 0): log π = −½ Σ z² − D·½ log 2π.
func meanSquaredError(logp []float64, d int) float64 {
	s := 0.0
	for _, lp := range logp {
		s += -2 * (lp + float64(d)*0.5*math.Log(2*math.Pi)) / float64(d)
	}
	return s / float64(len(logp))
}
