package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// learnCheck is a named learning check: an environment, an algorithm, a budget and the mean
// return (last 100 episodes) every seed must reach, or with Success the final evaluation's
// success rate (and, for a run that starts from behaviour cloning, never below the cloned
// policy's).
type learnCheck struct {
	Name      string
	Summary   string
	EnvSteps  int64
	Threshold float64
	config    func() specs.Config
	Success   bool
}

// cleanRLConfig is CleanRL's ppo.py setup (4 envs × 128 steps per update, 4 epochs of 4
// minibatches, lr 2.5e-4 annealed, γ 0.99, λ 0.95, clip 0.2, entropy 0.01) on env.
func cleanRLConfig(env, algo string, steps int64) specs.Config {
	c := specs.DefaultConfig()
	c.Budget.EnvSteps = steps
	c.Env.Kind = env
	c.Env.MaxEpisodeSteps, _ = specs.DefaultMaxEpisodeSteps(env)
	c.Algorithm.Name = algo
	c.Pipeline.Mode = specs.ModeSync
	c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 4, 1
	c.Pipeline.ChunkSteps = 128
	c.Pipeline.ReplayCapacity = 2048
	c.Algorithm.BatchSteps = 512
	return c
}

// tokensPendulum is the VLA-style setup on Pendulum-v1: the torque is one action token out
// of 256 bins, decoded by the tokens head. Pendulum's rewards are dense and its horizon short,
// so γ is 0.9 (as in RL Zoo's tuned PPO); its returns are near −1000, so the value loss is not
// clipped (a clipped critic cannot follow them) and advantages are normalised per minibatch.
// 8 envs, 1024 steps per update, 10 epochs of 16 minibatches at a constant lr of 1e-3.
func tokensPendulum(algo string) func() specs.Config {
	return func() specs.Config {
		c := cleanRLConfig(specs.EnvPendulum, algo, 1_000_000)
		c.Policy.Action = specs.ActionTokens
		c.Policy.Bins = 256
		c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 2, 4
		c.Pipeline.ChunkSteps = 256
		c.Algorithm.BatchSteps = 1024
		c.Algorithm.Gamma = 0.9
		c.Algorithm.LearningRate = 1e-3
		c.Algorithm.AnnealLR = false
		c.Algorithm.Epochs = 10
		c.Algorithm.Minibatches = 16
		c.Algorithm.EntropyCoef = 0
		c.Algorithm.ClipValueLoss = false
		return c
	}
}

// tabletopBC is examples/bc.hcl's base arm on suite: the suite's ten tasks, 50
// demonstrations per task cloned into a 256×256 gaussian policy over chunks of 8 actions
// (4 executed), then PPO at lr 3e-5 with clip 0.1 on the sparse success reward, evaluated
// greedily on 100 episodes (10 fixed initial states per task) after every 2 updates.
func tabletopBC(suite string) func() specs.Config {
	return func() specs.Config { return tabletopBCConfig(suite) }
}

func tabletopBCConfig(suite string) specs.Config {
	c := specs.DefaultConfig()
	c.Budget.EnvSteps = 98_304
	c.Env = specs.Env{Kind: specs.EnvTabletop, Suite: suite, ImageSize: 64, Cameras: []string{"agentview", "wrist"}, Latency: c.Env.Latency}
	for t := range tabletop.TaskCount(suite) {
		c.Env.Tasks = append(c.Env.Tasks, t)
	}
	c.Env.MaxEpisodeSteps = tabletop.MaxSteps(suite)
	c.Policy = specs.Policy{Action: specs.ActionGaussian, Hidden: []int{256, 256}, Activation: specs.ActivationReLU, Bins: 256,
		InitLogStd: -2.3, ActionChunk: 8, ExecuteSteps: 4}
	c.Pretrain = specs.DefaultPretrain()
	a := &c.Algorithm
	a.LearningRate, a.AnnealLR, a.BatchSteps, a.Epochs, a.Minibatches, a.Clip, a.EntropyCoef = 3e-5, false, 4096, 4, 8, 0.1, 0
	c.Pipeline.Mode, c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = specs.ModeSync, 4, 4
	c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity = 256, 8192
	c.Checkpoint.Every = 2
	c.Evaluation = specs.Evaluation{Episodes: 100, Greedy: true}
	return c
}

func tabletopVLA(suite string) func() specs.Config {
	return func() specs.Config { return tabletopVLAConfig(suite) }
}

