package reward

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// Example is one labelled time step: a frame per camera and the
// simulator's two labels.
type Example struct {
	Frames [][]uint8
	// Success: the goal holds at this frame or held at an earlier one of
	// the episode. End: the episode ended at or before this frame.
	Success, End bool
}

// TrainConfig sets the optimisation of a [Trainer].
type TrainConfig struct {
	// LR is Adam's learning rate.
	LR float64
	// BatchSize is the number of examples per step, drawn uniformly with
	// replacement.
	BatchSize int
	// Focal is the loss's γ and α.
	Focal Focal
	// MaxGradNorm clips the global gradient norm (≤ 0: no clipping).
	MaxGradNorm float64
	// Seed seeds the initial weights and the minibatches.
	Seed uint64
}

// DefaultTrainConfig is Adam at 3e-3 on batches of 32 with γ = 2 and no
// α balancing, clipping at norm 1. On the tabletop frames α = 0.75 (more
// weight on the rare success frames) raised recall but made the model
// call the frames just before success successful as well, so that
// accuracy fell below the majority-class rate; Lin et al.'s 0.25 pushes
// the other way. Pass Focal.Alpha to choose.
func DefaultTrainConfig(seed uint64) TrainConfig {
	return TrainConfig{LR: 3e-3, BatchSize: 32, Focal: Focal{Gamma: 2}, MaxGradNorm: 1, Seed: seed}
}

// Validate reports a setting a trainer cannot run with.
func (tc TrainConfig) Validate() error {
	if !(tc.LR > 0) || tc.BatchSize < 1 {
		return fmt.Errorf("reward trainer: learning rate %v and batch size %d must be positive", tc.LR, tc.BatchSize)
	}
	if err := tc.Focal.Validate(); err != nil {
		return fmt.Errorf("reward trainer: %w", err)
	}
	return nil
}

// Trainer fits a [Model] with the focal loss and Adam ([kernels.Adam],
// float64).
type Trainer struct {
	Model *Model
	Train TrainConfig
	Adam  *kernels.Adam
	// Steps counts the updates taken.
	Steps int

	src *rand.PCG
	rng *rand.Rand
}

// NewTrainer returns a trainer of a fresh model of c, its weights and
// minibatches drawn from tc.Seed.
func NewTrainer(c Config, tc TrainConfig) (*Trainer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := tc.Validate(); err != nil {
		return nil, err
	}
	src := rand.NewPCG(tc.Seed, 0x5eed)
	rng := rand.New(src)
	m := New(c, rng)
	opt := kernels.NewAdam(len(m.Params()), tc.LR)
	opt.Eps = 1e-8
	return &Trainer{Model: m, Train: tc, Adam: opt, src: src, rng: rng}, nil
}

// Loss returns the focal loss of examples under the current parameters
// and accumulates its gradient into the model's (call ZeroGrads first).
func (m *Model) Loss(f Focal, examples []Example) float64 {
	tp := m.forward(frames(examples))
	loss, dz := f.Loss(tp.logits, labels(examples), len(examples))
	m.backward(tp, dz)
	return loss
}

// Step takes one Adam step on a minibatch drawn from data and returns the
// minibatch loss before the update. A non-finite loss or gradient is an
// error and leaves the parameters unchanged.
func (t *Trainer) Step(data []Example) (float64, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("reward: train step: no examples")
	}
	batch := make([]Example, t.Train.BatchSize)
	for i := range batch {
		batch[i] = data[t.rng.IntN(len(data))]
	}
	m := t.Model
	m.ZeroGrads()
	loss := m.Loss(t.Train.Focal, batch)
	sq := 0.0
	for _, v := range m.grads {
		sq += v * v
	}
	norm := math.Sqrt(sq)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return loss, fmt.Errorf("reward: train step %d: loss %v, gradient norm %v", t.Steps+1, loss, norm)
	}
	if mx := t.Train.MaxGradNorm; mx > 0 && norm > mx {
		f := mx / (norm + 1e-12)
		for i := range m.grads {
			m.grads[i] *= f
		}
	}
	t.Adam.Step(m.params, m.grads)
	t.Steps++
	return loss, nil
}

// EvalLoss is the mean focal loss of examples, evaluated in chunks of
// batch; it leaves the gradients alone.
func (t *Trainer) EvalLoss(examples []Example, batch int) float64 {
	total := 0.0
	for lo := 0; lo < len(examples); lo += batch {
		hi := min(lo+batch, len(examples))
		tp := t.Model.forward(frames(examples[lo:hi]))
		l, _ := t.Train.Focal.Loss(tp.logits, labels(examples[lo:hi]), hi-lo)
		total += l * float64(hi-lo)
	}
	return total / float64(max(1, len(examples)))
}

func frames(examples []Example) [][][]uint8 {
	out := make([][][]uint8, len(examples))
	for i, e := range examples {
		out[i] = e.Frames
	}
	return out
}

func labels(examples []Example) []float64 {
	y := make([]float64, Outputs*len(examples))
	for i, e := range examples {
		if e.Success {
			y[i*Outputs+Success] = 1
		}
		if e.End {
			y[i*Outputs+End] = 1
		}
	}
	return y
}

// Scores are a binary classifier's counts and rates at one threshold.
type Scores struct {
	TP, FP, TN, FN int
	// Accuracy is (TP + TN)/N; Majority the accuracy of always answering
	// the more frequent label, the bar a classifier must clear.
	Accuracy, Majority float64
	// Precision is TP/(TP + FP) and Recall TP/(TP + FN); 0 when undefined
	// (no positive predictions, no positives).
	Precision, Recall float64
	// Positives is the share of examples labelled positive.
	Positives float64
}

// Score compares probabilities p with labels y at threshold (p ≥
// threshold is a positive prediction).
func Score(p []float64, y []bool, threshold float64) Scores {
	if len(p) != len(y) {
		panic(fmt.Sprintf("reward: Score: %d probabilities, %d labels", len(p), len(y)))
	}
	var s Scores
	for i, v := range p {
		switch pred := v >= threshold; {
		case pred && y[i]:
			s.TP++
		case pred:
			s.FP++
		case y[i]:
			s.FN++
		default:
			s.TN++
		}
	}
	n := float64(len(p))
	if n == 0 {
		return s
	}
	pos := float64(s.TP + s.FN)
	s.Accuracy, s.Positives, s.Majority = float64(s.TP+s.TN)/n, pos/n, math.Max(pos, n-pos)/n
	if s.TP+s.FP > 0 {
		s.Precision = float64(s.TP) / float64(s.TP+s.FP)
	}
	if pos > 0 {
		s.Recall = float64(s.TP) / pos
	}
	return s
}
