package main

import (
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
	// Forty epochs of cloning, not the base's six: the clone was under-trained (bench bc,
	// seed 1: 36.6% after 6 epochs, 52.4% after 8, 64.8% after 12, 73.6% after 20;
	// docs/results/vla-bc-notes.md). Through this check, seed 1 clones to 64% greedy after
	// 12 epochs, 73% after 20 and 89% after 40 (…-e{12,20,40}-seed1.json).
	c.Pretrain.Epochs = 40
	// Three transformer blocks, not the default two: cloned for 40 epochs the 3-layer VLA
	// reaches 91.0 / 89.0 / 90.4% on seeds 1/2/3 (500 episodes), the 2-layer one 85.8 / 77.6
	// / 83.8%, and RL from the 3-layer clones ends at or above 90% on every seed where from
	// the 2-layer ones it ended at 86.8 / 80.2 / 86.4% (docs/results/vla-bc-notes.md,
	// …-layers3-e40-seed*.json). --vla-layers 2 is the earlier check (docs/results/bc-cache).
	v := *c.Policy.VLA
	v.Layers = 3
	c.Policy.VLA = &v
	// The clone's and the last evaluation play every task's 50 fixed initial states (500
	// episodes, LIBERO's protocol): at 100 episodes a success rate near 90% has a standard
	// error of 3 points, and seed 1's 40-epoch run swung between 84% and 92% from one
	// evaluation to the next, which decided "never below BC" by chance.
	c.Evaluation.FinalEpisodes = 500
	// An evaluation every 4 updates (8 over the run) instead of every update: the 200
	// evaluation episodes cost about as many env steps as an update's training, and sync
	// training is the same either way (a snapshot restores it exactly at a segment boundary).
	c.Checkpoint.Every = 4
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
		{"tabletop-spatial-vla", "tabletop spatial suite, 3-layer micro-VLA from 32×32 pixels: BC warm start (soft labels, 40 epochs) then token-level GRPO (positive advantages, T 0.03), chunks 8/2", vlaCheckSteps, 0.9, tabletopVLA("spatial"), true},
		{"tabletop-object-vla", "tabletop object suite, 3-layer micro-VLA from 32×32 pixels: BC warm start (soft labels, 40 epochs) then token-level GRPO (positive advantages, T 0.03), chunks 8/2", vlaCheckSteps, 0.9, tabletopVLA("object"), true},
	}
}
