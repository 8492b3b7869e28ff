package specs

import (
	"time"

	"github.com/accerl/accerl/jsondur"
)

// Arm and experiment-level defaults. Every default of the language is defined
// here, in these constants and in DefaultConfig, and nowhere else.
const (
	// BaseArm is the name of the arm decoded from the experiment block itself,
	// before any ablation is applied. It always comes first in Experiment.Arms.
	BaseArm = "base"
	// DefaultMaxParallel is the number of runs that execute at once when an
	// experiment does not set max_parallel.
	DefaultMaxParallel = 4
	// DefaultBaseline is the arm that reports compare against when an
	// experiment does not set baseline.
	DefaultBaseline = BaseArm
)

// DefaultSeeds returns the seeds used when an experiment does not set seeds.
// It returns a fresh slice on every call so callers may modify it.
func DefaultSeeds() []uint64 { return []uint64{1, 2} }

// Environment kinds accepted as the label of an env block.
const (
	EnvCartPole              = "cartpole"
	EnvAcrobot               = "acrobot"
	EnvPendulum              = "pendulum"
	EnvMountainCarContinuous = "mountaincar_continuous"
)

// Simulated step-latency models accepted by latency.kind.
const (
	LatencyNone      = "none"
	LatencyConstant  = "constant"
	LatencyLognormal = "lognormal"
)

// Policy action heads accepted by policy.action.
const (
	ActionCategorical = "categorical"
	ActionTokens      = "tokens"
	ActionGaussian    = "gaussian"
)

// Hidden-layer activations accepted by policy.activation.
const (
	ActivationTanh = "tanh"
	ActivationReLU = "relu"
)

// Algorithms accepted as the label of an algorithm block.
const (
	AlgorithmPPO    = "ppo"
	AlgorithmGIPO   = "gipo"
	AlgorithmSAPO   = "sapo"
	AlgorithmVTrace = "vtrace"
)

// Advantage normalisation scopes accepted by algorithm.advantage_norm.
const (
	// AdvantageNormGlobal normalises over the whole training batch, across
	// trainer ranks when there are several (the AcceRL choice).
	AdvantageNormGlobal = "global"
	// AdvantageNormMinibatch normalises each minibatch separately, as CleanRL does.
	AdvantageNormMinibatch = "minibatch"
	// AdvantageNormBatch is the old spelling of AdvantageNormMinibatch, still accepted with
	// a deprecation warning and resolved to "minibatch" (it read as "the whole batch", which
	// is what "global" does).
	AdvantageNormBatch = "batch"
	// AdvantageNormNone leaves advantages as computed by GAE.
	AdvantageNormNone = "none"
)

// Learning-rate schedules accepted by algorithm.lr_schedule.
const (
	LRScheduleLinear   = "linear"
	LRScheduleCosine   = "cosine"
	LRScheduleConstant = "constant"
)

// Pipeline modes accepted by pipeline.mode.
const (
	// ModeAsync decouples rollout and training through the replay buffer.
	ModeAsync = "async"
	// ModeSync collects from every worker, then updates, in lock-step.
	ModeSync = "sync"
)

// World-model offline behaviour policies accepted by world_model.behaviour.
const (
	// WorldModelBehaviourRandom acts uniformly at random.
	WorldModelBehaviourRandom = "random"
	// WorldModelBehaviourExpertNoisy plays the tabletop suites' scripted expert with
	// Gaussian execution noise (world_model.pixels.behaviour_noise), keeping the failed
	// episodes too; pixel world model only.
	WorldModelBehaviourExpertNoisy = "expert_noisy"
)

// World-model reward modes accepted by world_model.reward.
const (
	// WorldModelRewardDirect predicts the environment's reward.
	WorldModelRewardDirect = "direct"
	// WorldModelRewardSuccessDelta predicts the success probability p and
	// rewards an imagined step with p(ô_{t+1}) − p(ô_t).
	WorldModelRewardSuccessDelta = "success_delta"
)

func envKinds() []string {
	return []string{EnvCartPole, EnvAcrobot, EnvPendulum, EnvMountainCarContinuous, EnvTabletop, EnvRemote}
}

func latencyKinds() []string { return []string{LatencyNone, LatencyConstant, LatencyLognormal} }

func actions() []string { return []string{ActionCategorical, ActionTokens, ActionGaussian} }

func activations() []string { return []string{ActivationTanh, ActivationReLU} }

func algorithms() []string {
	return []string{AlgorithmPPO, AlgorithmGIPO, AlgorithmSAPO, AlgorithmVTrace}
}

func advantageNorms() []string {
	return []string{AdvantageNormGlobal, AdvantageNormMinibatch, AdvantageNormNone}
}

