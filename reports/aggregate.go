package reports

import (
	"math"
	"math/rand/v2"
	"net/url"
	"path"
	"slices"
	"strconv"

	"github.com/accerl/accerl/runstore"
)

// Sources of the target return, as recorded in results.json.
const (
	targetFromOptions    = "options"
	targetFromExperiment = "experiment.json"
)

// resolveTarget picks the target return: Options first (the caller knows
// best, for example a default per environment), then experiment.json. It
// returns nil when neither sets one, and notes a target that cannot
// normalise (equal to the random score).
func resolveTarget(e *experimentData, opts Options) *TargetInfo {
	var t *TargetInfo
	switch {
	case opts.Target != nil:
		t = &TargetInfo{Return: *opts.Target, Source: targetFromOptions}
		if opts.RandomScore != nil {
			t.RandomScore = *opts.RandomScore
		}
	case e.Manifest != nil && e.Manifest.Target != nil:
		t = &TargetInfo{Return: *e.Manifest.Target, Source: targetFromExperiment}
		if e.Manifest.RandomScore != nil {
			t.RandomScore = *e.Manifest.RandomScore
		}
	default:
		return nil
	}
	if math.IsNaN(t.Return) || math.IsInf(t.Return, 0) {
		return nil
	}
	return t
}

// armRng is the bootstrap RNG of one statistic of one arm. Keying by the
// arm's name keeps an arm's intervals unchanged when arms are added or
// reordered.
func armRng(opts Options, arm string, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(opts.Seed^armKey(arm), stream))
}

