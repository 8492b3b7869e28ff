package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/activities/pixelwm"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// The pixel world model's side of the WorldModel activities (a world_model pixels block):
// the offline episodes keep the cameras' frames (activities/pixelwm's Arrow IPC store) and
// pretraining fits M_obs, M_rew and the proprio head for their step counts, checkpointed
// under <run>/worldmodel/pretrain like the state-vector model's.

// Files of a pixel pretraining checkpoint, and what a finished one leaves for people beside
// the checkpoints.
const (
	pixelStateFile   = "pixel_state.json"
	pixelObsFile     = "obs.bin"
	pixelRewFile     = "rew.bin"
	pixelProprioFile = "proprio.bin"
	// PixelScoresFile (in WorldModelDir) is the finished pretraining's scores as JSON, and
	// PixelStripFile its real-vs-imagined strip: per camera a row of real frames over a
	// row of imagined ones, from the last context frame on (runstore.PixelWorldModelFile
	// and PixelWorldModelStrip, relative to the run).
	PixelScoresFile = "pixel-wm.json"
	PixelStripFile  = "pixel-wm-strip.png"

	pixelLinger    = 8  // steps recorded after each episode's end (pixelwm.CollectInput.Linger)
	pixelHeldEvery = 10 // one episode in ten of every task scores the models
	pixelHorizon   = 8  // imagined policy steps of the scoring rollouts (from pixelwm.StartFor)
)

// pixelCollectInput is the offline data a run's pixels block asks for.
func pixelCollectInput(c specs.Config, seed uint64) pixelwm.CollectInput {
	return pixelwm.CollectInput{
		Suite: c.Env.Suite, Episodes: c.WorldModel.OfflineTrajectories, Behaviour: c.WorldModel.Behaviour,
		Noise: c.WorldModel.Pixels.BehaviourNoise, ImageSize: c.Env.ImageSize, Cameras: c.Env.Cameras,
		MaxSteps: c.Env.MaxEpisodeSteps, Linger: pixelLinger, Seed: seed,
	}
}

// PixelPretrainConfig maps the spec's world_model block with its pixels block onto
// pixelwm.PretrainConfig: the measured `accerl bench pixel-wm` models (edm.DefaultConfig,
// reward.DefaultConfig, proprio.DefaultConfig) at the env's image size and cameras, with
// world_model.history context frames and vectors, world_model.obs_learning_rate for M_obs
// and rew_learning_rate for M_rew, the block's step counts, and its residual and
// sample_steps (a residual M_obs takes σ_data from the data), and its self-forcing.
func PixelPretrainConfig(c specs.Config, seed uint64) pixelwm.PretrainConfig {
	w, px := c.WorldModel, c.WorldModel.Pixels
	cams := len(c.Env.Cameras)
	if cams == 0 {
		cams = len(tabletop.Cameras())
	}
	// One prediction per policy step: a policy with action chunks executes `execute` actions
	// of each, and the engine stores a frame per step.
	_, stride := c.Policy.Chunk()
	stride = max(1, stride)
	obs := edm.DefaultConfig(cams, tabletop.ActionDim*stride)
	obs.ImageSize, obs.History = c.Env.ImageSize, w.History
	obsTrain := edm.DefaultTrainConfig(seed)
	obsTrain.LR = w.ObsLearningRate
	rew := reward.DefaultConfig()
	rew.ImageSize, rew.Cameras = c.Env.ImageSize, cams
	rewTrain := reward.DefaultTrainConfig(seed)
	rewTrain.LR = w.RewLearningRate
	pro := proprio.DefaultConfig(tabletop.ProprioDim, tabletop.ActionDim*stride)
	pro.History = w.History
	e := edm.DefaultEDM()
	e.Residual, e.Steps = px.Residual, px.SampleSteps
	e.SelfForcing, e.SelfForcingFrom = px.SelfForcing, px.SelfForcingFrom
	if e.Residual {
		e.SigmaData = 0 // the frame change's σ on the training episodes (pixelwm.Pretrain)
	}
	return pixelwm.PretrainConfig{
		Obs: obs, EDM: e, ObsTrain: obsTrain, Rew: rew, RewTrain: rewTrain,
		Proprio: pro, ProprioTrain: proprio.DefaultTrainConfig(seed),
		ObsSteps: px.ObsSteps, RewSteps: px.RewSteps, ProprioSteps: px.ProprioSteps,
		HeldEvery: pixelHeldEvery, Horizon: pixelHorizon, Start: pixelwm.StartFor(stride, w.History), Seed: seed, Stride: stride,
		RewImagined: px.RewImagined, RewCounterfactual: px.RewCounterfactual, RewCounterfactualJitter: px.RewCounterfactualJitter, Collect: pixelCollectInput(c, seed),
	}
}

