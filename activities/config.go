package activities

import (
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// advEps is ε in (A − μ)/sqrt(σ² + ε) for batch-wide advantage normalisation.
const advEps = 1e-8

// EngineConfig translates an arm's resolved spec into the engine's configuration.
// totalUpdates is the run's planned number of updates, over which a decaying learning-rate
// schedule reaches 0.
//
// Zero values of fields that specs added later (the policy head, the schedule kind, the
// GIPO, SAPO and v-trace coefficients) take the kernels' defaults, so that a spec decoded
// from an older workflow history still maps to a working configuration.
func EngineConfig(c specs.Config, seed uint64, totalUpdates int) engine.Config {
	a := c.Algorithm
	head := c.Policy.Action
	if head == "" {
		head = kernels.HeadCategorical
	}
	return engine.Config{
		Env:             c.Env.Kind,
		MaxEpisodeSteps: c.Env.MaxEpisodeSteps,
		Mode:            c.Pipeline.Mode,
		Workers:         c.Pipeline.Workers,
		EnvsPerWorker:   c.Pipeline.EnvsPerWorker,
		ChunkSteps:      c.Pipeline.ChunkSteps,
		ReplayCapacity:  c.Pipeline.ReplayCapacity,
		MaxStaleness:    c.Pipeline.MaxStaleness,
		Lag:             c.Pipeline.Lag,
		MaxBatch:        c.Pipeline.Inference.MaxBatch,
		MaxWait:         c.Pipeline.Inference.MaxWait,
		BatchSteps:      a.BatchSteps,
		MaxEnvSteps:     c.Budget.EnvSteps,
		GAELambda:       a.GAELambda,
		RecomputeValues: a.RecomputeValues,
		CriticWarmup:    int64(a.CriticWarmup),
		SkipRewardless:  a.SkipRewardless,
		AdvEstimator:    a.AdvEstimator,
		RepeatStarts:    a.RepeatStarts,
		TaskObs:         taskObs(c.Env),
		Policy: engine.PolicySettings{
			Head:       head,
			Bins:       c.Policy.Bins,
			Hidden:     append([]int(nil), c.Policy.Hidden...),
			Activation: c.Policy.Activation,
			InitLogStd: c.Policy.InitLogStd,
			VLA:        vlaSettings(c),
		},
		Learner: kernels.LearnerConfig{
			LossConfig: kernels.LossConfig{
				Algo:          a.Name,
				ClipCoef:      a.Clip,
				ClipValueLoss: a.ClipValueLoss, // CleanRL's value clipping; v-trace ignores it
				GIPOSigma:     orDefault(a.GIPOSigma, kernels.DefaultGIPOSigma),
				SAPOTauPos:    orDefault(a.SAPOTauPos, kernels.DefaultSAPOTauPos),
				SAPOTauNeg:    orDefault(a.SAPOTauNeg, kernels.DefaultSAPOTauNeg),
				ValueCoef:     a.ValueCoef,
				EntropyCoef:   a.EntropyCoef,
				KLCoef:        a.KLCoef,

				PositiveAdvantages: a.PositiveAdvantages,
			},
			Schedule:    lrSchedule(a, totalUpdates),
			MaxGradNorm: a.MaxGradNorm,
			Epochs:      a.Epochs,
			Minibatches: a.Minibatches,
			AdvNorm:     advNorm(a),
			AdvEps:      advEps,
			Gamma:       a.Gamma,
			RhoBar:      orDefault(a.VTraceRhoBar, 1),
			CBar:        orDefault(a.VTraceCBar, 1),
		},
		WorldModel:        worldModelSettings(c.WorldModel),
		PixelWM:           pixelWMSettings(c),
		InjectNaNAtUpdate: c.Debug.NaNAtUpdate,
		Seed:              seed,
	}
}

// taskObs is where an episode's task shows in the engine's observations (GRPO's groups):
// the one-hot task index of a tabletop suite's state vector (featureEnv keeps it at the
// front); none for the classic-control envs, whose episodes are all one task.
func taskObs(env specs.Env) [2]int {
	if env.Kind != specs.EnvTabletop {
		return [2]int{}
	}
	return [2]int{tabletop.ObsDim - tabletop.TaskDim, tabletop.ObsDim}
}

// vlaSettings maps the policy's vla block onto the frames of framedEnv: the spec's cameras
// at its image size, the tabletop word vocabulary (padded to vocab_size) and the instruction
// ids after the images; nil without a vla block.
func vlaSettings(c specs.Config) *engine.VLASettings {
	v := c.Policy.VLA
	if v == nil {
		return nil
	}
	words := len(tabletop.Vocabulary())
	bins := c.Policy.Bins
	if bins == 0 {
		bins = kernels.DefaultBins
	}
	return &engine.VLASettings{
		ImageSize: c.Env.ImageSize, Patch: v.Patch, Cameras: len(c.Env.Cameras),
		Dim: v.Dim, Layers: v.Layers, Heads: v.Heads, MLPRatio: v.MLPRatio,
		WordVocab: words, VocabSize: max(v.VocabSize, words+vla.NumSpecial+bins), ProprioDim: tabletop.ProprioDim,
		FullHead: !v.SlimHead, InstrTokens: InstructionTokens, InstrPad: tabletop.TokenPad,
		Temperature: v.Temperature, DetachValue: v.DetachValue, GreedyMean: v.Greedy == specs.GreedyMean,
	}
}

// pixelWMSettings maps a world_model block with a pixels block and imagination_ratio > 0
// onto the engine's imagined training over pixels (off otherwise). The horizon is the
// schedule's start; TrainSegment replaces it with the segment's.
func pixelWMSettings(c specs.Config) engine.PixelWMSettings {
	w := c.WorldModel
	if !w.Enabled || w.Pixels == nil || !(w.ImaginationRatio > 0) {
		return engine.PixelWMSettings{}
	}
	_, execute := c.Policy.Chunk()
	px := w.Pixels
	return engine.PixelWMSettings{Enabled: true, ImaginationRatio: w.ImaginationRatio, Horizon: max(1, w.Horizon.Start), Execute: execute,
		ObsEvery: w.ObsEvery, RewEvery: w.RewEvery, ObsFitSteps: px.ObsFitSteps, RewFitSteps: px.RewFitSteps, ProprioFitSteps: px.ProprioFitSteps, Group: px.Group, Temperature: px.Temperature, Tempered: px.Tempered, Graded: px.Graded,
		StartWithin: px.StartWithin}
}

// worldModelSettings maps the spec's world_model block. The horizon is the schedule's start;
// TrainSegment replaces it with the horizon the Run workflow passes for the segment.
func worldModelSettings(w specs.WorldModel) engine.WorldModelSettings {
	if !w.Enabled || w.Pixels != nil {
		// The pixel world model is pretrained and scored (PretrainWorldModel) but does not
		// take part in training yet: the engine trains on real steps only.
		return engine.WorldModelSettings{}
	}
	return engine.WorldModelSettings{
		Enabled:          true,
		History:          w.History,
		ObsHidden:        append([]int(nil), w.ObsHidden...),
		RewHidden:        append([]int(nil), w.RewHidden...),
		Activation:       kernels.ActTanh,
		ObsLR:            w.ObsLearningRate,
		RewLR:            w.RewLearningRate,
		RewardMode:       w.Reward,
		ImaginationRatio: w.ImaginationRatio,
		ObsEvery:         w.ObsEvery,
		RewEvery:         w.RewEvery,
		Horizon:          max(1, w.Horizon.Start),
	}
}

// lrSchedule maps the spec's learning-rate options: anneal_lr = false is a constant rate
// whatever lr_schedule says (after the warmup, which applies either way); with anneal_lr
// the rate decays as lr_schedule says (linear when unset, CleanRL's anneal) to 0 at
// totalUpdates.
func lrSchedule(a specs.Algorithm, totalUpdates int) kernels.LRSchedule {
	s := kernels.LRSchedule{Base: a.LearningRate, Warmup: a.WarmupUpdates, Total: totalUpdates, Kind: kernels.LRConstant}
	if a.AnnealLR {
		switch a.LRSchedule {
		case specs.LRScheduleCosine:
			s.Kind = kernels.LRCosine
		case specs.LRScheduleConstant:
			s.Kind = kernels.LRConstant
		default:
			s.Kind = kernels.LRLinear
		}
	}
	return s
}

// advNorm maps the spec's advantage normalisation: norm_adv = false switches it off;
// otherwise "global" normalises over the whole training batch (across trainer shards),
// "minibatch" per minibatch as CleanRL does, and "none" not at all. Configs from older
// histories spell "minibatch" as "batch"; the default branch covers both.
func advNorm(a specs.Algorithm) string {
	if !a.NormAdv {
		return kernels.AdvNormNone
	}
	switch a.AdvantageNorm {
	case specs.AdvantageNormGlobal:
		return kernels.AdvNormGlobal
	case specs.AdvantageNormNone:
		return kernels.AdvNormNone
	default:
		return kernels.AdvNormMinibatch
	}
}

// orDefault returns v, or def when v is 0 (a field the spec did not have yet).
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
