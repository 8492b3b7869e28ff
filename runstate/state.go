package runstate

import (
	"math"
	"time"

	"github.com/accerl/accerl/specs"
)

// Counters are a run's progress counters. They are the one place a run's numbers live:
// a segment reports them ([SegmentResult]), the Run workflow keeps them ([State]), and the
// progress query, the run's result, its summary.json and the CLI's views embed them. Adding a
// counter to a run is adding a field here (and setting it where it is measured).
//
// Every field is cumulative over the whole run, except the evaluation, which is the latest
// one.
type Counters struct {
	// Segment is the number of segments completed.
	Segment int32 `json:"segment"`
	// EnvSteps counts the real (simulator) steps of training; offline and evaluation
	// steps are not included.
	EnvSteps int64 `json:"env_steps"`
	// Updates counts trainer updates; Episodes finished training episodes.
	Updates  int64 `json:"updates"`
	Episodes int64 `json:"episodes"`
	// RecentReturn is the mean return of the run's last 100 training episodes (0 before
	// the first one).
	RecentReturn float64 `json:"recent_return"`
	// WallS is the run's accumulated training wall time in seconds.
	WallS float64 `json:"wall_s"`
	// OfflineSteps are the env steps spent on the world model's offline dataset before
	// training; ImaginedSteps the imagined steps trained on. Both are 0 without a world model.
	OfflineSteps  int64 `json:"offline_steps,omitempty"`
	ImaginedSteps int64 `json:"imagined_steps,omitempty"`
	// EvalReturn is the latest evaluation's mean return; HasEval is false until a segment
	// has evaluated (the spec's evaluation block).
	EvalReturn float64 `json:"eval_return,omitempty"`
	HasEval    bool    `json:"has_eval,omitempty"`
	// EvalSuccess is the latest evaluation's success rate, when HasEvalSuccess (tasks with a
	// notion of success, such as the tabletop suites).
	EvalSuccess    float64 `json:"eval_success,omitempty"`
	HasEvalSuccess bool    `json:"has_eval_success,omitempty"`
	// EvalSteps counts the env steps of all evaluation episodes so far; they train nothing
	// and are not EnvSteps.
	EvalSteps int64 `json:"eval_steps,omitempty"`
	// DemoSteps are the expert's env steps recorded as demonstrations for the policy's
	// behaviour-cloning warm start (the pretrain block); 0 without one.
	DemoSteps int64 `json:"demo_steps,omitempty"`
	// PretrainSuccess is the behaviour-cloned policy's success rate before RL, measured with
	// the evaluation block's protocol, when HasPretrainSuccess.
	PretrainSuccess    float64 `json:"pretrain_success,omitempty"`
	HasPretrainSuccess bool    `json:"has_pretrain_success,omitempty"`
}

// StepsPerS is the run's env steps per second of training wall time (0 before any).
func (c Counters) StepsPerS() float64 {
	if c.WallS <= 0 || math.IsNaN(c.WallS) {
		return 0
	}
	return float64(c.EnvSteps) / c.WallS
}

// State is what a run remembers between segments and across continue-as-new. It is plain
// JSON data; its encoding is that of the Run workflow's state in recorded histories, so
// fields may be added but never renamed.
type State struct {
	Counters
	// BestReturn is the best RecentReturn after any segment.
	BestReturn float64 `json:"best_return"`
	// Checkpoint is the latest segment's checkpoint directory; ParamsSHA256 the checksum of
	// its policy parameters.
	Checkpoint   string `json:"checkpoint"`
	ParamsSHA256 string `json:"params_sha256"`
	// BudgetReached is set by the segment that collected and trained the last budgeted step.
	BudgetReached bool `json:"budget_reached"`
	// Paused and Stopped follow the pause/resume/stop signals.
	Paused  bool `json:"paused"`
	Stopped bool `json:"stopped"`
	// Started is the workflow time the run began, for the wall-time budget.
	Started time.Time `json:"started"`
	// Warnings collects problems that did not stop the run (a skipped corrupt checkpoint).
	Warnings []string `json:"warnings,omitempty"`
	// Pretrained is set once the offline dataset is collected and the world model
	// pretrained; WorldModelState is the pretrained checkpoint the first segment starts from.
	Pretrained      bool   `json:"pretrained,omitempty"`
	WorldModelState string `json:"world_model_state,omitempty"`
	// Horizon is the imagination-horizon schedule's state: H for the next segment, the best
	// validation loss seen.
	Horizon HorizonState `json:"horizon"`
	// PolicyPretrained is set once the policy's behaviour-cloning warm start is done;
	// PolicyState is its checkpoint, which the first segment starts its policy from.
	PolicyPretrained bool   `json:"policy_pretrained,omitempty"`
	PolicyState      string `json:"policy_state,omitempty"`
}

