package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/vla"
)

// Pipeline modes.
const (
	// ModeAsync decouples collection from training: rollout workers never
	// wait for the trainer and the trainer never waits for a slow worker,
	// only for enough data in the replay buffer.
	ModeAsync = "async"
	// ModeSync runs the same components lock-step: every environment
	// collects its share of a batch, then the trainer updates while
	// everything else waits. It is the throughput baseline and it is
	// bit-for-bit deterministic for a fixed Seed.
	ModeSync = "sync"
)

// Config configures an Engine. It is a plain JSON-serialisable struct;
// DefaultConfig returns a working one and Validate reports every problem.
type Config struct {
	// Env names the environment kind ("cartpole") and MaxEpisodeSteps its
	// episode limit (0: the kind's default). The engine only reports them;
	// the environments themselves come from the EnvFactory passed to New,
	// which the composition root builds from the same spec. Their
	// observation width and action space size the policy, and Policy.Head
	// must suit the action space.
	Env             string `json:"env"`
	MaxEpisodeSteps int    `json:"max_episode_steps"`

	// Mode is ModeAsync or ModeSync.
	Mode string `json:"mode"`
	// Workers is the number of rollout workers; EnvsPerWorker the number of
	// environments each owns. Every environment steps in its own goroutine.
	Workers       int `json:"workers"`
	EnvsPerWorker int `json:"envs_per_worker"`
	// ChunkSteps is the most steps per trajectory chunk pushed to replay;
	// smaller chunks reach the trainer sooner, larger ones bootstrap less.
	ChunkSteps int `json:"chunk_steps"`
	// ReplayCapacity is the replay buffer size in steps (oldest chunks are
	// evicted first). It must be at least BatchSteps; the engine raises it
	// internally to BatchSteps+ChunkSteps-1 in async mode and to one whole
	// round in sync mode so that a batch can always be assembled.
	ReplayCapacity int `json:"replay_capacity"`
	// MaxStaleness > 0 discards chunks holding a step whose acting policy is
	// more than this many versions behind the trainer; 0 keeps everything.
	MaxStaleness int `json:"max_staleness"`
	// Lag > 0 makes inference act with the weights published Lag versions
	// ago (artificial policy lag for ablations).
	Lag int `json:"lag"`
	// MaxBatch and MaxWait are the inference service's batching rule: a
	// batch runs at MaxBatch queued requests or when the oldest has waited
	// MaxWait. A longer MaxWait grows batches but adds to every step cycle.
	MaxBatch int              `json:"max_batch"`
	MaxWait  jsondur.Duration `json:"max_wait"`
	// BatchSteps is the number of environment steps each update consumes.
	// In sync mode every environment collects ceil(BatchSteps/envs) steps
	// per round, so a round may hold slightly more.
	BatchSteps int `json:"batch_steps"`
	// MaxEnvSteps is the run-wide environment-step budget; 0 means
	// unlimited. The environments never step past it: in async mode each
	// step is reserved from a run-wide counter before it is taken, in sync
	// mode the last round collects only the remaining steps (environments
	// in index order get one step more than the others when the remainder
	// does not divide). Once it is spent, Run trains on whatever is left
	// (a last, possibly smaller batch) and returns with
	// SegmentStats.BudgetReached.
	MaxEnvSteps int64 `json:"max_env_steps"`

	// GAELambda is the GAE λ. The discount γ is Learner.Gamma, used both by
	// GAE and by the v-trace targets.
	GAELambda float64 `json:"gae_lambda"`
	// RecomputeValues recomputes V(o_t) with the current critic before GAE
	// (policy-lag compensation); otherwise the acting policy's values are
	// used. V-trace always evaluates the current critic, so it ignores this.
	RecomputeValues bool `json:"recompute_values"`
	// CriticWarmup is the number of updates at the start of the run (run-wide
	// update numbers 1…CriticWarmup) that train the value alone: the policy
	// term, entropy bonus and KL penalty give no gradient
	// (kernels.LossConfig.ValueOnly). A critic that is new at the start of RL
	// fine-tuning turns its own errors into advantages, and those move a
	// behaviour-cloned policy at random until it has learnt (verl's
	// critic_warmup). 0 is off.
	CriticWarmup int64 `json:"critic_warmup,omitempty"`
	// SkipRewardless trains the value alone on a batch whose rewards are all 0
	// (on a sparse-reward task: no episode in it succeeded). Such a batch's
	// advantages come from the critic alone; normalised to unit size they
	// would still move the policy.
	SkipRewardless bool `json:"skip_rewardless,omitempty"`
	// AdvEstimator is how the policy's advantages are estimated: AdvGAE (""), GAE over the
	// critic's values; or AdvGRPO, GRPO's outcome advantages (kernels.GroupAdvantages):
	// each episode that ends in the batch is judged against the batch's other episodes of its
	// task, with no critic, and the advantages are used as they come (no further
	// normalisation). The critic still trains on GAE's returns. Not with v-trace, nor with
	// the state-vector world model's imagined rollouts (their pieces end no episode); with
	// the pixel world model only when it imagines every start in groups
	// (PixelWMSettings.Group ≥ 2), whose rollouts it compares by M_rew's success.
	AdvEstimator string `json:"adv_estimator,omitempty"`
	// TaskObs [from, to) are the observation values that name an episode's task (the
	// tabletop's one-hot task index), read from its first step: AdvGRPO's groups. Empty
	// (from = to) puts every episode of a batch in one group.
	TaskObs [2]int `json:"task_obs,omitzero"`
	// RepeatStarts, when above 1, makes every rollout environment play each start it draws
	// this many times in a row (the environment is restored to its state right after the
	// start's Reset, Env.UnmarshalBinary, instead of drawing a new one), and AdvGRPO then
	// judges each episode against the batch's other episodes from the same start rather
	// than its task's: the outcome compared is the actions', not the layout's difficulty
	// (SimpleVLA-RL and RLinf roll every LIBERO initial state out n times). Restoring the
	// start also restores what the environment counts across episodes (the tabletop's
	// per-task failure history, which weights its task draw, sees the last play of each
	// start only). It needs environments whose MarshalBinary captures the whole state (every
	// simulator in testenv; a remote world only with dm_env_rpc's "state" property, without
	// which a restored start ends its episode at the first step). 0 or 1 is off.
	RepeatStarts int `json:"repeat_starts,omitempty"`

	// Policy shapes the actor-critic network and its action head.
	Policy PolicySettings `json:"policy"`
	// Learner holds the update's hyperparameters: the loss (Algo "ppo",
	// "gipo", "sapo" or "vtrace" and its coefficients), the learning-rate
	// schedule (its Total is the run's planned number of updates), gradient
	// clipping, epochs and minibatches, advantage normalisation ("none",
	// "minibatch", "batch" or "global"; with the engine's single trainer
	// "global" equals "batch"), the discount γ and v-trace's ρ̄ and c̄.
	Learner kernels.LearnerConfig `json:"learner"`

	// WorldModel switches on AcceRL's world model: dual buffers (B_real,
	// B_img), imagined rollouts mixed into every batch, and online
	// world-model training. The zero value is off.
	WorldModel WorldModelSettings `json:"world_model"`
	// PixelWM switches on imagined training over pixels with a pretrained pixel world
	// model (Engine.SetPixelWorldModel): sync mode and a policy that reads frames only.
	// The zero value is off.
	PixelWM PixelWMSettings `json:"pixel_wm,omitzero"`

	// InjectNaNAtUpdate is a test-only hook (0 = off): the run-wide update
	// with this number (counted from 1, as UpdateReport.Update) gets a NaN
	// in its training data, so that the learner fails with its non-finite
	// error. Run then returns that error naming the update, and the
	// parameters stay as they were before the update. It exists to test
	// the failure and retry path end to end; never set it in a real run.
	InjectNaNAtUpdate int64 `json:"inject_nan_at_update,omitempty"`

	// Seed determines every random stream: initial weights, environment
	// resets, action sampling, minibatch shuffles and latency draws.
	Seed uint64 `json:"seed"`
}

