package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// sampleArm is one arm's outcome on one seed of the sample-efficiency benchmark.
type sampleArm struct {
	// StepsToTarget is the online (real, training) env step at which the arm first counted as
	// solved: by evaluation (the mean return of EvalEpisodes separate evaluation episodes
	// reached the target) unless evaluation is off, else by training episodes (the mean return
	// of the last Window training episodes reached it). 0 with Reached false when it never did
	// within Budget.
	StepsToTarget int64 `json:"steps_to_target"`
	Reached       bool  `json:"reached"`
	// TrainStepsToTarget is the training-episode criterion's step whatever the protocol
	// (0 with TrainReached false when the window never reached the target).
	TrainStepsToTarget int64 `json:"train_window_steps_to_target"`
	TrainReached       bool  `json:"train_window_reached"`
	// EnvSteps is the online steps taken; OfflineSteps the transitions of the offline dataset
	// the world model was pretrained on (0 for the arm without one); EvalSteps the env steps
	// of all evaluation episodes, which trained nothing.
	EnvSteps      int64   `json:"env_steps"`
	OfflineSteps  int64   `json:"offline_steps"`
	EvalSteps     int64   `json:"eval_steps"`
	Evaluations   int     `json:"evaluations"`
	ImaginedSteps int64   `json:"imagined_steps"`
	Updates       int64   `json:"updates"`
	FinalHorizon  int     `json:"final_horizon,omitempty"`
	FinalReturn   float64 `json:"final_mean_return"` // mean of the last Window training episodes at the end
	TrainEpisodes int     `json:"train_episodes"`    // training episodes finished (0: FinalReturn means nothing)
	BestEval      float64 `json:"best_eval_return,omitempty"`
	WallS         float64 `json:"wall_s"`
	// BCSuccess is the behaviour-cloned warm start's evaluation success, the curve's point
	// at 0 online steps (--env tabletop); DemoSteps the demonstrations' expert steps it was
	// cloned from (the same in both arms of a seed); BCCached whether the clone came from
	// the cache (WallS then excludes cloning).
	BCSuccess *float64 `json:"bc_success,omitempty"`
	DemoSteps int64    `json:"demo_steps,omitempty"`
	BCCached  bool     `json:"bc_cached,omitempty"`
	// WMCached says the pretrained pixel world model came from --wm-cache (WallS then
	// excludes its offline episodes and pretraining).
	WMCached bool `json:"wm_cached,omitempty"`
	// Curve is the evaluation mean return against online steps, one point per evaluation.
	Curve []evalPoint `json:"eval_curve,omitempty"`
	// GRPOEpisodes and GRPOMoved are, per update with GRPO advantages, the episodes that
	// ended in its batch and those whose advantage moved the policy (their group held
	// other outcomes); in the world-model arm they count the imagined rollouts too, so
	// the excess over the real episodes of the arm without one is the imagined share.
	GRPOEpisodes []int64 `json:"grpo_episodes_curve,omitempty"`
	GRPOMoved    []int64 `json:"grpo_moved_curve,omitempty"`
	// Imagined is the imagined rollouts' share of those counts, per update (world-model
	// arm with GRPO only).
	Imagined *imaginedGRPO `json:"grpo_imagined,omitempty"`
}

// imaginedGRPO are a world-model arm's per-update counts of its ended imagined rollouts
// (runstore's grpo_imagined*): all of them, those M_rew judged successes, and those
// whose advantage moved the policy (their group held other verdicts).
type imaginedGRPO struct {
	Ended   []int64 `json:"ended_curve"`
	Success []int64 `json:"success_curve"`
	Moved   []int64 `json:"moved_curve"`
}

// evalPoint is one evaluation of a sample-efficiency arm: its mean return, which on the
// tabletop suites (reward 1 on success, else 0) is the success rate.
type evalPoint struct {
	EnvSteps int64   `json:"env_steps"`
	Return   float64 `json:"mean_return"`
}

