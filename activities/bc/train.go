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
// initial value, so −log π is ½‖a − μ‖²/σ² plus a constant. It is
// NewTrainer followed by cfg.Epochs calls of Epoch.
func Train(cfg Config, demos []Demo) (*Model, TrainResult, error) {
	tr, err := NewTrainer(cfg, demos)
	if err != nil {
		return nil, TrainResult{}, err
	}
	return runEpochs(tr)
}

// epochTrainer is what runEpochs drives: Trainer and VLATrainer.
type epochTrainer[M, R any] interface {
	Done() bool
	Epoch() (float64, error)
	Model() M
	Result() R
}

// runEpochs runs t's remaining epochs and returns its model and result (the
// zero model, and the result so far, on an error).
func runEpochs[M, R any](t epochTrainer[M, R]) (M, R, error) {
	for !t.Done() {
		if _, err := t.Epoch(); err != nil {
			var zero M
			return zero, t.Result(), err
		}
	}
	return t.Model(), t.Result(), nil
}

// Trainer trains a Model epoch by epoch, so that a caller can checkpoint
// between epochs (State) and continue after a crash (Restore): a restored
// trainer's following epochs are bit-identical to the uninterrupted ones,
// because each epoch's shuffle comes from its own random stream.
type Trainer struct {
	cfg    Config
	m      *Model
	x, y   []float64 // standardised features (n×dim) and chunked targets (n×ad)
	dim    int
	ad     int
	n, b   int
	opt    *kernels.Adam
	logStd kernels.ParamSpan
	epoch  int
	losses []float64

	bx, by             []float64
	logp, ent, val     []float64
	dlogp, dzero, dval []float64
	order              []int
}

// TrainerState is a Trainer's state between epochs, plain JSON data.
type TrainerState struct {
	Epoch     int               `json:"epoch"`
	EpochLoss []float64         `json:"epoch_loss"`
	Params    []float64         `json:"params"`
	Adam      kernels.AdamState `json:"adam"`
}

// NewTrainer prepares BC on demos: it builds the features and chunked
// targets, fits the normaliser, and initialises the policy from cfg.Seed.
func NewTrainer(cfg Config, demos []Demo) (*Trainer, error) {
	if cfg.Chunk < 1 || cfg.Execute < 1 || cfg.Execute > cfg.Chunk {
		return nil, fmt.Errorf("bc train: chunk %d, execute %d: want 1 ≤ execute ≤ chunk", cfg.Chunk, cfg.Execute)
	}
	if len(demos) == 0 || cfg.Epochs < 1 || cfg.Batch < 1 {
		return nil, fmt.Errorf("bc train: %d demos, %d epochs, batch %d", len(demos), cfg.Epochs, cfg.Batch)
	}
	t := &Trainer{cfg: cfg, m: &Model{Chunk: cfg.Chunk, Execute: cfg.Execute, Raw: cfg.RawFeatures}}
	t.dim = FeatureDim
	if cfg.RawFeatures {
		t.dim = tabletop.ObsDim
	}
	t.ad = tabletop.ActionDim * cfg.Chunk
	var row []float64
	for _, d := range demos {
		for i, o := range d.Obs {
			if cfg.RawFeatures {
				row = append(row[:0], o...)
			} else {
				row = Features(o, row)
			}
			t.x = append(t.x, row...)
			for k := range cfg.Chunk {
				t.y = append(t.y, d.Actions[min(i+k, len(d.Actions)-1)]...)
			}
		}
	}
	t.n = len(t.x) / t.dim
	t.m.Norm = fitNormaliser(t.x, t.dim)
	t.m.Norm.apply(t.x)

	low, high := make([]float64, t.ad), make([]float64, t.ad)
	for i := range low {
		low[i], high[i] = -1, 1
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xbc))
	t.m.Policy = kernels.NewPolicy(kernels.PolicyConfig{ObsDim: t.dim, Head: kernels.HeadGaussian, ActionDims: t.ad,
		Low: low, High: high, Hidden: cfg.Hidden, Activation: cfg.Activation}, rng)
	for _, s := range t.m.Policy.Layout() {
		if s.Name == "actor_logstd" {
			t.logStd = s
		}
	}
	t.opt = kernels.NewAdam(t.m.Policy.NumParams(), cfg.LR)
	t.b = min(cfg.Batch, t.n)
	b := t.b
	t.bx, t.by = make([]float64, b*t.dim), make([]float64, b*t.ad)
	t.logp, t.ent, t.val = make([]float64, b), make([]float64, b), make([]float64, b)
	t.dlogp, t.dzero, t.dval = make([]float64, b), make([]float64, b), make([]float64, b)
	for i := range t.dlogp {
		t.dlogp[i] = -1 / float64(b) // the loss is −mean log π
	}
	t.order = make([]int, t.n)
	return t, nil
}