// tabletopVLABase is the micro-VLA's setting before its RL recipe: both 32×32 cameras
// through the default vla block (width 64, 2 layers), the best measured pixel BC recipe
// (activities/bc.DefaultVLAConfig: 6 epochs of batch 32 at 3e-3, soft labels σ 3, 2 of each
// chunk's 8 actions executed; 36.6% in `accerl bench bc`, against 24.6% for one-hot labels
// executing 4), then plain token-level PPO (GAE) over the action tokens of each chunk's 2
// executed actions (policy.vla.executed_only: 14 of the 56 tokens) with a small learning
// rate, on 8,192 env steps. The pipeline and sample-efficiency benches start from it.
func tabletopVLABase(suite string) specs.Config {
	c := tabletopBCConfig(suite)
	c.Budget.EnvSteps = 8192
	c.Env.ImageSize, c.Env.Pixels = 32, true
	v := specs.DefaultVLA()
	v.ExecutedOnly = true // RL acts with and scores the 2 executed actions' 14 tokens, not all 56
	c.Policy = specs.Policy{Action: specs.ActionTokens, Bins: 256, ActionChunk: 8, ExecuteSteps: 2, VLA: &v}
	c.Pretrain.Epochs, c.Pretrain.Batch, c.Pretrain.LearningRate, c.Pretrain.LabelSigma = 6, 32, 3e-3, 3
	a := &c.Algorithm
	a.LearningRate, a.BatchSteps, a.Epochs, a.Minibatches = 1e-5, 1024, 2, 8
	c.Checkpoint.Every = 1
	return c
}

// lowTemperatureVLA is c on budget env steps with what every measured VLA RL recipe that
// kept the clone's successes shares: action tokens sampled at temperature 0.03, the value
// head detached from the transformer, batches of 4,096 env steps, and only positive
// advantages moving the policy.
func lowTemperatureVLA(c specs.Config, budget int64) specs.Config {
	c.Budget.EnvSteps = budget
	v := *c.Policy.VLA
	v.Temperature, v.DetachValue = 0.03, true
	c.Policy.VLA = &v
	c.Algorithm.BatchSteps, c.Algorithm.PositiveAdvantages = 4096, true
	return c
}

// vlaCheckSteps is the VLA checks' RL budget: 32 updates of 4,096 env steps, the longest
// measured (docs/results/bench-learn-tabletop-spatial-vla-seed*-executed-grpo-positive-T0.03-lr1e-5-131k.json,
// about 20 minutes a seed after cloning on 2 cores).
const vlaCheckSteps = 131_072

// tabletopVLAConfig is the micro-VLA's check: tabletopVLABase with the best measured RL
// recipe (README, "micro-VLA"): GRPO advantages (each ended episode's success against the
// other episodes of its task in the batch; no critic to warm up), only positive advantages
// moving the policy, action tokens sampled at temperature 0.03, learning rate 1e-5 on
// batches of 4,096 env steps, the value head detached, for vlaCheckSteps; every evaluation
// is played greedy and again sampled at that temperature (the policy RL trains: on the
// three measured seeds the sampled success rose on every one, the greedy one on two).
func tabletopVLAConfig(suite string) specs.Config {
	c := lowTemperatureVLA(tabletopVLABase(suite), vlaCheckSteps)
	c.Algorithm.AdvEstimator = specs.AdvEstimatorGRPO
	c.Evaluation.Sampled = true
	// Twelve epochs of cloning, not the base's six: the clone was under-trained (bench bc,
	// seeds 1 and 2: 36.6 / 37.6% after 6 epochs, 52.4 / 51.6% after 8, 64.8 / 66.0% after
	// 12; docs/results/vla-bc-notes.md).
	c.Pretrain.Epochs = 12
	return c
}

