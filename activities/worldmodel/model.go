package worldmodel

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/accerl/accerl/kernels"
)

// Reward modes of the world model (the spec's world_model.reward).
const (
	// RewardDirect: M_rew regresses the environment's reward r_t from
	// o_{t+1}, and an imagined step's reward is that prediction.
	RewardDirect = "direct"
	// RewardSuccessDelta: M_rew predicts p_success(o), and an imagined
	// step's reward is r̂_t = p(ô_{t+1}) − p(ô_t).
	RewardSuccessDelta = "success_delta"
)

// ModelConfig sizes a WorldModel. It is part of WMState, so a state can
// only be restored into a model of the same shape.
type ModelConfig struct {
	ObsDim     int    `json:"obs_dim"`     // feature width (the observation width for vector observations)
	NumActions int    `json:"num_actions"` // > 0: discrete actions, one-hot encoded
	ActionDim  int    `json:"action_dim"`  // continuous action width when NumActions == 0
	History    int    `json:"history"`     // k, observations in the observation model's input, >= 1
	ObsHidden  []int  `json:"obs_hidden"`  // observation model hidden widths
	RewHidden  []int  `json:"rew_hidden"`  // reward model hidden widths
	Activation string `json:"activation"`  // kernels.ActTanh or kernels.ActReLU
	RewardMode string `json:"reward_mode"` // RewardDirect or RewardSuccessDelta
}

func (c ModelConfig) obsConfig() kernels.ObsModelConfig {
	return kernels.ObsModelConfig{ObsDim: c.ObsDim, History: c.History, NumActions: c.NumActions,
		ActionDim: c.ActionDim, Hidden: c.ObsHidden, Activation: c.Activation}
}

func (c ModelConfig) rewConfig() kernels.RewardModelConfig {
	mode := kernels.RewardHeadDirect
	if c.RewardMode == RewardSuccessDelta {
		mode = kernels.RewardHeadSuccess
	}
	return kernels.RewardModelConfig{ObsDim: c.ObsDim, Hidden: c.RewHidden, Activation: c.Activation, Mode: mode}
}

// ActionWidth returns the number of values per action: 1 (the index) for
// discrete actions, ActionDim for continuous ones.
func (c ModelConfig) ActionWidth() int { return c.obsConfig().ActionWidth() }

// Validate reports a configuration no model can be built from.
func (c ModelConfig) Validate() error {
	var errs []error
	if c.RewardMode != RewardDirect && c.RewardMode != RewardSuccessDelta {
		errs = append(errs, fmt.Errorf("unknown reward mode %q (want %q or %q)", c.RewardMode, RewardDirect, RewardSuccessDelta))
	}
	// The reward model shares ObsDim and Activation with the observation
	// model, so its own check only adds something once those are valid.
	if err := c.obsConfig().Validate(); err != nil {
		errs = append(errs, err)
	} else if err := c.rewConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("world model config: %w", err)
	}
	return nil
}

// WorldModel is the pair (M_obs, M_rew) with their optimizers. Encoder
// maps raw observations to the features both models see; it is the
// identity for vector observations (see kernels.ObsModel, "Encoder seam").
// Everything the imagination and training code reads is exported so that
// tests and the engine can set a model up by hand. Not safe for concurrent
// use: the models keep scratch buffers.
type WorldModel struct {
	Config     ModelConfig
	Encoder    kernels.Encoder
	ObsLearner *kernels.ObsLearner    // M_obs and its Adam state
	RewLearner *kernels.RewardLearner // M_rew and its Adam state
}

// NewWorldModel builds both models, initialised from
// rand.New(rand.NewPCG(seed, streamInit)) (M_obs first), with Adam at the
// given learning rates and identity normalisations.
func NewWorldModel(cfg ModelConfig, obsLR, rewLR float64, seed uint64) (*WorldModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, streamInit))
	cfg.ObsHidden = slices.Clone(cfg.ObsHidden)
	cfg.RewHidden = slices.Clone(cfg.RewHidden)
	obs := kernels.NewObsModel(cfg.obsConfig(), rng)
	rew := kernels.NewRewardModel(cfg.rewConfig(), rng)
	return &WorldModel{
		Config:     cfg,
		Encoder:    kernels.IdentityEncoder{Dim: cfg.ObsDim},
		ObsLearner: kernels.NewObsLearner(obs, obsLR),
		RewLearner: kernels.NewRewardLearner(rew, rewLR),
	}, nil
}

// Obs returns the observation model.
func (w *WorldModel) Obs() *kernels.ObsModel { return w.ObsLearner.Model }

// Rew returns the reward model.
func (w *WorldModel) Rew() *kernels.RewardModel { return w.RewLearner.Model }

// RNG streams: the second PCG word, paired with the run's seed.
const (
	streamInit   = 0x776d696e6974 // "wminit": parameter initialisation
	streamSplit  = 0x776d73706c74 // "wmsplt": train/validation split of episodes
	streamSample = 0x776d736d706c // "wmsmpl": pretraining minibatch permutations
)

// AdamState is a kernels.Adam's complete state.
type AdamState = kernels.AdamState

// WMStateVersion is the version of the WMState format.
const WMStateVersion = 1

