package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/testenv/tabletop"
)

// cmdRender plays one episode of a tabletop task and writes its frames and a contact sheet.
func cmdRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("render", "render --suite NAME --task N [flags]   — play one episode of a tabletop task and write every camera's frames as PNGs and a contact sheet\n\nSuites: "+strings.Join(tabletop.Suites(), ", "), stderr)
	suite := fs.String("suite", "", "tabletop suite: "+strings.Join(tabletop.Suites(), ", ")+" (required)")
	task := fs.Int("task", 0, fmt.Sprintf("task index within the suite, 0..%d; each task has its own instruction and goal", tabletop.TasksPerSuite-1))
	expert := fs.Bool("expert", false, "act with the scripted expert (an episode that solves the task); without it (and without --policy) the actions are uniformly random from a fixed seed")
	policyPath := fs.String("policy", "", "act with a behaviour-cloned micro-VLA, greedily, as the evaluations do: a run directory, a `bench learn --bc-cache` entry, a bc/final checkpoint (all for the default network) or a `bench bc --save-model` file; it sees its own cameras at its own size, and the frames are rendered at --image-size beside it")
	initIdx := fs.Int("init", 0, fmt.Sprintf("fixed initial state 0..%d of the evaluation protocol; each one jitters the layout differently", tabletop.InitStates-1))
	size := fs.Int("image-size", tabletop.DefaultImageSize, "camera image side in pixels, a power of two from 16 to 256; larger frames show more detail and take longer to render")
	outDir := fs.String("out", "", "directory for the PNGs (default renders/<suite>-task<N>/); existing frames there are overwritten")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("render: unexpected argument %q; the suite and task are flags (--suite, --task)", fs.Arg(0))
	}
	if *suite == "" {
		return fmt.Errorf("render: --suite is required (known: %s)", strings.Join(tabletop.Suites(), ", "))
	}
	if *expert && *policyPath != "" {
		return fmt.Errorf("render: --expert and --policy %s: choose one to act", *policyPath)
	}
	cfg := tabletop.Config{Suite: *suite, Tasks: []int{*task}, ImageSize: *size}
	if err := tabletop.ValidateConfig(cfg); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if *initIdx < 0 || *initIdx >= tabletop.InitStates {
		return fmt.Errorf("render: init state %d is out of range: each task has fixed initial states 0..%d", *initIdx, tabletop.InitStates-1)
	}
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("renders", fmt.Sprintf("%s-task%d", *suite, *task))
	}
	var act actFunc
	policy := "random actions"
	switch {
	case *expert:
		act, policy = expertAct(*task), "expert"
	case *policyPath != "":
		model, err := activities.LoadClonedModel(*policyPath, bc.DefaultVLAConfig())
		if err != nil {
			return fmt.Errorf("render: --policy: %w", err)
		}
		if act, err = cloneAct(model, *suite, *task, *initIdx); err != nil {
			return fmt.Errorf("render: %w", err)
		}
		policy = fmt.Sprintf("the clone %s (greedy, %v at %d×%d, executing %d of each %d-action chunk)", *policyPath, model.Cameras, model.ImageSize, model.ImageSize, model.Execute, model.Chunk)
	default:
		act = randomAct(*task)
	}
	fmt.Fprintf(stdout, "Task %s/%d, initial state %d, %s: %q\n", *suite, *task, *initIdx, policy, tabletop.Instruction(*suite, *task))
	rec, err := renderEpisode(ctx, cfg, *task, *initIdx, act, dir)
	if err != nil {
		return err
	}
	outcome := "failed (time limit)"
	if rec.Success {
		outcome = "succeeded"
	}
	fmt.Fprintf(stdout, "Episode: %d steps, %s\n", rec.Steps, outcome)
	for _, d := range rec.FrameDirs {
		fmt.Fprintf(stdout, "Frames: %s/0000.png … %04d.png (%d×%d)\n", d, rec.Steps, *size, *size)
	}
	fmt.Fprintf(stdout, "Contact sheet: %s\n", rec.Sheet)
	return nil
}