// collectPixelOffline records the run's offline episodes with frames (pixelwm.CollectOrLoad:
// a verified dataset of the same input is reused; a partial one is collected again, which
// takes seconds).
func (w *WorldModel) collectPixelOffline(ctx context.Context, in CollectOfflineInput) (CollectOfflineResult, error) {
	cin := pixelCollectInput(in.Config, in.Seed)
	if err := cin.Validate(); err != nil {
		return CollectOfflineResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	wc, err := openWorldModelCopy(ctx, in.RunDir)
	if err != nil {
		return CollectOfflineResult{}, err
	}
	defer wc.Close()
	dir := filepath.Join(WorldModelDir(wc.Dir), datasetDir)
	var eps []pixelwm.Episode
	err = withHeartbeat(ctx, segmentHeartbeat(in.Config), func(report func(any)) error {
		report(collectProgress{Trajectories: cin.Episodes})
		var err error
		eps, _, err = pixelwm.CollectOrLoad(ctx, cin, dir)
		return err
	})
	if err != nil {
		return CollectOfflineResult{}, err
	}
	if err := wc.Publish(ctx); err != nil {
		return CollectOfflineResult{}, err
	}
	steps := 0
	for _, e := range eps {
		steps += len(e.Actions)
	}
	return CollectOfflineResult{Dir: wc.Ref(dir), Episodes: len(eps), Rows: steps}, nil
}

// pretrainPixelWorldModel pretrains the pixel world model (pixelwm.Pretrain) on the run's
// offline episodes. Every checkpoint it writes is heartbeaten; a retry resumes from the
// newest checkpoint that verifies and ends in the state an uninterrupted run ends in, and a
// retry after completion returns at once. When done it writes PixelScoresFile and
// PixelStripFile into the run's world-model directory.
func (w *WorldModel) pretrainPixelWorldModel(ctx context.Context, in PretrainWorldModelInput) (res PretrainWorldModelResult, err error) {
	cfg := PixelPretrainConfig(in.Config, in.Seed)
	wc, dsDir, err := openPretrainDataset(ctx, in, cfg.Validate())
	if err != nil {
		return res, err
	}
	defer wc.Close()
	// Always the stored episodes, also right after collecting them: a resumed run must
	// train on exactly the data the interrupted one did.
	_, eps, err := pixelwm.Load(dsDir)
	if err != nil {
		return res, fmt.Errorf("pretrain pixel world model: %w", err)
	}
	root := filepath.Join(WorldModelDir(wc.Dir), pretrainDir)
	resume, err := latestPixelState(root)
	if err != nil {
		return res, err
	}
	resumedAt := 0
	if resume != nil {
		resumedAt = resume.Step
	}
	var (
		st  *pixelwm.PretrainState
		dir string
	)
	total := cfg.ObsSteps + cfg.RewSteps + cfg.ProprioSteps
	err = withHeartbeat(ctx, segmentHeartbeat(in.Config), func(report func(any)) error {
		report(contract.PretrainWorldModelProgress{Step: resumedAt, Total: total, Model: phaseOf(resume)})
		var err error
		st, err = pixelwm.Pretrain(ctx, cfg, eps, resume, func(s *pixelwm.PretrainState) error {
			var err error
			if dir, err = savePixelState(root, in.SpecHash, s); err != nil {
				return err
			}
			if err := wc.Publish(ctx); err != nil {
				return err
			}
			report(contract.PretrainWorldModelProgress{Step: s.Step, Total: total, Model: s.Phase, Checkpoint: wc.Ref(dir)})
			return nil
		})
		return err
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return res, temporal.NewApplicationErrorWithCause(fmt.Sprintf("pretrain pixel world model: %v", err), ErrTypeTraining, err)
	}
	if dir == "" { // finished before this attempt: the newest checkpoint is the final state
		dir = stepDir(root, st.Step)
	}
	if err := checkpoint.Prune(root, 2); err != nil {
		return res, err
	}
	if err := writePixelScores(WorldModelDir(wc.Dir), cfg, eps, st); err != nil {
		return res, err
	}
	if err := wc.Publish(ctx); err != nil {
		return res, err
	}
	ev := st.Scores
	im := ev.Imagination
	res = PretrainWorldModelResult{
		Checkpoint: wc.Ref(dir), Steps: st.Step, ResumedFrom: resumedAt,
		TrainEpisodes: ev.TrainEpisodes, ValEpisodes: ev.HeldEpisodes,
		Pixels: &contract.PixelWorldModelScores{
			ObsSteps: cfg.ObsSteps, RewSteps: cfg.RewSteps, ProprioSteps: cfg.ProprioSteps,
			ImaginedMSE: im.MSE, CopyLastMSE: im.CopyLastMSE, Rollouts: im.Rollouts,
			SuccessAccuracy: ev.Reward.Success.Accuracy, SuccessMajority: ev.Reward.Success.Majority,
			SuccessPrecision: ev.Reward.Success.Precision, SuccessRecall: ev.Reward.Success.Recall,
			Strip: wc.Ref(filepath.Join(WorldModelDir(wc.Dir), PixelStripFile)),
		},
	}
	// The horizon schedule's loss: the first imagined step's error over copying the last
	// frame's (1 = no better than copying; normalised like the state model's loss).
	if im.Rollouts > 0 && im.CopyLastMSE[0] > 0 && !math.IsNaN(im.MSE[0]) {
		res.HasValLoss = true
		res.ValObsLoss, res.ValObsNoChange, res.ValRewLoss = im.MSE[0]/im.CopyLastMSE[0], 1, ev.RewHeldLoss
	}
	return res, nil
}

// phaseOf is the model a pretraining resumed from st trains first.
func phaseOf(st *pixelwm.PretrainState) string {
	if st == nil {
		return pixelwm.PhaseObs
	}
	return st.Phase
}

// writePixelScores writes the finished pretraining's scores and strip for people.
func writePixelScores(dir string, cfg pixelwm.PretrainConfig, eps []pixelwm.Episode, st *pixelwm.PretrainState) error {
	b, err := json.MarshalIndent(struct {
		Config pixelwm.PretrainConfig `json:"config"`
		*pixelwm.PretrainState
	}{cfg, st}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode pixel world model scores: %w", err)
	}
	if err := runstore.WriteFileAtomic(filepath.Join(dir, PixelScoresFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	strip, err := pixelwm.ScoringStrip(cfg, eps, st)
	if err != nil {
		return fmt.Errorf("pixel world model strip: %w", err)
	}
	if len(strip.Real) == 0 {
		return nil // no held-out episode long enough for a rollout
	}
	tmp := filepath.Join(dir, PixelStripFile+".tmp")
	if err := pixelwm.WriteStrip(tmp, cfg.Obs.ImageSize, strip.Rows()...); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, PixelStripFile))
}

// savePixelState writes a pixel pretraining checkpoint named after its step.
func savePixelState(root, specHash string, s *pixelwm.PretrainState) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode pixel world model state: %w", err)
	}
	files := map[string][]byte{pixelStateFile: b}
	for name, rec := range map[string][]byte{pixelObsFile: s.Obs, pixelRewFile: s.Rew, pixelProprioFile: s.Proprio} {
		if rec != nil {
			files[name] = rec
		}
	}
	dir := stepDir(root, s.Step)
	m := checkpoint.Manifest{SpecHash: specHash, Counters: map[string]int64{"step": int64(s.Step)}, Created: time.Now().UTC()}
	if err := checkpoint.Save(dir, m, files); err != nil {
		return "", err
	}
	return dir, nil
}

