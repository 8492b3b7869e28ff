package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/activities/telemetry"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// Trainer runs training segments. It has no dependencies yet; it is a struct so that
// workers can hand it shared resources (device handles, caches) later without changing the
// activity signatures.
type Trainer struct{}

// SegmentProgress is the heartbeat payload of a running segment (contract.SegmentProgress).
type SegmentProgress = contract.SegmentProgress

const (
	engineStateFile  = "engine.json"
	checkpointsDir   = "checkpoints"
	recentEpisodes   = 100
	manifestFileName = "manifest.json"
	summaryFileName  = "summary.json"
)

// CheckpointDir is where segment seg of a run stores its checkpoint.
func CheckpointDir(runDir string, seg int32) string {
	return filepath.Join(runDir, checkpointsDir, fmt.Sprintf("seg-%06d", seg))
}

// segmentHeartbeat is how often a segment of c heartbeats at least: every 2 s, or a quarter
// of checkpoint.heartbeat_timeout when that is shorter.
func segmentHeartbeat(c specs.Config) time.Duration {
	t := c.Checkpoint.HeartbeatTimeout.Std()
	if t <= 0 {
		t = 30 * time.Second // the Run workflow's default
	}
	return max(min(2*time.Second, t/4), 10*time.Millisecond)
}

