package reports

import (
	"math"
)

// Results is the content of results.json: one entry per run and one
// aggregate per arm, for scripts. Floats that are unknown are null.
type Results struct {
	Experiment     string       `json:"experiment"`
	SpecHash       string       `json:"spec_hash"`
	Baseline       string       `json:"baseline"`
	Partial        bool         `json:"partial"`
	PartialReasons []string     `json:"partial_reasons,omitempty"`
	FinalEpisodes  int          `json:"final_episodes"` // episodes averaged into a final return
	Runs           []RunResult  `json:"runs"`
	Arms           []ArmResult  `json:"arms"`
	Bootstrap      BootstrapCfg `json:"bootstrap"`
}

// BootstrapCfg records how the IQM confidence intervals were computed.
type BootstrapCfg struct {
	Reps  int     `json:"reps"`
	Seed  uint64  `json:"seed"`
	Level float64 `json:"level"`
}

// RunResult is one run in results.json.
type RunResult struct {
	Experiment      string    `json:"experiment"`
	Arm             string    `json:"arm"`
	Seed            uint64    `json:"seed"`
	Status          string    `json:"status"` // a RunSummary status, or "missing"/"pending" for runs without one
	EnvSteps        int64     `json:"env_steps"`
	Updates         int64     `json:"updates"`
	Episodes        int64     `json:"episodes"`
	FinalMeanReturn JSONFloat `json:"final_mean_return"`
	StepsPerS       JSONFloat `json:"steps_per_s"`
	WallS           JSONFloat `json:"wall_s"`
	ParamsSHA256    string    `json:"params_sha256"`
}

// Stat summarises one quantity across the seeds of an arm.
type Stat struct {
	N    int       `json:"n"` // seeds with a value
	Mean JSONFloat `json:"mean"`
	Std  JSONFloat `json:"std"` // sample standard deviation (n-1)
	Min  JSONFloat `json:"min"`
	Max  JSONFloat `json:"max"`
}

// ArmResult aggregates the seeds of one arm in results.json.
type ArmResult struct {
	Arm         string    `json:"arm"`
	Runs        int       `json:"runs"`      // runs expected (seeds)
	Completed   int       `json:"completed"` // runs with status completed
	FinalReturn Stat      `json:"final_return"`
	IQM         JSONFloat `json:"final_return_iqm"`
	IQMLow      JSONFloat `json:"final_return_iqm_ci_low"`
	IQMHigh     JSONFloat `json:"final_return_iqm_ci_high"`
	StepsPerS   Stat      `json:"steps_per_s"`
	WallS       Stat      `json:"wall_s"`
	EnvSteps    Stat      `json:"env_steps"`
	Speedup     JSONFloat `json:"speedup_vs_baseline"` // mean steps/s over the baseline arm's
}

func newStat(xs []float64) Stat {
	v := finite(xs)
	lo, hi := minMax(v)
	return Stat{N: len(v), Mean: JSONFloat(mean(v)), Std: JSONFloat(sampleStd(v)), Min: JSONFloat(lo), Max: JSONFloat(hi)}
}

// computeResults derives results.json from the collected experiment.
func computeResults(e *experimentData, opts Options) Results {
	res := Results{
		Experiment: e.Name, SpecHash: e.SpecHash, Baseline: e.Baseline, Partial: e.Partial(),
		PartialReasons: e.Reasons, FinalEpisodes: FinalEpisodes,
		Bootstrap: BootstrapCfg{Reps: opts.BootstrapReps, Seed: opts.Seed, Level: 0.95},
	}
	for _, r := range e.Runs {
		res.Runs = append(res.Runs, RunResult{
			Experiment: e.Name, Arm: r.Arm, Seed: r.Seed, Status: r.Status,
			EnvSteps: r.EnvSteps, Updates: r.Updates, Episodes: r.NumEpisodes,
			FinalMeanReturn: JSONFloat(r.FinalReturn), StepsPerS: JSONFloat(r.StepsPerS), WallS: JSONFloat(r.WallS),
			ParamsSHA256: r.ParamsSHA256,
		})
	}
	for _, arm := range e.Arms {
		runs := e.runsOf(arm)
		var ret, sps, wall, steps []float64
		a := ArmResult{Arm: arm, Runs: len(runs), IQM: JSONFloat(math.NaN()), IQMLow: JSONFloat(math.NaN()),
			IQMHigh: JSONFloat(math.NaN()), Speedup: JSONFloat(math.NaN())}
		for _, r := range runs {
			if r.Status == StatusCompleted {
				a.Completed++
			}
			if !r.hasData() {
				continue
			}
			ret, sps, wall = append(ret, r.FinalReturn), append(sps, r.StepsPerS), append(wall, r.WallS)
			steps = append(steps, float64(r.EnvSteps))
		}
		a.FinalReturn, a.StepsPerS, a.WallS, a.EnvSteps = newStat(ret), newStat(sps), newStat(wall), newStat(steps)
		if v := finite(ret); len(v) > 0 {
			scores := make([][]float64, len(v))
			for j, x := range v {
				scores[j] = []float64{x}
			}
			// Keying the seed by arm name keeps an arm's interval unchanged
			// when arms are added or reordered.
			iv := IQMInterval(scores, opts.BootstrapReps, opts.Seed^armKey(arm))
			a.IQM, a.IQMLow, a.IQMHigh = JSONFloat(iv.Point), JSONFloat(iv.Low), JSONFloat(iv.High)
		}
		res.Arms = append(res.Arms, a)
	}
	var base float64 = math.NaN()
	for _, a := range res.Arms {
		if a.Arm == e.Baseline {
			base = float64(a.StepsPerS.Mean)
		}
	}
	for i := range res.Arms {
		if base > 0 {
			res.Arms[i].Speedup = JSONFloat(float64(res.Arms[i].StepsPerS.Mean) / base)
		}
	}
	return res
}