// PolicySettings shape the engine's policy; the observation width and the
// action space come from the environment.
type PolicySettings struct {
	// Head is the action head: kernels.HeadCategorical for a discrete
	// action space, kernels.HeadTokens (each continuous dimension cut into
	// Bins tokens, decoded autoregressively) or kernels.HeadGaussian for a
	// continuous one.
	Head string `json:"head"`
	// Bins and EmbedDim size the tokens head (0 takes kernels.DefaultBins
	// and kernels.DefaultEmbedDim); other heads ignore them.
	Bins     int `json:"bins,omitempty"`
	EmbedDim int `json:"embed_dim,omitempty"`
	// Hidden and Activation shape the actor trunk and the critic (e.g.
	// [64, 64], "tanh").
	Hidden     []int  `json:"hidden"`
	Activation string `json:"activation"`
	// InitLogStd is the gaussian head's initial log σ (CleanRL: 0).
	InitLogStd float64 `json:"init_log_std,omitempty"`
	// VLA, when set, makes the policy the micro-VLA of package kernels/vla
	// (a transformer over each observation's frame: camera images and the
	// instruction, plus the proprioception) instead of the MLP; Head must
	// then be kernels.HeadTokens, with Bins bins per action value, and
	// Hidden, Activation and EmbedDim are unused. The environments must
	// have frames (FrameEnv) in VLASettings' layout.
	VLA *VLASettings `json:"vla,omitempty"`
}