// actFunc chooses the action for the rendered env's current state; an error stops the episode.
type actFunc func(env *tabletop.Env) ([]float64, error)

// expertAct is the noise-free scripted expert, seeded as RenderEpisode seeds it.
func expertAct(task int) actFunc {
	x := tabletop.NewExpert(uint64(task))
	return func(env *tabletop.Env) ([]float64, error) { return x.Act(env), nil }
}

// randomAct draws uniformly random actions from RenderEpisode's seeds.
func randomAct(task int) actFunc {
	rng := rand.New(rand.NewPCG(uint64(task), 0x72616e646f6d))
	return func(*tabletop.Env) ([]float64, error) {
		a := make([]float64, tabletop.ActionDim)
		for i := range a {
			a[i] = 2*rng.Float64() - 1
		}
		return a, nil
	}
}

// cloneAct plays a cloned VLA greedily. The clone sees its own env (its cameras at its
// size, reset to the same initial state) stepped with the same actions as the rendered
// one: the physics does not read the images, so the two stay in one state, and an episode
// that goes on in the rendered env after the clone's own ended is an error.
func cloneAct(m *bc.VLAModel, suite string, task, initIdx int) (actFunc, error) {
	cfg := m.EnvConfig(suite)
	cfg.Tasks = []int{task}
	own, err := tabletop.New(cfg)
	if err != nil {
		return nil, err
	}
	own.ResetTo(task, initIdx)
	actor := m.Actor()
	envs, out := []*tabletop.Env{own}, [][]float64{make([]float64, tabletop.ActionDim)}
	ended := false
	return func(env *tabletop.Env) ([]float64, error) {
		if ended || own.Steps() != env.Steps() {
			return nil, fmt.Errorf("the clone's own env (step %d, ended %v) and the rendered one (step %d) parted", own.Steps(), ended, env.Steps())
		}
		actor.Act(envs, nil, []int{0}, out)
		a := slices.Clone(out[0])
		_, _, term, trunc := own.Step(a)
		ended = term || trunc
		return a, nil
	}, nil
}

// renderEpisode is tabletop.RenderEpisode from any fixed initial state, with any actor: it
// plays one episode of task from state initIdx, and writes dir/<camera>/NNNN.png for every
// frame, the one after the reset included, and dir/contact.png. From state 0 with the
// expert or random actions its files are RenderEpisode's byte for byte (the tests check
// this), which keeps the two in step until RenderEpisode takes an initial state itself.
func renderEpisode(ctx context.Context, cfg tabletop.Config, task, initIdx int, act actFunc, dir string) (tabletop.EpisodeRecord, error) {
	cfg.Render = true
	env, err := tabletop.New(cfg)
	if err != nil {
		return tabletop.EpisodeRecord{}, fmt.Errorf("render: %w", err)
	}
	rec := tabletop.EpisodeRecord{Suite: cfg.Suite, Task: task, Instruction: tabletop.Instruction(cfg.Suite, task)}
	c := env.Config()
	var frames [][][]uint8
	snap := func() {
		var f [][]uint8
		for _, img := range env.Images() {
			f = append(f, append([]uint8(nil), img...))
		}
		frames = append(frames, f)
	}
	env.ResetTo(task, initIdx)
	snap()
	for {
		if err := ctx.Err(); err != nil {
			return rec, err
		}
		a, err := act(env)
		if err != nil {
			return rec, fmt.Errorf("render: step %d: %w", env.Steps(), err)
		}
		_, _, term, trunc := env.Step(a)
		snap()
		if term || trunc {
			rec.Steps, rec.Success = env.Steps(), term
			break
		}
	}
	for i, name := range c.Cameras {
		camDir := filepath.Join(dir, name)
		if err := os.MkdirAll(camDir, 0o755); err != nil {
			return rec, fmt.Errorf("render: %w", err)
		}
		for k, f := range frames {
			if err := tabletop.WritePNG(filepath.Join(camDir, fmt.Sprintf("%04d.png", k)), tabletop.RGBImage(f[i], c.ImageSize)); err != nil {
				return rec, fmt.Errorf("render: %w", err)
			}
		}
		rec.FrameDirs = append(rec.FrameDirs, camDir)
	}
	rec.Sheet = filepath.Join(dir, "contact.png")
	if err := tabletop.WriteContactSheet(rec.Sheet, frames, c.ImageSize); err != nil {
		return rec, fmt.Errorf("render: %w", err)
	}
	return rec, nil
}