// computeResults derives results.json from the collected experiment, and
// the per-arm steps-to-target details that the figures draw: by training
// episodes and by evaluation episodes (nil entries for arms without a
// curve; all nil without a target, and the second without evaluations).
func computeResults(e *experimentData, opts Options) (Results, stepTargets) {
	res := Results{
		Experiment: e.Name, SpecHash: e.SpecHash, Baseline: e.Baseline, Partial: e.Partial(),
		PartialReasons: e.Reasons, FinalEpisodes: FinalEpisodes, Target: e.Target,
		Bootstrap:  BootstrapCfg{Reps: opts.BootstrapReps, Seed: opts.Seed, Level: 0.95},
		Evaluation: evaluationOf(e),
	}
	for _, r := range e.Runs {
		rr := RunResult{
			Experiment: e.Name, Arm: r.Arm, Seed: r.Seed, Status: r.Status,
			EnvSteps: r.EnvSteps, Updates: r.Updates, Episodes: r.NumEpisodes,
			FinalMeanReturn: runstore.JSONFloat(r.FinalReturn), StepsPerS: runstore.JSONFloat(r.StepsPerS), WallS: runstore.JSONFloat(r.WallS),
			ParamsSHA256: r.ParamsSHA256,
		}
		rr.FinalSuccess, rr.PretrainSuccess, rr.PretrainLoss = runstore.JSONFloat(math.NaN()), runstore.JSONFloat(math.NaN()), runstore.JSONFloat(math.NaN())
		rr.FinalSampledSuccess, rr.PretrainSampledSuccess = runstore.JSONFloat(lastSampledSuccess(r.Metrics)), runstore.JSONFloat(math.NaN())
		if r.Summary != nil {
			rr.Error, rr.Warnings = r.Summary.Error, r.Summary.Warnings
			if r.Summary.HasEvalSuccess {
				rr.FinalSuccess = runstore.JSONFloat(r.Summary.EvalSuccess)
			}
			rr.FinalTasks, rr.FinalSampledTasks = r.Summary.EvalTasks, r.Summary.EvalSampledTasks
		}
		if p := r.Pretrain; p != nil {
			if p.HasSuccess {
				rr.PretrainSuccess = runstore.JSONFloat(p.Success)
			}
			if p.HasSampledSuccess {
				rr.PretrainSampledSuccess = runstore.JSONFloat(p.SampledSuccess)
			}
			rr.PretrainTasks, rr.PretrainSampledTasks = p.Tasks, p.SampledTasks
			if n := len(p.EpochLoss); n > 0 {
				rr.PretrainLoss = runstore.JSONFloat(p.EpochLoss[n-1])
			}
		}
		if r.Manifest != nil {
			rr.Manifest = manifestLink(r.Arm, r.Seed)
		}
		res.Runs = append(res.Runs, rr)
	}

	nan := runstore.JSONFloat(math.NaN())
	finals := make([][]float64, len(e.Arms)) // finite final returns per arm
	sps := make([][]float64, len(e.Arms))    // finite steps/s per arm
	for i, arm := range e.Arms {
		runs := e.runsOf(arm)
		var ret, speed, wall, steps []float64
		a := ArmResult{Arm: arm, Runs: len(runs), IQM: nan, IQMLow: nan, IQMHigh: nan,
			StepsPerSLow: nan, StepsPerSHigh: nan, Speedup: nan, SpeedupLow: nan, SpeedupHigh: nan,
			ProbImprovement: nan, ProbImprovementLow: nan, ProbImprovementHigh: nan,
			OptimalityGap: nan, OptimalityGapLow: nan, OptimalityGapHigh: nan}
		for _, r := range runs {
			if r.Status == runstore.StatusCompleted {
				a.Completed++
			}
			if !r.hasData() {
				continue
			}
			ret, speed, wall = append(ret, r.FinalReturn), append(speed, r.StepsPerS), append(wall, r.WallS)
			steps = append(steps, float64(r.EnvSteps))
		}
		a.FinalReturn, a.StepsPerS, a.WallS, a.EnvSteps = newStat(ret), newStat(speed), newStat(wall), newStat(steps)
		finals[i], sps[i] = finite(ret), finite(speed)
		if v := finals[i]; len(v) > 0 {
			scores := oneTask(v)
			iv := IQMInterval(scores, opts.BootstrapReps, opts.Seed^armKey(arm))
			a.IQM, a.IQMLow, a.IQMHigh = runstore.JSONFloat(iv.Point), runstore.JSONFloat(iv.Low), runstore.JSONFloat(iv.High)
			if t := e.Target; t != nil {
				g := gapInterval(scores, t.Return, t.RandomScore, opts.BootstrapReps, armRng(opts, arm, streamGap))
				a.OptimalityGap, a.OptimalityGapLow, a.OptimalityGapHigh = runstore.JSONFloat(g.Point), runstore.JSONFloat(g.Low), runstore.JSONFloat(g.High)
			}
		}
		if len(sps[i]) > 0 {
			iv := meanInterval(sps[i], opts.BootstrapReps, armRng(opts, arm, streamThroughput))
			a.StepsPerSLow, a.StepsPerSHigh = runstore.JSONFloat(iv.Low), runstore.JSONFloat(iv.High)
		}
		res.Arms = append(res.Arms, a)
	}

	targets := stepTargets{training: make([]*armTarget, len(e.Arms)), eval: make([]*armTarget, len(e.Arms))}
	if e.Target != nil {
		byTraining := measureTargets(e, opts, trainingMeasure(opts.SmoothWindow))
		targets.training = byTraining.Details
		byEval := targetResults{Runs: make([]*RunTarget, len(e.Runs)), Arms: make([]*ArmTarget, len(e.Arms))}
		if res.Evaluation != nil {
			byEval = measureTargets(e, opts, evalMeasure)
			targets.eval = byEval.Details
		}
		for i := range res.Runs {
			res.Runs[i].StepsToTarget, res.Runs[i].StepsToTargetEval = byTraining.Runs[i], byEval.Runs[i]
		}
		for i := range res.Arms {
			res.Arms[i].StepsToTarget, res.Arms[i].StepsToTargetEval = byTraining.Arms[i], byEval.Arms[i]
		}
	}

	base := slices.Index(e.Arms, e.Baseline)
	if base < 0 {
		return res, targets
	}
	for i, arm := range e.Arms {
		a := &res.Arms[i]
		if i == base {
			if len(sps[i]) > 0 {
				a.Speedup, a.SpeedupLow, a.SpeedupHigh = 1, 1, 1
			}
		} else {
			if mean(sps[base]) > 0 {
				iv := ratioInterval(sps[i], sps[base], opts.BootstrapReps, armRng(opts, arm, streamSpeedup))
				a.Speedup, a.SpeedupLow, a.SpeedupHigh = runstore.JSONFloat(iv.Point), runstore.JSONFloat(iv.Low), runstore.JSONFloat(iv.High)
			}
			if len(finals[i]) > 0 && len(finals[base]) > 0 {
				iv := improvementInterval(oneTask(finals[i]), oneTask(finals[base]), opts.BootstrapReps, armRng(opts, arm, streamImprovement))
				a.ProbImprovement, a.ProbImprovementLow, a.ProbImprovementHigh = runstore.JSONFloat(iv.Point), runstore.JSONFloat(iv.Low), runstore.JSONFloat(iv.High)
			}
		}
	}
	return res, targets
}

// oneTask turns values into a one-task score matrix, one run per value.
func oneTask(v []float64) [][]float64 {
	m := make([][]float64, len(v))
	for i, x := range v {
		m[i] = []float64{x}
	}
	return m
}

// manifestLink is the path of a run's manifest relative to the experiment
// directory, with forward slashes and each segment URL-escaped, usable as
// a link target in Markdown and HTML.
func manifestLink(arm string, seed uint64) string {
	return path.Join(url.PathEscape(arm), "seed-"+strconv.FormatUint(seed, 10), runstore.RunFile)
}

// lastSampledSuccess is the success rate of the latest evaluation that also played its
// episodes sampling the actions (eval_sampled_success), NaN when none did.
func lastSampledSuccess(rows []runstore.MetricsRow) float64 {
	for i := len(rows) - 1; i >= 0; i-- {
		if v := rows[i].EvalSampledSuccess; !math.IsNaN(v) {
			return v
		}
	}
	return math.NaN()
}