// loadPixelWorldModel reads the pretrained pixel world model from a finished pretraining
// checkpoint (PretrainWorldModelResult.Checkpoint) for the engine's imagination.
func loadPixelWorldModel(dir string) (engine.PixelWorldModel, error) {
	var m engine.PixelWorldModel
	if dir == "" {
		return m, errors.New("load pixel world model: the run has no pretrained world model (world_model.offline_trajectories must be positive)")
	}
	_, files, err := checkpoint.Load(dir)
	if err != nil {
		return m, fmt.Errorf("load pixel world model: %w", err)
	}
	var (
		obs edm.Trainer
		rew reward.Trainer
		pro proprio.Trainer
	)
	for name, t := range map[string]interface{ UnmarshalBinary([]byte) error }{pixelObsFile: &obs, pixelRewFile: &rew, pixelProprioFile: &pro} {
		if files[name] == nil {
			return m, fmt.Errorf("load pixel world model: %s has no %s (pretraining did not finish?)", dir, name)
		}
		if err := t.UnmarshalBinary(files[name]); err != nil {
			return m, fmt.Errorf("load pixel world model: %s: %w", name, err)
		}
	}
	// A model pretrained a policy step at a time reads a step's actions together (older
	// builds pretrained one action at a time).
	stride := max(1, obs.Net.Config().ActionDim/tabletop.ActionDim)
	return engine.PixelWorldModel{Obs: obs.Net, EDM: obs.EDM, Proprio: pro.Model, Rew: rew.Model, Stride: stride,
		ObsTrainer: &obs, RewTrainer: &rew, ProprioTrainer: &pro}, nil
}

// latestPixelState loads the newest pixel pretraining checkpoint under root that verifies
// (nil when there is none).
func latestPixelState(root string) (*pixelwm.PretrainState, error) {
	dir, _, files, _, err := checkpoint.Latest(root)
	if err != nil || dir == "" {
		return nil, err
	}
	var s pixelwm.PretrainState
	if err := json.Unmarshal(files[pixelStateFile], &s); err != nil {
		return nil, fmt.Errorf("decode pixel world model state in %s: %w", dir, err)
	}
	s.Obs, s.Rew, s.Proprio = files[pixelObsFile], files[pixelRewFile], files[pixelProprioFile]
	return &s, nil
}