func learnChecks() []learnCheck {
	return []learnCheck{
		{"cartpole-ppo", "CartPole-v1, PPO, CleanRL defaults", 500_000, 475, func() specs.Config { return cleanRLConfig(specs.EnvCartPole, specs.AlgorithmPPO, 500_000) }, false},
		{"acrobot-ppo", "Acrobot-v1, PPO, CleanRL defaults", 500_000, -100, func() specs.Config { return cleanRLConfig(specs.EnvAcrobot, specs.AlgorithmPPO, 500_000) }, false},
		{"cartpole-gipo", "CartPole-v1, GIPO (σ 0.5), CleanRL defaults", 500_000, 475, func() specs.Config { return cleanRLConfig(specs.EnvCartPole, specs.AlgorithmGIPO, 500_000) }, false},
		{"acrobot-gipo", "Acrobot-v1, GIPO (σ 0.5), CleanRL defaults", 500_000, -100, func() specs.Config { return cleanRLConfig(specs.EnvAcrobot, specs.AlgorithmGIPO, 500_000) }, false},
		{"pendulum-tokens-ppo", "Pendulum-v1, tokens head (256 bins), PPO", 1_000_000, -400, tokensPendulum(specs.AlgorithmPPO), false},
		{"pendulum-tokens-gipo", "Pendulum-v1, tokens head (256 bins), GIPO", 1_000_000, -400, tokensPendulum(specs.AlgorithmGIPO), false},
		{"tabletop-spatial-bc", "tabletop spatial suite (10 tasks), BC warm start then PPO, action chunks 8/4", 98_304, 0.9, tabletopBC("spatial"), true},
		{"tabletop-object-bc", "tabletop object suite (10 tasks), BC warm start then PPO, action chunks 8/4", 98_304, 0.9, tabletopBC("object"), true},
		{"tabletop-goal-bc", "tabletop goal suite (10 tasks), BC warm start then PPO, action chunks 8/4", 98_304, 0.9, tabletopBC("goal"), true},
		{"tabletop-long-bc", "tabletop long suite (10 tasks), BC warm start then PPO, action chunks 8/4", 98_304, 0.9, tabletopBC("long"), true},
		{"tabletop-spatial-vla", "tabletop spatial suite, micro-VLA from 32×32 pixels: BC warm start (soft labels) then token-level GRPO (positive advantages, T 0.03), chunks 8/2", vlaCheckSteps, 0.9, tabletopVLA("spatial"), true},
		{"tabletop-object-vla", "tabletop object suite, micro-VLA from 32×32 pixels: BC warm start (soft labels) then token-level GRPO (positive advantages, T 0.03), chunks 8/2", vlaCheckSteps, 0.9, tabletopVLA("object"), true},
	}
}

// learnSeed is one seed's outcome of a learning check.
type learnSeed struct {
	Seed        uint64  `json:"seed"`
	EnvSteps    int64   `json:"env_steps"`
	Updates     int64   `json:"updates"`
	Episodes    int     `json:"episodes"`
	FinalReturn float64 `json:"final_mean_return"` // mean of the last 100 episodes
	StepsPerS   float64 `json:"steps_per_s"`
	WallS       float64 `json:"wall_s"`
	// FinalSuccess is the last evaluation's success rate and PretrainSuccess the cloned
	// policy's before RL (tasks with a notion of success; runs with a pretrain block), and
	// DemoSteps the demonstrations' expert steps.
	FinalSuccess    *float64 `json:"final_success,omitempty"`
	PretrainSuccess *float64 `json:"pretrain_success,omitempty"`
	DemoSteps       int64    `json:"demo_steps,omitempty"`
	// BCCached says the cloned policy came from --bc-cache (WallS then excludes cloning).
	BCCached bool `json:"bc_cached,omitempty"`
	// EvalCurve is every evaluation's success rate in order (checks with a success rate),
	// and TrainSuccess the training episodes' (sampled) success rate per update: how often
	// the acting policy finished a task, what the RL loss had to learn from.
	EvalCurve    []float64 `json:"eval_success_curve,omitempty"`
	TrainSuccess []float64 `json:"train_success_curve,omitempty"`
	// The same for the evaluations played sampling (--eval-sampled): the cloned policy's,
	// the last one and every one in order.
	PretrainSampled *float64  `json:"pretrain_sampled_success,omitempty"`
	FinalSampled    *float64  `json:"final_sampled_success,omitempty"`
	SampledCurve    []float64 `json:"eval_sampled_success_curve,omitempty"`
	Passed          bool      `json:"passed"`
}

// learnResult is one check over all its seeds.
type learnResult struct {
	Check     string      `json:"check"`
	Summary   string      `json:"summary"`
	Mode      string      `json:"mode"`
	EnvSteps  int64       `json:"budget_env_steps"`
	Threshold float64     `json:"threshold"`
	Seeds     []learnSeed `json:"seeds"`
	Passed    bool        `json:"passed"` // every seed reached the threshold
	// Remote is the number of envservers the environments ran on (--remote), 0 in process.
	Remote int `json:"remote_envservers,omitempty"`
	// Settings are the RL settings the check ran with, after the flags: a result
	// file says which ablation it measured.
	Settings learnSettings `json:"settings"`
}

