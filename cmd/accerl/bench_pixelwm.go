package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/accerl/accerl/activities/pixelwm"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// pixelWMBenchResult is `bench pixel-wm`'s JSON: the bench's measurements
// and where the strip went.
type pixelWMBenchResult struct {
	pixelwm.BenchResult
	Strip string `json:"strip_png,omitempty"`
}

// benchPixelWM measures the pixel world model on a tabletop suite: offline episodes of a
// behaviour policy, M_obs (kernels/edm) and M_rew (kernels/edm/reward) trained for a
// wall-time budget, M_obs's imagined per-step MSE against copying the last frame, M_rew's
// success and end classification and the error of its imagined rewards, all on held-out
// episodes, and a real-vs-imagined PNG strip.
func benchPixelWM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := pixelwm.DefaultBenchConfig(1)
	fs := newFlagSet("bench pixel-wm", "bench pixel-wm [flags]   — train the pixel world model (M_obs, an EDM denoiser over frames, and M_rew, a success/end classifier) on offline tabletop episodes for a wall-time budget and score both on held-out episodes", stderr)
	suite := fs.String("suite", def.Collect.Suite, "tabletop suite: "+strings.Join(tabletop.Suites(), ", "))
	episodes := fs.Int("episodes", def.Collect.Episodes, "offline episodes to collect (the paper uses 1,000); more give the models more to learn from at the same cost per training step")
	behaviour := fs.String("behaviour", def.Collect.Behaviour, "behaviour policy of the offline data: "+strings.Join(pixelwm.Behaviours(), " or ")+" (random never succeeds, so M_rew sees no success)")
	noise := fs.Float64("noise", def.Collect.Noise, "expert_noisy: execution noise σ on the motion dimensions; larger makes more episodes fail (on spatial 0.1 fails ~0%, 0.3 ~20%, 0.5 ~90% of episodes)")
	linger := fs.Int("linger", def.Collect.Linger, "steps recorded after each episode ends, labelled by the simulator; 0 leaves a successful episode one success frame")
	minutes := fs.Float64("minutes", def.Budget.Minutes(), "training wall time of both models together; more minutes, more Adam steps")
	rewShare := fs.Float64("rew-share", def.RewShare, "share of --minutes that trains M_rew, in (0, 1); the rest trains M_obs")
	horizon := fs.Int("horizon", def.Horizon, "imagined steps per held-out rollout (and columns of the strip after the context frame)")
	start := fs.Int("start", def.Start, "real step the rollouts start from; episodes shorter than start+horizon+1 frames are skipped")
	rewImagined := fs.Int("rew-imagined", 0, "also train M_rew on this many M_obs-imagined endings of --horizon steps per training episode, each imagined frame labelled as the real frame it stands for, so that it learns what a success looks like as M_obs draws it; 0 trains it on real frames only")
	rewCounterfactual := fs.Int("rew-counterfactual", 0, "also train M_rew on this many M_obs-imagined endings of --horizon steps per training episode driven by another training episode's ending actions, each imagined frame labelled with what the simulator says those actions did at that step (the episode replayed to the ending's start, then the other's actions executed); teaches M_rew to judge imagined endings by their actions, not by where they start; 0 draws none")
	cfSwaps := fs.Int("counterfactual-swaps", 1, "drive each held-out ending of the counterfactual evaluation by this many other held-out episodes' ending actions in turn (more verdicts from the same contexts: 40 endings resolve agreement to about ±8 points, 160 to ±4); at least 1")
	cfJitter := fs.Float64("counterfactual-jitter", 0, "drive each held-out ending of the counterfactual evaluation by its own ending actions with fresh Gaussian noise of this σ on their motion values (action units, --counterfactual-swaps draws) instead of by others' actions: endings that differ as little as one GRPO group's; 0: others' actions")
	rewCFJitter := fs.Float64("rew-counterfactual-jitter", 0, "with --rew-counterfactual: drive M_rew's counterfactual endings by the episode's own ending actions with noise of this σ instead of by another episode's; 0: another's")
	heldEvery := fs.Int("held-every", def.HeldEvery, "hold out one episode in this many for the evaluation (≥ 2)")
	gamma := fs.Float64("gamma", def.RewTrain.Focal.Gamma, "focal-loss γ of M_rew; 0 is the cross-entropy, larger focuses on the hard frames")
	alpha := fs.Float64("alpha", def.RewTrain.Focal.Alpha, "focal-loss α in [0, 1) weighting the positive labels (0: no balancing); larger raises recall at the cost of precision")
	seed := fs.Uint64("seed", 1, "seed of the episodes, the models' weights, minibatches and sampling noise")
	data := fs.String("data", "", "store the offline episodes in this directory as Arrow IPC (activities/demos' schema, one file per task) and reuse them when a later run asks for the same episodes; empty keeps them in memory")
	jsonOut := fs.String("json", "", "also write the results to this JSON file")
	proprioSteps := fs.Int("proprio-steps", def.ProprioSteps, "Adam steps of the proprioception head (predicts the next 8-D proprio from the last 4 and the action; seconds, outside the time budget); 0 leaves it out")
	obsSteps := fs.Int("obs-steps", 0, "train M_obs for exactly this many Adam steps instead of its share of --minutes (0), so that runs on a loaded machine compare at equal steps")
	obsCheckpoint := fs.String("obs-checkpoint", "", "with --obs-steps: keep the trained M_obs in this file (and FILE.json, its data and curve); a later run with the same data and M_obs settings restores it instead of training, so that M_rew and the evaluations can be measured again without M_obs's minutes; other data or settings are refused")
	rewSteps := fs.Int("rew-steps", 0, "train M_rew for exactly this many Adam steps instead of its share of --minutes (0)")
	residual := fs.Bool("residual", false, "M_obs denoises the change from the last context frame instead of the next frame (edm.EDM.Residual); copying the last frame is then its zero prediction, and σ_data is measured on the data unless --sigma-data sets it")
	sigmaData := fs.Float64("sigma-data", 0, "EDM σ_data, the standard deviation of what M_obs denoises (0: 0.5, the frames', or with --residual the frame change's, measured on the training transitions and printed as \"frame change σ\", as the pixels block does)")
	sampleSteps := fs.Int("sample-steps", def.EDM.Steps, "Euler steps when M_obs imagines a frame (DIAMOND: 3); 1 returns the denoiser's estimate from pure noise, its mean prediction")
	contextNoise := fs.Float64("context-noise", 0, "train M_obs with Gaussian noise of a standard deviation drawn uniformly in [0, this] added to each example's context frames (GameNGen's augmentation against compounding error; frames span [−1, 1]; measured worse at a CPU's few hundred steps, docs/results/world-model); 0 trains on the recorded contexts")
	selfForcing := fs.Int("self-forcing", 0, "train M_obs with up to this many of each example's most recent context steps replaced by its own predictions from the real frames before them (0 to the 4 context steps; scheduled sampling against compounding error, up to that many extra sampling passes per step; measured worse after 400 and 2,000 steps, docs/results/world-model); 0 trains on real contexts")
	selfForcingFrom := fs.Int("self-forcing-from", 0, "with --self-forcing: train M_obs on real contexts for this many steps first, then self-forced (0: self-forced from the start)")
	strip := fs.String("strip", "pixel-wm-strip.png", "write the real-vs-imagined strip of the first held-out rollout to this PNG (rows: real and imagined per camera); empty writes none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench pixel-wm: unexpected argument %q; every setting is a flag (see --help)", fs.Arg(0))
	}
	if !(*minutes > 0) {
		return fmt.Errorf("bench pixel-wm: --minutes must be positive, got %v", *minutes)
	}
	cfg := pixelwm.DefaultBenchConfig(*seed)
	cfg.Collect.Suite, cfg.Collect.Episodes, cfg.Collect.Behaviour, cfg.Collect.Noise, cfg.Collect.Linger =
		*suite, *episodes, *behaviour, *noise, *linger
	cfg.DataDir = *data
	cfg.Budget, cfg.RewShare = time.Duration(*minutes*float64(time.Minute)), *rewShare
	cfg.Horizon, cfg.Start, cfg.HeldEvery, cfg.RewImagined, cfg.RewCounterfactual = *horizon, *start, *heldEvery, *rewImagined, *rewCounterfactual
	cfg.RewTrain.Focal = reward.Focal{Gamma: *gamma, Alpha: *alpha}
	cfg.ProprioSteps = *proprioSteps
	if *cfSwaps < 1 {
		return fmt.Errorf("bench pixel-wm: --counterfactual-swaps must be at least 1, got %d", *cfSwaps)
	}
	cfg.CounterfactualSwaps, cfg.CounterfactualJitter, cfg.RewCounterfactualJitter = *cfSwaps, *cfJitter, *rewCFJitter
	cfg.ObsSteps, cfg.RewSteps, cfg.EDM.Residual, cfg.ObsCheckpoint = *obsSteps, *rewSteps, *residual, *obsCheckpoint
	if *sampleSteps < 1 {
		return fmt.Errorf("bench pixel-wm: --sample-steps must be at least 1, got %d", *sampleSteps)
	}
	cfg.EDM.Steps = *sampleSteps
	cfg.EDM.ContextNoise, cfg.EDM.SelfForcing, cfg.EDM.SelfForcingFrom = *contextNoise, *selfForcing, *selfForcingFrom
	switch {
	case *sigmaData < 0:
		return fmt.Errorf("bench pixel-wm: --sigma-data must be positive (0 keeps the default), got %v", *sigmaData)
	case *sigmaData > 0:
		cfg.EDM.SigmaData = *sigmaData
	case *residual:
		cfg.EDM.SigmaData = 0 // measured on the data
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bench pixel-wm: %w", err)
	}
	cfg.Progress = func(line string) { fmt.Fprintln(stdout, line) }
	res, st, err := pixelwm.Bench(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench pixel-wm: %w", err)
	}
	out := pixelWMBenchResult{BenchResult: res}
	printPixelWM(stdout, res)
	if *strip != "" && len(st.Real) > 0 {
		if err := pixelwm.WriteStrip(*strip, cfg.Obs.ImageSize, st.Rows()...); err != nil {
			return fmt.Errorf("bench pixel-wm: %w", err)
		}
		out.Strip = *strip
		fmt.Fprintf(stdout, "strip: %s (per camera %v: real row over imagined row; column 0 is the last real context frame, then %d steps)\n",
			*strip, cfg.Collect.Cameras, cfg.Horizon)
	}
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, out)
	}
	return nil
}

