package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/kernels/vla"
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
	EdgeFails   int             `json:"edge_failures"` // bc.EvalResult.EdgeFailures
	Tasks       []bcTaskSuccess `json:"tasks"`
	TrainS      float64         `json:"train_s"`
	EvalS       float64         `json:"eval_s"`
}

type bcTaskSuccess struct {
	Task        int     `json:"task"`
	Instruction string  `json:"instruction"`
	SuccessRate float64 `json:"success_rate"`
	Episodes    int     `json:"episodes"`
	// EdgeFailures are the failed episodes that ended with the fingertip at the
	// workspace's edge (bc.TaskSuccess.EdgeFailures).
	EdgeFailures int `json:"edge_failures"`
}

// bcBenchFlags are the flags of `bench bc` that both policies read.
type bcBenchFlags struct {
	suite   string
	tasks   []int
	perTask int
	noise   float64
	inits   int
	seed    uint64
	jsonOut string
}

// benchBC measures the behaviour-cloning warm start on a tabletop suite: expert
// demonstrations, a policy trained on them (activities/bc's recipe: the state-based MLP, or
// with --policy vla the micro-VLA from pixels), and its greedy success from the fixed initial
// states of every task.
func benchBC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def, vdef := bc.DefaultConfig(), bc.DefaultVLAConfig()
	fs := newFlagSet("bench bc", "bench bc [flags]   — clone the scripted expert of a tabletop suite into a policy (behaviour cloning, the warm start before RL) and measure its success from the fixed initial states", stderr)
	policy := fs.String("policy", "mlp", "policy to clone into: mlp (state-based MLP on the observation vector and object offsets) or vla (the micro-VLA transformer reading camera images, the instruction and proprio, actions as 256-bin tokens; ~100× the training cost)")
	suite := fs.String("suite", tabletop.SuiteSpatial, "tabletop suite: "+strings.Join(tabletop.Suites(), ", "))
	perTask := fs.Int("demos", tabletop.DemosPerTask, "successful expert demonstrations per task (LIBERO: 50); more cover more of the initial-state distribution")
	noise := fs.Float64("noise", 0.1, "DART execution noise σ on the motion dimensions during demonstrations (labels stay noise-free); 0 replays the expert exactly, which leaves the policy no examples of recovering")
	inits := fs.Int("init-states", 10, fmt.Sprintf("fixed initial states per task to evaluate from, 1..%d (the protocol's full count is %d)", tabletop.InitStates, tabletop.InitStates))
	epochs := fs.Int("epochs", 0, fmt.Sprintf("passes over the demonstrations; 0 is the policy's default (mlp %d, vla %d)", def.Epochs, vdef.Epochs))
	batch := fs.Int("batch", 0, fmt.Sprintf("minibatch size; 0 is the policy's default (mlp %d, vla %d)", def.Batch, vdef.Batch))
	lr := fs.Float64("lr", 0, fmt.Sprintf("Adam's initial learning rate, decayed linearly to a tenth; 0 is the policy's default (mlp %g, vla %g)", def.LR, vdef.LR))
	finalLR := fs.Float64("final-lr", 0, "vla: the learning rate the linear decay ends at on the last step; 0 is a tenth of --lr")
	ema := fs.Float64("ema", vdef.EMA, "vla: evaluate an exponential moving average of the weights over the training steps with this decay (0.999 averages about the last thousand steps); 0 evaluates the last weights")
	chunk := fs.Int("chunk", def.Chunk, "future actions one query predicts (action chunking); 1 is single-step BC; vla decodes 7 tokens per action, so its cost grows with it")
	execute := fs.Int("execute", 0, fmt.Sprintf("actions of each chunk run before the policy is queried again, 1..chunk; 0 is the policy's default (mlp %d, vla %d)", def.Execute, vdef.Execute))
	seed := fs.Uint64("seed", def.Seed, "seed of the demonstrations, the initial weights and the minibatch order")
	dim := fs.Int("dim", vdef.Dim, "vla: transformer width; the cost per token grows about quadratically with it")
	layers := fs.Int("layers", vdef.Layers, "vla: transformer blocks; the cost grows linearly with them")
	heads := fs.Int("heads", vdef.Heads, "vla: attention heads per block; must divide --dim")
	shift := fs.Int("shift", 0, "vla: random-shift augmentation, each training image translated by up to this many pixels per sample and epoch (edges repeated); 0 trains on the images as recorded")
	patch := fs.Int("patch", vdef.Patch, "vla: patch side in pixels; must divide --image-size, and each camera gives (image-size/patch)² tokens")
	imageSize := fs.Int("image-size", vdef.ImageSize, "vla: camera image side in pixels, a power of two 16..256; larger shows more detail at more tokens and rendering")
	cameras := fs.String("cameras", strings.Join(vdef.Cameras, ","), "vla: comma-separated cameras the policy sees, of "+strings.Join(tabletop.Cameras(), ", "))
	labelSigma := fs.Float64("label-sigma", vdef.LabelSigma, "vla: ordinal soft labels, each expert bin's target a Gaussian of this many bins around it; 0 trains on the one-hot cross-entropy")
	holdout := fs.Int("holdout", 0, "vla: further demonstrations per task recorded but never trained on, to score the policy on held-out steps (see --score-samples)")
	scoreSamples := fs.Int("score-samples", 2000, "vla: steps of the training demonstrations (and of the held-out ones) scored offline after training: token cross-entropy and accuracy, and the error of the decoded actions; 0 skips it")
	decode := fs.String("decode", "argmax", "vla: how the evaluation picks each action token from its distribution: argmax, mean (the bin nearest the mean bin, as a regression head would predict) or median")
	ensemble := fs.Int("ensemble", 0, "vla: temporal ensembling (ACT): query the policy every step and run the mean of the motion this many newest chunks (at most --chunk) predicted for the step, the newest chunk's gripper command; --execute is then ignored; 0 or 1 runs each chunk's first --execute actions")
	saveModel := fs.String("save-model", "", "vla: write the trained model (the clone, before any DAgger round) to this file, and each DAgger round's to FILE.daggerN; with --load-clone, the run's clone (a model file of a run directory)")
	loadClone := fs.String("load-clone", "", "vla: start from the policy a run cloned (its run directory, its bc/final checkpoint, or a `bench learn --bc-cache` entry) instead of training one: it is evaluated, and with --dagger-rounds (and --dagger-control: more epochs on the demonstrations alone) trained further; the network flags must build the run's network")
	loadModel := fs.String("load-model", "", "vla: evaluate the model of this file (from --save-model) instead of training one; --execute applies, the training flags do not")
	daggerRounds := fs.Int("dagger-rounds", 0, "vla: DAgger rounds after cloning: each round the clone plays --dagger-episodes per task from random resets, the expert labels every state it visits with the chunk it would take from there, and the clone trains --dagger-epochs more over the demonstrations and all labelled states; 0 is plain BC")
	daggerEpisodes := fs.Int("dagger-episodes", 0, "vla: episodes per task of each DAgger round; 0 is --demos")
	daggerEpochs := fs.Int("dagger-epochs", 2, "vla: epochs over all samples after each DAgger round")
	daggerMaxSteps := fs.Int("dagger-max-steps", 0, "vla: end each DAgger episode after this many steps; 0 is twice the demonstrations' mean length")
	daggerWonOnly := fs.Bool("dagger-won-only", false, "vla: keep only the DAgger episodes the clone won (its failures' states, labelled, are dropped): tells the labels on states near the demonstrations apart from those on the clone's failures")
	daggerExpert := fs.Bool("dagger-expert", false, "vla: the DAgger rounds' other control: the scripted expert plays the rounds' episodes (with --noise, like the demonstrations) instead of the clone, and labels them as DAgger labels the clone's, so that what the labels' form does is told apart from what the clone's states do")
	daggerKick := fs.Int("dagger-kick", 0, "vla: with --dagger-expert, push each of the expert's round episodes off course once, for this many steps at full speed in a random horizontal direction, so the rounds add recovery demonstrations from the workspace's edges and corners (where a clone that lost track ends up); 0 is off")
	daggerControl := fs.Bool("dagger-control", false, "vla: the DAgger rounds' control: each round retrains the clone on the demonstrations alone (no rollouts, no labelled states) for the same epochs at the same learning rate, so that what the labels do is told apart from what the extra training does")
	daggerLR := fs.Float64("dagger-lr", 0, "vla: each DAgger round's initial learning rate (decayed linearly to a tenth over the round); 0 is a third of --lr's")
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
	if *epochs < 0 || *batch < 0 || *lr < 0 {
		return fmt.Errorf("bench bc: --epochs, --batch and --lr must not be negative")
	}
	common := bcBenchFlags{suite: *suite, perTask: *perTask, noise: *noise, inits: *inits, seed: *seed, jsonOut: *jsonOut}
	common.tasks = make([]int, tabletop.TaskCount(*suite))
	for i := range common.tasks {
		common.tasks[i] = i
	}
	orDefault := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	switch *policy {
	case "vla":
		cfg := vdef
		cfg.ImageSize, cfg.Patch, cfg.Cameras = *imageSize, *patch, strings.Split(*cameras, ",")
		cfg.Dim, cfg.Layers, cfg.Heads = *dim, *layers, *heads
		cfg.Chunk, cfg.Execute, cfg.Seed, cfg.Shift = *chunk, orDefault(*execute, vdef.Execute), *seed, *shift
		cfg.Epochs, cfg.Batch = orDefault(*epochs, vdef.Epochs), orDefault(*batch, vdef.Batch)
		if *lr > 0 {
			cfg.LR = *lr
		}
		cfg.LabelSigma, cfg.FinalLR, cfg.EMA = *labelSigma, *finalLR, *ema
		rule, err := vla.ParseDecodeRule(*decode)
		if err != nil {
			return fmt.Errorf("bench bc: --decode: %w", err)
		}
		if *holdout < 0 || *scoreSamples < 0 || *ensemble < 0 {
			return fmt.Errorf("bench bc: --holdout, --score-samples and --ensemble must not be negative")
		}
		if *daggerRounds < 0 || *daggerEpisodes < 0 || *daggerMaxSteps < 0 || *daggerEpochs < 1 || *daggerLR < 0 {
			return fmt.Errorf("bench bc: --dagger-rounds, --dagger-episodes and --dagger-max-steps must not be negative, --dagger-epochs at least 1, --dagger-lr ≥ 0")
		}
		if *daggerKick < 0 || (*daggerKick > 0 && !*daggerExpert) {
			return fmt.Errorf("bench bc: --dagger-kick %d: the kicks push the expert's episodes, so give a positive count with --dagger-expert (or 0)", *daggerKick)
		}
		if *loadModel != "" && *loadClone != "" {
			return fmt.Errorf("bench bc: --load-model %s and --load-clone %s: give one model to start from", *loadModel, *loadClone)
		}
		if *loadModel != "" && *saveModel != "" {
			return fmt.Errorf("bench bc: --save-model %s with --load-model %s: the model is a file already (copy it; --save-model writes a trained model or a --load-clone)", *saveModel, *loadModel)
		}
		v := vlaBenchFlags{holdout: *holdout, scoreSamples: *scoreSamples, decode: rule, ensemble: *ensemble, saveModel: *saveModel, loadModel: *loadModel, loadClone: *loadClone,
			daggerRounds: *daggerRounds, daggerEpisodes: orDefault(*daggerEpisodes, *perTask), daggerEpochs: *daggerEpochs, daggerLR: *daggerLR, daggerMaxSteps: *daggerMaxSteps, daggerControl: *daggerControl, daggerWonOnly: *daggerWonOnly, daggerExpert: *daggerExpert, daggerKick: *daggerKick}
		if v.daggerLR == 0 {
			v.daggerLR = cfg.LR / 3
		}
		return benchBCVLA(ctx, common, v, cfg, stdout)
	case "mlp":
	default:
		return fmt.Errorf("bench bc: unknown --policy %q (known: mlp, vla)", *policy)
	}
	cfg := def
	cfg.Chunk, cfg.Execute, cfg.Seed = *chunk, orDefault(*execute, def.Execute), *seed
	cfg.Epochs, cfg.Batch = orDefault(*epochs, def.Epochs), orDefault(*batch, def.Batch)
	if *lr > 0 {
		cfg.LR = *lr
	}
	tasks := common.tasks
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
		FinalLoss: tr.FinalLoss, Params: tr.NumParams, SuccessRate: ev.SuccessRate, EdgeFails: ev.EdgeFailures(), TrainS: trainS, EvalS: time.Since(t0).Seconds()}
	if res.Tasks, err = printBCTasks(stdout, *suite, ev); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s: greedy BC success %.1f%% over %d tasks × %d initial states (evaluation %.0fs)\n", *suite, 100*ev.SuccessRate, len(tasks), *inits, res.EvalS)
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}

// printBCTasks prints the per-task success table of ev, and how many failures ended at the
// workspace's edge, and returns its rows for the JSON.
func printBCTasks(stdout io.Writer, suite string, ev bc.EvalResult) ([]bcTaskSuccess, error) {
	var rows []bcTaskSuccess
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSUCCESS\tEPISODES\tFAILED AT EDGE\tINSTRUCTION")
	failed := 0
	for _, t := range ev.Tasks {
		ins := tabletop.Instruction(suite, t.Task)
		rows = append(rows, bcTaskSuccess{Task: t.Task, Instruction: ins, SuccessRate: t.Rate(), Episodes: t.Episodes, EdgeFailures: t.EdgeFailures})
		fmt.Fprintf(tw, "%d\t%.0f%%\t%d\t%d\t%s\n", t.Task, 100*t.Rate(), t.Episodes, t.EdgeFailures, ins)
		failed += t.Episodes - t.Successes
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of the %d failed episodes ended with the fingertip at the workspace's edge (within %g mm of its horizontal limits): runaways, not near misses\n",
			ev.EdgeFailures(), failed, 1000*tabletop.EdgeTolerance)
	}
	return rows, nil
}