// VLASettings size the micro-VLA policy (vla.Config) and say where its
// inputs lie in an observation's frame: Cameras images of ImageSize² RGB
// bytes, then InstrTokens uint16 little-endian word ids below WordVocab,
// InstrPad marking unused places. The proprioception is the first
// ProprioDim values of the observation vector.
type VLASettings struct {
	ImageSize  int `json:"image_size"`
	Patch      int `json:"patch"`
	Cameras    int `json:"cameras"`
	Dim        int `json:"dim"`
	Layers     int `json:"layers"`
	Heads      int `json:"heads"`
	MLPRatio   int `json:"mlp_ratio"`
	WordVocab  int `json:"word_vocab"`
	VocabSize  int `json:"vocab_size"`
	ProprioDim int `json:"proprio_dim"`
	// FullHead scores the action tokens with the full-vocabulary LM head
	// instead of the slim one (vocabulary slimming, the default).
	FullHead    bool `json:"full_head,omitempty"`
	InstrTokens int  `json:"instr_tokens"`
	InstrPad    int  `json:"instr_pad"`
	// Temperature samples the action tokens from softmax(logits/T) in acting and
	// in the learner's log-probabilities (vla.PolicyConfig.Temperature); 0 is 1.
	Temperature float64 `json:"temperature,omitempty"`
	// DetachValue keeps the value loss's gradient out of the transformer
	// (vla.PolicyConfig.DetachValue).
	DetachValue bool `json:"detach_value,omitempty"`
	// GreedyMean decodes greedy actions as the mean bin of the tempered distribution
	// (vla.PolicyConfig.GreedyMean) instead of the argmax.
	GreedyMean bool `json:"greedy_mean,omitempty"`
}

// ModelConfig is the vla.Config of these settings for actionDims action
// tokens of bins bins each.
func (v VLASettings) ModelConfig(actionDims, bins int) vla.Config {
	return vla.Config{ImageSize: v.ImageSize, Patch: v.Patch, Cameras: v.Cameras, Dim: v.Dim, Layers: v.Layers,
		Heads: v.Heads, MLPRatio: v.MLPRatio, MaxInstr: v.InstrTokens, WordVocab: v.WordVocab, VocabSize: v.VocabSize,
		ActionDims: actionDims, Bins: bins, ProprioDim: v.ProprioDim, SlimHead: !v.FullHead}
}

