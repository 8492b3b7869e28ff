package tabletop

import (
	"fmt"
	"time"
)

// BenchOptions adjusts BenchExpert.
type BenchOptions struct {
	// InitStates is the number of fixed initial states per task to play,
	// from the first; 0 means all 50.
	InitStates int
	// Render also measures steps per second with both cameras rendered at
	// ImageSize, over RenderInitStates initial states per task.
	Render bool
	// ImageSize of the rendered measurement; 0 means 64.
	ImageSize int
	// RenderInitStates bounds the rendered measurement; 0 means 2.
	RenderInitStates int
	// Seed seeds the expert's action noise.
	Seed uint64
}

// BenchResult is BenchExpert's report.
type BenchResult struct {
	Suites []SuiteBench `json:"suites"`
}

// SuiteBench is one suite's expert results.
type SuiteBench struct {
	Suite       string      `json:"suite"`
	SuccessRate float64     `json:"success_rate"`
	MeanLength  float64     `json:"mean_length"`
	Tasks       []TaskBench `json:"tasks"`
	// StepsPerS is environment steps per second without rendering, the
	// expert's own computation included.
	StepsPerS float64 `json:"steps_per_s"`
	// RenderStepsPerS is the same with both cameras rendered every step
	// (0 when not measured).
	RenderStepsPerS float64 `json:"render_steps_per_s,omitempty"`
	ImageSize       int     `json:"image_size,omitempty"`
}

// TaskBench is one task's expert results.
type TaskBench struct {
	Task        int     `json:"task"`
	Instruction string  `json:"instruction"`
	SuccessRate float64 `json:"success_rate"`
	MeanLength  float64 `json:"mean_length"`
	Episodes    int     `json:"episodes"`
}

// BenchExpert plays the expert once from each fixed initial state of
// every task of the given suites (all four when empty) and reports success
// rates, mean episode lengths and step rates.
func BenchExpert(suiteNames []string, opts BenchOptions) (BenchResult, error) {
	if len(suiteNames) == 0 {
		suiteNames = Suites()
	}
	n := opts.InitStates
	if n == 0 {
		n = InitStates
	}
	if n < 0 || n > InitStates {
		return BenchResult{}, fmt.Errorf("bench expert: init states %d out of range 1..%d", n, InitStates)
	}
	if err := ValidateImageSize(opts.ImageSize); err != nil {
		return BenchResult{}, fmt.Errorf("bench expert: %w", err)
	}
	var res BenchResult
	for _, name := range suiteNames {
		env, err := New(Config{Suite: name})
		if err != nil {
			return BenchResult{}, fmt.Errorf("bench expert: %w", err)
		}
		sb := SuiteBench{Suite: name}
		steps, wins, eps := 0, 0, 0
		start := time.Now()
		for t := range TasksPerSuite {
			tb := TaskBench{Task: t, Instruction: Instruction(name, t), Episodes: n}
			tw, tl := 0, 0
			for i := range n {
				ok, l := PlayExpert(env, NewExpert(opts.Seed+uint64(t*InitStates+i)), t, i)
				tl += l
				if ok {
					tw++
				}
			}
			tb.SuccessRate, tb.MeanLength = float64(tw)/float64(n), float64(tl)/float64(n)
			sb.Tasks = append(sb.Tasks, tb)
			steps, wins, eps = steps+tl, wins+tw, eps+n
		}
		sb.StepsPerS = float64(steps) / time.Since(start).Seconds()
		sb.SuccessRate, sb.MeanLength = float64(wins)/float64(eps), float64(steps)/float64(eps)
		if opts.Render {
			rn := opts.RenderInitStates
			if rn == 0 {
				rn = 2
			}
			renv, err := New(Config{Suite: name, ImageSize: opts.ImageSize, Render: true})
			if err != nil {
				return BenchResult{}, fmt.Errorf("bench expert: %w", err)
			}
			rsteps := 0
			rstart := time.Now()
			for t := range TasksPerSuite {
				for i := range min(rn, n) {
					_, l := PlayExpert(renv, NewExpert(opts.Seed+uint64(t*InitStates+i)), t, i)
					rsteps += l
				}
			}
			sb.RenderStepsPerS = float64(rsteps) / time.Since(rstart).Seconds()
			sb.ImageSize = renv.cfg.ImageSize
		}
		res.Suites = append(res.Suites, sb)
	}
	return res, nil
}

// PlayExpert plays one episode of task from fixed initial state initIdx
// with expert x and reports success and episode length.
func PlayExpert(env *Env, x *Expert, task, initIdx int) (bool, int) {
	env.ResetTo(task, initIdx)
	for {
		_, _, term, trunc := env.Step(x.Act(env))
		if term || trunc {
			return term, env.steps
		}
	}
}
