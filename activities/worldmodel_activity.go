package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/accerl/accerl/runstore"

	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/specs"
)

// WorldModel runs the world model's offline activities: collecting the offline dataset and
// pretraining on it. Like Trainer it has no dependencies yet.
type WorldModel struct{}

// Layout of a run's world-model directory.
const (
	worldModelDir    = "worldmodel"
	datasetDir       = "dataset"
	pretrainDir      = "pretrain"
	wmStateFile      = "wm_state.json"
	pretrainValSplit = 0.1 // share of offline episodes held out for validation
)

// WorldModelDir is where a run keeps its offline dataset (dataset/) and pretraining
// checkpoints (pretrain/step-NNNNNNNNN/).
func WorldModelDir(runDir string) string { return filepath.Join(runDir, worldModelDir) }

// CollectOffline records world_model.offline_trajectories episodes of the behaviour policy as
// an Arrow IPC dataset (worldmodel.CollectOffline). It is idempotent: a verified dataset of the
// same config is returned at once, and a retry after a crash keeps the finished shards.
func (w *WorldModel) CollectOffline(ctx context.Context, in CollectOfflineInput) (CollectOfflineResult, error) {
	wm := in.Config.WorldModel
	if wm.Pixels != nil {
		return w.collectPixelOffline(ctx, in)
	}
	cfg := worldmodel.CollectConfig{
		Env: in.Config.Env.Kind, MaxEpisodeSteps: in.Config.Env.MaxEpisodeSteps,
		Trajectories: wm.OfflineTrajectories, Behaviour: wm.Behaviour, Seed: in.Seed,
	}
	if err := cfg.Validate(); err != nil {
		return CollectOfflineResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	wc, err := openWorldModelCopy(ctx, in.RunDir)
	if err != nil {
		return CollectOfflineResult{}, err
	}
	defer wc.Close()
	dir := filepath.Join(WorldModelDir(wc.Dir), datasetDir)
	var info worldmodel.DatasetInfo
	err = withHeartbeat(ctx, segmentHeartbeat(in.Config), func(report func(any)) error {
		report(collectProgress{Trajectories: cfg.Trajectories})
		var err error
		info, err = worldmodel.CollectOffline(ctx, cfg, dir, OfflineSims(in.Config.Env))
		return err
	})
	if err != nil {
		return CollectOfflineResult{}, err
	}
	if err := wc.Publish(ctx); err != nil {
		return CollectOfflineResult{}, err
	}
	return CollectOfflineResult{Dir: wc.Ref(dir), Episodes: info.Episodes, Rows: info.Rows}, nil
}

// collectProgress is the heartbeat payload of CollectOffline: the episodes it records (the
// dataset's shards are its checkpoints; a retry keeps the finished ones).
type collectProgress struct {
	Trajectories int `json:"trajectories"`
}

// openPretrainDataset refuses a pretraining whose config did not validate (invalid, as a
// non-retryable error), opens the run's world-model working copy and returns it with the
// local path of the dataset CollectOffline wrote; the caller closes the copy.
func openPretrainDataset(ctx context.Context, in PretrainWorldModelInput, invalid error) (*runstore.WorkingCopy, string, error) {
	if invalid != nil {
		return nil, "", temporal.NewNonRetryableApplicationError(invalid.Error(), ErrTypeBadInput, invalid)
	}
	wc, err := openWorldModelCopy(ctx, in.RunDir)
	if err != nil {
		return nil, "", err
	}
	dir, err := wc.Local(in.DatasetDir)
	if err != nil {
		wc.Close()
		return nil, "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain world model: dataset: %v", err), ErrTypeBadInput, err)
	}
	return wc, dir, nil
}

// openWorldModelCopy opens the working copy of a run's world-model files (runstore.WorkingCopy:
// the run directory itself, unless the run is in an object store).
func openWorldModelCopy(ctx context.Context, runDir string) (*runstore.WorkingCopy, error) {
	return runstore.OpenWorkingCopy(ctx, runDir, runstore.Only(func(rel string) bool {
		return strings.HasPrefix(rel, worldModelDir+"/")
	}))
}

// PretrainConfig maps the spec's world_model block onto worldmodel.PretrainConfig: one pass
// per pretrain epoch in minibatches of worldmodel.DefaultBatchSize, 10% of the episodes held
// out for validation, evaluated and checkpointed once per epoch.
func PretrainConfig(c specs.Config, seed uint64) worldmodel.PretrainConfig {
	w := c.WorldModel
	return worldmodel.PretrainConfig{
		History: w.History, ObsHidden: append([]int(nil), w.ObsHidden...), RewHidden: append([]int(nil), w.RewHidden...),
		Activation: kernels.ActTanh, ObsLR: w.ObsLearningRate, RewLR: w.RewLearningRate, RewardMode: w.Reward,
		Epochs: w.PretrainEpochs, ValFraction: pretrainValSplit, Seed: seed,
	}
}