// Plan is the part of a segment's input the state machine decides.
type Plan struct {
	// Segment numbers segments from 1. Segment k resumes from the checkpoint of segment k-1.
	Segment int32 `json:"segment"`
	// Updates is how many trainer updates this segment runs.
	Updates int `json:"updates"`
	// TotalUpdates is the run's planned number of updates (for learning-rate annealing).
	TotalUpdates int `json:"total_updates"`
	// StartWallS is the run's accumulated training wall time before this segment.
	StartWallS float64 `json:"start_wall_s"`
	// Horizon is the imagination horizon H this segment uses when the world model is on;
	// 0 means world_model.horizon.start.
	Horizon int `json:"horizon,omitempty"`
	// WorldModelState is the checkpoint directory of the pretrained world model. A run's
	// first segment starts its world model from it; later segments carry the world model in
	// their own checkpoints. Empty: the world model starts untrained and learns online only.
	WorldModelState string `json:"world_model_state,omitempty"`
	// PolicyState is the checkpoint directory of the behaviour-cloned policy. A run's first
	// segment starts its policy from it; later segments resume from their predecessors.
	PolicyState string `json:"policy_state,omitempty"`
}

// SegmentResult summarises a finished segment: the run's counters after it and what the
// state machine needs to plan the next one.
type SegmentResult struct {
	Counters
	// Checkpoint is the directory the segment wrote; ParamsSHA256 its parameters' checksum.
	Checkpoint   string `json:"checkpoint"`
	ParamsSHA256 string `json:"params_sha256"`
	// SegmentStepsPerS is this segment's own env steps per second.
	SegmentStepsPerS float64 `json:"steps_per_s"`
	// BudgetReached is true once the run's env-step budget has been collected and trained on.
	BudgetReached bool `json:"budget_reached"`
	// Horizon is the imagination horizon the segment used (0 without a world model).
	Horizon int `json:"horizon,omitempty"`
	// WMValLoss is the world model's validation loss on recent real data: the mean over the
	// segment's updates of the observation model's loss on each update's new real transitions,
	// measured before it trained on them. HasWMValLoss is false when there was none (no world
	// model, or not ready yet); the horizon schedule then leaves H as it is.
	WMValLoss    float64 `json:"wm_val_loss,omitempty"`
	HasWMValLoss bool    `json:"has_wm_val_loss,omitempty"`
	// SegmentEvalSteps are the env steps of this segment's evaluation episodes (its
	// Counters.EvalSteps is left to the state machine, which adds these up).
	SegmentEvalSteps int64 `json:"segment_eval_steps,omitempty"`
	// Warnings lists problems that did not stop the segment, such as a corrupt checkpoint
	// that was skipped in favour of an older one.
	Warnings []string `json:"warnings,omitempty"`
}

// Pretrained is what world-model pretraining reports to the state machine.
type Pretrained struct {
	// OfflineSteps is the offline dataset's number of transitions.
	OfflineSteps int64
	// WorldModelState is the pretrained checkpoint directory.
	WorldModelState string
	// ValLoss is the observation model's validation loss, when HasValLoss.
	ValLoss    float64
	HasValLoss bool
}

// PolicyPretrained is what the policy's behaviour-cloning warm start reports to the state
// machine.
type PolicyPretrained struct {
	// DemoSteps is the demonstrations' number of expert steps.
	DemoSteps int64
	// PolicyState is the warm-start policy's checkpoint directory.
	PolicyState string
	// Success is the cloned policy's success rate, when HasSuccess.
	Success    float64
	HasSuccess bool
}

// Machine is a run's state machine: pure functions of the resolved config and a [State].
// The Run workflow drives it durably; benches drive it in-process. It does no I/O.
type Machine struct {
	cfg       specs.Config
	perUpdate int64
	sched     HorizonSchedule
}

// New returns the state machine of a run with the resolved config cfg.
func New(cfg specs.Config) Machine {
	h := cfg.WorldModel.Horizon
	return Machine{
		cfg:       cfg,
		perUpdate: cfg.StepsPerUpdate(),
		sched:     HorizonSchedule{Start: h.Start, End: h.End, LossHigh: h.LossHigh, LossLow: h.LossLow},
	}
}