// TrainSegment runs one training segment: resume the engine from the previous segment's
// checkpoint (or start fresh for segment 1), train for in.Updates updates while
// heartbeating, then write the checkpoint, the metrics rows and the run summary.
func (t *Trainer) TrainSegment(ctx context.Context, in TrainSegmentInput) (res TrainSegmentResult, err error) {
	defer func() {
		// Kernel shape bugs panic; turn them into an error the workflow can see instead of
		// crashing the worker process.
		if r := recover(); r != nil {
			err = temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d panicked: %v", in.Segment, r), ErrTypeBadInput, nil)
			if e, ok := r.(error); ok && errors.Is(e, envrpc.ErrUnavailable) {
				// A remote environment lost its server for good (while evaluating): a retry
				// may find it back.
				err = temporal.NewApplicationErrorWithCause(fmt.Sprintf("train segment %d: %v", in.Segment, e), ErrTypeTraining, e)
			}
		}
	}()
	if in.Updates <= 0 {
		return res, temporal.NewNonRetryableApplicationError("train segment: updates must be positive", ErrTypeBadInput, nil)
	}
	// The segment works on a local copy of the run's directory (the directory itself, unless
	// the run is in an object store); references it reports name the store's files.
	wc, err := runstore.OpenWorkingCopy(ctx, in.RunDir, runstore.Only(segmentFiles))
	if err != nil {
		return res, err
	}
	defer wc.Close()
	in.RunDir = wc.Dir
	if in.WorldModelState, err = wc.Local(in.WorldModelState); err != nil {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: world model state: %v", in.Segment, err), ErrTypeBadInput, err)
	}
	if in.PolicyState, err = wc.Local(in.PolicyState); err != nil {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: pretrained policy: %v", in.Segment, err), ErrTypeBadInput, err)
	}
	if err := ensureRunManifest(in); err != nil {
		return res, err
	}
	// A retry of this segment first tries the checkpoint its previous attempt resumed from
	// (named in that attempt's last heartbeat), then scans the run's checkpoints.
	var prev SegmentProgress
	hint := ""
	if lastHeartbeat(ctx, &prev) && prev.Segment == in.Segment {
		hint, _ = wc.Local(prev.ResumedFrom) // one this copy cannot name is only a lost shortcut
	}
	snap, from, warnings, err := loadPrevious(in.RunDir, in.Segment, hint)
	if err != nil {
		return res, err
	}
	from = wc.Ref(from)
	// Heartbeats flow every segmentHeartbeat through the whole segment, repeating the latest
	// progress: an update, the evaluation or the checkpoint may each take longer than the
	// heartbeat timeout (a VLA's greedy evaluation of 100 episodes takes minutes on a CPU).
	hb := startHeartbeat(ctx, segmentHeartbeat(in.Config), SegmentProgress{Segment: in.Segment, WallS: in.StartWallS, ResumedFrom: from})
	defer hb.stop()
	cfg := EngineConfig(in.Config, in.Seed, in.TotalUpdates)
	if cfg.WorldModel.Enabled && in.Horizon > 0 {
		cfg.WorldModel.Horizon = in.Horizon
	}
	if cfg.PixelWM.Enabled && in.Horizon > 0 {
		cfg.PixelWM.Horizon = in.Horizon
	}
	var envWarn envWarnings
	eng, err := engine.New(cfg, snap, envFactory(in.Config, in.Seed, envWarn.add))
	if errors.Is(err, envrpc.ErrUnavailable) {
		return res, temporal.NewApplicationErrorWithCause(fmt.Sprintf("create engine: %v", err), ErrTypeTraining, err)
	}
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("create engine: %v", err), ErrTypeBadInput, err)
	}
	defer eng.Close()
	if snap == nil && cfg.WorldModel.Enabled && in.WorldModelState != "" {
		state, err := loadWorldModelState(in.WorldModelState)
		if err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
		if err := eng.LoadWorldModel(state); err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
	}

	if cfg.PixelWM.Enabled {
		// Every segment loads the pretrained pixel world model; when it trains online, a
		// resumed engine then puts its snapshot's trained state in its place.
		m, err := loadPixelWorldModel(in.WorldModelState)
		if err == nil {
			err = eng.SetPixelWorldModel(m)
		}
		if err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
	}

	if snap == nil && in.PolicyState != "" {
		// The run's first segment (or a restart with no checkpoint left) starts from the
		// behaviour-cloned policy.
		p, err := loadBCPolicy(in.PolicyState)
		if err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
		if err := loadWarmStart(eng, in.Config, p.Params); err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
	}

	rec := newRecorder(in.Segment, in.StartWallS)
	defer rec.close()
	stats, err := eng.Run(ctx, in.Updates, func(u engine.UpdateReport) {
		rec.add(u)
		hb.report(SegmentProgress{Segment: in.Segment, Updates: u.Update, EnvSteps: u.EnvSteps,
			WallS: in.StartWallS + u.Wall.Seconds(), ResumedFrom: from})
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return res, temporal.NewApplicationErrorWithCause(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeTraining, err)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var eval, evalSampled *engine.EvalResult
	if ev := in.Config.Evaluation; ev.Episodes > 0 {
		// Every segment evaluates from the same start states (common random numbers across
		// segments and arms), and a retried segment replays the same evaluation. The last
		// segment (the one that spends the budget) plays the headline count
		// (evaluation.final_episodes; a tabletop arm's episode n starts from the same fixed
		// initial state whatever the count).
		n := ev.Episodes
		if stats.BudgetReached {
			n = ev.HeadlineEpisodes()
		}
		r, sampled, err := evaluate(eng, ev, n, in.Seed)
		if err != nil {
			return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("train segment %d: %v", in.Segment, err), ErrTypeBadInput, err)
		}
		rec.addEval(r, sampled)
		eval, evalSampled = &r, sampled
	}
	snap, err = eng.Snapshot()
	if err != nil {
		return res, fmt.Errorf("snapshot engine: %w", err)
	}

	if err := runstore.WriteSegmentFiles(in.RunDir, in.Segment, rec.metrics, rec.episodes, !in.Config.Metrics.NoTensorBoard); err != nil {
		return res, fmt.Errorf("write metrics: %w", err)
	}
	files, err := snapshotFiles(snap)
	if err != nil {
		return res, err
	}
	ckpt := CheckpointDir(in.RunDir, in.Segment)
	man := checkpoint.Manifest{
		SpecHash: in.SpecHash,
		Segment:  in.Segment,
		Counters: map[string]int64{"env_steps": stats.EnvSteps, "updates": stats.Updates, "episodes": stats.Episodes,
			"imagined_steps": stats.ImaginedSteps},
		Created: time.Now().UTC(),
	}
	if err := checkpoint.Save(ckpt, man, files); err != nil {
		return res, err
	}
	if err := checkpoint.Prune(filepath.Join(in.RunDir, checkpointsDir), keepCheckpoints(in.Config)); err != nil {
		return res, err
	}

	recent, err := recentReturn(in.RunDir)
	if err != nil {
		return res, err
	}
	res = TrainSegmentResult{
		Counters: runstate.Counters{
			Segment:       in.Segment,
			EnvSteps:      stats.EnvSteps,
			Updates:       stats.Updates,
			Episodes:      stats.Episodes,
			RecentReturn:  recent,
			WallS:         in.StartWallS + stats.Wall.Seconds(),
			ImaginedSteps: stats.ImaginedSteps,
		},
		Checkpoint:       wc.Ref(ckpt),
		SegmentStepsPerS: stats.StepsPerS,
		ParamsSHA256:     eng.ParamsSHA256(),
		BudgetReached:    stats.BudgetReached,
		Horizon:          stats.Horizon,
		WMValLoss:        stats.WMValLoss,
		HasWMValLoss:     stats.WMValUpdates > 0,
		Warnings:         append(warnings, envWarn.take()...),
	}
	if eval != nil {
		res.EvalReturn, res.HasEval = eval.Mean(), true
		res.EvalSuccess, res.HasEvalSuccess = eval.SuccessRate(), eval.HasSuccess
		res.SegmentEvalSteps = eval.Steps
	}
	sum := runstore.RunSummary{
		Status:       "running",
		EnvSteps:     res.EnvSteps,
		Updates:      res.Updates,
		Episodes:     res.Episodes,
		FinalReturn:  recent,
		StepsPerS:    res.StepsPerS(),
		WallS:        res.WallS,
		ParamsSHA256: res.ParamsSHA256,
		Segments:     in.Segment,
		Updated:      time.Now().UTC(),
		EvalReturn:   res.EvalReturn,
		HasEval:      res.HasEval,
	}
	if res.HasEvalSuccess {
		sum.EvalSuccess, sum.HasEvalSuccess = res.EvalSuccess, true
		sum.EvalTasks = taskSuccess(in.Config.Env, *eval)
		if evalSampled != nil {
			sum.EvalSampledTasks = taskSuccess(in.Config.Env, *evalSampled)
		}
	}
	// The summary keeps every warning the run has met: the earlier segments' (from the
	// previous summary) and this one's.
	var before runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(in.RunDir, summaryFileName), &before); err == nil {
		sum.Warnings = before.Warnings
	}
	sum.Warnings = append(sum.Warnings, res.Warnings...)
	if err := runstore.WriteJSON(filepath.Join(in.RunDir, summaryFileName), sum); err != nil {
		return res, err
	}
	// Publish before reporting: the workflow records this checkpoint only once it is in the
	// store, where a retry on any host finds it.
	return res, wc.Publish(ctx)
}

