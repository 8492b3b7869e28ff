package bc

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// VLATrainerState is a VLATrainer after a whole number of epochs: the network and the
// optimizer as their versioned, checksummed binary checkpoints ([vla.Net.MarshalBinary],
// [vla.Adam.MarshalBinary]) and the per-epoch record. A trainer built with the same config
// and demonstrations continues from it bit-identically (each epoch's shuffle has its own
// random stream).
type VLATrainerState struct {
	Epoch         int       `json:"epoch"`
	InitialLoss   float64   `json:"initial_loss"`
	EpochLoss     []float64 `json:"epoch_loss"`
	EpochAccuracy []float64 `json:"epoch_accuracy"`
	Seen          int       `json:"seen"`
	TrainS        float64   `json:"train_s"`
	Net           []byte    `json:"net"`
	Adam          []byte    `json:"adam"`
	// EMA is the moving average of the weights (VLAConfig.EMA > 0) after
	// EMASteps steps, as a network checkpoint record like Net; absent when off.
	EMA      []byte `json:"ema,omitempty"`
	EMASteps int    `json:"ema_steps,omitempty"`
}

// State returns the trainer's state after its last epoch.
func (t *VLATrainer) State() (VLATrainerState, error) {
	if t.adopted {
		return VLATrainerState{}, fmt.Errorf("bc vla state: the trainer adopted a saved model; its epoch record is partial")
	}
	net, err := t.m.Net.MarshalBinary()
	if err != nil {
		return VLATrainerState{}, fmt.Errorf("bc vla state: %w", err)
	}
	opt, err := t.opt.MarshalBinary()
	if err != nil {
		return VLATrainerState{}, fmt.Errorf("bc vla state: %w", err)
	}
	var ema []byte
	if t.ema != nil {
		if ema, err = t.emaNet().MarshalBinary(); err != nil {
			return VLATrainerState{}, fmt.Errorf("bc vla state: %w", err)
		}
	}
	return VLATrainerState{Epoch: t.epoch, InitialLoss: t.loss0, EpochLoss: slices.Clone(t.losses),
		EpochAccuracy: slices.Clone(t.accs), Seen: t.seen, TrainS: t.wall.Seconds(), Net: net, Adam: opt,
		EMA: ema, EMASteps: t.emaSteps}, nil
}

// Restore continues from s, a State of a trainer built with the same config and
// demonstrations; a network of another size is refused by its checkpoint header.
func (t *VLATrainer) Restore(s VLATrainerState) error {
	if s.Epoch < 0 || s.Epoch > t.cfg.Epochs || len(s.EpochLoss) != s.Epoch || len(s.EpochAccuracy) != s.Epoch {
		return fmt.Errorf("bc vla restore: epoch %d with %d losses and %d accuracies, of %d epochs",
			s.Epoch, len(s.EpochLoss), len(s.EpochAccuracy), t.cfg.Epochs)
	}
	if err := t.m.Net.UnmarshalBinary(s.Net); err != nil {
		return fmt.Errorf("bc vla restore: %w", err)
	}
	if err := t.opt.UnmarshalBinary(s.Adam); err != nil {
		return fmt.Errorf("bc vla restore: %w", err)
	}
	if t.ema == nil && len(s.EMA) > 0 {
		return fmt.Errorf("bc vla restore: the state holds a weight average, and this config keeps none (EMA 0)")
	}
	if t.ema != nil {
		if len(s.EMA) == 0 {
			return fmt.Errorf("bc vla restore: the state holds no weight average (a state saved without EMA cannot resume with it)")
		}
		avg := new(vla.Model)
		if err := avg.UnmarshalBinary(s.EMA); err != nil {
			return fmt.Errorf("bc vla restore: weight average: %w", err)
		}
		if avg.Config() != t.mc {
			return fmt.Errorf("bc vla restore: the weight average is of another network")
		}
		copy(t.ema, avg.Params())
		t.emaSteps = s.EMASteps
	}
	t.epoch, t.loss0, t.seen = s.Epoch, s.InitialLoss, s.Seen
	t.losses, t.accs = slices.Clone(s.EpochLoss), slices.Clone(s.EpochAccuracy)
	t.wall = time.Duration(s.TrainS * float64(time.Second))
	return nil
}

// Epochs returns the number of epochs done.
func (t *VLATrainer) Epochs() int { return t.epoch }

// FoldedParams returns the network's parameters as float64, with the proprio
// standardisation folded into the proprio layer, for an engine policy (vla.Policy) that
// reads the raw proprioception: the linear map of x̂_j = (x_j − μ_j)/σ_j is the map of x with
// W'[o][j] = W[o][j]/σ_j and b'[o] = b[o] − Σ_j W[o][j]μ_j/σ_j, exact up to rounding.
func (m *VLAModel) FoldedParams() ([]float64, error) {
	w32 := m.Net.Params()
	p := make([]float64, len(w32))
	for i, v := range w32 {
		p[i] = float64(v)
	}
	weight, bias, out, in, err := m.proprioLayer()
	if err != nil {
		return nil, fmt.Errorf("fold bc vla model: %w", err)
	}
	mean, std := m.Proprio.Mean, m.Proprio.Std
	for o := range out {
		w := p[weight+o*in : weight+(o+1)*in]
		shift := 0.0
		for j := range w {
			w[j] /= std[j]
			shift += w[j] * mean[j]
		}
		p[bias+o] -= shift
	}
	return p, nil
}

