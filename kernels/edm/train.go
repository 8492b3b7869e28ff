package edm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// TrainConfig sets the optimisation of a [Trainer].
type TrainConfig struct {
	// LR is Adam's learning rate (DIAMOND: 1e-4 over hundreds of thousands
	// of steps; a few hundred CPU steps want about 1e-3).
	LR float64
	// BatchSize is the number of samples per step, drawn uniformly with
	// replacement.
	BatchSize int
	// MaxGradNorm clips the global gradient norm (≤ 0: no clipping;
	// DIAMOND: 1).
	MaxGradNorm float64
	// Seed seeds the initial weights, the minibatches and the noise.
	Seed uint64
}

// DefaultTrainConfig is Adam at 1e-3, batches of 16, clipping at norm 1.
func DefaultTrainConfig(seed uint64) TrainConfig {
	return TrainConfig{LR: 1e-3, BatchSize: 16, MaxGradNorm: 1, Seed: seed}
}

// Trainer fits a float32 [Net] to transitions with the EDM loss and Adam
// (Kingma & Ba 2015, via [kernels.Backend.AdamStep]: β = (0.9, 0.999),
// eps 1e-8, float32 moments). Its whole state — model, moments, step count
// and the random stream of minibatches and noise — round-trips through
// MarshalBinary, so a restored trainer continues bit for bit.
type Trainer struct {
	Net   *Net[float32]
	EDM   EDM
	Train TrainConfig
	// M and V are Adam's first and second moments, laid out as the
	// parameters; Steps counts the updates taken.
	M, V  []float32
	Steps int

	src *rand.PCG
	rng *rand.Rand
}

// NewTrainer returns a trainer of a fresh model for c, its weights drawn
// from tc.Seed, its matrix products on be ([kernels.NewCPU] when nil).
func NewTrainer(c Config, e EDM, tc TrainConfig, be kernels.Backend) (*Trainer, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("edm: new trainer: %w", err)
	}
	if e.SelfForcing < 0 || e.SelfForcing > c.History || e.SelfForcingFrom < 0 {
		return nil, fmt.Errorf("edm: new trainer: self-forcing must be 0 to the %d context steps from a step ≥ 0, got %d from step %d", c.History, e.SelfForcing, e.SelfForcingFrom)
	}
	if tc.BatchSize < 1 || !(tc.LR > 0) {
		return nil, fmt.Errorf("edm: new trainer: batch size %d and learning rate %v must be positive", tc.BatchSize, tc.LR)
	}
	src := rand.NewPCG(tc.Seed, 0xed1)
	rng := rand.New(src)
	net := NewNet[float32](c, rng, be)
	n := len(net.Params())
	return &Trainer{Net: net, EDM: e, Train: tc, M: make([]float32, n), V: make([]float32, n), src: src, rng: rng}, nil
}

// Step takes one Adam step on a minibatch drawn from data and returns the
// minibatch loss before the update. A non-finite loss or gradient is an
// error and leaves the parameters unchanged.
func (t *Trainer) Step(data []Sample) (float64, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("edm: train step: no samples")
	}
	batch := make([]Sample, t.Train.BatchSize)
	idx := make([]int, len(batch))
	for i := range batch {
		idx[i] = t.rng.IntN(len(data))
		batch[i] = data[idx[i]]
	}
	if t.EDM.SelfForcing > 0 && t.Steps >= t.EDM.SelfForcingFrom {
		batch, _ = t.selfForce(data, idx)
	}
	b := MakeBatch[float32](t.Net.cfg, batch)
	t.Net.NoiseContext(t.EDM, b, t.rng)
	sigma, eps := t.Net.DrawNoise(t.EDM, len(batch), t.rng)
	t.Net.ZeroGrads()
	loss := t.Net.Loss(t.EDM, b, sigma, eps)
	g := t.Net.Grads()
	norm := kernels.ClipGradNormOf(g, t.Train.MaxGradNorm)
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return loss, fmt.Errorf("edm: train step %d: loss %v, gradient norm %v", t.Steps+1, loss, norm)
	}
	t.Steps++
	t.Net.be.AdamStep(kernels.AdamOptions{LR: float32(t.Train.LR), Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: t.Steps},
		t.Net.Params(), g, t.M, t.V)
	return loss, nil
}

// selfForce returns the minibatch data[idx[i]] with the [EDM.SelfForcing]
// contexts and each example's depth d: d is drawn uniformly in
// 0…SelfForcing and lowered to the number of transitions before the
// example that lead up to it (transition j−1 leads to j when its Next is
// j's last context step); the example's context is then data[idx−d]'s,
// rolled forward d steps by the model with the recorded actions
// data[idx−d … idx−1].Action, which replaces its last d context steps by
// predictions and keeps the real frames before them. The rollouts of the
// minibatch run together, one [Net.Step] per step back.
func (t *Trainer) selfForce(data []Sample, idx []int) ([]Sample, []int) {
	depth := make([]int, len(idx))
	ctx := make([][][]Frame, len(idx))
	most := 0
	for i, s := range idx {
		want := t.rng.IntN(t.EDM.SelfForcing + 1)
		d := 0
		for d < want && s-d > 0 && sameStep(data[s-d-1].Next, data[s-d].Past[len(data[s-d].Past)-1]) {
			d++
		}
		depth[i], most = d, max(most, d)
		ctx[i] = append([][]Frame(nil), data[s-d].Past...)
	}
	for back := most; back >= 1; back-- {
		var which []int
		var past [][][]Frame
		var acts [][]float64
		for i, d := range depth {
			if d >= back {
				which = append(which, i)
				past = append(past, ctx[i])
				acts = append(acts, data[idx[i]-back].Action)
			}
		}
		for j, step := range t.Net.Step(t.EDM, past, acts, t.rng) {
			i := which[j]
			ctx[i] = append(ctx[i][1:len(ctx[i]):len(ctx[i])], step)
		}
	}
	out := make([]Sample, len(idx))
	for i, s := range idx {
		out[i] = Sample{Past: ctx[i], Action: data[s].Action, Next: data[s].Next}
	}
	return out, depth
}

// sameStep reports whether two steps hold the same frames.
func sameStep(a, b []Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for cam := range a {
		if !bytes.Equal(a[cam], b[cam]) {
			return false
		}
	}
	return true
}
