package reports

import "github.com/accerl/accerl/runstore"

// Results is the content of results.json: one entry per run and one
// aggregate per arm, for scripts. Floats that are unknown are null.
type Results struct {
	Experiment     string      `json:"experiment"`
	SpecHash       string      `json:"spec_hash"`
	Baseline       string      `json:"baseline"`
	Partial        bool        `json:"partial"`
	PartialReasons []string    `json:"partial_reasons,omitempty"`
	FinalEpisodes  int         `json:"final_episodes"` // episodes averaged into a final return
	Target         *TargetInfo `json:"target,omitempty"`
	// Evaluation describes the runs' evaluation episodes; absent when no
	// run has an evaluation row.
	Evaluation *EvaluationInfo `json:"evaluation,omitempty"`
	Runs       []RunResult     `json:"runs"`
	Arms       []ArmResult     `json:"arms"`
	Bootstrap  BootstrapCfg    `json:"bootstrap"`
}

// BootstrapCfg records how the confidence intervals were computed.
type BootstrapCfg struct {
	Reps  int     `json:"reps"`
	Seed  uint64  `json:"seed"`
	Level float64 `json:"level"`
}

// TargetInfo is the target return behind steps-to-target and the
// optimality gap, and where it came from.
type TargetInfo struct {
	Return      float64 `json:"return"`       // the target episode return
	RandomScore float64 `json:"random_score"` // the return that normalises to 0 in the optimality gap
	Source      string  `json:"source"`       // "options" or "experiment.json"
}

// RunResult is one run in results.json.
type RunResult struct {
	Experiment      string             `json:"experiment"`
	Arm             string             `json:"arm"`
	Seed            uint64             `json:"seed"`
	Status          string             `json:"status"` // a runstore.RunSummary status, or "missing"/"pending" for runs without one
	EnvSteps        int64              `json:"env_steps"`
	Updates         int64              `json:"updates"`
	Episodes        int64              `json:"episodes"`
	FinalMeanReturn runstore.JSONFloat `json:"final_mean_return"`
	StepsPerS       runstore.JSONFloat `json:"steps_per_s"`
	WallS           runstore.JSONFloat `json:"wall_s"`
	ParamsSHA256    string             `json:"params_sha256"`
	// Error is why the run failed (its summary's error), empty otherwise; Warnings the
	// problems it met that did not stop it (its summary's warnings).
	Error         string     `json:"error,omitempty"`
	Warnings      []string   `json:"warnings,omitempty"`
	Manifest      string     `json:"manifest,omitempty"`        // path of the run's manifest.json relative to the experiment directory
	StepsToTarget *RunTarget `json:"steps_to_target,omitempty"` // absent without a target or a return curve
	// StepsToTargetEval is the same measured on the run's evaluation
	// points; absent without a target or an evaluation row.
	StepsToTargetEval *RunTarget `json:"steps_to_target_eval,omitempty"`
	// FinalSuccess is the success rate of the run's latest evaluation (null for tasks
	// without a notion of success or without evaluation); PretrainSuccess that of the
	// behaviour-cloned policy before RL, PretrainLoss its last epoch's loss (null without a
	// pretrain block).
	FinalSuccess    runstore.JSONFloat `json:"final_success"`
	PretrainSuccess runstore.JSONFloat `json:"pretrain_success"`
	PretrainLoss    runstore.JSONFloat `json:"pretrain_loss"`
	// FinalSampledSuccess and PretrainSampledSuccess are the same two success rates with
	// the actions sampled as in training instead of the most likely ones (the evaluation
	// block's sampled = true): of the latest evaluation that played them, and of the cloned
	// policy. Null when not played.
	FinalSampledSuccess    runstore.JSONFloat `json:"final_sampled_success"`
	PretrainSampledSuccess runstore.JSONFloat `json:"pretrain_sampled_success"`
	// FinalTasks, PretrainTasks and their sampled twins split those four success rates by
	// task (tabletop suites: the latest evaluation's and the cloned policy's episodes of
	// every task); absent where the run did not record the split.
	FinalTasks           []runstore.TaskSuccess `json:"final_task_success,omitempty"`
	FinalSampledTasks    []runstore.TaskSuccess `json:"final_sampled_task_success,omitempty"`
	PretrainTasks        []runstore.TaskSuccess `json:"pretrain_task_success,omitempty"`
	PretrainSampledTasks []runstore.TaskSuccess `json:"pretrain_sampled_task_success,omitempty"`
}

// EvaluationInfo summarises the evaluation episodes of an experiment:
// episodes played with the current policy after a training segment, which
// train nothing and are not counted as env steps.
type EvaluationInfo struct {
	Runs   int `json:"runs"`   // runs with at least one evaluation row
	Points int `json:"points"` // evaluation rows over all runs
	// EpisodesMin and EpisodesMax bound the number of episodes one
	// evaluation averages (equal when every evaluation played the same).
	EpisodesMin int64 `json:"episodes_per_evaluation_min"`
	EpisodesMax int64 `json:"episodes_per_evaluation_max"`
}