// vlaHead reports a head the VLA policy cannot write.
func (p PolicySettings) vlaHead() error {
	if p.Head != kernels.HeadTokens {
		return fmt.Errorf("the VLA policy writes action tokens: policy head must be %q, got %q", kernels.HeadTokens, p.Head)
	}
	return nil
}

// vlaConfig sizes the VLA policy for the environments (see policyConfig).
func (c Config) vlaConfig(obsDim, frameBytes int, space ActionSpace) (vla.PolicyConfig, error) {
	p := c.Policy
	if err := p.vlaHead(); err != nil {
		return vla.PolicyConfig{}, err
	}
	if space.N > 0 {
		return vla.PolicyConfig{}, fmt.Errorf("the VLA policy needs a continuous action space, env %q has %d discrete actions", c.Env, space.N)
	}
	bins := p.Bins
	if bins == 0 {
		bins = kernels.DefaultBins
	}
	pc := vla.PolicyConfig{Model: p.VLA.ModelConfig(len(space.Low), bins), ObsDim: obsDim,
		InstrTokens: p.VLA.InstrTokens, InstrPad: p.VLA.InstrPad, Low: space.Low, High: space.High, Temperature: p.VLA.Temperature, DetachValue: p.VLA.DetachValue,
		GreedyMean: p.VLA.GreedyMean}
	if err := pc.Validate(); err != nil {
		return pc, err
	}
	if frameBytes != pc.FrameBytes() {
		return pc, fmt.Errorf("the VLA policy reads frames of %d bytes (%d cameras of %d×%d×3, %d instruction ids), env %q gives %d (no frames: turn on the env's pixels)",
			pc.FrameBytes(), pc.Model.Cameras, pc.Model.ImageSize, pc.Model.ImageSize, pc.InstrTokens, c.Env, frameBytes)
	}
	return pc, nil
}

// Advantage estimators (Config.AdvEstimator).
const (
	AdvGAE  = "gae"
	AdvGRPO = "grpo"
)

// DefaultConfig returns a small async CartPole configuration with a 64-64
// tanh categorical policy and CleanRL's PPO hyperparameters
// (kernels.DefaultLearnerConfig("ppo")), no simulated latency and no
// step budget.
func DefaultConfig() Config {
	return Config{
		Env:            "cartpole",
		Mode:           ModeAsync,
		Workers:        4,
		EnvsPerWorker:  2,
		ChunkSteps:     64,
		ReplayCapacity: 8192,
		MaxBatch:       256,
		MaxWait:        jsondur.Duration(5 * time.Millisecond),
		BatchSteps:     512,
		GAELambda:      0.95,
		Policy:         PolicySettings{Head: kernels.HeadCategorical, Hidden: []int{64, 64}, Activation: kernels.ActTanh},
		Learner:        kernels.DefaultLearnerConfig(kernels.AlgoPPO),
	}
}

// NumEnvs returns Workers × EnvsPerWorker.
func (c Config) NumEnvs() int { return c.Workers * c.EnvsPerWorker }

// RoundSteps returns the steps one environment collects per full sync
// round, ceil(RealBatchSteps / NumEnvs).
func (c Config) RoundSteps() int {
	n := c.NumEnvs()
	return (c.RealBatchSteps() + n - 1) / n
}

// RealBatchSteps returns the real (simulator) steps an update plans to
// consume: BatchSteps without a world model, otherwise the share the
// imagination ratio leaves to real data, BatchSteps − round(ratio ·
// BatchSteps), at least 1. In sync mode every round collects this many
// (rounded up to whole rounds); in async mode it is the least an update
// takes from replay once B_img holds its share.
func (c Config) RealBatchSteps() int {
	switch {
	case c.WorldModel.Enabled:
		return max(1, c.BatchSteps-imgQuota(c.WorldModel.ImaginationRatio, c.BatchSteps))
	case c.PixelWM.Enabled:
		return max(1, c.BatchSteps-imgQuota(c.PixelWM.ImaginationRatio, c.BatchSteps))
	}
	return c.BatchSteps
}