// WMState is everything needed to continue training a world model exactly
// where it stopped: both models' parameters and normalisations, both Adam
// states, the pretraining sampler's RNG and step counter. It is plain data
// and round-trips through encoding/json bit for bit (Go writes float64s
// in the shortest form that reads back exactly, and the parameters are
// finite because the learners refuse non-finite steps).
type WMState struct {
	Version   int                   `json:"version"`
	Config    ModelConfig           `json:"config"`
	ObsParams []float64             `json:"obs_params"`
	ObsNorm   kernels.Normalization `json:"obs_norm"`   // M_obs input normalisation
	DeltaNorm kernels.Normalization `json:"delta_norm"` // M_obs target (delta) normalisation
	ObsAdam   AdamState             `json:"obs_adam"`
	RewParams []float64             `json:"rew_params"`
	RewNorm   kernels.Normalization `json:"rew_norm"` // M_rew input normalisation
	RewAdam   AdamState             `json:"rew_adam"`
	// RNG is the pretraining sampler's PCG state (MarshalBinary) at the
	// start of the epoch that contains Step, so that a resumed run
	// regenerates the same permutation.
	RNG []byte `json:"rng"`
	// Step counts completed pretraining steps (one minibatch for each
	// model).
	Step int `json:"step"`
	// StepsPerEpoch is the pretraining epoch length the state was made
	// with; a resume with a different one is refused.
	StepsPerEpoch int `json:"steps_per_epoch"`
}

// State captures the model's parameters, normalisations and optimizer
// states; RNG, Step and StepsPerEpoch are left for the caller (Pretrain
// fills them).
func (w *WorldModel) State() *WMState {
	on, dn := w.Obs().Normalization()
	return &WMState{
		Version:   WMStateVersion,
		Config:    cloneConfig(w.Config),
		ObsParams: slices.Clone(w.Obs().Params()),
		ObsNorm:   on,
		DeltaNorm: dn,
		ObsAdam:   w.ObsLearner.Opt.State(),
		RewParams: slices.Clone(w.Rew().Params()),
		RewNorm:   w.Rew().Normalization(),
		RewAdam:   w.RewLearner.Opt.State(),
	}
}

// Restore builds a WorldModel from a state.
func Restore(s *WMState) (*WorldModel, error) {
	if s.Version != WMStateVersion {
		return nil, fmt.Errorf("restore world model: state version %d, want %d", s.Version, WMStateVersion)
	}
	w, err := NewWorldModel(s.Config, s.ObsAdam.LR, s.RewAdam.LR, 0)
	if err != nil {
		return nil, fmt.Errorf("restore world model: %w", err)
	}
	if len(s.ObsParams) != w.Obs().NumParams() || len(s.RewParams) != w.Rew().NumParams() {
		return nil, fmt.Errorf("restore world model: state has %d and %d parameters, the config needs %d and %d",
			len(s.ObsParams), len(s.RewParams), w.Obs().NumParams(), w.Rew().NumParams())
	}
	if err := checkNorms(s, s.Config.ObsDim); err != nil {
		return nil, fmt.Errorf("restore world model: %w", err)
	}
	w.Obs().SetParams(s.ObsParams)
	w.Rew().SetParams(s.RewParams)
	w.Obs().SetNormalization(s.ObsNorm, s.DeltaNorm)
	w.Rew().SetNormalization(s.RewNorm)
	if err := w.ObsLearner.Opt.Restore(s.ObsAdam); err != nil {
		return nil, fmt.Errorf("restore world model: observation model: %w", err)
	}
	if err := w.RewLearner.Opt.Restore(s.RewAdam); err != nil {
		return nil, fmt.Errorf("restore world model: reward model: %w", err)
	}
	return w, nil
}

// checkNorms validates the normalisations of a state before they reach
// the kernels, which panic on bad ones.
func checkNorms(s *WMState, d int) error {
	for _, n := range []struct {
		name string
		v    kernels.Normalization
	}{{"obs_norm", s.ObsNorm}, {"delta_norm", s.DeltaNorm}, {"rew_norm", s.RewNorm}} {
		if len(n.v.Mean) != d || len(n.v.Std) != d {
			return fmt.Errorf("%s has %d means and %d stds, want %d", n.name, len(n.v.Mean), len(n.v.Std), d)
		}
		for j, sd := range n.v.Std {
			if !(sd > 0) {
				return fmt.Errorf("%s std[%d] = %v, want > 0", n.name, j, sd)
			}
		}
	}
	return nil
}

func cloneConfig(c ModelConfig) ModelConfig {
	c.ObsHidden = slices.Clone(c.ObsHidden)
	c.RewHidden = slices.Clone(c.RewHidden)
	return c
}

// sameShape reports whether two configs build models of the same shape
// and kind (nil and empty hidden lists are the same).
func sameShape(a, b ModelConfig) bool {
	norm := func(c ModelConfig) ModelConfig {
		c = cloneConfig(c)
		if len(c.ObsHidden) == 0 {
			c.ObsHidden = nil
		}
		if len(c.RewHidden) == 0 {
			c.RewHidden = nil
		}
		if c.NumActions > 0 {
			c.ActionDim = 0
		}
		return c
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