func lrSchedules() []string {
	return []string{LRScheduleLinear, LRScheduleCosine, LRScheduleConstant}
}

func pipelineModes() []string { return []string{ModeAsync, ModeSync} }

func worldModelBehaviours() []string {
	return []string{WorldModelBehaviourRandom, WorldModelBehaviourExpertNoisy}
}

func worldModelRewards() []string {
	return []string{WorldModelRewardDirect, WorldModelRewardSuccessDelta}
}

// envDiscrete reports whether an environment kind takes discrete actions (one of N) rather
// than a continuous vector; ok is false for an unknown kind.
func envDiscrete(kind string) (discrete, ok bool) {
	switch kind {
	case EnvCartPole, EnvAcrobot:
		return true, true
	case EnvPendulum, EnvMountainCarContinuous, EnvTabletop:
		return false, true
	}
	return false, false
}

// DefaultMaxEpisodeSteps returns the episode step limit of an environment
// kind when its env block does not set max_episode_steps (Gymnasium's
// TimeLimit values). ok is false for an unknown kind.
func DefaultMaxEpisodeSteps(kind string) (steps int, ok bool) {
	switch kind {
	case EnvCartPole:
		return 500, true
	case EnvAcrobot:
		return 500, true
	case EnvPendulum:
		return 200, true
	case EnvMountainCarContinuous:
		return 999, true
	case EnvTabletop:
		return 0, true // the suite's limit, filled in by finalize
	}
	return 0, false
}

// DefaultConfig returns the configuration an arm starts from before the spec
// is applied. Where applicable the values are CleanRL's CartPole PPO defaults.
//
// Two fields have no usable default: Budget.EnvSteps (0, the spec must set
// it) and Env.Kind ("", the spec must write an env block). Env.MaxEpisodeSteps
// is 0 here, meaning "the kind's default"; decoding replaces it with
// DefaultMaxEpisodeSteps(kind) once the arm's kind is known.
func DefaultConfig() Config {
	return Config{
		Budget: Budget{
			EnvSteps: 0,
			WallTime: 0,
		},
		Env: Env{
			Kind:            "",
			MaxEpisodeSteps: 0,
			Latency: Latency{
				Kind:         LatencyNone,
				Median:       jsondur.Duration(5 * time.Millisecond),
				Sigma:        1.0,
				SlowFraction: 0.25,
				SlowFactor:   3.0,
			},
		},
		Policy: Policy{
			Action:     ActionCategorical,
			Hidden:     []int{64, 64},
			Activation: ActivationTanh,
			Bins:       256,
			InitLogStd: 0,
		},
		Algorithm: Algorithm{
			Name:            AlgorithmPPO,
			LearningRate:    2.5e-4,
			AnnealLR:        true,
			Gamma:           0.99,
			GAELambda:       0.95,
			Clip:            0.2,
			ValueCoef:       0.5,
			EntropyCoef:     0.01,
			MaxGradNorm:     0.5,
			Epochs:          4,
			Minibatches:     4,
			BatchSteps:      512,
			NormAdv:         true,
			RecomputeValues: false,
			AdvantageNorm:   AdvantageNormMinibatch,
			GIPOSigma:       0.5,
			KLCoef:          0,
			LRSchedule:      LRScheduleLinear,
			WarmupUpdates:   0,
			SAPOTauPos:      1.0,
			SAPOTauNeg:      1.05,
			VTraceRhoBar:    1.0,
			VTraceCBar:      1.0,
			ClipValueLoss:   true,
		},
		Pipeline: Pipeline{
			Mode:           ModeAsync,
			Workers:        4,
			EnvsPerWorker:  2,
			ChunkSteps:     64,
			ReplayCapacity: 8192,
			MaxStaleness:   0,
			Lag:            0,
			Inference: Inference{
				MaxBatch: 256,
				MaxWait:  jsondur.Duration(5 * time.Millisecond),
			},
		},
		Checkpoint: Checkpoint{
			Every:            25,
			Keep:             3,
			HeartbeatTimeout: jsondur.Duration(30 * time.Second),
		},
		Debug: Debug{NaNAtUpdate: 0},
		WorldModel: WorldModel{
			Enabled:             false,
			OfflineTrajectories: 1000,
			Behaviour:           WorldModelBehaviourRandom,
			History:             2,
			ObsHidden:           []int{128, 128},
			RewHidden:           []int{64, 64},
			ObsLearningRate:     1e-3,
			RewLearningRate:     1e-3,
			Reward:              WorldModelRewardDirect,
			PretrainEpochs:      20,
			ImaginationRatio:    0.5,
			ObsEvery:            100,
			RewEvery:            50,
			Horizon: Horizon{
				Start:    5,
				End:      50,
				LossHigh: 0.5,
				LossLow:  0.05,
			},
		},
	}
}