// SetFoldedParams is FoldedParams' inverse: it sets the network's parameters from p, a
// policy's parameters in the engine's layout (the proprio standardisation folded into the
// proprio layer, as a run's bc/final checkpoint holds them), unfolding them with m's own
// standardisation: W[o][j] = W'[o][j]·σ_j and b[o] = b'[o] + Σ_j W'[o][j]μ_j. m then acts
// on raw proprioception exactly as p does, up to float32 rounding, whatever demonstrations
// m's standardisation was fitted on, so a clone saved by one run can be trained further
// on another run's demonstrations.
func (m *VLAModel) SetFoldedParams(p []float64) error {
	dst := m.Net.Params()
	if len(p) != len(dst) {
		return fmt.Errorf("unfold bc vla model: %d parameters, the network has %d", len(p), len(dst))
	}
	q := slices.Clone(p)
	weight, bias, out, in, err := m.proprioLayer()
	if err != nil {
		return fmt.Errorf("unfold bc vla model: %w", err)
	}
	mean, std := m.Proprio.Mean, m.Proprio.Std
	for o := range out {
		w := q[weight+o*in : weight+(o+1)*in]
		shift := 0.0
		for j := range w {
			shift += w[j] * mean[j]
			w[j] *= std[j]
		}
		q[bias+o] += shift
	}
	for i, v := range q {
		dst[i] = float32(v)
	}
	return nil
}

// proprioLayer locates the proprio token's linear layer in the network's parameters: the
// offsets of its weight (out × in, row-major) and bias.
func (m *VLAModel) proprioLayer() (weight, bias, out, in int, err error) {
	weight, bias = -1, -1
	for _, s := range m.Net.Spans() {
		switch s.Name {
		case "proprio.weight":
			weight, out, in = s.Offset, s.Shape[0], s.Shape[1]
		case "proprio.bias":
			bias = s.Offset
		}
	}
	if weight < 0 || bias < 0 || in != len(m.Proprio.Mean) {
		return 0, 0, 0, 0, fmt.Errorf("no proprio layer of %d inputs", len(m.Proprio.Mean))
	}
	return weight, bias, out, in, nil
}

// vlaModelFile is a VLAModel on disk: the network's checkpoint record and
// the settings it reads and acts with.
type vlaModelFile struct {
	Net       []byte    `json:"net"`
	Mean      []float64 `json:"proprio_mean"`
	Std       []float64 `json:"proprio_std"`
	Chunk     int       `json:"chunk"`
	Execute   int       `json:"execute"`
	ImageSize int       `json:"image_size"`
	Cameras   []string  `json:"cameras"`
}

// MarshalBinary encodes the trained model (network, proprio standardisation,
// chunking and cameras) so that a later evaluation can load it instead of
// training again.
func (m *VLAModel) MarshalBinary() ([]byte, error) {
	net, err := m.Net.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("bc vla model: %w", err)
	}
	return json.Marshal(vlaModelFile{Net: net, Mean: m.Proprio.Mean, Std: m.Proprio.Std, Chunk: m.Chunk,
		Execute: m.Execute, ImageSize: m.ImageSize, Cameras: m.Cameras})
}

// UnmarshalBinary replaces m by the model MarshalBinary encoded.
func (m *VLAModel) UnmarshalBinary(b []byte) error {
	var f vlaModelFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("bc vla model: %w", err)
	}
	net := new(vla.Model)
	if err := net.UnmarshalBinary(f.Net); err != nil {
		return fmt.Errorf("bc vla model: %w", err)
	}
	c := net.Config()
	if len(f.Mean) != c.ProprioDim || len(f.Std) != c.ProprioDim || f.Chunk < 1 || f.Execute < 1 || f.Execute > f.Chunk ||
		c.ActionDims != tabletop.ActionDim*f.Chunk || len(f.Cameras) != c.Cameras || f.ImageSize != c.ImageSize {
		return fmt.Errorf("bc vla model: settings (proprio %d/%d, chunk %d, execute %d, %d cameras at %d) do not fit the network",
			len(f.Mean), len(f.Std), f.Chunk, f.Execute, len(f.Cameras), f.ImageSize)
	}
	*m = VLAModel{Net: net, Proprio: Normaliser{Mean: f.Mean, Std: f.Std}, Chunk: f.Chunk, Execute: f.Execute,
		ImageSize: f.ImageSize, Cameras: f.Cameras}
	return nil
}