// segmentFiles reports whether a segment needs the file rel of its run directory in its
// working copy: everything but the world model's offline dataset, which only pretraining reads.
func segmentFiles(rel string) bool {
	return !strings.HasPrefix(rel, worldModelDir+"/"+datasetDir+"/")
}

// FinishRun marks the run's summary.json with its final status (completed, stopped or failed)
// and the error that ended it, if any.
func (t *Trainer) FinishRun(ctx context.Context, in FinishRunInput) (FinishRunResult, error) {
	wc, err := runstore.OpenWorkingCopy(ctx, in.RunDir, runstore.Only(func(rel string) bool { return rel == summaryFileName }))
	if err != nil {
		return FinishRunResult{}, err
	}
	defer wc.Close()
	in.RunDir = wc.Dir
	path := filepath.Join(in.RunDir, summaryFileName)
	var sum runstore.RunSummary
	if err := runstore.ReadJSON(path, &sum); err != nil && !errors.Is(err, os.ErrNotExist) {
		return FinishRunResult{}, err
	}
	sum.Status = in.Status
	sum.Error = in.Error
	sum.Updated = time.Now().UTC()
	if err := os.MkdirAll(in.RunDir, 0o755); err != nil {
		return FinishRunResult{}, fmt.Errorf("finish run: %w", err)
	}
	if err := runstore.WriteJSON(path, sum); err != nil {
		return FinishRunResult{}, err
	}
	return FinishRunResult{}, wc.Publish(ctx)
}