// learnSettings are the RL settings of a check that bench learn's flags change.
type learnSettings struct {
	LearningRate   float64 `json:"learning_rate"`
	BatchSteps     int     `json:"batch_steps"`
	CriticWarmup   int     `json:"critic_warmup,omitempty"`
	SkipRewardless bool    `json:"skip_rewardless,omitempty"`
	PositiveAdv    bool    `json:"positive_advantages,omitempty"`
	AdvEstimator   string  `json:"adv_estimator,omitempty"` // "" is GAE
	Temperature    float64 `json:"temperature,omitempty"`   // VLA checks: the RL sampling temperature
	DetachValue    bool    `json:"detach_value,omitempty"`
	ExecutedOnly   bool    `json:"executed_only,omitempty"` // VLA checks: RL acts with and scores the executed actions alone
	Greedy         string  `json:"greedy,omitempty"`        // VLA checks: the greedy decoding ("" is argmax)
	EvalSampled    bool    `json:"eval_sampled,omitempty"`
}

// String is the settings in one line, as the printout's header shows them.
func (s learnSettings) String() string {
	out := fmt.Sprintf("learning rate %g, %d env steps per update", s.LearningRate, s.BatchSteps)
	if s.CriticWarmup > 0 {
		out += fmt.Sprintf(", critic warm-up %d updates", s.CriticWarmup)
	}
	if s.SkipRewardless {
		out += ", value-only updates on batches without reward"
	}
	if s.PositiveAdv {
		out += ", positive advantages only"
	}
	if s.AdvEstimator != "" {
		out += ", " + s.AdvEstimator + " advantages"
	}
	if s.Temperature > 0 {
		out += fmt.Sprintf(", sampling temperature %g", s.Temperature)
	}
	if s.DetachValue {
		out += ", value detached"
	}
	if s.ExecutedOnly {
		out += ", executed actions only"
	}
	if s.Greedy != "" {
		out += ", greedy decoding " + s.Greedy
	}
	if s.EvalSampled {
		out += "; evaluated greedy and sampled"
	}
	return out
}

func learnSettingsOf(c specs.Config) learnSettings {
	a := c.Algorithm
	s := learnSettings{LearningRate: a.LearningRate, BatchSteps: a.BatchSteps, CriticWarmup: a.CriticWarmup, SkipRewardless: a.SkipRewardless,
		PositiveAdv: a.PositiveAdvantages, AdvEstimator: a.AdvEstimator, EvalSampled: c.Evaluation.Sampled}
	if v := c.Policy.VLA; v != nil {
		s.Temperature, s.DetachValue, s.ExecutedOnly, s.Greedy = v.SamplingTemperature(), v.DetachValue, v.ExecutedOnly, v.Greedy
	}
	return s
}