func printPixelWM(w io.Writer, r pixelwm.BenchResult) {
	im := r.ObsImagination
	fmt.Fprintf(w, "\nM_obs: %d Adam steps in %.0fs; %d held-out rollouts of %d steps from step %d (imagination %.1fs)\n",
		r.ObsSteps, r.ObsSeconds, im.Rollouts, im.Horizon, im.Start, im.Seconds)
	// Swapped: imagined with another held-out episode's actions; action effect: the
	// difference that made to the imagined frames (both measured from 2 rollouts up).
	swapped := im.SwappedMSE != nil
	fmt.Fprint(w, "  step  imagined MSE  copy-last MSE")
	if swapped {
		fmt.Fprint(w, "  swapped-actions MSE  action effect")
	}
	fmt.Fprintln(w)
	for h := range im.MSE {
		fmt.Fprintf(w, "  %4d  %12.4f  %13.4f", h+1, im.MSE[h], im.CopyLastMSE[h])
		if swapped {
			fmt.Fprintf(w, "  %19.4f  %13.4f", im.SwappedMSE[h], im.ActionEffectMSE[h])
		}
		fmt.Fprintln(w)
	}
	e := r.RewHeld
	fmt.Fprintf(w, "M_rew: %d Adam steps in %.0fs on %d frames (%d imagined); held-out focal loss %.4f → %.4f on %d frames\n",
		r.RewSteps, r.RewSeconds, r.RewExamples, r.RewImagined, r.RewHeldBefore, r.RewHeldAfter, e.Frames)
	for _, s := range []struct {
		name string
		s    reward.Scores
	}{{"success", e.Success}, {"end", e.End}} {
		fmt.Fprintf(w, "  %-7s accuracy %.3f (majority class %.3f), precision %.3f, recall %.3f, %.1f%% positive\n",
			s.name, s.s.Accuracy, s.s.Majority, s.s.Precision, s.s.Recall, 100*s.s.Positives)
	}
	fmt.Fprintf(w, "  r̂ = p_success(o_t+1) − p_success(o_t) over %d transitions: MAE %.4f, RMSE %.4f; mean r̂ %.3f at the %d success steps (ideal 1), mean |r̂| %.4f elsewhere; episode-return MAE %.3f\n",
		e.Transitions, e.RewardMAE, e.RewardRMSE, e.AtSuccess, e.SuccessSteps, e.Elsewhere, e.ReturnMAE)
	printEndings(w, r.Endings)
	if cf := r.Counterfactual; cf != nil && cf.Endings > 0 {
		driven := fmt.Sprintf("another's ending actions, %d others' in turn", max(cf.Swaps, 1))
		if cf.Jitter > 0 {
			driven = fmt.Sprintf("its own ending actions with noise σ %g, %d draws", cf.Jitter, cf.Swaps)
		}
		fmt.Fprintf(w, "M_rew on counterfactual endings (the simulator replays each held-out episode to %d steps before its end, then executes %s): %d endings, %d reached the goal\n",
			cf.Horizon, driven, cf.Endings, cf.Succeeded)
		for _, s := range []struct {
			name string
			c    pixelwm.Confusion
		}{{"real end frame", cf.Real}, {"imagined end frame", cf.Imagined}} {
			fmt.Fprintf(w, "  %-18s  verdict agrees with the simulator %.0f%%: successes judged %d of %d, failures judged successes %d of %d\n",
				s.name, 100*s.c.Agree(), s.c.TP, s.c.TP+s.c.FN, s.c.FP, s.c.FP+s.c.TN)
		}
		for _, s := range []struct {
			name string
			r    pixelwm.Ranking
		}{{"real end frame", cf.RealPairs}, {"imagined end frame", cf.ImaginedPairs}} {
			if s.r.Pairs > 0 {
				fmt.Fprintf(w, "  %-18s  of %d pairs from one context with different outcomes, p_success ranks %.0f%% right (%d right, %d ties; 50%% is chance)\n",
					s.name, s.r.Pairs, 100*s.r.Share(), s.r.Right, s.r.Ties)
			}
		}
	}
	if r.ProprioSteps == 0 {
		return
	}
	pe := r.ProprioEval
	fmt.Fprintf(w, "proprio head: %d parameters, %d Adam steps in %.1fs; held-out standardised loss %.4f → %.4f\n",
		r.ProprioParams, r.ProprioSteps, r.ProprioSeconds, r.ProprioHeldBefore, r.ProprioHeldAfter)
	fmt.Fprintf(w, "  one step over %d held-out transitions: NMSE %.4f (copy-last %.4f), MSE %.2e (copy-last %.2e)\n",
		pe.Transitions, pe.OneStepNMSE, pe.OneStepCopyLastNMSE, pe.OneStepMSE, pe.OneStepCopyLastMSE)
	fmt.Fprintf(w, "  open loop, %d rollouts from step %d:\n  step  imagined NMSE  copy-last NMSE\n", pe.Rollouts, pe.Start)
	for h := range pe.NMSE {
		fmt.Fprintf(w, "  %4d  %13.4f  %14.4f\n", h+1, pe.NMSE[h], pe.CopyLastNMSE[h])
	}
}

// printEndings prints M_rew's verdicts on the held-out endings, real and imagined
// (pixelwm.EvaluateEndings).
func printEndings(w io.Writer, ev pixelwm.EndingEval) {
	fmt.Fprintf(w, "M_rew on episode endings (M_obs imagines the last %d steps before each held-out episode's end with its actions): judged successes (mean p_success)\n", ev.Horizon)
	fmt.Fprintln(w, "  episodes       n  real start frame  real end frame  imagined end frame  with another's actions")
	for _, s := range []struct {
		name string
		s    pixelwm.EndingScores
	}{{"succeeded", ev.Succeeded}, {"failed", ev.Failed}} {
		fmt.Fprintf(w, "  %-9s  %5d  %6d (%.2f)     %6d (%.2f)   %6d (%.2f)       %6d (%.2f)\n", s.name, s.s.Episodes,
			s.s.StartJudged, s.s.StartP, s.s.RealJudged, s.s.RealP, s.s.ImaginedJudged, s.s.ImaginedP, s.s.SwappedJudged, s.s.SwappedP)
	}
}
