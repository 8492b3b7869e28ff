package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/accerl/accerl/specs"
)

// learnOverrides are bench learn's RL flags, applied onto each selected check's config:
// a number or name flag left at its zero value keeps the check's setting; a boolean flag
// given (given[name]) sets its field either way, so --positive-advantages=false turns off
// a check's default.
type learnOverrides struct {
	given                                                          map[string]bool
	temperature, learningRate                                      float64
	detach, executedOnly, positiveAdv, skipRewardless, evalSampled bool
	greedy, advEstimator                                           *string
	criticWarmup, batchSteps, pretrainEpochs, checkpointEvery      int
	repeatStarts, vlaLayers                                        int
	pretrainFrom                                                   string
	pretrainLR                                                     float64
}

// setBool sets *dst to v when the boolean flag name was given.
func (o learnOverrides) setBool(name string, dst *bool, v bool) {
	if o.given[name] {
		*dst = v
	}
}

// apply sets the overrides onto cfg, the config of check; a VLA flag on a check without
// a VLA policy, or --eval-sampled on one without greedy evaluation, is an error naming both.
func (o learnOverrides) apply(check string, cfg *specs.Config) error {
	if o.temperature > 0 || o.given["detach-value"] || o.given["executed-only"] || o.greedy != nil || o.vlaLayers > 0 {
		if cfg.Policy.VLA == nil {
			return fmt.Errorf("--temperature, --detach-value, --executed-only, --greedy and --vla-layers: check %s has no VLA policy", check)
		}
		v := *cfg.Policy.VLA
		if o.vlaLayers > 0 {
			v.Layers = o.vlaLayers
		}
		if o.temperature > 0 {
			v.Temperature = o.temperature
		}
		o.setBool("detach-value", &v.DetachValue, o.detach)
		o.setBool("executed-only", &v.ExecutedOnly, o.executedOnly)
		if o.greedy != nil {
			v.Greedy = *o.greedy
		}
		cfg.Policy.VLA = &v
	}
	a := &cfg.Algorithm
	a.CriticWarmup = max(a.CriticWarmup, o.criticWarmup)
	o.setBool("skip-rewardless", &a.SkipRewardless, o.skipRewardless)
	o.setBool("positive-advantages", &a.PositiveAdvantages, o.positiveAdv)
	if o.advEstimator != nil {
		a.AdvEstimator = *o.advEstimator
	}
	if o.repeatStarts > 0 {
		if a.AdvEstimator != specs.AdvEstimatorGRPO {
			return fmt.Errorf("--repeat-starts: check %s does not use GRPO advantages, which are what compares the plays of a start; add --adv-estimator grpo", check)
		}
		a.RepeatStarts = o.repeatStarts
	}
	if o.learningRate > 0 {
		a.LearningRate = o.learningRate
	}
	if o.batchSteps > 0 {
		a.BatchSteps = o.batchSteps
	}
	if o.pretrainEpochs > 0 || o.pretrainFrom != "" || o.pretrainLR > 0 {
		if !cfg.Pretrain.Enabled {
			return fmt.Errorf("--pretrain-epochs, --pretrain-from and --pretrain-lr: check %s clones no policy (it has no pretrain block)", check)
		}
		if o.pretrainFrom != "" {
			if cfg.Policy.VLA == nil {
				return fmt.Errorf("--pretrain-from: check %s clones no VLA (only a VLA clone can be started from)", check)
			}
			cfg.Pretrain.From, cfg.Pretrain.Epochs = o.pretrainFrom, 0
		}
		if o.pretrainEpochs > 0 {
			cfg.Pretrain.Epochs = o.pretrainEpochs
		}
		if o.pretrainLR > 0 {
			cfg.Pretrain.LearningRate = o.pretrainLR
		}
	}
	if o.checkpointEvery > 0 {
		cfg.Checkpoint.Every = o.checkpointEvery
	}
	if o.given["eval-sampled"] {
		if o.evalSampled && (!cfg.Evaluation.Greedy || cfg.Evaluation.Episodes == 0) {
			return fmt.Errorf("--eval-sampled: check %s has no greedy evaluation to play a sampled one beside", check)
		}
		cfg.Evaluation.Sampled = o.evalSampled
	}
	return nil
}

// withPretrainFrom is cfg for one seed: its pretrain.from (--pretrain-from) with {seed}
// replaced by the seed and, when it is a glob pattern, the one path it matches.
func withPretrainFrom(cfg specs.Config, seed uint64) (specs.Config, error) {
	from := cfg.Pretrain.From
	if from == "" {
		return cfg, nil
	}
	from = strings.ReplaceAll(from, "{seed}", strconv.FormatUint(seed, 10))
	matches, err := filepath.Glob(from)
	switch {
	case err != nil:
		return cfg, fmt.Errorf("--pretrain-from %s: %w", from, err)
	case len(matches) == 0:
		return cfg, fmt.Errorf("--pretrain-from %s: no such file or directory (give a run directory, a --bc-cache entry or a `bench bc --save-model` file)", from)
	case len(matches) > 1:
		return cfg, fmt.Errorf("--pretrain-from %s matches %d paths (%s); make the pattern name one per seed", from, len(matches), strings.Join(matches, ", "))
	}
	if cfg.Pretrain.From, err = filepath.Abs(matches[0]); err != nil {
		return cfg, fmt.Errorf("--pretrain-from: %w", err)
	}
	return cfg, nil
}
