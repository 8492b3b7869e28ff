package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/kernels/vla"
)

// bcVLABenchResult is `bench bc --policy vla`'s JSON.
type bcVLABenchResult struct {
	Suite      string        `json:"suite"`
	Policy     string        `json:"policy"`
	PerTask    int           `json:"demos_per_task"`
	DemoNoise  float64       `json:"demo_execution_noise"`
	DemoSteps  int           `json:"demo_steps"`
	InitStates int           `json:"init_states_per_task"`
	Config     bc.VLAConfig  `json:"config"`
	Model      vlaConfigJSON `json:"model"`
	Params     int           `json:"params"`
	Trainable  int           `json:"trainable"`
	// InitialLoss, EpochLoss and FinalLoss are the mean cross-entropy per action token in nats
	// (log 256 = 5.55 is the uniform head); EpochAccuracy the share of tokens whose
	// teacher-forced argmax is the expert's bin.
	InitialLoss      float64   `json:"initial_cross_entropy"`
	EpochLoss        []float64 `json:"epoch_cross_entropy"`
	EpochAccuracy    []float64 `json:"epoch_token_accuracy"`
	FinalLoss        float64   `json:"final_cross_entropy"`
	TrainSamplesPerS float64   `json:"train_samples_per_s"`
	// ActMs is the mean wall time of one batched greedy decode of the 7·chunk tokens (prefix
	// pass + KV-cached steps), over ActCalls calls of ActBatch observations on average.
	ActMs       float64         `json:"act_ms"`
	ActCalls    int             `json:"act_calls"`
	ActBatch    float64         `json:"act_batch_mean"`
	SuccessRate float64         `json:"success_rate"`
	EdgeFails   int             `json:"edge_failures"` // bc.EvalResult.EdgeFailures
	Tasks       []bcTaskSuccess `json:"tasks"`
	// Decode is how the evaluation picked each token (argmax unless --decode); Execute the
	// actions of each chunk it ran, Ensemble the chunks whose motion it averaged at every
	// step instead (temporal ensembling; absent when off). LoadedModel is the --load-model file the policy came
	// from (no training in this run; the epoch fields are then empty).
	Decode      string `json:"decode"`
	Execute     int    `json:"execute"`
	Ensemble    int    `json:"ensemble,omitempty"`
	LoadedModel string `json:"loaded_model,omitempty"`
	// TrainScore and HeldOutScore measure the trained policy offline on a subset of the
	// training steps and on --holdout further demonstrations per task that it never saw
	// (bc.VLAScore): token cross-entropy and accuracy with teacher forcing, and the error
	// of the actions it decodes.
	HeldOutDemos int          `json:"held_out_demos_per_task,omitempty"`
	TrainScore   *bc.VLAScore `json:"train_score,omitempty"`
	HeldOutScore *bc.VLAScore `json:"held_out_score,omitempty"`
	CollectS     float64      `json:"collect_s"`
	TrainS       float64      `json:"train_s"`
	EvalS        float64      `json:"eval_s"`
	// DAgger is one entry per DAgger round (--dagger-rounds), after the plain clone's
	// evaluation as round 0; SuccessRate and Tasks are then the last round's policy's.
	DAgger []daggerRoundResult `json:"dagger,omitempty"`
}