// sampleSeed is one seed of the benchmark: both arms and the ratio of their online steps.
type sampleSeed struct {
	Seed       uint64    `json:"seed"`
	WorldModel sampleArm `json:"world_model"`
	Baseline   sampleArm `json:"no_world_model"`
	// Ratio is Baseline.StepsToTarget / WorldModel.StepsToTarget when both reached the target;
	// when only the world-model arm did, Baseline's budget stands in (a lower bound, marked by
	// RatioBound), and when it did not, the ratio is 0.
	Ratio      float64 `json:"ratio"`
	RatioBound bool    `json:"ratio_is_lower_bound"`
	// RatioWithOffline counts the world model's offline steps as online ones:
	// Baseline steps / (WorldModel steps + its offline steps), with the same bound.
	RatioWithOffline float64 `json:"ratio_with_offline"`
	// SolvedAtWarmStart: both arms' warm start (the behaviour-cloned policy, before any
	// online step) already reached the target, so the seed measures nothing: its ratios are
	// 0 and it is left out of the medians.
	SolvedAtWarmStart bool `json:"solved_at_warm_start,omitempty"`
}

// rate sets s's ratios from its arms (see the fields).
func (s *sampleSeed) rate() {
	w, b := s.WorldModel, s.Baseline
	if w.Reached && w.StepsToTarget == 0 && b.Reached && b.StepsToTarget == 0 {
		s.SolvedAtWarmStart = true
		return
	}
	if !w.Reached {
		return
	}
	steps := b.StepsToTarget
	if !b.Reached {
		steps, s.RatioBound = b.EnvSteps, true
	}
	s.Ratio = stepRatio(steps, w.StepsToTarget)
	s.RatioWithOffline = stepRatio(steps, w.StepsToTarget+w.OfflineSteps)
}

// sampleEval is the evaluation protocol of one benchmark.
type sampleEval struct {
	episodes int
	every    int64 // online steps between evaluations
	hold     int   // consecutive evaluations at the target that count as solved
	greedy   bool
	window   int
	target   float64
	// bc, with check (the bench learn check whose entries it shares), keeps the cloned
	// policies of the tabletop arms: both arms of a seed start from one clone.
	bc    *bcCache
	check string
	// wm keeps the world-model arm's pretrained pixel world model (--wm-cache; nil: none).
	wm *wmCache
	// keep, when set, is the directory each arm's run directory is kept under
	// (<keep>/<arm>/seed-<n>, what `accerl run` writes); empty: a temporary one, removed.
	keep string
}

