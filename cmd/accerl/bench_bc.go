package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/testenv/tabletop"
)

// bcBenchResult is `bench bc`'s JSON.
type bcBenchResult struct {
	Suite       string          `json:"suite"`
	PerTask     int             `json:"demos_per_task"`
	DemoNoise   float64         `json:"demo_execution_noise"`
	DemoSteps   int             `json:"demo_steps"`
	InitStates  int             `json:"init_states_per_task"`
	Config      bc.Config       `json:"config"`
	FinalLoss   float64         `json:"final_mse"`
	Params      int             `json:"params"`
	SuccessRate float64         `json:"success_rate"`
	Tasks       []bcTaskSuccess `json:"tasks"`
	TrainS      float64         `json:"train_s"`
	EvalS       float64         `json:"eval_s"`
}

type bcTaskSuccess struct {
	Task        int     `json:"task"`
	Instruction string  `json:"instruction"`
	SuccessRate float64 `json:"success_rate"`
	Episodes    int     `json:"episodes"`
}

// benchBC measures the behaviour-cloning warm start on a tabletop suite: expert
// demonstrations, a state-based policy trained on them (activities/bc's recipe), and its
// greedy success from the fixed initial states of every task.
func benchBC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := bc.DefaultConfig()
	fs := newFlagSet("bench bc", "bench bc [flags]   — clone the scripted expert of a tabletop suite into a state-based policy (behaviour cloning, the warm start before RL) and measure its success from the fixed initial states", stderr)
	suite := fs.String("suite", tabletop.SuiteSpatial, "tabletop suite: "+strings.Join(tabletop.Suites(), ", "))
	perTask := fs.Int("demos", tabletop.DemosPerTask, "successful expert demonstrations per task (LIBERO: 50); more cover more of the initial-state distribution")
	noise := fs.Float64("noise", 0.1, "DART execution noise σ on the motion dimensions during demonstrations (labels stay noise-free); 0 replays the expert exactly, which leaves the policy no examples of recovering")
	inits := fs.Int("init-states", 10, fmt.Sprintf("fixed initial states per task to evaluate from, 1..%d (the protocol's full count is %d)", tabletop.InitStates, tabletop.InitStates))
	epochs := fs.Int("epochs", def.Epochs, "passes over the demonstrations")
	chunk := fs.Int("chunk", def.Chunk, "future actions one query predicts (action chunking); 1 is single-step BC")
	execute := fs.Int("execute", def.Execute, "actions of each chunk run before the policy is queried again, 1..chunk")
	seed := fs.Uint64("seed", def.Seed, "seed of the demonstrations, the initial weights and the minibatch order")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := tabletop.ValidateSuite(*suite); err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	if *inits < 1 || *inits > tabletop.InitStates || *perTask < 1 {
		return fmt.Errorf("bench bc: --init-states must be in 1..%d and --demos at least 1", tabletop.InitStates)
	}
	cfg := def
	cfg.Epochs, cfg.Chunk, cfg.Execute, cfg.Seed = *epochs, *chunk, *execute, *seed
	tasks := make([]int, tabletop.TaskCount(*suite))
	for i := range tasks {
		tasks[i] = i
	}
	fmt.Fprintf(stdout, "%s: %d DART demonstrations per task (noise %g), chunk %d / execute %d, %d epochs\n", *suite, *perTask, *noise, cfg.Chunk, cfg.Execute, cfg.Epochs)
	start := time.Now()
	demos, err := bc.Collect(bc.CollectInput{Suite: *suite, Tasks: tasks, PerTask: *perTask, Noise: *noise, Seed: *seed})
	if err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	model, tr, err := bc.Train(cfg, demos)
	if err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	trainS := time.Since(start).Seconds()
	fmt.Fprintf(stdout, "trained on %d samples in %.0fs: final MSE %.4f per action value, %d parameters\n", tr.Samples, trainS, tr.FinalLoss, tr.NumParams)
	t0 := time.Now()
	ev, err := bc.Evaluate(model.Actor(), *suite, tasks, *inits)
	if err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	res := bcBenchResult{Suite: *suite, PerTask: *perTask, DemoNoise: *noise, DemoSteps: tr.Samples, InitStates: *inits, Config: cfg,
		FinalLoss: tr.FinalLoss, Params: tr.NumParams, SuccessRate: ev.SuccessRate, TrainS: trainS, EvalS: time.Since(t0).Seconds()}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSUCCESS\tEPISODES\tINSTRUCTION")
	for _, t := range ev.Tasks {
		ins := tabletop.Instruction(*suite, t.Task)
		res.Tasks = append(res.Tasks, bcTaskSuccess{Task: t.Task, Instruction: ins, SuccessRate: t.Rate(), Episodes: t.Episodes})
		fmt.Fprintf(tw, "%d\t%.0f%%\t%d\t%s\n", t.Task, 100*t.Rate(), t.Episodes, ins)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s: greedy BC success %.1f%% over %d tasks × %d initial states (evaluation %.0fs)\n", *suite, 100*ev.SuccessRate, len(tasks), *inits, res.EvalS)
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}