// daggerRoundResult is one DAgger round of `bench bc --policy vla`: the clone's own episodes
// (from random resets, all labelled by the expert and added to the training set), the training
// on the union, and the greedy success after it from the fixed initial states.
type daggerRoundResult struct {
	Round int `json:"round"`
	// Control marks a --dagger-control round: retrained on the demonstrations alone.
	Control bool `json:"control,omitempty"`
	// Episodes, RolloutSuccesses and Steps are the round's rollouts (0 for round 0).
	Episodes         int                         `json:"episodes,omitempty"`
	RolloutSuccesses int                         `json:"rollout_successes,omitempty"`
	Steps            int                         `json:"labelled_steps,omitempty"`
	Restarts         int                         `json:"labeller_restarts,omitempty"`   // bc.DAggerStats.Restarts
	MotionDisagree   float64                     `json:"motion_disagree,omitempty"`     // bc.DAggerStats.MotionDisagree
	GripperDisagree  float64                     `json:"gripper_disagree,omitempty"`    // bc.DAggerStats.GripperDisagree
	DimDisagree      []float64                   `json:"dim_disagree,omitempty"`        // bc.DAggerStats.DimDisagree
	WonDisagree      float64                     `json:"won_motion_disagree,omitempty"` // bc.DAggerStats.WonMotionDisagree
	Phases           map[string]bc.PhaseDisagree `json:"labeller_phases,omitempty"`
	Samples          int                         `json:"samples"`
	EpochLoss        []float64                   `json:"epoch_cross_entropy,omitempty"`
	LR               float64                     `json:"learning_rate,omitempty"`
	MaxSteps         int                         `json:"max_steps,omitempty"` // each episode's cap
	Kick             int                         `json:"kick,omitempty"`      // bc.DAggerInput.Kick
	SuccessRate      float64                     `json:"success_rate"`
	EdgeFails        int                         `json:"edge_failures"` // bc.EvalResult.EdgeFailures
	CollectS         float64                     `json:"collect_s,omitempty"`
	TrainS           float64                     `json:"train_s,omitempty"`
	EvalS            float64                     `json:"eval_s"`
}

// vlaBenchFlags are the flags of `bench bc` that only the vla policy reads.
type vlaBenchFlags struct {
	holdout      int            // further demonstrations per task, scored but never trained on
	scoreSamples int            // steps scored offline per split; 0 skips the scores
	decode       vla.DecodeRule // how the evaluation picks each token
	ensemble     int            // temporal ensembling over this many chunks (bc.VLAActor.Ensemble); ≤ 1 is off
	saveModel    string         // write the trained model here
	loadModel    string         // evaluate this model instead of training
	// loadClone is a run's (or a bench learn --bc-cache entry's) cloned policy to evaluate,
	// and with --dagger-rounds to train further, instead of cloning anew.
	loadClone string
	// DAgger rounds after cloning (bc.CollectDAgger), each of daggerEpisodes per task and
	// daggerEpochs epochs at daggerLR.
	daggerRounds, daggerEpisodes, daggerEpochs int
	daggerLR                                   float64
	// daggerMaxSteps caps each DAgger episode (bc.DAggerInput.MaxSteps); 0 is twice the
	// training demonstrations' mean length.
	daggerMaxSteps int
	// daggerControl makes each round retrain on the demonstrations alone (no
	// rollouts): the control for the labels' effect.
	daggerControl bool
	// daggerWonOnly keeps only the rounds' won episodes (bc.DAggerInput.WonOnly).
	daggerWonOnly bool
	// daggerExpert has the noisy expert play the rounds (bc.DAggerInput.ExpertNoise at the
	// demonstrations' noise).
	daggerExpert bool
	// daggerKick pushes each of the expert's round episodes off course for this many
	// steps (bc.DAggerInput.Kick): recovery demonstrations.
	daggerKick int
}