// PretrainWorldModel trains M_obs and M_rew on the offline dataset (worldmodel.Pretrain) with a
// held-out validation split. After every epoch it writes a checkpoint under
// <RunDir>/worldmodel/pretrain and heartbeats its step; a retry resumes bit-exactly from the
// newest checkpoint that verifies, and a retry after completion returns at once.
func (w *WorldModel) PretrainWorldModel(ctx context.Context, in PretrainWorldModelInput) (res PretrainWorldModelResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain world model panicked: %v", r), ErrTypeBadInput, nil)
		}
	}()
	if in.Config.WorldModel.Pixels != nil {
		return w.pretrainPixelWorldModel(ctx, in)
	}
	cfg := PretrainConfig(in.Config, in.Seed)
	wc, datasetDir, err := openPretrainDataset(ctx, in, cfg.Validate())
	if err != nil {
		return res, err
	}
	defer wc.Close()
	ds, err := worldmodel.ReadDataset(datasetDir)
	if err != nil {
		return res, fmt.Errorf("pretrain world model: %w", err)
	}
	root := filepath.Join(WorldModelDir(wc.Dir), pretrainDir)
	resume, dir, err := latestWMState(root)
	if err != nil {
		return res, err
	}
	resumedAt := -1
	if resume != nil {
		resumedAt = resume.Step
	}
	var (
		saveErr error
		state   *worldmodel.WMState
		stats   worldmodel.PretrainStats
	)
	// Progress reports (with a checkpoint) come once per epoch; the ticker keeps heartbeats
	// flowing through long epochs.
	err = withHeartbeat(ctx, segmentHeartbeat(in.Config), func(report func(any)) error {
		var err error
		state, stats, err = worldmodel.Pretrain(ctx, ds, cfg, resume, func(p worldmodel.PretrainProgress) {
			if p.Step != resumedAt && saveErr == nil {
				if dir, saveErr = saveWMState(root, in.SpecHash, p.Snapshot()); saveErr == nil {
					saveErr = wc.Publish(ctx)
				}
			}
			report(contract.PretrainWorldModelProgress{Step: p.Step, Total: p.Total, Checkpoint: wc.Ref(dir)})
		})
		return err
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return res, temporal.NewApplicationErrorWithCause(err.Error(), ErrTypeTraining, err)
	}
	if saveErr != nil {
		return res, saveErr
	}
	if dir != stepDir(root, state.Step) {
		// The final state must be what the checkpoint holds (the last progress report saves
		// it; this only guards against a report that did not).
		if dir, err = saveWMState(root, in.SpecHash, state); err != nil {
			return res, err
		}
	}
	if err := checkpoint.Prune(root, 2); err != nil {
		return res, err
	}
	if err := wc.Publish(ctx); err != nil {
		return res, err
	}
	f := stats.Final
	res = PretrainWorldModelResult{
		Checkpoint: wc.Ref(dir), Steps: stats.Steps, ResumedFrom: stats.ResumedFrom,
		TrainEpisodes: stats.TrainEpisodes, ValEpisodes: stats.ValEpisodes,
	}
	if !math.IsNaN(f.ValObsLoss) {
		res.HasValLoss = true
		res.ValObsLoss, res.ValRewLoss, res.ValObsNoChange = f.ValObsLoss, f.ValRewLoss, stats.ValObsNoChange
	}
	return res, nil
}

// saveWMState writes a pretraining checkpoint named after its step.
func saveWMState(root, specHash string, s *worldmodel.WMState) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode world model state: %w", err)
	}
	dir := stepDir(root, s.Step)
	m := checkpoint.Manifest{SpecHash: specHash, Counters: map[string]int64{"step": int64(s.Step)}, Created: time.Now().UTC()}
	if err := checkpoint.Save(dir, m, map[string][]byte{wmStateFile: b}); err != nil {
		return "", err
	}
	return dir, nil
}

func stepDir(root string, step int) string {
	return filepath.Join(root, fmt.Sprintf("step-%09d", step))
}

// latestWMState loads the newest pretraining checkpoint under root that verifies (nil when
// there is none).
func latestWMState(root string) (*worldmodel.WMState, string, error) {
	dir, _, files, _, err := checkpoint.Latest(root)
	if err != nil || dir == "" {
		return nil, "", err
	}
	var s worldmodel.WMState
	if err := json.Unmarshal(files[wmStateFile], &s); err != nil {
		return nil, "", fmt.Errorf("decode world model state in %s: %w", dir, err)
	}
	return &s, dir, nil
}

// loadWorldModelState reads the world model state of one pretraining checkpoint.
func loadWorldModelState(dir string) (*worldmodel.WMState, error) {
	_, files, err := checkpoint.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load pretrained world model: %w", err)
	}
	var s worldmodel.WMState
	if err := json.Unmarshal(files[wmStateFile], &s); err != nil {
		return nil, fmt.Errorf("load pretrained world model: decode %s: %w", dir, err)
	}
	return &s, nil
}