// benchExpert measures the scripted expert on the tabletop suites.
func benchExpert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench expert", "bench expert [flags]   — play the scripted tabletop expert from the fixed initial states of every task and report success rates, episode lengths and env steps/s", stderr)
	suiteList := fs.String("suite", "all", "suites to measure: all, or comma-separated names ("+strings.Join(tabletop.Suites(), ", ")+")")
	initStates := fs.Int("init-states", tabletop.InitStates, fmt.Sprintf("fixed initial states per task to play, from the first (1..%d); fewer is quicker and a coarser success rate", tabletop.InitStates))
	render := fs.Bool("render", true, "also measure steps/s with both cameras rendered every step (2 initial states per task); --render=false skips it")
	size := fs.Int("image-size", tabletop.DefaultImageSize, "camera image side of the rendered measurement, a power of two from 16 to 256; rendering cost grows with its square")
	seed := fs.Uint64("seed", 0, "seed of the expert's action noise; another seed gives other episodes from the same initial states")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench expert: unexpected argument %q; choose suites with --suite", fs.Arg(0))
	}
	suites, err := parseSuites(*suiteList)
	if err != nil {
		return fmt.Errorf("bench expert: %w", err)
	}
	if *initStates < 1 || *initStates > tabletop.InitStates {
		return fmt.Errorf("bench expert: --init-states %d is out of range 1..%d", *initStates, tabletop.InitStates)
	}
	if err := tabletop.ValidateImageSize(*size); err != nil {
		return fmt.Errorf("bench expert: %w", err)
	}
	opts := tabletop.BenchOptions{InitStates: *initStates, Render: *render, ImageSize: *size, Seed: *seed}
	fmt.Fprintf(stdout, "Expert on %s, %d initial states per task (seed %d)\n", strings.Join(suites, ", "), *initStates, *seed)
	var res tabletop.BenchResult
	// One suite at a time, so that each suite's table shows as soon as it is measured.
	for _, s := range suites {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := tabletop.BenchExpert([]string{s}, opts)
		if err != nil {
			return err
		}
		sb := r.Suites[0]
		res.Suites = append(res.Suites, sb)
		fmt.Fprintf(stdout, "\n%s: success %.1f%%, mean length %.1f steps (limit %d)\n", sb.Suite, 100*sb.SuccessRate, sb.MeanLength, tabletop.MaxSteps(s))
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "task\tsuccess\tmean length\tepisodes\tinstruction")
		for _, t := range sb.Tasks {
			fmt.Fprintf(tw, "%d\t%.1f%%\t%.1f\t%d\t%s\n", t.Task, 100*t.SuccessRate, t.MeanLength, t.Episodes, t.Instruction)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "suite\tsuccess\tmean length\tsteps/s\trendered steps/s\t")
	for _, sb := range res.Suites {
		rendered := "-"
		if sb.RenderStepsPerS > 0 {
			rendered = fmt.Sprintf("%.0f (2×%d²)", sb.RenderStepsPerS, sb.ImageSize)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f\t%.0f\t%s\t\n", sb.Suite, 100*sb.SuccessRate, sb.MeanLength, sb.StepsPerS, rendered)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "(steps/s on one core, the expert's own computation included)")
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, res)
	}
	return nil
}

// parseSuites reads "all" or a comma-separated list of suite names.
func parseSuites(list string) ([]string, error) {
	if strings.TrimSpace(list) == "all" {
		return tabletop.Suites(), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if err := tabletop.ValidateSuite(s); err != nil {
			return nil, fmt.Errorf("%w, or all", err)
		}
		if !seen[s] {
			out = append(out, s)
			seen[s] = true
		}
	}
	return out, nil
}