// loadPrevious finds the checkpoint to resume segment seg from: the newest valid checkpoint
// of an earlier segment. Corrupt or partial checkpoints are skipped with a warning. When it
// has to reach further back than segment seg-1 (or, with no valid checkpoint left, back to the
// start), the rows of the segments in between are discarded, because their training is being
// redone from the older state (see discardSegments).
//
// hint, when not empty, is a checkpoint directory to try first (the one a previous attempt of
// this segment resumed from). It returns the snapshot and the directory it came from ("" for
// a fresh start).
func loadPrevious(runDir string, seg int32, hint string) (*engine.Snapshot, string, []string, error) {
	if seg <= 1 {
		return nil, "", nil, nil
	}
	var warnings []string
	if hint != "" {
		if m, files, err := checkpoint.Load(hint); err == nil && m.Segment == seg-1 {
			if snap, err := LoadSnapshot(files); err == nil {
				return snap, hint, nil, nil
			}
		}
	}
	dirs, err := checkpoint.List(filepath.Join(runDir, checkpointsDir))
	if err != nil {
		return nil, "", nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		m, files, err := checkpoint.Load(dirs[i])
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skipped checkpoint: %v", err))
			continue
		}
		if m.Segment >= seg {
			continue // written by an earlier attempt of this (or a later) segment
		}
		snap, err := LoadSnapshot(files)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skipped checkpoint %s: %v", dirs[i], err))
			continue
		}
		if m.Segment != seg-1 {
			warnings = append(warnings, fmt.Sprintf("segment %d resumed from the checkpoint of segment %d; segments %d-%d are redone", seg, m.Segment, m.Segment+1, seg-1))
			if err := discardSegments(runDir, m.Segment+1, seg-1); err != nil {
				return nil, "", warnings, err
			}
		}
		return snap, dirs[i], warnings, nil
	}
	warnings = append(warnings, fmt.Sprintf("no checkpoint under %s verifies; segment %d restarts the run from the beginning", filepath.Join(runDir, checkpointsDir), seg))
	if err := discardSegments(runDir, 1, seg-1); err != nil {
		return nil, "", warnings, err
	}
	return nil, "", warnings, nil
}

func ensureRunManifest(in TrainSegmentInput) error {
	path := filepath.Join(in.RunDir, manifestFileName)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	cfg, err := json.Marshal(in.Config)
	if err != nil {
		return fmt.Errorf("encode run config: %w", err)
	}
	if err := os.MkdirAll(in.RunDir, 0o755); err != nil {
		return fmt.Errorf("create run dir: %w", err)
	}
	return runstore.WriteJSON(path, runstore.RunManifest{
		Experiment: in.Experiment,
		Arm:        in.Arm,
		Seed:       in.Seed,
		SpecHash:   in.SpecHash,
		Config:     cfg,
		Build:      runstore.NewBuildInfo(),
		Hardware:   hardware(),
		Created:    time.Now().UTC(),
	})
}

// recentReturn is the mean return of the run's last 100 finished episodes, read back from
// the stored episode rows (so it counts exactly the rows a report will count).
func recentReturn(runDir string) (float64, error) {
	eps, err := runstore.LastEpisodes(runDir, recentEpisodes)
	if err != nil {
		return 0, fmt.Errorf("read episodes: %w", err)
	}
	if len(eps) == 0 {
		return 0, nil
	}
	var s float64
	for _, e := range eps {
		s += e.Return
	}
	return s / float64(len(eps)), nil
}

// keepCheckpoints is the number of checkpoints to keep: the spec's keep, but never fewer
// than two, because a retry of the newest segment resumes from the one before it.
func keepCheckpoints(c specs.Config) int {
	return max(2, c.Checkpoint.Keep)
}

func safeDiv(a, b float64) float64 {
	if b <= 0 || math.IsNaN(b) {
		return 0
	}
	return a / b
}

// hardware describes this machine for the run manifest, with the GPU as NVML names it.
func hardware() runstore.Hardware {
	h := runstore.NewHardware()
	h.GPU = telemetry.GPUName()
	return h
}

// evaluate plays n episodes of the evaluation block with the engine's current policy,
// greedily or sampling as ev says, and with ev.PlaysSampled the same episodes (same seed, so
// the same initial states) a second time sampling; sampled is nil without it.
func evaluate(eng *engine.Engine, ev specs.Evaluation, n int, seed uint64) (r engine.EvalResult, sampled *engine.EvalResult, err error) {
	if r, err = eng.Evaluate(n, engine.EvalSeed(seed), ev.Greedy); err != nil || !ev.PlaysSampled() {
		return r, nil, err
	}
	s, err := eng.Evaluate(n, engine.EvalSeed(seed), false)
	if err != nil {
		return r, nil, err
	}
	return r, &s, nil
}