// benchBCVLA is `bench bc --policy vla`: demonstrations with images, the micro-VLA cloned
// from them by token cross-entropy, and its greedy success from the fixed initial states.
func benchBCVLA(ctx context.Context, f bcBenchFlags, v vlaBenchFlags, cfg bc.VLAConfig, stdout io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bench bc: vla: %w", err)
	}
	mc := cfg.ModelConfig()
	fmt.Fprintf(stdout, "%s: %d DART demonstrations per task (noise %g) with %v at %d×%d; micro-VLA dim %d, %d layers × %d heads, patch %d, %d parameters (%d trainable), sequence %d+%d tokens; chunk %d / execute %d, %d epochs of batch %d, lr %.3g → %.3g%s\n",
		f.suite, f.perTask, f.noise, cfg.Cameras, cfg.ImageSize, cfg.ImageSize, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Patch,
		mc.ParamCount(), mc.TrainableCount(), mc.PrefixLen(), mc.ActionDims, cfg.Chunk, cfg.Execute, cfg.Epochs, cfg.Batch, cfg.LR, cmp.Or(cfg.FinalLR, cfg.LR/10), emaNote(cfg.EMA))
	start := time.Now()
	demos, err := bc.CollectImages(bc.ImageCollectInput{CollectInput: bc.CollectInput{Suite: f.suite, Tasks: f.tasks,
		PerTask: f.perTask + v.holdout, Noise: f.noise, Seed: f.seed}, ImageSize: cfg.ImageSize, Cameras: cfg.Cameras})
	if err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	demos, held := bc.SplitDemos(demos, f.perTask)
	collectS := time.Since(start).Seconds()
	var tres bc.VLATrainResult
	var model *bc.VLAModel
	var tr *bc.VLATrainer
	if loaded := cmp.Or(v.loadModel, v.loadClone); loaded != "" {
		if model, tr, err = loadBCVLAModel(v, cfg, demos); err != nil {
			return err
		}
		mc = model.Net.Config()
		tres = bc.VLATrainResult{Params: mc.ParamCount(), Trainable: mc.TrainableCount()}
		for _, d := range demos {
			tres.Samples += len(d.Actions)
		}
		fmt.Fprintf(stdout, "loaded %s (chunk %d, executing %d); recorded %d samples in %.0fs\n", loaded, model.Chunk, model.Execute, tres.Samples, collectS)
		// A --load-clone's model written as a file, before any DAgger round (benchBC refuses
		// --save-model with --load-model).
		if err := saveVLAModel(v.saveModel, model); err != nil {
			return err
		}
		if v.daggerRounds > 0 {
			if err := tr.Adopt(model); err != nil {
				return fmt.Errorf("bench bc: %s with --dagger-rounds: %w", loaded, err)
			}
			model = tr.Model()
		}
	} else {
		if tr, err = bc.NewVLATrainer(cfg, demos); err != nil {
			return fmt.Errorf("bench bc: %w", err)
		}
		fmt.Fprintf(stdout, "recorded %d samples in %.0fs\n", tr.Samples(), collectS)
		for !tr.Done() {
			l, err := tr.EpochContext(ctx)
			if err != nil {
				return fmt.Errorf("bench bc: %w", err)
			}
			r := tr.Result()
			fmt.Fprintf(stdout, "epoch %d/%d: cross-entropy %.3f nats/token, token accuracy %.3f, %.0f samples/s, %.0fs\n",
				len(r.EpochLoss), cfg.Epochs, l, r.EpochAccuracy[len(r.EpochAccuracy)-1], r.SamplesPerS, r.TrainS)
		}
		tres = tr.Result()
		model = tr.Model()
		if err := saveVLAModel(v.saveModel, model); err != nil {
			return err
		}
	}
	res := bcVLABenchResult{Suite: f.suite, Policy: "vla", PerTask: f.perTask, DemoNoise: f.noise, DemoSteps: tres.Samples,
		InitStates: f.inits, Config: cfg, Model: vlaConfigToJSON(mc), Params: tres.Params, Trainable: tres.Trainable,
		InitialLoss: tres.InitialLoss, EpochLoss: tres.EpochLoss, EpochAccuracy: tres.EpochAccuracy, FinalLoss: tres.FinalLoss,
		TrainSamplesPerS: tres.SamplesPerS, Decode: v.decode.String(), Execute: model.Execute, LoadedModel: cmp.Or(v.loadModel, v.loadClone),
		CollectS: collectS, TrainS: tres.TrainS}
	if v.scoreSamples > 0 {
		score := func(name string, ds []bc.ImageDemo) (*bc.VLAScore, error) {
			sc, err := model.Score(ds, v.scoreSamples, cfg.Batch, v.decode)
			if err != nil {
				return nil, fmt.Errorf("bench bc: %w", err)
			}
			fmt.Fprintf(stdout, "%s (%d steps): cross-entropy %.3f nats/token, token accuracy %.3f; %s-decoded actions: MAE translation %.3f (first action %.3f), rotation %.3f, gripper %.3f (wrong sign %.1f%%)\n",
				name, sc.Samples, sc.CrossEntropy, sc.Accuracy, sc.Decode, sc.MAETranslation, sc.MAEFirstTranslation, sc.MAERotation, sc.MAEGripper, 100*sc.GripperWrong)
			return &sc, nil
		}
		if res.TrainScore, err = score("training demos", demos); err != nil {
			return err
		}
		if len(held) > 0 {
			res.HeldOutDemos = v.holdout
			if res.HeldOutScore, err = score("held-out demos", held); err != nil {
				return err
			}
		}
	}
	ev, err := evaluateBCVLA(model, f, v, &res, stdout)
	if err != nil {
		return err
	}
	if v.daggerRounds > 0 {
		res.DAgger = []daggerRoundResult{{Round: 0, Samples: tr.Samples(), EpochLoss: tres.EpochLoss, SuccessRate: ev.SuccessRate,
			EdgeFails: ev.EdgeFailures(), CollectS: collectS, TrainS: tres.TrainS, EvalS: res.EvalS}}
	}
	maxSteps := v.daggerMaxSteps
	if maxSteps == 0 && len(demos) > 0 {
		maxSteps = 2 * tres.Samples / len(demos)
	}
	expertNoise := 0.0
	if v.daggerExpert {
		expertNoise = f.noise
	}
	for round := 1; round <= v.daggerRounds; round++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		var labelled []bc.ImageDemo
		var st bc.DAggerStats
		if !v.daggerControl {
			if labelled, st, err = bc.CollectDAgger(bc.DAggerInput{Suite: f.suite, Tasks: f.tasks, PerTask: v.daggerEpisodes,
				Seed: f.seed<<8 + uint64(round), Decode: v.decode, MaxSteps: maxSteps, WonOnly: v.daggerWonOnly, ExpertNoise: expertNoise, Kick: v.daggerKick}, model); err != nil {
				return fmt.Errorf("bench bc: dagger round %d: %w", round, err)
			}
		}
		rr := daggerRoundResult{Round: round, Control: v.daggerControl, Episodes: st.Episodes, RolloutSuccesses: st.Successes, Steps: st.Steps, Restarts: st.Restarts,
			MotionDisagree: st.MotionDisagree, GripperDisagree: st.GripperDisagree, DimDisagree: st.DimDisagree[:], Phases: st.Phases, WonDisagree: st.WonMotionDisagree,
			LR: v.daggerLR, MaxSteps: maxSteps, Kick: v.daggerKick, CollectS: time.Since(t0).Seconds()}
		if err := tr.Aggregate(labelled, v.daggerEpochs, v.daggerLR); err != nil {
			return fmt.Errorf("bench bc: dagger round %d: %w", round, err)
		}
		rr.Samples = tr.Samples()
		if v.daggerControl {
			fmt.Fprintf(stdout, "\nDAgger control round %d: no rollouts; training %d epochs over the %d demonstration samples at lr %g\n",
				round, v.daggerEpochs, rr.Samples, v.daggerLR)
		} else {
			who := "the clone"
			if v.daggerExpert {
				who = fmt.Sprintf("the expert (noise %g, the control)", expertNoise)
				if v.daggerKick > 0 {
					who = fmt.Sprintf("the expert (noise %g, each episode pushed off course once for %d steps)", expertNoise, v.daggerKick)
				}
			}
			fmt.Fprintf(stdout, "\nDAgger round %d: %s played %d episodes of at most %d steps from random resets (%d succeeded), %d steps labelled by the expert (its plan restarted %d times; its first action differs from the player's by %.3f per motion dimension (x y z roll pitch yaw: %.3f), the gripper's sign on %.1f%% of steps) in %.0fs; training %d epochs over %d samples at lr %g\n",
				round, who, st.Episodes, maxSteps, st.Successes, st.Steps, st.Restarts, st.MotionDisagree, st.DimDisagree, 100*st.GripperDisagree, rr.CollectS, v.daggerEpochs, rr.Samples, v.daggerLR)
			fmt.Fprintf(stdout, "  in the %d episodes won, the labels differ from the actions taken by %.3f per motion dimension\n", st.Successes, st.WonMotionDisagree)
			printPhases(stdout, st.Phases)
		}
		trainStart := tr.Result().TrainS
		for !tr.Done() {
			l, err := tr.EpochContext(ctx)
			if err != nil {
				return fmt.Errorf("bench bc: dagger round %d: %w", round, err)
			}
			r := tr.Result()
			rr.EpochLoss = append(rr.EpochLoss, l)
			fmt.Fprintf(stdout, "  epoch %d/%d: cross-entropy %.3f nats/token, token accuracy %.3f, %.0fs\n",
				len(rr.EpochLoss), v.daggerEpochs, l, r.EpochAccuracy[len(r.EpochAccuracy)-1], r.TrainS-trainStart)
		}
		rr.TrainS = tr.Result().TrainS - trainStart
		model = tr.Model()
		if v.saveModel != "" { // beside the clone, which --save-model keeps
			if err := saveVLAModel(fmt.Sprintf("%s.dagger%d", v.saveModel, round), model); err != nil {
				return err
			}
		}
		if ev, err = evaluateBCVLA(model, f, v, &res, stdout); err != nil {
			return err
		}
		rr.SuccessRate, rr.EdgeFails, rr.EvalS = ev.SuccessRate, ev.EdgeFailures(), res.EvalS
		res.DAgger = append(res.DAgger, rr)
		if f.jsonOut != "" && round < v.daggerRounds { // the rounds so far, in case the run is stopped
			if err := writeJSONFile(f.jsonOut, res); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "DAgger round %d: greedy success %.1f%% (round 0, the plain clone: %.1f%%)\n", round, 100*ev.SuccessRate, 100*res.DAgger[0].SuccessRate)
	}
	if f.jsonOut != "" {
		return writeJSONFile(f.jsonOut, res)
	}
	return nil
}

