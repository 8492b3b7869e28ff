package engine

import (
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/kernels"
)

// UpdateReport describes one trainer update; Run passes it to its onUpdate
// callback. Counters are run-wide (they continue across segments and
// snapshots); rates and fractions cover the current segment, inference
// figures the window since the previous report.
type UpdateReport struct {
	// Update is the run-wide number of updates done, this one included.
	Update int64 `json:"update"`
	// EnvSteps is the run-wide number of environment steps taken so far.
	EnvSteps int64 `json:"env_steps"`
	// PolicyVersion is the version the update published.
	PolicyVersion int64 `json:"policy_version"`
	// Stats are the learner's losses and diagnostics of the update,
	// including the policy-lag measurements: ClipFrac, LowWeightFrac and
	// ESS averaged over the minibatch steps, and Lag, the importance ratios
	// of the whole batch under the parameters before the update.
	Stats kernels.UpdateStats `json:"stats"`
	// BatchSteps is the number of steps the update consumed; LR its
	// learning rate (from the learner's schedule).
	BatchSteps int     `json:"batch_steps"`
	LR         float64 `json:"lr"`
	// Episodes lists the episodes finished since the previous report,
	// ordered by (EnvSteps, Env).
	Episodes []Episode `json:"episodes"`
	// MeanStaleness and StalenessHist describe the batch: StalenessHist[k]
	// counts its steps acted by a policy k versions older than the one
	// being updated.
	MeanStaleness float64 `json:"mean_staleness"`
	StalenessHist []int   `json:"staleness_hist"`
	// Wall is the time since the segment started; StepsPerS the segment's
	// environment steps per second so far.
	Wall      jsondur.Duration `json:"wall"`
	StepsPerS float64          `json:"steps_per_s"`
	// MeanBatch is the mean inference batch size and P50WaitMs/P99WaitMs
	// the inference queue-wait quantiles since the previous report.
	MeanBatch float64 `json:"mean_batch"`
	P50WaitMs float64 `json:"p50_wait_ms"`
	P99WaitMs float64 `json:"p99_wait_ms"`
	// TrainerBusy is the fraction of the segment's wall time the trainer
	// spent computing (not waiting for data); RolloutIdle the fraction of
	// environment time spent outside simulator steps (waiting for actions,
	// or in sync mode for the round and the update).
	TrainerBusy float64 `json:"trainer_busy"`
	RolloutIdle float64 `json:"rollout_idle"`
	// RealSteps and ImaginedSteps split BatchSteps into simulator steps and
	// world-model steps (0 without a world model).
	RealSteps     int `json:"real_steps"`
	ImaginedSteps int `json:"imagined_steps"`
	// Horizon is the imagination horizon H in use (0 without a world
	// model). WMValLoss is the observation model's loss (normalised-delta
	// MSE; see kernels.ObsModel) on this update's real transitions, taken
	// before the model trained on them; NaN without a world model or
	// before it is ready. It is the horizon schedule's input.
	Horizon   int     `json:"horizon"`
	WMValLoss float64 `json:"-"`
}

// SegmentStats summarises one Run. Updates, EnvSteps and Episodes are
// run-wide totals after the segment; everything else covers the segment.
type SegmentStats struct {
	// Updates, EnvSteps and Episodes are run-wide totals.
	Updates  int64 `json:"updates"`
	EnvSteps int64 `json:"env_steps"`
	Episodes int64 `json:"episodes"`
	// SegmentUpdates and SegmentEnvSteps are what this segment added.
	SegmentUpdates  int64 `json:"segment_updates"`
	SegmentEnvSteps int64 `json:"segment_env_steps"`
	// Wall is the segment's duration and StepsPerS its environment steps
	// per second.
	Wall      jsondur.Duration `json:"wall"`
	StepsPerS float64          `json:"steps_per_s"`
	// CeilingStepsPerS is the environment-bound throughput ceiling, the sum
	// over environments of 1/(mean simulator step time + mean inference
	// compute per request), all measured in this segment: what the
	// environments would deliver if they never waited for anything else.
	// CeilingFraction = StepsPerS / CeilingStepsPerS.
	CeilingStepsPerS float64 `json:"ceiling_steps_per_s"`
	CeilingFraction  float64 `json:"ceiling_fraction"`
	// BatchSizeHist[k] counts inference batches of k requests; MeanBatch is
	// their mean size and MeanWaitingAtBatch the mean number of requests
	// queued when a batch was formed (MeanBatch/MeanWaitingAtBatch is the
	// share of waiting environments each batch served).
	BatchSizeHist      []int   `json:"batch_size_hist"`
	MeanBatch          float64 `json:"mean_batch"`
	MeanWaitingAtBatch float64 `json:"mean_waiting_at_batch"`
	// P50WaitMs and P99WaitMs are inference queue-wait quantiles (2.2%
	// resolution); InferencePerRequestMs the mean compute per request.
	P50WaitMs             float64 `json:"p50_wait_ms"`
	P99WaitMs             float64 `json:"p99_wait_ms"`
	InferencePerRequestMs float64 `json:"inference_per_request_ms"`
	// TrainerBusy and RolloutIdle are as in UpdateReport, for the segment.
	TrainerBusy float64 `json:"trainer_busy"`
	RolloutIdle float64 `json:"rollout_idle"`
	// StalenessHist counts the segment's trained steps by staleness.
	StalenessHist []int `json:"staleness_hist"`
	// Dropped is the number of steps the replay buffer discarded in this
	// segment (DroppedStale for staleness, the rest for capacity).
	Dropped      int64 `json:"dropped"`
	DroppedStale int64 `json:"dropped_stale"`
	// BudgetReached says the step budget (Config.MaxEnvSteps) is spent
	// and everything collected has been trained on: further Runs do
	// nothing. EnvSteps then equals the budget exactly.
	BudgetReached bool `json:"budget_reached"`
	// Horizon is the imagination horizon this segment used, ImaginedSteps
	// the run-wide imagined steps trained on (both 0 without a world
	// model). WMValLoss is the mean over the segment's updates of
	// UpdateReport.WMValLoss, over WMValUpdates finite values (0 when
	// there are none): the validation loss the horizon schedule reads.
	Horizon       int     `json:"horizon,omitempty"`
	ImaginedSteps int64   `json:"imagined_steps,omitempty"`
	WMValLoss     float64 `json:"wm_val_loss,omitempty"`
	WMValUpdates  int     `json:"wm_val_updates,omitempty"`
}

// segment holds the running measurements of one Run.
type segment struct {
	start         time.Time
	startSteps    int64
	startUpdates  int64
	startEpisodes int64
	startDrops    ReplayDrops
	busy          time.Duration
	stale         []int
	wmValSum      float64
	wmValN        int
}

func addHist(dst *[]int, src []int) {
	for k, c := range src {
		for k >= len(*dst) {
			*dst = append(*dst, 0)
		}
		(*dst)[k] += c
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