// RunTarget is how fast one run reached the target return.
type RunTarget struct {
	Reached bool `json:"reached"`
	// Steps is the env steps at the first crossing: of the smoothed
	// training return (steps_to_target) or of an evaluation's mean return
	// (steps_to_target_eval); null when not reached.
	Steps  runstore.JSONFloat `json:"steps"`
	Budget float64            `json:"budget"` // env steps the run has done
}

// Stat summarises one quantity across the seeds of an arm.
type Stat struct {
	N    int                `json:"n"` // seeds with a value
	Mean runstore.JSONFloat `json:"mean"`
	Std  runstore.JSONFloat `json:"std"` // sample standard deviation (n-1)
	Min  runstore.JSONFloat `json:"min"`
	Max  runstore.JSONFloat `json:"max"`
}

// ArmResult aggregates the seeds of one arm in results.json. Every _ci_low
// and _ci_high pair is a 95% percentile-bootstrap interval over seeds.
type ArmResult struct {
	Arm         string             `json:"arm"`
	Runs        int                `json:"runs"`      // runs expected (seeds)
	Completed   int                `json:"completed"` // runs with status completed
	FinalReturn Stat               `json:"final_return"`
	IQM         runstore.JSONFloat `json:"final_return_iqm"`
	IQMLow      runstore.JSONFloat `json:"final_return_iqm_ci_low"`
	IQMHigh     runstore.JSONFloat `json:"final_return_iqm_ci_high"`
	StepsPerS   Stat               `json:"steps_per_s"`
	// StepsPerSLow and StepsPerSHigh bound StepsPerS.Mean.
	StepsPerSLow  runstore.JSONFloat `json:"steps_per_s_ci_low"`
	StepsPerSHigh runstore.JSONFloat `json:"steps_per_s_ci_high"`
	WallS         Stat               `json:"wall_s"`
	EnvSteps      Stat               `json:"env_steps"`
	// Speedup is the arm's mean steps/s over the baseline arm's; its
	// interval resamples both arms' seeds independently. The baseline's is
	// exactly 1.
	Speedup     runstore.JSONFloat `json:"speedup_vs_baseline"`
	SpeedupLow  runstore.JSONFloat `json:"speedup_ci_low"`
	SpeedupHigh runstore.JSONFloat `json:"speedup_ci_high"`
	// ProbImprovement is P(final return of a seed of this arm > one of the
	// baseline), ties counting ½ (ProbabilityOfImprovement); null for the
	// baseline itself.
	ProbImprovement     runstore.JSONFloat `json:"prob_improvement_vs_baseline"`
	ProbImprovementLow  runstore.JSONFloat `json:"prob_improvement_ci_low"`
	ProbImprovementHigh runstore.JSONFloat `json:"prob_improvement_ci_high"`
	// OptimalityGap of the final returns against the target
	// (OptimalityGap); null without a target.
	OptimalityGap     runstore.JSONFloat `json:"optimality_gap"`
	OptimalityGapLow  runstore.JSONFloat `json:"optimality_gap_ci_low"`
	OptimalityGapHigh runstore.JSONFloat `json:"optimality_gap_ci_high"`
	StepsToTarget     *ArmTarget         `json:"steps_to_target,omitempty"` // absent without a target
	// StepsToTargetEval is the same measured on evaluation points
	// (RunResult.StepsToTargetEval); absent without a target or without
	// any evaluation row in the arm's runs.
	StepsToTargetEval *ArmTarget `json:"steps_to_target_eval,omitempty"`
}

// ArmTarget summarises the env steps the seeds of an arm needed to reach
// the target return. A seed that never reached it counts as needing more
// than its budget, so the median and the interval ends are null (+∞) when
// the rank they fall on is such a seed.
type ArmTarget struct {
	Seeds   int                `json:"seeds"`   // seeds with a return curve
	Reached int                `json:"reached"` // seeds that reached the target
	Median  runstore.JSONFloat `json:"median"`
	Low     runstore.JSONFloat `json:"ci_low"`
	High    runstore.JSONFloat `json:"ci_high"`
	// LowerBound is the median with unreached seeds at their budgets; it
	// equals Median when that is finite.
	LowerBound runstore.JSONFloat `json:"lower_bound"`
	// Ratio is Median over the baseline's Median (below 1: fewer env steps
	// than the baseline). When one side did not reach the target it is a
	// bound, and RatioBound says which way: ">" (at least) or "<" (at most).
	Ratio      runstore.JSONFloat `json:"ratio_vs_baseline"`
	RatioBound string             `json:"ratio_bound,omitempty"`
}

func newStat(xs []float64) Stat {
	v := finite(xs)
	lo, hi := minMax(v)
	return Stat{N: len(v), Mean: runstore.JSONFloat(mean(v)), Std: runstore.JSONFloat(sampleStd(v)), Min: runstore.JSONFloat(lo), Max: runstore.JSONFloat(hi)}
}