// evaluateBCVLA plays model from the fixed initial states (v's decoding and ensembling), prints
// the per-task table and the summary line, and fills res's evaluation fields.
func evaluateBCVLA(model *bc.VLAModel, f bcBenchFlags, v vlaBenchFlags, res *bcVLABenchResult, stdout io.Writer) (bc.EvalResult, error) {
	t0 := time.Now()
	actor, err := model.ActorDecode(v.decode)
	if err != nil {
		return bc.EvalResult{}, fmt.Errorf("bench bc: %w", err)
	}
	if v.ensemble > 1 {
		actor.Ensemble = v.ensemble
		res.Ensemble = min(v.ensemble, model.Chunk)
		fmt.Fprintf(stdout, "temporal ensembling: querying every step, motion averaged over the %d newest chunks\n", res.Ensemble)
	}
	ev, err := bc.EvaluateEnv(actor, model.EnvConfig(f.suite), f.tasks, f.inits)
	if err != nil {
		return bc.EvalResult{}, fmt.Errorf("bench bc: %w", err)
	}
	res.ActMs, res.ActCalls = float64(actor.MeanActLatency().Microseconds())/1000, actor.Calls
	res.SuccessRate, res.EdgeFails, res.EvalS = ev.SuccessRate, ev.EdgeFailures(), time.Since(t0).Seconds()
	if actor.Calls > 0 {
		res.ActBatch = float64(actor.Rows) / float64(actor.Calls)
	}
	if res.Tasks, err = printBCTasks(stdout, f.suite, ev); err != nil {
		return bc.EvalResult{}, err
	}
	trained := "" // a loaded model's, and a DAgger round's (its own line says its training)
	if res.TrainS > 0 {
		trained = fmt.Sprintf(" trained %.0fs at %.0f samples/s;", res.TrainS, res.TrainSamplesPerS)
	}
	fmt.Fprintf(stdout, "\n%s: greedy VLA BC success %.1f%% over %d tasks × %d initial states;%s act %.1f ms per call (mean batch %.1f); evaluation %.0fs\n",
		f.suite, 100*ev.SuccessRate, len(f.tasks), f.inits, trained, res.ActMs, res.ActBatch, res.EvalS)
	return ev, nil
}