// learnOverrides are bench learn's RL flags, applied onto each selected check's config:
// a number or name flag left at its zero value keeps the check's setting; a boolean flag
// given (given[name]) sets its field either way, so --positive-advantages=false turns off
// a check's default.
type learnOverrides struct {
	given                                                          map[string]bool
	temperature, learningRate                                      float64
	detach, executedOnly, positiveAdv, skipRewardless, evalSampled bool
	greedy, advEstimator                                           *string
	criticWarmup, batchSteps                                       int
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
	if o.temperature > 0 || o.given["detach-value"] || o.given["executed-only"] || o.greedy != nil {
		if cfg.Policy.VLA == nil {
			return fmt.Errorf("--temperature, --detach-value, --executed-only and --greedy: check %s has no VLA policy", check)
		}
		v := *cfg.Policy.VLA
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
	if o.learningRate > 0 {
		a.LearningRate = o.learningRate
	}
	if o.batchSteps > 0 {
		a.BatchSteps = o.batchSteps
	}
	if o.given["eval-sampled"] {
		if o.evalSampled && (!cfg.Evaluation.Greedy || cfg.Evaluation.Episodes == 0) {
			return fmt.Errorf("--eval-sampled: check %s has no greedy evaluation to play a sampled one beside", check)
		}
		cfg.Evaluation.Sampled = o.evalSampled
	}
	return nil
}

func benchLearn(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	checks := learnChecks()
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
	}
	fs := newFlagSet("bench learn", "bench learn [flags] CHECK...   — train named learning checks and report the final mean return (last 100 episodes) per seed\n\nChecks: "+strings.Join(names, ", "), stderr)
	seedList := fs.String("seeds", "1,2,3", "comma-separated seeds")
	steps := fs.Int64("steps", 0, "override each check's env-step budget (0 keeps it; a smaller budget is a quick smoke run, not the check)")
	mode := fs.String("mode", specs.ModeSync, "pipeline mode: sync (deterministic) or async")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	cacheDir := fs.String("bc-cache", "", "keep each check's and seed's behaviour-cloned policy in this directory and start later runs of the same recipe from it instead of cloning again (RL ablations of a VLA check); the runs' BC success is the cached policy's")
	temperature := fs.Float64("temperature", 0, "sample the VLA checks' RL action tokens at this temperature (policy.vla.temperature; 0 keeps the check's)")
	detach := fs.Bool("detach-value", false, "train the VLA checks' RL value head without its gradient into the transformer (policy.vla.detach_value; the VLA checks' default, --detach-value=false turns it off)")
	executedOnly := fs.Bool("executed-only", true, "let the VLA checks' RL act with, and score, only the executed actions of each chunk (policy.vla.executed_only, the checks' default); --executed-only=false decodes and scores whole chunks")
	greedy := fs.String("greedy", "", "the VLA checks' greedy decoding (policy.vla.greedy): argmax, or mean (the mean bin at the sampling temperature); a changed decoding clones anew under --bc-cache, since it changes the clone's success")
	criticWarmup := fs.Int("critic-warmup", 0, "train only the value for each run's first N updates (algorithm.critic_warmup)")
	positiveAdv := fs.Bool("positive-advantages", false, "let only steps with a positive advantage move the policy (algorithm.positive_advantages, self-imitation; the VLA checks' default, --positive-advantages=false turns it off)")
	advEstimator := fs.String("adv-estimator", "", "override each check's advantage estimator (algorithm.adv_estimator): gae, or grpo (each ended episode's return against its task's others in the batch, no critic)")
	skipRewardless := fs.Bool("skip-rewardless", false, "train only the value on batches whose rewards are all 0 (algorithm.skip_rewardless; --skip-rewardless=false turns it off)")
	rlLR := fs.Float64("learning-rate", 0, "override each check's RL learning rate (algorithm.learning_rate; 0 keeps the check's)")
	evalSampled := fs.Bool("eval-sampled", false, "also evaluate every check sampling its actions as training does, beside the greedy evaluation (evaluation.sampled; checks with greedy evaluation; the VLA checks' default, --eval-sampled=false plays greedy only)")
	batchSteps := fs.Int("batch-steps", 0, "override each check's env steps per update (algorithm.batch_steps; 0 keeps the check's)")
	remote := fs.Int("remote", 0, "step the checks' environments on this many `accerl envserver`s started on this host (over dm_env_rpc) instead of in process, to compare learning through the network tier; 0 is in process")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitCode(2)
	}
	var remoteAddrs []string
	if *remote < 0 || *remote > 64 {
		return fmt.Errorf("bench learn: --remote %d: start 0 (in process) to 64 envservers", *remote)
	} else if *remote > 0 {
		addrs, stop, err := startEnvServers(*remote)
		if err != nil {
			return fmt.Errorf("bench learn --remote: %w", err)
		}
		defer stop()
		remoteAddrs = addrs
		fmt.Fprintf(stdout, "Environments on %d envserver(s): %s\n", len(addrs), strings.Join(addrs, ", "))
	}
	seeds, err := parseSeeds(*seedList)
	if err != nil {
		return err
	}
	var selected []learnCheck
	for _, name := range fs.Args() {
		found := false
		for _, c := range checks {
			if c.Name == name {
				selected = append(selected, c)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("unknown learning check %q; known checks: %s", name, strings.Join(names, ", "))
		}
	}
	if *mode != specs.ModeSync && *mode != specs.ModeAsync {
		return fmt.Errorf("--mode must be sync or async, not %q", *mode)
	}
	if *temperature < 0 || *temperature > 10 {
		return fmt.Errorf("--temperature %g: give a sampling temperature greater than 0 and at most 10 (0 keeps each check's)", *temperature)
	}
	greedyName, err := enumOverride("greedy", *greedy, specs.GreedyArgmax, specs.GreedyMean)
	if err != nil {
		return err
	}
	advName, err := enumOverride("adv-estimator", *advEstimator, specs.AdvEstimatorGAE, specs.AdvEstimatorGRPO)
	if err != nil {
		return err
	}
	if *criticWarmup < 0 || *rlLR < 0 || *batchSteps < 0 {
		return fmt.Errorf("--critic-warmup %d, --learning-rate %g, --batch-steps %d: none of them may be negative (0 keeps each check's)", *criticWarmup, *rlLR, *batchSteps)
	}
	ov := learnOverrides{given: map[string]bool{}, temperature: *temperature, detach: *detach, executedOnly: *executedOnly,
		greedy: greedyName, criticWarmup: *criticWarmup, positiveAdv: *positiveAdv, advEstimator: advName,
		skipRewardless: *skipRewardless, learningRate: *rlLR, evalSampled: *evalSampled, batchSteps: *batchSteps}
	fs.Visit(func(f *flag.Flag) { ov.given[f.Name] = true })
	var cache *bcCache
	if *cacheDir != "" {
		if err := os.MkdirAll(*cacheDir, 0o755); err != nil {
			return fmt.Errorf("--bc-cache: %w", err)
		}
		cache = &bcCache{dir: *cacheDir}
	}

	var results []learnResult
	failed := false
	for _, chk := range selected {
		cfg := chk.config()
		if *steps > 0 {
			cfg.Budget.EnvSteps = *steps
		}
		cfg.Pipeline.Mode = *mode
		if remoteAddrs != nil {
			cfg.Env.Remote = &specs.Remote{Addresses: remoteAddrs}
		}
		if err := ov.apply(chk.Name, &cfg); err != nil {
			return err
		}
		res := learnResult{Check: chk.Name, Summary: chk.Summary, Mode: *mode, EnvSteps: cfg.Budget.EnvSteps, Threshold: chk.Threshold, Passed: true, Remote: len(remoteAddrs),
			Settings: learnSettingsOf(cfg)}
		target := fmt.Sprintf("target mean return >= %g", chk.Threshold)
		if chk.Success {
			target = fmt.Sprintf("target final success >= %g and never below BC", chk.Threshold)
		}
		fmt.Fprintf(stdout, "%s: %s, %d env steps, %s mode, %s\n", chk.Name, chk.Summary, cfg.Budget.EnvSteps, *mode, target)
		fmt.Fprintf(stdout, "  RL: %s\n", res.Settings)
		for _, seed := range seeds {
			s, err := trainCheck(ctx, chk.Name, cfg, seed, cache)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", chk.Name, seed, err)
			}
			s.Passed = s.FinalReturn >= chk.Threshold
			if chk.Success {
				s.Passed = s.FinalSuccess != nil && *s.FinalSuccess >= chk.Threshold &&
					(s.PretrainSuccess == nil || *s.FinalSuccess >= *s.PretrainSuccess)
			}
			res.Passed = res.Passed && s.Passed
			res.Seeds = append(res.Seeds, s)
			fmt.Fprintf(stdout, "  seed %d: final mean return %.1f%s (%s) after %d steps, %.0f steps/s, %s\n",
				seed, s.FinalReturn, successText(s), passWord(s.Passed), s.EnvSteps, s.StepsPerS, fmtDuration(time.Duration(s.WallS*float64(time.Second))))
			if len(s.EvalCurve) > 0 {
				fmt.Fprintf(stdout, "    evaluations' success: %s; training episodes' success per update: %s\n", pctList(s.EvalCurve), pctList(s.TrainSuccess))
			}
			if len(s.SampledCurve) > 0 {
				fmt.Fprintf(stdout, "    sampled evaluations' success: BC %s, then %s\n", pct(s.PretrainSampled), pctList(s.SampledCurve))
			}
		}
		failed = failed || !res.Passed
		results = append(results, res)
	}

	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSEED\tFINAL RETURN (last 100)\tBC SUCCESS\tFINAL SUCCESS\tTARGET\tENV STEPS\tSTEPS/S\tWALL\tRESULT")
	for _, r := range results {
		for _, s := range r.Seeds {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%g\t%d\t%.0f\t%.1fs\t%s\n", r.Check, s.Seed, s.FinalReturn, pct(s.PretrainSuccess), pct(s.FinalSuccess),
				r.Threshold, s.EnvSteps, s.StepsPerS, s.WallS, passWord(s.Passed))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := writeJSONFile(*jsonOut, results); err != nil {
			return err
		}
	}
	if failed {
		return exitCode(1)
	}
	return nil
}