// Start prepares st for its first segment (or a continuation): it records the start time
// of a new run and the horizon schedule's initial state.
func (m Machine) Start(st State, now time.Time) State {
	if st.Started.IsZero() {
		st.Started = now
	}
	if m.cfg.WorldModel.Enabled && st.Horizon.H == 0 {
		st.Horizon = m.sched.Init()
	}
	return st
}

// NeedsPretrain reports whether the run must collect its offline dataset and pretrain the
// world model before its first segment.
func (m Machine) NeedsPretrain(st State) bool {
	w := m.cfg.WorldModel
	return w.Enabled && w.OfflineTrajectories > 0 && !st.Pretrained
}

// ApplyPretrain folds pretraining's outcome into st; the pretraining validation loss feeds
// the horizon schedule like a segment's.
func (m Machine) ApplyPretrain(st State, p Pretrained) State {
	st.Pretrained = true
	st.WorldModelState = p.WorldModelState
	st.OfflineSteps = p.OfflineSteps
	if p.HasValLoss {
		st.Horizon = m.sched.Next(st.Horizon, p.ValLoss)
	}
	return st
}

// NeedsPolicyPretrain reports whether the run must clone its policy from demonstrations
// before its first segment.
func (m Machine) NeedsPolicyPretrain(st State) bool {
	return m.cfg.Pretrain.Enabled && !st.PolicyPretrained
}

// ApplyPolicyPretrain folds the behaviour-cloning warm start's outcome into st.
func (m Machine) ApplyPolicyPretrain(st State, p PolicyPretrained) State {
	st.PolicyPretrained = true
	st.PolicyState = p.PolicyState
	st.DemoSteps = p.DemoSteps
	st.PretrainSuccess, st.HasPretrainSuccess = p.Success, p.HasSuccess
	return st
}

// Done reports whether the run has nothing left to train at time now: its env-step budget
// is spent, it was stopped, or its wall-time budget is over.
func (m Machine) Done(st State, now time.Time) bool {
	if st.BudgetReached || st.Stopped {
		return true
	}
	return m.cfg.Budget.WallTime > 0 && now.Sub(st.Started) >= m.cfg.Budget.WallTime.Std()
}

// Next plans the segment after st.
func (m Machine) Next(st State) Plan {
	return Plan{
		Segment:         st.Segment + 1,
		Updates:         SegmentUpdates(m.cfg, st.EnvSteps, m.perUpdate),
		TotalUpdates:    int(m.cfg.TotalUpdates()),
		StartWallS:      st.WallS,
		Horizon:         st.Horizon.H,
		WorldModelState: st.WorldModelState,
		PolicyState:     st.PolicyState,
	}
}

// Apply folds a finished segment's result into st. The result's counters replace the
// run's, except those a segment does not know: the offline steps, the evaluation steps (the
// segment's are added), the demonstrations and the cloned policy's success, and the latest
// evaluation when this segment did not evaluate. The world model's validation loss moves the
// horizon.
func (m Machine) Apply(st State, res SegmentResult) State {
	c := res.Counters
	c.OfflineSteps = st.OfflineSteps
	c.DemoSteps = st.DemoSteps
	c.PretrainSuccess, c.HasPretrainSuccess = st.PretrainSuccess, st.HasPretrainSuccess
	c.EvalSteps = st.EvalSteps + res.SegmentEvalSteps
	if !c.HasEval {
		c.EvalReturn, c.HasEval = st.EvalReturn, st.HasEval
		c.EvalSuccess, c.HasEvalSuccess = st.EvalSuccess, st.HasEvalSuccess
	}
	st.Counters = c
	if c.RecentReturn > st.BestReturn || c.Segment == 1 {
		st.BestReturn = c.RecentReturn
	}
	st.Checkpoint = res.Checkpoint
	st.ParamsSHA256 = res.ParamsSHA256
	st.BudgetReached = res.BudgetReached
	st.Warnings = append(st.Warnings, res.Warnings...)
	if m.cfg.WorldModel.Enabled && res.HasWMValLoss {
		st.Horizon = m.sched.Next(st.Horizon, res.WMValLoss)
	}
	return st
}

// SegmentUpdates is the number of updates the next segment runs: the spec's checkpoint
// interval, or fewer when the remaining budget needs fewer (at least one).
func SegmentUpdates(cfg specs.Config, envSteps, perUpdate int64) int {
	remaining := ceilDiv(cfg.Budget.EnvSteps-envSteps, perUpdate)
	every := int64(max(1, cfg.Checkpoint.Every))
	return int(max(1, min(every, remaining)))
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
