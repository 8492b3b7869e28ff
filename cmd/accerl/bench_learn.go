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
)

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
	// GRPOEpisodes and GRPOMoved are, per update of a GRPO check, the episodes that ended in
	// the batch and those whose advantage moved the policy (metrics grpo_episodes, grpo_moved).
	GRPOEpisodes []int64 `json:"grpo_episodes_curve,omitempty"`
	GRPOMoved    []int64 `json:"grpo_moved_curve,omitempty"`
	// The same for the evaluations played sampling (--eval-sampled): the cloned policy's,
	// the last one and every one in order.
	PretrainSampled *float64  `json:"pretrain_sampled_success,omitempty"`
	FinalSampled    *float64  `json:"final_sampled_success,omitempty"`
	SampledCurve    []float64 `json:"eval_sampled_success_curve,omitempty"`
	// FinalTasks and PretrainTasks split the last evaluation and the cloned policy's by
	// task (tabletop checks; the run's summary.json and pretrain.json), greedy and sampled.
	FinalTasks           []runstore.TaskSuccess `json:"final_task_success,omitempty"`
	FinalSampledTasks    []runstore.TaskSuccess `json:"final_sampled_task_success,omitempty"`
	PretrainTasks        []runstore.TaskSuccess `json:"pretrain_task_success,omitempty"`
	PretrainSampledTasks []runstore.TaskSuccess `json:"pretrain_sampled_task_success,omitempty"`
	Passed               bool                   `json:"passed"`
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
	RepeatStarts   int     `json:"repeat_starts,omitempty"` // each start played this many times (GRPO groups by start)
	Temperature    float64 `json:"temperature,omitempty"`   // VLA checks: the RL sampling temperature
	DetachValue    bool    `json:"detach_value,omitempty"`
	ExecutedOnly   bool    `json:"executed_only,omitempty"` // VLA checks: RL acts with and scores the executed actions alone
	Greedy         string  `json:"greedy,omitempty"`        // VLA checks: the greedy decoding ("" is argmax)
	VLALayers      int     `json:"vla_layers,omitempty"`    // VLA checks: the transformer's blocks
	EvalSampled    bool    `json:"eval_sampled,omitempty"`
	// PretrainEpochs is the cloning's epochs (pretrain.epochs; 0 without a pretrain block).
	PretrainEpochs int `json:"pretrain_epochs,omitempty"`
	// PretrainFrom is the clone the cloning started from (pretrain.from, as given, before
	// {seed} is filled in) and PretrainLR its learning rate, when --pretrain-from is given.
	PretrainFrom string  `json:"pretrain_from,omitempty"`
	PretrainLR   float64 `json:"pretrain_learning_rate,omitempty"`
	// CheckpointEvery is the updates per segment (checkpoint.every): each segment ends
	// with a checkpoint and an evaluation, so it also spaces the evaluation curve.
	CheckpointEvery int `json:"checkpoint_every,omitempty"`
	// FinalEpisodes is the episodes of the clone's and of the last evaluation
	// (evaluation.final_episodes; 0: those of every evaluation).
	FinalEpisodes int `json:"final_episodes,omitempty"`
}

