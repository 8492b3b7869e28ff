package proprio

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// TrainConfig sets the optimisation of a [Trainer].
type TrainConfig struct {
	// LR is Adam's learning rate.
	LR float64 `json:"lr"`
	// BatchSize is the number of samples per step, drawn uniformly with
	// replacement.
	BatchSize int `json:"batch_size"`
	// MaxGradNorm clips the global gradient norm (≤ 0: no clipping).
	MaxGradNorm float64 `json:"max_grad_norm"`
	// Seed seeds the initial weights and the minibatches.
	Seed uint64 `json:"seed"`
}

// DefaultTrainConfig is Adam at 1e-3 on batches of 64, clipping at norm 1.
func DefaultTrainConfig(seed uint64) TrainConfig {
	return TrainConfig{LR: 1e-3, BatchSize: 64, MaxGradNorm: 1, Seed: seed}
}

// Validate reports a setting a trainer cannot run with.
func (tc TrainConfig) Validate() error {
	if !(tc.LR > 0) || tc.BatchSize < 1 {
		return fmt.Errorf("proprio trainer: learning rate %v and batch size %d must be positive", tc.LR, tc.BatchSize)
	}
	return nil
}

// Trainer fits a float32 [Model] with the standardised MSE and Adam
// (Kingma & Ba 2015, via [kernels.Backend.AdamStep]: β = (0.9, 0.999),
// eps 1e-8, float32 moments). Its whole state — model, standardisation,
// moments, step count and the random stream of minibatches — round-trips
// through MarshalBinary, so a restored trainer continues bit for bit.
type Trainer struct {
	Model *Model[float32]
	Train TrainConfig
	// M and V are Adam's first and second moments, laid out as the
	// parameters; Steps counts the updates taken.
	M, V  []float32
	Steps int

	src *rand.PCG
	rng *rand.Rand
	be  kernels.Backend
}

// NewTrainer returns a trainer of a fresh model of c with the
// standardisation nm (usually [FitNorm] of the training samples), its
// weights drawn from tc.Seed.
func NewTrainer(c Config, nm Norm, tc TrainConfig) (*Trainer, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("proprio: new trainer: %w", err)
	}
	if err := tc.Validate(); err != nil {
		return nil, err
	}
	src := rand.NewPCG(tc.Seed, 0x9e0)
	rng := rand.New(src)
	m := NewModel[float32](c, nm, rng)
	n := len(m.params)
	return &Trainer{Model: m, Train: tc, M: make([]float32, n), V: make([]float32, n), src: src, rng: rng, be: kernels.NewCPU(1)}, nil
}

// Step takes one Adam step on a minibatch drawn from data and returns the
// minibatch loss before the update. A non-finite loss or gradient is an
// error and leaves the parameters unchanged.
func (t *Trainer) Step(data []Sample) (float64, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("proprio: train step: no samples")
	}
	batch := make([]Sample, t.Train.BatchSize)
	for i := range batch {
		batch[i] = data[t.rng.IntN(len(data))]
	}
	m := t.Model
	m.ZeroGrads()
	loss := m.Loss(m.Batch(batch))
	norm := kernels.ClipGradNormOf(m.grads, t.Train.MaxGradNorm)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return loss, fmt.Errorf("proprio: train step %d: loss %v, gradient norm %v", t.Steps+1, loss, norm)
	}
	t.Steps++
	t.be.AdamStep(kernels.AdamOptions{LR: float32(t.Train.LR), Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: t.Steps},
		m.params, m.grads, t.M, t.V)
	return loss, nil
}

// EvalLoss is the model's loss on all of samples, its gradients left
// alone.
func (t *Trainer) EvalLoss(samples []Sample) float64 {
	return t.Model.EvalLoss(t.Model.Batch(samples))
}
