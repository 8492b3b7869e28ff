package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/specs"
)

// cloner is one behaviour-cloning trainer as PretrainPolicy drives it, epoch by epoch: the
// state-vector policy's (bc.Trainer) or the VLA's (bc.VLATrainer).
type cloner interface {
	Done() bool
	Epochs() int
	// epoch trains one epoch; it may stop early when ctx is done, leaving the trainer to
	// be restored from its last state.
	epoch(ctx context.Context) (float64, error)
	// state and restore are the content of an epoch checkpoint.
	state() ([]byte, error)
	restore(b []byte) error
	epochLoss() []float64
	// params are the warm-start parameters in the engine policy's layout.
	params() ([]float64, error)
}

// newCloner records the arm's demonstrations (with images for a VLA) and builds its trainer,
// filling the demonstration counts of res.
func newCloner(c specs.Config, seed uint64, res *PretrainPolicyResult) (cloner, error) {
	in := bc.CollectInput{Suite: c.Env.Suite, Tasks: c.Env.Tasks, PerTask: c.Pretrain.DemosPerTask,
		Noise: c.Pretrain.Noise, Seed: seed}
	if c.Policy.VLA != nil {
		cfg := BCVLAConfig(c, seed)
		demos, err := bc.CollectImages(bc.ImageCollectInput{CollectInput: in, ImageSize: cfg.ImageSize, Cameras: cfg.Cameras})
		if err != nil {
			return nil, err
		}
		tr, err := bc.NewVLATrainer(cfg, demos)
		if err != nil {
			return nil, err
		}
		if from := c.Pretrain.From; from != "" {
			params, err := LoadClonedParams(from)
			if err != nil {
				return nil, fmt.Errorf("pretrain.from: %w", err)
			}
			if err := tr.StartFrom(params); err != nil {
				return nil, fmt.Errorf("pretrain.from %s: the policy block builds another network than the one cloned there (vla dim, layers, heads, patch, image size, cameras and action_chunk must be the same): %w", from, err)
			}
		}
		res.Demos, res.Samples = len(demos), tr.Samples()
		for _, d := range demos {
			res.DemoSteps += int64(len(d.Actions))
		}
		return vlaCloner{tr}, nil
	}
	demos, err := bc.Collect(in)
	if err != nil {
		return nil, err
	}
	tr, err := bc.NewTrainer(BCConfig(c, seed), demos)
	if err != nil {
		return nil, err
	}
	res.Demos, res.Samples = len(demos), tr.Samples()
	for _, d := range demos {
		res.DemoSteps += int64(len(d.Actions))
	}
	return mlpCloner{tr, c.Policy.InitLogStd}, nil
}

// BCVLAConfig maps an arm's policy (its vla block and action chunk), env (image size,
// cameras) and pretrain blocks onto bc.VLAConfig, so that the cloned network is the one
// the engine's VLA policy (activities' vlaSettings) goes on training.
func BCVLAConfig(c specs.Config, seed uint64) bc.VLAConfig {
	v, p := c.Policy.VLA, c.Pretrain
	k, execute := c.Policy.Chunk()
	return bc.VLAConfig{ImageSize: c.Env.ImageSize, Patch: v.Patch, Cameras: append([]string(nil), c.Env.Cameras...),
		Dim: v.Dim, Layers: v.Layers, Heads: v.Heads, MLPRatio: v.MLPRatio, Chunk: k, Execute: execute,
		Epochs: p.Epochs, Batch: p.Batch, LR: p.LearningRate, MaxGradNorm: bcGradNormClip, Seed: seed,
		VocabSize: v.VocabSize, FullHead: !v.SlimHead, Shift: p.Shift, LabelSigma: p.LabelSigma}
}

type mlpCloner struct {
	*bc.Trainer
	logStd float64
}

// epoch runs a whole epoch: the state-vector policy's take well under a second.
func (m mlpCloner) epoch(context.Context) (float64, error) { return m.Epoch() }

func (m mlpCloner) state() ([]byte, error) { return marshalState(m.State()) }
func (m mlpCloner) restore(b []byte) error {
	var s bc.TrainerState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decode bc state: %w", err)
	}
	return m.Restore(s)
}
func (m mlpCloner) epochLoss() []float64       { return m.Result().EpochLoss }
func (m mlpCloner) params() ([]float64, error) { return m.Model().FoldedParams(m.logStd) }

type vlaCloner struct{ *bc.VLATrainer }

func (v vlaCloner) epoch(ctx context.Context) (float64, error) { return v.EpochContext(ctx) }

func (v vlaCloner) state() ([]byte, error) {
	s, err := v.State()
	if err != nil {
		return nil, err
	}
	return marshalState(s)
}
func (v vlaCloner) restore(b []byte) error {
	var s bc.VLATrainerState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decode bc vla state: %w", err)
	}
	return v.Restore(s)
}
func (v vlaCloner) epochLoss() []float64       { return v.Result().EpochLoss }
func (v vlaCloner) params() ([]float64, error) { return v.Model().FoldedParams() }

func marshalState(s any) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode bc state: %w", err)
	}
	return b, nil
}