func benchSample(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench sample-efficiency", "bench sample-efficiency [flags]   — online env steps to a target return with and without the world model (same env, seeds and PPO settings)", stderr)
	envKind := fs.String("env", specs.EnvCartPole, "environment kind; tabletop: the micro-VLA on --suite, cloned from demonstrations in both arms, with the pixel world model")
	suite := fs.String("suite", "spatial", "with --env tabletop: the suite (spatial, object, goal or long), all its tasks")
	seedList := fs.String("seeds", "1,2,3", "comma-separated seeds")
	target := fs.Float64("target", 475, "mean return that counts as solved: of an evaluation's episodes, or of the last --window training episodes with --eval-episodes 0 (tabletop default 0.9: the success rate)")
	window := fs.Int("window", 20, "episodes in the running mean compared with --target (a full window is required)")
	budget := fs.Int64("steps", 300_000, "online env-step budget of each arm; an arm that has not reached the target by then is reported as not reached (tabletop default 16384)")
	offline := fs.Int("offline", 1000, "offline trajectories the world model is pretrained on, of the random policy (tabletop: of the scripted expert with execution noise, default 200), reported beside the online steps")
	ratio := fs.Float64("imagination-ratio", 0.99, "share of every batch that is imagined in the world-model arm; a higher share takes fewer real steps per update (tabletop default 0.5)")
	evalEps := fs.Int("eval-episodes", 10, "evaluation episodes per evaluation; an arm is solved when their mean return reaches --target (0: judge by the last --window training episodes instead; tabletop default 100, on the suite's fixed initial states)")
	evalEvery := fs.Int64("eval-every", 256, "online env steps between evaluations: each run's segments are this many steps' worth of updates (at least one), and each segment ends with an evaluation and a horizon-schedule step, as in 'accerl run' (tabletop default 4096)")
	hold := fs.Int("hold", 1, "consecutive evaluations that must all reach --target; the arm's steps are those of the first of them")
	greedy := fs.Bool("greedy", false, "evaluate the policy's most likely action instead of sampling it as in training (tabletop default true)")
	obsSteps := fs.Int("obs-steps", 0, "with --env tabletop: M_obs pretraining steps of the pixel world model (0: the pixels block's default)")
	fitSteps := fs.Int("wm-fit-steps", 8, "with --env tabletop: M_obs's online Adam steps on every update's real steps (the proprio head takes 6× as many; 0 keeps the pretrained pixel world model fixed)")
	keep := fs.String("keep", "", "keep each arm's run directory (metrics, episodes, checkpoints, the world model's pretraining scores and strip) under DIR/<world-model|no-world-model>/seed-<n> instead of a temporary one that is removed; it must not hold them already")
	graded := fs.Bool("graded-imagined", false, "with --grpo-group: the world-model arm ranks the imagined rollouts of a start by how far each took M_rew's p_success, with mean-centred advantages, instead of by its success verdict (world_model.pixels.graded)")
	rewImagined := fs.Int("rew-imagined", 0, "with --env tabletop: the world-model arm's M_rew also pretrains on this many M_obs-imagined endings per offline episode, labelled as the real frames they stand for (world_model.pixels.rew_imagined, at most 64; 0: real frames only)")
	rewCF := fs.Int("rew-counterfactual", 0, "with --env tabletop: the world-model arm's M_rew also pretrains on this many M_obs-imagined endings per offline episode driven by another episode's actions, labelled by the simulator's replay of them (world_model.pixels.rew_counterfactual, at most 64; 0: none)")
	rewCFJitter := fs.Float64("rew-counterfactual-jitter", 0, "with --rew-counterfactual: drive M_rew's counterfactual endings by each episode's own ending actions with fresh Gaussian noise of this σ on their motion values instead of by another episode's (world_model.pixels.rew_counterfactual_jitter; 0: another's)")
	horizonMax := fs.Int("horizon-max", 0, "with --env tabletop: the world-model arm's imagination horizon rises to at most this many policy steps (world_model.horizon.end; 0: 50), e.g. the horizon M_rew's counterfactual verdicts were measured at")
	selfForcing := fs.Int("self-forcing", 0, "with --env tabletop: M_obs pretrains with up to this many of its own predictions in the context from --self-forcing-from on (world_model.pixels.self_forcing; 0: off)")
	selfForcingFrom := fs.Int("self-forcing-from", 0, "with --self-forcing: the M_obs pretraining step it starts at, below --obs-steps (world_model.pixels.self_forcing_from; late, e.g. 1600 of 2000, is what helped)")
	imgTemp := fs.Float64("imagined-temperature", 0, "with --env tabletop: the world-model arm's imagined rollouts sample their action tokens at this temperature, recorded with the policy's own log-probabilities (world_model.pixels.temperature, at most 10; 0: the policy's 0.03)")
	tempered := fs.Bool("tempered-imagined", false, "with --imagined-temperature: record the imagined actions' log-probabilities at that temperature and evaluate them there in the update (the tempered policy's on-policy update) instead of at the policy's own (world_model.pixels.tempered)")
	startWithin := fs.Int("imagined-start-within", 0, "with --env tabletop: the world-model arm starts its imagined rollouts only from the last N policy steps before the end of a real episode of the round, where a group's rollouts can end differently within the horizon (world_model.pixels.start_within; 0: any step)")
	grpoGroup := fs.Int("grpo-group", 0, "with --env tabletop: train both arms with the VLA check's GRPO recipe (each ended episode against its task's others, learning rate 1e-5) instead of the critic one, the world-model arm imagining this many rollouts from each start and comparing them by M_rew's success (world_model.pixels.group, at least 2; 0: the critic recipe)")
	vlaLayers := fs.Int("vla-layers", 0, "with --env tabletop: the micro-VLA's transformer blocks in both arms (policy.vla.layers; 0 keeps 2), as `bench learn --vla-layers`")
	pretrainFrom := fs.String("pretrain-from", "", "with --env tabletop: start both arms from a policy cloned before instead of cloning (pretrain.from): a run directory, a --bc-cache entry or a `bench bc --save-model` file; {seed} is replaced by the seed, e.g. 'spatial-vla-layers3-e40-seed{seed}.model' (docs/results/bc-models), and the network must match --vla-layers")
	wmCacheDir := fs.String("wm-cache", "", "with --env tabletop: keep the world-model arm's pretrained pixel world model (offline episodes, M_obs, M_rew, proprio head) in this directory, per seed and pretraining recipe, so that ablations of the imagined training skip pretraining; empty it after changing the code that pretrains")
	cacheDir := fs.String("bc-cache", "", "with --env tabletop: keep the behaviour-cloned policies in this directory, shared with 'accerl bench learn --bc-cache' (tabletop-SUITE-vla entries); without it the two arms of a seed still share one clone")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	plotOut := fs.String("plot", "", "also draw both arms' evaluation curves (return against online steps, every seed) to this PNG file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tabletopArms := *envKind == specs.EnvTabletop
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if tabletopArms {
		if tabletop.TaskCount(*suite) == 0 {
			return fmt.Errorf("--suite %q: choose one of %s", *suite, strings.Join(tabletop.Suites(), ", "))
		}
		for name, v := range map[string]func(){
			"target": func() { *target = 0.9 }, "steps": func() { *budget = 16384 }, "offline": func() { *offline = 200 },
			"imagination-ratio": func() { *ratio = 0.5 }, "eval-episodes": func() { *evalEps = 100 },
			"eval-every": func() { *evalEvery = 4096 }, "greedy": func() { *greedy = true },
		} {
			if !set[name] {
				v()
			}
		}
		if *offline < 10 {
			return fmt.Errorf("--offline %d: the pixel world model holds out one episode in ten to score itself; give at least 10", *offline)
		}
		if !(*ratio > 0 && *ratio < 1) {
			return fmt.Errorf("--imagination-ratio %g: give a share in (0, 1)", *ratio)
		}
		if *grpoGroup == 1 || *grpoGroup < 0 {
			return fmt.Errorf("--grpo-group %d: GRPO compares the imagined rollouts of a start with each other; give at least 2 (8 is a usual group), or 0 for the critic recipe", *grpoGroup)
		}
		if *graded && *grpoGroup == 0 {
			return fmt.Errorf("--graded-imagined ranks the imagined rollouts of a start against each other under GRPO; give --grpo-group 8 with it")
		}
		if !(*imgTemp >= 0 && *imgTemp <= 10) {
			return fmt.Errorf("--imagined-temperature %g: give a sampling temperature in (0, 10], or 0 for the policy's", *imgTemp)
		}
		if *tempered && *imgTemp == 0 {
			return fmt.Errorf("--tempered-imagined evaluates the imagined actions at the temperature they were sampled at; give --imagined-temperature 0.3 with it")
		}
		for _, f := range []struct {
			flag string
			n    int
		}{{"rew-imagined", *rewImagined}, {"rew-counterfactual", *rewCF}} {
			if f.n < 0 || f.n > 64 {
				return fmt.Errorf("--%s %d: give the imagined endings per offline episode, 1 to 64, or 0 for none", f.flag, f.n)
			}
		}
		if !(*rewCFJitter >= 0 && *rewCFJitter <= 2) || *rewCFJitter > 0 && *rewCF == 0 {
			return fmt.Errorf("--rew-counterfactual-jitter %g: give the noise σ (action units, 0 to 2; 0.3 was measured) on the episodes' own actions that drive M_rew's counterfactual endings, with --rew-counterfactual N", *rewCFJitter)
		}
		if *startWithin < 0 {
			return fmt.Errorf("--imagined-start-within %d: give the policy steps before an episode's end that imagined rollouts start from, at least 1 (8 is the horizon), or 0 for any step", *startWithin)
		}
		if *horizonMax < 0 {
			return fmt.Errorf("--horizon-max %d: give the longest imagination in policy steps, at least 1, or 0 for 50", *horizonMax)
		}
		if obs := cmp.Or(*obsSteps, specs.DefaultPixelWorldModel().ObsSteps); *selfForcing < 0 || *selfForcing > 4 ||
			*selfForcingFrom < 0 || *selfForcingFrom > 0 && (*selfForcing == 0 || *selfForcingFrom >= obs) {
			return fmt.Errorf("--self-forcing %d --self-forcing-from %d: give a depth of 1 to 4 (M_obs's context frames; 4 was measured) and a start below --obs-steps (%d), or 0 for neither", *selfForcing, *selfForcingFrom, obs)
		}
	} else {
		for _, name := range []string{"obs-steps", "wm-fit-steps", "bc-cache", "wm-cache", "vla-layers", "pretrain-from", "grpo-group", "imagined-temperature", "tempered-imagined", "imagined-start-within",
			"graded-imagined", "rew-imagined", "rew-counterfactual", "rew-counterfactual-jitter", "horizon-max", "self-forcing", "self-forcing-from"} {
			if set[name] {
				return fmt.Errorf("--%s is for --env tabletop (the pixel world model and the cloned VLA); drop it, or add --env tabletop", name)
			}
		}
	}
	if *vlaLayers < 0 {
		return fmt.Errorf("--vla-layers %d: give the micro-VLA's transformer blocks, at least 1 (0 keeps 2)", *vlaLayers)
	}
	vlaOverrides := learnOverrides{given: map[string]bool{}, vlaLayers: *vlaLayers, pretrainFrom: *pretrainFrom}
	if *obsSteps < 0 {
		return fmt.Errorf("--obs-steps %d: give a positive number of M_obs steps, or 0 for the default", *obsSteps)
	}
	if *fitSteps < 0 {
		return fmt.Errorf("--wm-fit-steps %d: give a positive number of online M_obs steps, or 0 to keep the pretrained model fixed", *fitSteps)
	}
	var cache *bcCache
	if tabletopArms {
		dir := *cacheDir
		if dir == "" {
			tmp, err := os.MkdirTemp("", "accerl-bench-sample-bc-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--bc-cache: %w", err)
		}
		cache = &bcCache{dir: dir}
	}
	var wmc *wmCache
	if *wmCacheDir != "" {
		if err := os.MkdirAll(*wmCacheDir, 0o755); err != nil {
			return fmt.Errorf("--wm-cache: %w", err)
		}
		wmc = &wmCache{dir: *wmCacheDir, log: stdout}
	}
	if *plotOut != "" && *evalEps == 0 {
		return fmt.Errorf("--plot draws evaluation curves; it needs --eval-episodes > 0")
	}
	if *evalEps < 0 || *evalEvery < 1 || *hold < 1 {
		return fmt.Errorf("--eval-episodes must not be negative, --eval-every and --hold must be positive; got %d, %d and %d", *evalEps, *evalEvery, *hold)
	}
	seeds, err := parseSeeds(*seedList)
	if err != nil {
		return err
	}
	if *window < 1 || *budget < 1 {
		return fmt.Errorf("--window and --steps must be positive")
	}
	res := sampleResult{Env: *envKind, Target: *target, Window: *window, Budget: *budget, OfflineTraj: *offline,
		EvalEpisodes: *evalEps, EvalEvery: *evalEvery, Hold: *hold, Greedy: *greedy, ImaginationRatio: *ratio}
	ev := sampleEval{episodes: *evalEps, every: *evalEvery, hold: *hold, greedy: *greedy, window: *window, target: *target, keep: *keep}
	if tabletopArms {
		res.Suite, ev.bc, ev.wm, ev.check = *suite, cache, wmc, fmt.Sprintf("tabletop-%s-vla", *suite)
		res.VLALayers, res.PretrainFrom, res.GRPOGroup, res.ImaginedTemperature, res.GradedImagined = *vlaLayers, *pretrainFrom, *grpoGroup, *imgTemp, *graded
		res.TemperedImagined, res.ImaginedStartWithin = *tempered, *startWithin
		res.RewImagined, res.RewCounterfactual = *rewImagined, *rewCF
		res.HorizonMax, res.SelfForcing, res.SelfForcingFrom, res.RewCounterfactualJitter = *horizonMax, *selfForcing, *selfForcingFrom, *rewCFJitter
	}
	criterion := fmt.Sprintf("the mean of the last %d training episodes", *window)
	if *evalEps > 0 {
		criterion = fmt.Sprintf("the mean of %d evaluation episodes (%s actions, every %d online steps; not counted as online steps)", *evalEps, evalMode(*greedy), *evalEvery)
		if *hold > 1 {
			criterion += fmt.Sprintf(", at %d evaluations in a row,", *hold)
		}
	}
	behaviour := "random"
	if tabletopArms {
		behaviour = "noisy-expert"
		criterion += " (success rate; the behaviour-cloned warm start counts at 0 online steps)"
	}
	recipe := ""
	if *grpoGroup > 0 {
		recipe = fmt.Sprintf("; GRPO in both arms, %d imagined rollouts per start", *grpoGroup)
	}
	if *imgTemp > 0 {
		recipe += fmt.Sprintf("; imagined actions sampled at temperature %g", *imgTemp)
		if *tempered {
			recipe += " and trained there"
		}
	}
	if *graded {
		recipe += "; imagined groups ranked by M_rew's p_success change"
	}
	if *rewImagined+*rewCF > 0 {
		driven := "another's actions"
		if *rewCFJitter > 0 {
			driven = fmt.Sprintf("the episode's own actions with noise σ %g", *rewCFJitter)
		}
		recipe += fmt.Sprintf("; M_rew also trained on %d imagined endings per offline episode (%d driven by %s, labelled by the simulator)", *rewImagined+*rewCF, *rewCF, driven)
	}
	if *horizonMax > 0 {
		recipe += fmt.Sprintf("; imagination at most %d policy steps", *horizonMax)
	}
	if *startWithin > 0 {
		recipe += fmt.Sprintf("; imagined rollouts start within %d policy steps of a real episode's end", *startWithin)
	}
	if *selfForcing > 0 {
		recipe += fmt.Sprintf("; M_obs self-forced (depth %d) from step %d", *selfForcing, *selfForcingFrom)
	}
	fmt.Fprintf(stdout, "%s: online env steps until %s reaches %g; budget %d steps per arm; world model pretrained on %d %s episodes, imagination ratio %g%s\n",
		envLabel(*envKind, *suite), criterion, *target, *budget, *offline, behaviour, *ratio, recipe)
	wmFlags := tabletopWMFlags{temperature: *imgTemp, tempered: *tempered, startWithin: *startWithin, graded: *graded, rewImagined: *rewImagined, rewCounterfactual: *rewCF,
		selfForcing: *selfForcing, selfForcingFrom: *selfForcingFrom, horizonMax: *horizonMax, rewCounterfactualJitter: *rewCFJitter}
	var ratios, ratiosOff []float64
	for _, seed := range seeds {
		var base, wmCfg specs.Config
		switch {
		case tabletopArms:
			base = sampleTabletopConfig(*suite, *budget, *grpoGroup > 0)
			if err := vlaOverrides.apply(ev.check, &base); err != nil {
				return err
			}
			if base, err = withPretrainFrom(base, seed); err != nil {
				return err
			}
			wmCfg = sampleTabletopWM(base, *offline, *ratio, *obsSteps, *fitSteps, *grpoGroup)
			wmFlags.apply(&wmCfg)
		case *envKind == specs.EnvPendulum || *envKind == specs.EnvMountainCarContinuous:
			// Continuous torque: the tokens head of `bench learn pendulum-tokens-ppo`.
			base = tokensPendulum(specs.AlgorithmPPO)()
			base.Env.Kind = *envKind
			base.Env.MaxEpisodeSteps, _ = specs.DefaultMaxEpisodeSteps(*envKind)
			base.Budget.EnvSteps = *budget
			wmCfg = sampleWMConfig(base, *offline, *ratio)
		default:
			base = cleanRLConfig(*envKind, specs.AlgorithmPPO, *budget)
			wmCfg = sampleWMConfig(base, *offline, *ratio)
		}
		s := sampleSeed{Seed: seed}
		if s.WorldModel, err = runSampleArm(ctx, wmCfg, seed, ev); err != nil {
			return fmt.Errorf("seed %d, world-model arm: %w", seed, err)
		}
		fmt.Fprintf(stdout, "  seed %d world model:    %s\n", seed, describeArm(s.WorldModel))
		if s.Baseline, err = runSampleArm(ctx, base, seed, ev); err != nil {
			return fmt.Errorf("seed %d, baseline arm: %w", seed, err)
		}
		fmt.Fprintf(stdout, "  seed %d no world model: %s\n", seed, describeArm(s.Baseline))
		if s.rate(); s.SolvedAtWarmStart {
			fmt.Fprintf(stdout, "  seed %d: the warm start already reaches %g before any online step, in both arms: nothing to measure, left out of the median (raise --target, or start from a weaker clone with --pretrain-from)\n", seed, *target)
		} else {
			ratios, ratiosOff = append(ratios, s.Ratio), append(ratiosOff, s.RatioWithOffline)
		}
		res.Seeds = append(res.Seeds, s)
	}
	res.MedianRatio, res.MedianRatioWithOffline, res.MeasuredSeeds = median(ratios), median(ratiosOff), len(ratios)

	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEED\tWM ONLINE STEPS\tWM OFFLINE STEPS\tWM IMAGINED\tWM WALL\tBASELINE ONLINE STEPS\tBASELINE WALL\tRATIO\tRATIO WITH OFFLINE")
	for _, s := range res.Seeds {
		bound := ""
		if s.RatioBound {
			bound = " (≥)"
		}
		ratio, ratioOff := fmt.Sprintf("%.2f×%s", s.Ratio, bound), fmt.Sprintf("%.2f×%s", s.RatioWithOffline, bound)
		if s.SolvedAtWarmStart {
			ratio, ratioOff = "- (warm start solved)", "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.0fs\t%s\t%.0fs\t%s\t%s\n", s.Seed, stepsWord(s.WorldModel), s.WorldModel.OfflineSteps, s.WorldModel.ImaginedSteps,
			s.WorldModel.WallS, stepsWord(s.Baseline), s.Baseline.WallS, ratio, ratioOff)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.MeasuredSeeds == 0 {
		fmt.Fprintf(stdout, "\nno seed measured anything: every warm start already reached %g (median_ratio 0 in the JSON)\n", *target)
	} else {
		fmt.Fprintf(stdout, "\nmedian ratio of online steps (no world model / world model): %.2f× over %d seeds (%.2f× counting the world model's %d offline steps per seed)\n",
			res.MedianRatio, res.MeasuredSeeds, res.MedianRatioWithOffline, medianOffline(res.Seeds))
	}
	if *plotOut != "" {
		if err := plotSample(*plotOut, res); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}

// stepRatio is baseline/wm steps to the target, baseline/1 when the world model's are 0
// (sampleSeed.rate leaves out seeds where both are).
func stepRatio(baseline, wm int64) float64 {
	return float64(baseline) / float64(max(1, wm))
}

// runSampleArm trains one arm through the training path of `accerl run` (activities.RunLocal:
// the run's state machine and its activities, in a temporary run directory). With the world
// model on, the run first collects the offline dataset and pretrains on it, as every run does.
// The evaluation protocol is the spec's evaluation block: a segment is as many updates as
// take ev.every online steps (at least one), and every segment ends with ev.episodes
// evaluation episodes; the horizon schedule moves once per segment, as in `accerl run`. The
// arm stops when ev.hold evaluations in a row reach the target, or at the budget.
func runSampleArm(ctx context.Context, cfg specs.Config, seed uint64, ev sampleEval) (sampleArm, error) {
	start := time.Now()
	var arm sampleArm
	dir, err := sampleRunDir(ev.keep, cfg.WorldModel.Enabled, seed)
	if err != nil {
		return arm, err
	}
	if ev.keep == "" {
		defer os.RemoveAll(dir)
	}
	cfg.Checkpoint.Every = int(max(1, ev.every/cfg.StepsPerUpdate()))
	cfg.Evaluation.Episodes, cfg.Evaluation.Greedy = ev.episodes, ev.greedy
	hook := func(st runstate.State, res activities.TrainSegmentResult) bool {
		if !res.HasEval {
			return false
		}
		if len(arm.Curve) == 0 && st.HasPretrainSuccess {
			// The warm start's evaluation, before any online step.
			arm.Curve = append(arm.Curve, evalPoint{EnvSteps: 0, Return: st.PretrainSuccess})
		}
		arm.Evaluations++
		if arm.Evaluations == 1 || res.EvalReturn > arm.BestEval {
			arm.BestEval = res.EvalReturn
		}
		arm.Curve = append(arm.Curve, evalPoint{EnvSteps: st.EnvSteps, Return: res.EvalReturn})
		arm.StepsToTarget, arm.Reached = solvedAt(arm.Curve, ev.target, ev.hold)
		return arm.Reached
	}
	// The behaviour-cloned warm start (tabletop): restored from the cache when this seed's
	// clone is there (the other arm's, or an earlier bench's), else cloned and saved.
	// The world-model arm's pretrained pixel world model likewise (--wm-cache).
	var st runstate.State
	arm.BCCached, err = ev.bc.around(ev.check, cfg, seed, dir, func(cloned func()) (err error) {
		arm.WMCached, err = ev.wm.around(cfg, seed, dir, func(pretrained func()) (err error) {
			st, err = activities.RunLocal(ctx, activities.LocalRun{Experiment: "bench-sample-efficiency", Arm: "arm", Seed: seed,
				SpecHash: "bench-sample-efficiency", Config: cfg, RunDir: dir}, func(st runstate.State, res activities.TrainSegmentResult) bool {
				cloned()
				pretrained()
				return hook(st, res)
			})
			return err
		})
		return err
	})
	if err != nil {
		return arm, err
	}
	if st.HasPretrainSuccess {
		arm.BCSuccess = &st.PretrainSuccess
	}
	arm.DemoSteps = st.DemoSteps
	metrics, episodes, err := runstore.ReadRun(dir)
	if err != nil {
		return arm, err
	}
	if cfg.Algorithm.AdvEstimator == specs.AdvEstimatorGRPO {
		arm.GRPOEpisodes, arm.GRPOMoved = grpoCurves(metrics)
		if px := cfg.WorldModel.Pixels; cfg.WorldModel.Enabled && px != nil && px.Group > 1 {
			arm.Imagined = &imaginedGRPO{}
			for _, m := range metrics {
				arm.Imagined.Ended = append(arm.Imagined.Ended, m.GRPOImagined)
				arm.Imagined.Success = append(arm.Imagined.Success, m.GRPOImaginedSuccess)
				arm.Imagined.Moved = append(arm.Imagined.Moved, m.GRPOImaginedMoved)
			}
		}
	}
	var returns []float64
	for _, e := range episodes {
		returns = append(returns, e.Return)
		if !arm.TrainReached && len(returns) >= ev.window && mean(returns[len(returns)-ev.window:]) >= ev.target {
			arm.TrainReached, arm.TrainStepsToTarget = true, e.EnvSteps
		}
	}
	if ev.episodes == 0 {
		arm.Reached, arm.StepsToTarget = arm.TrainReached, arm.TrainStepsToTarget
	}
	arm.EnvSteps, arm.Updates, arm.ImaginedSteps, arm.OfflineSteps = st.EnvSteps, st.Updates, st.ImaginedSteps, st.OfflineSteps
	arm.EvalSteps = st.EvalSteps
	if cfg.WorldModel.Enabled {
		arm.FinalHorizon = st.Horizon.H
	}
	if n := len(returns); n > 0 {
		arm.FinalReturn = mean(returns[max(0, n-ev.window):])
	}
	arm.TrainEpisodes = len(returns)
	arm.WallS = time.Since(start).Seconds()
	return arm, nil
}

// solvedAt returns the online steps of the first evaluation that begins hold consecutive
// evaluations of curve at or above target, and whether there is one.
func solvedAt(curve []evalPoint, target float64, hold int) (int64, bool) {
	run := 0
	for i, p := range curve {
		if p.Return < target {
			run = 0
			continue
		}
		if run++; run >= hold {
			return curve[i-hold+1].EnvSteps, true
		}
	}
	return 0, false
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// median of x (0 for none).
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	y := slices.Clone(x)
	slices.Sort(y)
	n := len(y)
	if n%2 == 1 {
		return y[n/2]
	}
	return (y[n/2-1] + y[n/2]) / 2
}