// replayCapacity is the capacity the engine really uses (see ReplayCapacity).
func (c Config) replayCapacity() int {
	if c.Mode == ModeSync {
		return max(c.ReplayCapacity, c.RoundSteps()*c.NumEnvs())
	}
	return max(c.ReplayCapacity, c.BatchSteps+c.ChunkSteps-1)
}

// chunkSteps is the effective chunk length: sync rounds cut chunks anyway.
func (c Config) chunkSteps() int {
	if c.Mode == ModeSync {
		return min(c.ChunkSteps, c.RoundSteps())
	}
	return c.ChunkSteps
}

// policyConfig sizes the kernels policy for an environment with obsDim
// observations and action space space. It reports a head that does not
// suit the action space.
func (c Config) policyConfig(obsDim int, space ActionSpace) (kernels.PolicyConfig, error) {
	p := c.Policy
	pc := kernels.PolicyConfig{
		ObsDim: obsDim, Head: p.Head, Bins: p.Bins, EmbedDim: p.EmbedDim,
		Hidden: p.Hidden, Activation: p.Activation, InitLogStd: p.InitLogStd,
	}
	switch p.Head {
	case kernels.HeadCategorical:
		if space.N < 2 {
			return pc, fmt.Errorf("policy head %q needs a discrete action space, env %q has a continuous one (use %q or %q)",
				p.Head, c.Env, kernels.HeadTokens, kernels.HeadGaussian)
		}
		pc.NumActions = space.N
	case kernels.HeadTokens, kernels.HeadGaussian:
		if space.N > 0 {
			return pc, fmt.Errorf("policy head %q needs a continuous action space, env %q has %d discrete actions (use %q)",
				p.Head, c.Env, space.N, kernels.HeadCategorical)
		}
		pc.ActionDims = len(space.Low)
		pc.Low, pc.High = space.Low, space.High
	}
	return pc, pc.Validate()
}