// Done reports whether all of the configured epochs have run.
func (t *Trainer) Done() bool { return t.epoch >= t.cfg.Epochs }

// Epochs returns the number of epochs completed.
func (t *Trainer) Epochs() int { return t.epoch }

// Samples returns the number of (observation, chunk) training samples.
func (t *Trainer) Samples() int { return t.n }

// Model returns the model being trained (its parameters change with every Epoch).
func (t *Trainer) Model() *Model { return t.m }

// Result summarises the losses so far.
func (t *Trainer) Result() TrainResult {
	r := TrainResult{Samples: t.n, EpochLoss: append([]float64(nil), t.losses...), NumParams: t.m.Policy.NumParams(), FeatureDim: t.dim}
	if len(t.losses) > 0 {
		r.FinalLoss = t.losses[len(t.losses)-1]
	}
	return r
}

// Epoch runs one pass over the samples in a fresh random order and returns
// its mean squared error per action value. The learning rate decays
// linearly from LR to LR/10 over all epochs' steps.
func (t *Trainer) Epoch() (float64, error) {
	cfg, m, b, dim, ad := t.cfg, t.m, t.b, t.dim, t.ad
	shuffleOrder(t.order, cfg.Seed, 0xbc00+uint64(t.epoch))
	perEpoch := t.n / b
	total := cfg.Epochs * perEpoch
	steps := t.epoch * perEpoch
	sum := 0.0
	for start := 0; start+b <= t.n; start += b {
		for r, i := range t.order[start : start+b] {
			copy(t.bx[r*dim:(r+1)*dim], t.x[i*dim:(i+1)*dim])
			copy(t.by[r*ad:(r+1)*ad], t.y[i*ad:(i+1)*ad])
		}
		t.opt.LR = decayedLR(cfg.LR, steps, total)
		m.Policy.ZeroGrads()
		m.Policy.Evaluate(t.bx, b, kernels.Actions{Continuous: t.by}, t.logp, t.ent, t.val)
		m.Policy.Backward(t.dlogp, t.dzero, t.dval)
		clear(m.Policy.Grads()[t.logStd.Offset : t.logStd.Offset+t.logStd.Size()])
		if cfg.MaxGradNorm > 0 {
			kernels.ClipGradNorm(m.Policy.Grads(), cfg.MaxGradNorm)
		}
		t.opt.Step(m.Policy.Params(), m.Policy.Grads())
		sum += meanSquaredError(t.logp, ad)
		steps++
	}
	l := sum / float64(perEpoch)
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return l, fmt.Errorf("bc train: loss %v at epoch %d", l, t.epoch)
	}
	t.losses = append(t.losses, l)
	t.epoch++
	return l, nil
}

// State returns a copy of the trainer's state after its last epoch.
func (t *Trainer) State() TrainerState {
	return TrainerState{Epoch: t.epoch, EpochLoss: append([]float64(nil), t.losses...),
		Params: append([]float64(nil), t.m.Policy.Params()...), Adam: t.opt.State()}
}

// Restore continues from s, a State of a trainer built with the same
// config and demonstrations.
func (t *Trainer) Restore(s TrainerState) error {
	if len(s.Params) != t.m.Policy.NumParams() {
		return fmt.Errorf("bc restore: %d parameters, the model has %d", len(s.Params), t.m.Policy.NumParams())
	}
	if s.Epoch < 0 || s.Epoch > t.cfg.Epochs || len(s.EpochLoss) != s.Epoch {
		return fmt.Errorf("bc restore: epoch %d with %d losses, of %d epochs", s.Epoch, len(s.EpochLoss), t.cfg.Epochs)
	}
	if err := t.opt.Restore(s.Adam); err != nil {
		return fmt.Errorf("bc restore: %w", err)
	}
	t.m.Policy.SetParams(s.Params)
	t.epoch, t.losses = s.Epoch, append([]float64(nil), s.EpochLoss...)
	return nil
}

// shuffleOrder sets order to a random permutation of its indices drawn from
// the PCG stream (seed, stream): an epoch's minibatch order.
func shuffleOrder(order []int, seed, stream uint64) {
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
}

// decayedLR is the learning rate at step of total: lr decayed linearly to
// lr/10 at the end.
func decayedLR(lr float64, step, total int) float64 {
	return lr * (1 - 0.9*float64(step)/float64(total))
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
