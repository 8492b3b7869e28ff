// Package contract is the interface between the workflows and the activities: each
// activity's registered name and its one Input and one Result struct, and the error types
// the workflows tell apart. Workflows import this package, not the activities themselves, so
// that deterministic workflow code does not pull in the engine, Arrow or the report renderer
// (`go list -deps ./workflows` stays small). The activities package implements every name
// here as a method of the same name (activities.Trainer.TrainSegment, …) and declares its
// signatures with these types.
//
// Every struct is plain JSON data recorded in workflow histories: fields may be added, never
// renamed or removed.
package contract

import (
	"fmt"
	"time"

	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// Activity names, as the worker registers them (the method names of activities.Trainer,
// activities.WorldModel and activities.Reporter).
const (
	ActivityTrainSegment       = "TrainSegment"
	ActivityFinishRun          = "FinishRun"
	ActivityCollectOffline     = "CollectOffline"
	ActivityPretrainWorldModel = "PretrainWorldModel"
	ActivityPretrainPolicy     = "PretrainPolicy"
	ActivityPrepareExperiment  = "PrepareExperiment"
	ActivityReport             = "Report"
)

// Application error types returned by the activities.
const (
	// ErrTypeTraining marks a failure of training itself (a non-finite loss, gradient or
	// parameter). The run workflow retries the segment from the previous checkpoint a bounded
	// number of times, then marks the run failed.
	ErrTypeTraining = "training"
	// ErrTypeBadInput marks input no retry can fix: a bad config, a missing checkpoint chain,
	// a kernel panic.
	ErrTypeBadInput = "bad-input"
)

// NonRetryableErrorTypes lists the error types Temporal must not retry by itself.
var NonRetryableErrorTypes = []string{ErrTypeTraining, ErrTypeBadInput}

// TrainSegmentInput is everything one training segment needs: the run's identity and
// resolved configuration, and the segment the run's state machine planned.
type TrainSegmentInput struct {
	// RunDir is the run's output directory (<out>/<arm>/seed-<seed>).
	RunDir string `json:"run_dir"`
	// Experiment, Arm and Seed identify the run.
	Experiment string `json:"experiment"`
	Arm        string `json:"arm"`
	Seed       uint64 `json:"seed"`
	// SpecHash is the resolved experiment's hash; checkpoints record it.
	SpecHash string `json:"spec_hash"`
	// Config is the arm's resolved configuration.
	Config specs.Config `json:"config"`
	// Plan is the segment's plan (runstate.Machine.Next): its number, updates, horizon.
	runstate.Plan
}

// TrainSegmentResult summarises a finished segment; the run's state machine folds it in
// (runstate.Machine.Apply).
type TrainSegmentResult = runstate.SegmentResult

// SegmentProgress is the heartbeat payload of a running TrainSegment: the run's counters
// so far (the CLI shows them between segment ends) and the checkpoint the segment resumed
// from (a retry of the segment tries it first).
type SegmentProgress struct {
	Segment  int32   `json:"segment"`
	Updates  int64   `json:"updates"`
	EnvSteps int64   `json:"env_steps"`
	WallS    float64 `json:"wall_s"`
	// ResumedFrom is the checkpoint directory the segment started from ("" for the first).
	ResumedFrom string `json:"resumed_from,omitempty"`
}

// FinishRunInput records a run's final status.
type FinishRunInput struct {
	RunDir string `json:"run_dir"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// FinishRunResult is empty; it exists so fields can be added later.
type FinishRunResult struct{}

// CollectOfflineInput asks for a run's offline dataset.
type CollectOfflineInput struct {
	// RunDir is the run's output directory; the dataset goes to <RunDir>/worldmodel/dataset.
	RunDir string `json:"run_dir"`
	// Config is the arm's resolved configuration (env and world_model blocks).
	Config specs.Config `json:"config"`
	// Seed selects the episodes (episode e acts with rand.NewPCG(Seed, e)).
	Seed uint64 `json:"seed"`
}

// CollectOfflineResult describes the dataset written.
type CollectOfflineResult struct {
	Dir      string `json:"dir"`
	Episodes int    `json:"episodes"`
	// Rows is the number of transitions: the offline env steps, reported beside the online ones.
	Rows int `json:"rows"`
}

// PretrainWorldModelInput asks for pretraining on a collected dataset.
type PretrainWorldModelInput struct {
	RunDir   string       `json:"run_dir"`
	SpecHash string       `json:"spec_hash"`
	Config   specs.Config `json:"config"`
	Seed     uint64       `json:"seed"`
	// DatasetDir is CollectOfflineResult.Dir.
	DatasetDir string `json:"dataset_dir"`
}

// PretrainWorldModelResult summarises pretraining.
type PretrainWorldModelResult struct {
	// Checkpoint is the directory of the final state (TrainSegmentInput.WorldModelState).
	Checkpoint string `json:"checkpoint"`
	Steps      int    `json:"steps"`
	// ResumedFrom is the step a retry resumed from (0: a fresh start).
	ResumedFrom int `json:"resumed_from"`
	// ValObsLoss and ValRewLoss are the held-out episodes' losses after the last step;
	// ValObsNoChange is the observation loss of predicting "no change", the bar to beat.
	// HasValLoss is false when too few episodes were collected to hold any out (the losses
	// are then 0).
	ValObsLoss     float64 `json:"val_obs_loss"`
	ValRewLoss     float64 `json:"val_rew_loss"`
	ValObsNoChange float64 `json:"val_obs_no_change"`
	HasValLoss     bool    `json:"has_val_loss"`
	TrainEpisodes  int     `json:"train_episodes"`
	ValEpisodes    int     `json:"val_episodes"`
	// Pixels scores the pixel world model (a world_model pixels block; nil otherwise). Its
	// ValObsLoss is then M_obs's first imagined step's MSE over copying the last frame's.
	Pixels *PixelWorldModelScores `json:"pixels,omitempty"`
}

// PixelWorldModelScores is the pixel world model after pretraining, scored on the held-out
// episodes (one in ten of every task): M_obs's open-loop imagined MSE per step ([−1, 1]
// pixel units, mean over cameras and rollouts) against copying the last real frame, and
// M_rew's success accuracy against always answering the majority label.
type PixelWorldModelScores struct {
	ObsSteps         int       `json:"obs_steps"`
	RewSteps         int       `json:"rew_steps"`
	ProprioSteps     int       `json:"proprio_steps"`
	Rollouts         int       `json:"rollouts"`
	ImaginedMSE      []float64 `json:"per_step_mse"`
	CopyLastMSE      []float64 `json:"copy_last_per_step_mse"`
	SuccessAccuracy  float64   `json:"success_accuracy"`
	SuccessMajority  float64   `json:"success_majority"`
	SuccessPrecision float64   `json:"success_precision"`
	SuccessRecall    float64   `json:"success_recall"`
	// Strip is the real-vs-imagined PNG of the first scoring rollout.
	Strip string `json:"strip"`
}

// PrepareExperimentInput describes the experiment whose output directory is being set up.
type PrepareExperimentInput struct {
	ExpDir     string           `json:"exp_dir"`
	Experiment specs.Experiment `json:"experiment"`
	// Created is when the experiment workflow started.
	Created time.Time `json:"created"`
}

// PrepareExperimentResult is empty; it exists so fields can be added later.
type PrepareExperimentResult struct{}

// ReportInput names the experiment directory to report on.
type ReportInput struct {
	ExpDir string `json:"exp_dir"`
}

// ReportResult says where the report went.
type ReportResult struct {
	Markdown    string   `json:"markdown"`
	ResultsJSON string   `json:"results_json"`
	Figures     []string `json:"figures"`
	Partial     bool     `json:"partial"`
}

// PretrainPolicyInput asks for the behaviour-cloning warm start of a run's policy (the
// spec's pretrain block).
type PretrainPolicyInput struct {
	RunDir   string       `json:"run_dir"`
	SpecHash string       `json:"spec_hash"`
	Config   specs.Config `json:"config"`
	Seed     uint64       `json:"seed"`
}

// PretrainPolicyResult summarises behaviour cloning.
type PretrainPolicyResult struct {
	// Checkpoint is the warm-start policy's directory (TrainSegmentInput.PolicyState).
	Checkpoint string `json:"checkpoint"`
	// Demos is the number of demonstrations, DemoSteps their expert steps, Samples the
	// training samples (one per demonstration step).
	Demos     int   `json:"demos"`
	DemoSteps int64 `json:"demo_steps"`
	Samples   int   `json:"samples"`
	// EpochLoss is the mean squared error per action value of every epoch; ResumedFrom the
	// epoch a retry resumed from (0: a fresh start).
	EpochLoss   []float64 `json:"epoch_loss"`
	ResumedFrom int       `json:"resumed_from"`
	// Success is the cloned policy's success rate over EvalEpisodes evaluation episodes
	// (the evaluation block's protocol), when HasSuccess (an evaluation block with episodes).
	Success      float64 `json:"success"`
	HasSuccess   bool    `json:"has_success"`
	EvalEpisodes int     `json:"eval_episodes"`
	// SampledSuccess is the success rate of the same episodes played sampling the actions
	// (evaluation.sampled beside greedy), when HasSampledSuccess.
	SampledSuccess    float64 `json:"sampled_success,omitempty"`
	HasSampledSuccess bool    `json:"has_sampled_success,omitempty"`
	// SampledTemperature is the VLA's sampling temperature SampledSuccess was played at
	// (policy.vla.temperature, 1 when unset; 0 for other policies): a cloned policy reused
	// under another temperature plays its sampled evaluation again.
	SampledTemperature float64 `json:"sampled_temperature,omitempty"`
	// WallS is the wall time of recording, training and evaluating, in seconds.
	WallS float64 `json:"wall_s"`
	// Tasks and SampledTasks split Success and SampledSuccess by task (tabletop suites).
	Tasks        []runstore.TaskSuccess `json:"tasks,omitempty"`
	SampledTasks []runstore.TaskSuccess `json:"sampled_tasks,omitempty"`
}

// Pretrained is what the run's state machine keeps of the result.
func (r PretrainPolicyResult) Pretrained() runstate.PolicyPretrained {
	return runstate.PolicyPretrained{DemoSteps: r.DemoSteps, PolicyState: r.Checkpoint, Success: r.Success, HasSuccess: r.HasSuccess}
}

// PretrainPolicyProgress is the heartbeat payload of a running PretrainPolicy: its phase
// (PhaseDemos, PhaseClone, PhaseEvaluate), the epochs done and planned, and the newest epoch
// checkpoint.
type PretrainPolicyProgress struct {
	Phase      string `json:"phase"`
	Epoch      int    `json:"epoch"`
	Epochs     int    `json:"epochs"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Loss is the training loss of the last finished epoch (0 before the first): the
	// clone's own measure, cross-entropy in nats per action token for a VLA, so that a person
	// watching a long clone sees it fall (or sit on a plateau) without opening a checkpoint.
	Loss float64 `json:"loss,omitempty"`
}

// PretrainWorldModelProgress is the heartbeat payload of a running PretrainWorldModel: the
// steps done and planned (the state-vector model's minibatch steps over its epochs; the
// pixel model's M_obs, M_rew and proprio-head steps together), the model being trained
// (pixel model only: "obs", "rew", "proprio", "done") and the newest checkpoint.
type PretrainWorldModelProgress struct {
	Step       int    `json:"step"`
	Total      int    `json:"total"`
	Model      string `json:"model,omitempty"`
	Checkpoint string `json:"checkpoint"`
}

// String describes the progress for a status line: "pretraining world model (step 25/1300, obs)".
func (p PretrainWorldModelProgress) String() string {
	s := fmt.Sprintf("pretraining world model (step %d/%d", p.Step, p.Total)
	if p.Model != "" {
		s += ", " + p.Model
	}
	return s + ")"
}

// PhaseCollectOffline is the status line of a running CollectOffline.
const PhaseCollectOffline = "collecting offline episodes"

// Phases of PretrainPolicy.
const (
	PhaseDemos    = "recording demos"
	PhaseClone    = "cloning"
	PhaseEvaluate = "evaluating the clone"
)

// String describes the progress for a status line: "cloning (epoch 12/30)", and once an
// epoch has finished "cloning (epoch 12/30, loss 2.954)".
func (p PretrainPolicyProgress) String() string {
	if p.Phase != PhaseClone {
		return p.Phase
	}
	if p.Loss == 0 {
		return fmt.Sprintf("%s (epoch %d/%d)", p.Phase, p.Epoch, p.Epochs)
	}
	return fmt.Sprintf("%s (epoch %d/%d, loss %.3f)", p.Phase, p.Epoch, p.Epochs, p.Loss)
}