// Validate reports every problem of c in one error. For a config built from a validated
// spec (activities.EngineConfig) it is an assertion: accerl validate checks every one of
// these rules first, with the spec's file:line:col (activities' rules test pairs each rule
// with a spec that breaks it). Whether the policy head suits the environments' action space
// is checked by New, which has the environments.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if err := c.Policy.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Mode != ModeAsync && c.Mode != ModeSync {
		bad("mode must be %q or %q, got %q", ModeAsync, ModeSync, c.Mode)
	}
	if c.Workers < 1 || c.EnvsPerWorker < 1 {
		bad("workers and envs per worker must be at least 1, got %d and %d", c.Workers, c.EnvsPerWorker)
	}
	if c.ChunkSteps < 1 {
		bad("chunk steps must be at least 1, got %d", c.ChunkSteps)
	}
	if c.BatchSteps < 1 {
		bad("batch steps must be at least 1, got %d", c.BatchSteps)
	}
	if c.ReplayCapacity < c.BatchSteps || c.ReplayCapacity < c.ChunkSteps {
		bad("replay capacity %d must hold batch steps (%d) and chunk steps (%d)", c.ReplayCapacity, c.BatchSteps, c.ChunkSteps)
	}
	if c.MaxStaleness < 0 || c.Lag < 0 {
		bad("max staleness and lag must not be negative, got %d and %d", c.MaxStaleness, c.Lag)
	}
	if c.MaxStaleness > 0 && c.MaxStaleness < c.Lag {
		bad("max staleness %d is below lag %d: every sample would be dropped", c.MaxStaleness, c.Lag)
	}
	if c.MaxBatch < 1 {
		bad("max batch must be at least 1, got %d", c.MaxBatch)
	}
	if c.MaxWait < 0 {
		bad("max wait must not be negative, got %v", c.MaxWait)
	}
	if c.MaxEnvSteps < 0 {
		bad("max env steps must not be negative (0 = unlimited), got %d", c.MaxEnvSteps)
	}
	if c.CriticWarmup < 0 {
		bad("critic warmup must not be negative (0 = off), got %d", c.CriticWarmup)
	}
	if c.RepeatStarts < 0 {
		bad("repeat starts must not be negative (0 or 1 = off), got %d", c.RepeatStarts)
	}
	switch c.AdvEstimator {
	case "", AdvGAE:
	case AdvGRPO:
		if c.Learner.Algo == kernels.AlgoVTrace {
			bad("adv estimator %q: v-trace computes its own advantages; use ppo, gipo or sapo", AdvGRPO)
		}
		if c.WorldModel.Enabled && c.WorldModel.ImaginationRatio > 0 {
			bad("adv estimator %q needs whole episodes, and the state-vector world model's imagined rollouts are pieces of none; use %q with a world model", AdvGRPO, AdvGAE)
		}
		if c.PixelWM.Enabled && c.PixelWM.Group < 2 {
			bad("adv estimator %q with the pixel world model compares the imagined rollouts of each start, which needs at least 2 of them (pixel world model group %d); set the group to 2 or more, or use %q", AdvGRPO, c.PixelWM.Group, AdvGAE)
		}
		if c.TaskObs[0] < 0 || c.TaskObs[1] < c.TaskObs[0] {
			bad("task observation range [%d, %d) is not a range", c.TaskObs[0], c.TaskObs[1])
		}
	default:
		bad("adv estimator %q: want %q or %q", c.AdvEstimator, AdvGAE, AdvGRPO)
	}
	if c.PixelWM.Enabled && c.PixelWM.Graded && c.AdvEstimator != AdvGRPO {
		bad("graded imagined outcomes rank the imagined rollouts of a start under GRPO, but the adv estimator is %q; use %q (with a group of 2 or more) or drop graded", c.AdvEstimator, AdvGRPO)
	}
	if c.InjectNaNAtUpdate < 0 {
		bad("inject nan at update must not be negative (0 = off), got %d", c.InjectNaNAtUpdate)
	}
	if g := c.Learner.Gamma; !(g > 0 && g <= 1) {
		bad("gamma must be in (0, 1], got %v", g)
	}
	if !(c.GAELambda >= 0 && c.GAELambda <= 1) {
		bad("gae lambda must be in [0, 1], got %v", c.GAELambda)
	}
	if err := c.Learner.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.WorldModel.Enabled {
		if err := c.WorldModel.validate(c.BatchSteps); err != nil {
			errs = append(errs, err)
		}
		if c.Policy.VLA != nil {
			bad("the world model imagines state vectors, not the frames the VLA policy reads: turn one of them off")
		}
	}
	if c.PixelWM.Enabled {
		if err := c.PixelWM.validate(); err != nil {
			errs = append(errs, err)
		}
		if c.Mode != ModeSync || c.Policy.VLA == nil || c.WorldModel.Enabled {
			bad("imagined training over pixels needs sync mode, the VLA policy (which reads the imagined frames) and no state-vector world model; got %s mode, VLA %v, state world model %v",
				c.Mode, c.Policy.VLA != nil, c.WorldModel.Enabled)
		}
	}
	if c.Learner.Minibatches > c.BatchSteps {
		bad("%d minibatches cannot be filled from %d batch steps", c.Learner.Minibatches, c.BatchSteps)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("engine config: %w", err)
	}
	return nil
}

// validate checks the policy settings that do not depend on the environment (head, bins,
// hidden widths, activation) by sizing the policy for a stand-in action space that suits
// the head: New checks the real one.
func (p PolicySettings) validate() error {
	if p.VLA != nil {
		if err := p.vlaHead(); err != nil {
			return err
		}
		return p.VLA.ModelConfig(1, max(p.Bins, 2)).Validate()
	}
	c := Config{Policy: p}
	space := ActionSpace{Low: []float64{-1}, High: []float64{1}}
	if p.Head == kernels.HeadCategorical {
		space = ActionSpace{N: 2}
	}
	_, err := c.policyConfig(1, space)
	return err
}