// String is the settings in one line, as the printout's header shows them.
func (s learnSettings) String() string {
	out := fmt.Sprintf("learning rate %g, %d env steps per update", s.LearningRate, s.BatchSteps)
	if s.VLALayers > 0 {
		out = fmt.Sprintf("VLA of %d layers; ", s.VLALayers) + out
	}
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
	if s.RepeatStarts > 1 {
		out += fmt.Sprintf(" grouped by start (each played %d times)", s.RepeatStarts)
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
	if s.CheckpointEvery > 1 {
		out += fmt.Sprintf(" every %d updates", s.CheckpointEvery)
	}
	if s.PretrainFrom != "" {
		out += fmt.Sprintf("; cloned from %s for %d more epochs at %g", s.PretrainFrom, s.PretrainEpochs, s.PretrainLR)
	} else if s.PretrainEpochs > 0 {
		out += fmt.Sprintf("; cloned for %d epochs", s.PretrainEpochs)
	}
	if s.FinalEpisodes > 0 {
		out += fmt.Sprintf("; the clone and the final policy evaluated on %d episodes", s.FinalEpisodes)
	}
	return out
}

// movedList is "m/n" per update, space-separated.
func movedList(moved, ended []int64) string {
	parts := make([]string, len(moved))
	for i := range moved {
		parts[i] = fmt.Sprintf("%d/%d", moved[i], ended[i])
	}
	return strings.Join(parts, " ")
}

func learnSettingsOf(c specs.Config) learnSettings {
	a := c.Algorithm
	s := learnSettings{LearningRate: a.LearningRate, BatchSteps: a.BatchSteps, CriticWarmup: a.CriticWarmup, SkipRewardless: a.SkipRewardless,
		PositiveAdv: a.PositiveAdvantages, AdvEstimator: a.AdvEstimator, RepeatStarts: a.RepeatStarts, EvalSampled: c.Evaluation.Sampled, CheckpointEvery: c.Checkpoint.Every,
		FinalEpisodes: c.Evaluation.FinalEpisodes}
	if c.Pretrain.Enabled {
		s.PretrainEpochs = c.Pretrain.Epochs
		if c.Pretrain.From != "" {
			s.PretrainFrom, s.PretrainLR = c.Pretrain.From, c.Pretrain.LearningRate
		}
	}
	if v := c.Policy.VLA; v != nil {
		s.Temperature, s.DetachValue, s.ExecutedOnly, s.Greedy, s.VLALayers = v.SamplingTemperature(), v.DetachValue, v.ExecutedOnly, v.Greedy, v.Layers
	}
	return s
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
	cacheDir := fs.String("bc-cache", "", "keep each check's and seed's behaviour-cloned policy in this directory and start later runs of the same recipe from it instead of cloning again (RL ablations of a VLA check); an entry is saved as soon as its cloning is done, so other runs can start from it while this one's RL goes on; the runs' BC success is the cached policy's")
	temperature := fs.Float64("temperature", 0, "sample the VLA checks' RL action tokens at this temperature (policy.vla.temperature; 0 keeps the check's)")
	detach := fs.Bool("detach-value", false, "train the VLA checks' RL value head without its gradient into the transformer (policy.vla.detach_value; the VLA checks' default, --detach-value=false turns it off)")
	executedOnly := fs.Bool("executed-only", true, "let the VLA checks' RL act with, and score, only the executed actions of each chunk (policy.vla.executed_only, the checks' default); --executed-only=false decodes and scores whole chunks")
	greedy := fs.String("greedy", "", "the VLA checks' greedy decoding (policy.vla.greedy): argmax, or mean (the mean bin at the sampling temperature); a changed decoding clones anew under --bc-cache, since it changes the clone's success")
	vlaLayers := fs.Int("vla-layers", 0, "the VLA checks' transformer blocks (policy.vla.layers; 0 keeps the check's): the clone and RL train that network, and under --bc-cache it is another entry")
	criticWarmup := fs.Int("critic-warmup", 0, "train only the value for each run's first N updates (algorithm.critic_warmup)")
	positiveAdv := fs.Bool("positive-advantages", false, "let only steps with a positive advantage move the policy (algorithm.positive_advantages, self-imitation; the VLA checks' default, --positive-advantages=false turns it off)")
	advEstimator := fs.String("adv-estimator", "", "override each check's advantage estimator (algorithm.adv_estimator): gae, or grpo (each ended episode's return against its task's others in the batch, no critic)")
	skipRewardless := fs.Bool("skip-rewardless", false, "train only the value on batches whose rewards are all 0 (algorithm.skip_rewardless; --skip-rewardless=false turns it off)")
	rlLR := fs.Float64("learning-rate", 0, "override each check's RL learning rate (algorithm.learning_rate; 0 keeps the check's)")
	evalSampled := fs.Bool("eval-sampled", false, "also evaluate every check sampling its actions as training does, beside the greedy evaluation (evaluation.sampled; checks with greedy evaluation; the VLA checks' default, --eval-sampled=false plays greedy only)")
	batchSteps := fs.Int("batch-steps", 0, "override each check's env steps per update (algorithm.batch_steps; 0 keeps the check's)")
	pretrainEpochs := fs.Int("pretrain-epochs", 0, "clone the checks with a pretrain block for this many epochs (pretrain.epochs; 0 keeps the check's, or with --pretrain-from trains none); under --bc-cache another count is another entry")
	pretrainFrom := fs.String("pretrain-from", "", "start each seed's cloning from a policy cloned before (pretrain.from): a run directory, a --bc-cache entry or a `bench bc --save-model` file; {seed} is replaced by the seed and a glob pattern must match one path (e.g. 'cache/tabletop-spatial-vla-seed{seed}-*'); trains --pretrain-epochs more epochs from it (0 unless given: RL starts from it as it is)")
	pretrainLR := fs.Float64("pretrain-lr", 0, "the cloning's initial learning rate (pretrain.learning_rate, decayed linearly to a tenth; 0 keeps the check's)")
	checkpointEvery := fs.Int("checkpoint-every", 0, "updates per segment (checkpoint.every; 0 keeps the check's): each segment ends with a checkpoint and the check's evaluation, so 4 plays a quarter of the evaluation episodes of 1 (sync-mode training is the same either way: snapshots restore it exactly at a segment boundary)")
	repeatStarts := fs.Int("repeat-starts", 0, "with GRPO advantages, play every start (a task's layout after a reset) this many times in a row and judge each episode against its start's other plays instead of its task's episodes (algorithm.repeat_starts; 0 keeps the check's, 1 turns it off)")
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
	if *vlaLayers < 0 {
		return fmt.Errorf("--vla-layers %d: give the VLA checks' transformer blocks, at least 1 (0 keeps each check's)", *vlaLayers)
	}
	if *criticWarmup < 0 || *rlLR < 0 || *pretrainLR < 0 || *batchSteps < 0 || *pretrainEpochs < 0 || *checkpointEvery < 0 || *repeatStarts < 0 {
		return fmt.Errorf("--critic-warmup %d, --learning-rate %g, --batch-steps %d, --pretrain-epochs %d, --checkpoint-every %d, --repeat-starts %d: none of them may be negative (0 keeps each check's)",
			*criticWarmup, *rlLR, *batchSteps, *pretrainEpochs, *checkpointEvery, *repeatStarts)
	}
	ov := learnOverrides{given: map[string]bool{}, temperature: *temperature, detach: *detach, executedOnly: *executedOnly,
		greedy: greedyName, criticWarmup: *criticWarmup, positiveAdv: *positiveAdv, advEstimator: advName,
		skipRewardless: *skipRewardless, learningRate: *rlLR, evalSampled: *evalSampled, batchSteps: *batchSteps,
		pretrainEpochs: *pretrainEpochs, pretrainFrom: *pretrainFrom, pretrainLR: *pretrainLR, checkpointEvery: *checkpointEvery, repeatStarts: *repeatStarts, vlaLayers: *vlaLayers}
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
			sc, err := withPretrainFrom(cfg, seed)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", chk.Name, seed, err)
			}
			s, err := trainCheck(ctx, stdout, chk.Name, sc, seed, cache)
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
			if len(s.FinalTasks) > 0 {
				fmt.Fprintf(stdout, "    per task (task: BC → final, greedy): %s\n", taskList(s.PretrainTasks, s.FinalTasks))
			}
			if len(s.FinalSampledTasks) > 0 {
				fmt.Fprintf(stdout, "    per task, sampled: %s\n", taskList(s.PretrainSampledTasks, s.FinalSampledTasks))
			}
			if len(s.GRPOMoved) > 0 {
				fmt.Fprintf(stdout, "    GRPO: episodes whose advantage moved the policy, of those ended, per update: %s\n", movedList(s.GRPOMoved, s.GRPOEpisodes))
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
// episodes, read back from the stored episode rows. It first prints where the run lives
// (its metrics and checkpoints can be read there while it trains) and, under --bc-cache,
// the entry of its cloned policy.
func trainCheck(ctx context.Context, stdout io.Writer, name string, cfg specs.Config, seed uint64, cache *bcCache) (learnSeed, error) {
	dir, err := os.MkdirTemp("", "accerl-bench-learn-")
	if err != nil {
		return learnSeed{}, err
	}
	defer os.RemoveAll(dir)
	where := fmt.Sprintf("  seed %d: run directory %s (removed at the end)", seed, dir)
	if cache != nil && cfg.Pretrain.Enabled {
		if e, err := cache.entry(name, cfg, seed); err == nil {
			where += ", cloned policy " + e
		}
	}
	fmt.Fprintln(stdout, where)
	var start time.Time
	var st runstate.State
	cached, err := cache.around(name, cfg, seed, dir, func(cloned func()) (err error) {
		start = time.Now()
		st, err = activities.RunLocal(ctx, activities.LocalRun{Experiment: "bench-learn", Arm: name, Seed: seed,
			SpecHash: "bench-learn-" + name, Config: cfg, RunDir: dir}, func(runstate.State, activities.TrainSegmentResult) bool {
			cloned()
			return false
		})
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
		if cfg.Algorithm.AdvEstimator == specs.AdvEstimatorGRPO {
			s.GRPOEpisodes, s.GRPOMoved = grpoCurves(metrics)
		}
		if n := len(s.SampledCurve); n > 0 {
			s.FinalSampled = &s.SampledCurve[n-1]
		}
	}
	var sum runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.SummaryFile), &sum); err != nil {
		return s, err
	}
	s.FinalTasks, s.FinalSampledTasks = sum.EvalTasks, sum.EvalSampledTasks
	if cfg.Pretrain.Enabled {
		var ps runstore.PretrainSummary
		if err := runstore.ReadJSON(filepath.Join(dir, runstore.PretrainFile), &ps); err != nil {
			return s, err
		}
		if ps.HasSampledSuccess && cfg.Evaluation.PlaysSampled() {
			s.PretrainSampled = &ps.SampledSuccess
		}
		s.PretrainTasks, s.PretrainSampledTasks = ps.Tasks, ps.SampledTasks
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

// taskList writes "0: 80→90% 1: 70→70% …", each task's cloned and final success rate
// (just the final one where the clone's split is unknown).
func taskList(bc, final []runstore.TaskSuccess) string {
	before := map[int]runstore.TaskSuccess{}
	for _, t := range bc {
		before[t.Task] = t
	}
	var b strings.Builder
	for i, t := range final {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d: ", t.Task)
		if p, ok := before[t.Task]; ok {
			fmt.Fprintf(&b, "%.0f→", 100*p.Rate())
		}
		fmt.Fprintf(&b, "%.0f%%", 100*t.Rate())
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