// emaNote says in the bench's first line that the evaluated weights are a moving average.
func emaNote(decay float64) string {
	if decay == 0 {
		return ""
	}
	return fmt.Sprintf(", evaluating the weights' moving average (EMA %g)", decay)
}

// saveVLAModel writes model to path (nothing when path is empty).
func saveVLAModel(path string, model *bc.VLAModel) error {
	if path == "" {
		return nil
	}
	b, err := model.MarshalBinary()
	if err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("bench bc: %w", err)
	}
	return nil
}

// loadBCVLAModel is the model of --load-model (a --save-model file) or --load-clone (a run's
// cloned policy, unfolded with the standardisation of a trainer built on this command's
// demonstrations, which it returns for further rounds).
func loadBCVLAModel(v vlaBenchFlags, cfg bc.VLAConfig, demos []bc.ImageDemo) (*bc.VLAModel, *bc.VLATrainer, error) {
	model := new(bc.VLAModel)
	if v.loadModel != "" {
		b, err := os.ReadFile(v.loadModel)
		if err != nil {
			return nil, nil, fmt.Errorf("bench bc: %w", err)
		}
		if err := model.UnmarshalBinary(b); err != nil {
			return nil, nil, fmt.Errorf("bench bc: %s: %w", v.loadModel, err)
		}
	}
	var tr *bc.VLATrainer
	if v.loadClone != "" || v.daggerRounds > 0 {
		var err error
		if tr, err = bc.NewVLATrainer(cfg, demos); err != nil {
			return nil, nil, fmt.Errorf("bench bc: %w", err)
		}
	}
	if v.loadClone != "" {
		params, err := activities.LoadClonedParams(v.loadClone)
		if err != nil {
			return nil, nil, fmt.Errorf("bench bc: --load-clone: %w", err)
		}
		*model = *tr.Model()
		model.Net = vla.New(model.Net.Config(), rand.New(rand.NewPCG(cfg.Seed, 0)))
		if err := model.SetFoldedParams(params); err != nil {
			return nil, nil, fmt.Errorf("bench bc: --load-clone %s: the flags build another network (--dim, --layers, --heads, --patch, --image-size, --cameras, --chunk must be the run's): %w", v.loadClone, err)
		}
	}
	if cfg.Execute > model.Chunk {
		return nil, nil, fmt.Errorf("bench bc: --execute %d is more than the loaded model's chunk %d", cfg.Execute, model.Chunk)
	}
	model.Execute = cfg.Execute
	return model, tr, nil
}

// printPhases writes a DAgger round's disagreement per labeller phase, the
// most labelled phase first.
func printPhases(w io.Writer, phases map[string]bc.PhaseDisagree) {
	names := slices.Collect(maps.Keys(phases))
	slices.SortFunc(names, func(a, b string) int { return phases[b].Steps - phases[a].Steps })
	for _, n := range names {
		p := phases[n]
		fmt.Fprintf(w, "  labeller phase %-8s %6d steps: label vs action taken %.3f per motion dimension (label − taken, x y z roll pitch yaw: %+.2f), gripper sign %.1f%%\n", n, p.Steps, p.Motion, p.Bias, 100*p.Gripper)
	}
}