// trainCheck trains one seed of a check through the training path of `accerl run` (the
// run's state machine and its activities, in this process: activities.RunLocal), in a
// temporary run directory. The final return is the run's: the mean of its last 100 training
// episodes, read back from the stored episode rows.
func trainCheck(ctx context.Context, name string, cfg specs.Config, seed uint64, cache *bcCache) (learnSeed, error) {
	dir, err := os.MkdirTemp("", "accerl-bench-learn-")
	if err != nil {
		return learnSeed{}, err
	}
	defer os.RemoveAll(dir)
	var start time.Time
	var st runstate.State
	cached, err := cache.around(name, cfg, seed, dir, func() (err error) {
		start = time.Now()
		st, err = activities.RunLocal(ctx, activities.LocalRun{Experiment: "bench-learn", Arm: name, Seed: seed,
			SpecHash: "bench-learn-" + name, Config: cfg, RunDir: dir}, nil)
		return err
	})
	if err != nil {
		return learnSeed{}, err
	}
	wall := time.Since(start).Seconds()
	s := learnSeed{Seed: seed, EnvSteps: st.EnvSteps, Updates: st.Updates, Episodes: int(st.Episodes), FinalReturn: st.RecentReturn,
		StepsPerS: float64(st.EnvSteps) / wall, WallS: wall, DemoSteps: st.DemoSteps, BCCached: cached}
	if st.HasEvalSuccess {
		s.FinalSuccess = &st.EvalSuccess
		metrics, _, err := runstore.ReadRun(dir)
		if err != nil {
			return s, err
		}
		for _, m := range metrics {
			if m.EvalEpisodes > 0 && !math.IsNaN(m.EvalSuccess) {
				s.EvalCurve = append(s.EvalCurve, m.EvalSuccess)
			}
			if m.Episodes > 0 && !math.IsNaN(m.Success) {
				s.TrainSuccess = append(s.TrainSuccess, m.Success)
			}
			if m.EvalEpisodes > 0 && !math.IsNaN(m.EvalSampledSuccess) {
				s.SampledCurve = append(s.SampledCurve, m.EvalSampledSuccess)
			}
		}
		if n := len(s.SampledCurve); n > 0 {
			s.FinalSampled = &s.SampledCurve[n-1]
		}
	}
	if cfg.Pretrain.Enabled && cfg.Evaluation.PlaysSampled() {
		var ps runstore.PretrainSummary
		if err := runstore.ReadJSON(filepath.Join(dir, runstore.PretrainFile), &ps); err != nil {
			return s, err
		}
		if ps.HasSampledSuccess {
			s.PretrainSampled = &ps.SampledSuccess
		}
	}
	if st.HasPretrainSuccess {
		s.PretrainSuccess = &st.PretrainSuccess
	}
	return s, nil
}

// successText is ", success 83.0% (BC 45.0%)" for checks with a success rate, else empty.
func successText(s learnSeed) string {
	if s.FinalSuccess == nil {
		return ""
	}
	out := ", success " + pct(s.FinalSuccess)
	if s.PretrainSuccess != nil {
		out += " (BC " + pct(s.PretrainSuccess) + ")"
	}
	return out
}

// pctList writes rates as space-separated whole percentages.
func pctList(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.0f%%", 100*x)
	}
	return b.String()
}

// pct writes a rate as a percentage, "—" when absent.
func pct(x *float64) string {
	if x == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}

func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seeds: %q is not a non-negative integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--seeds: give at least one seed, e.g. --seeds 1,2,3")
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func passWord(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// enumOverride checks the value of the flag --name, which overrides a spec field whose
// default is def (stored as "", so that specs without it keep their hash) and whose other
// choice is other. It returns nil when the flag was left out (keep each check's), else the
// field's stored value.
func enumOverride(name, val, def, other string) (*string, error) {
	switch val {
	case "":
		return nil, nil
	case def:
		return new(""), nil
	case other:
		return &val, nil
	}
	return nil, fmt.Errorf("--%s %q: give %s or %s (or leave it out to keep each check's)", name, val, def, other)
}
