package runstore

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"time"
)

// File names inside an experiment directory and a run directory.
const (
	ExperimentFile = "experiment.json"
	RunFile        = "manifest.json"
	SummaryFile    = "summary.json"
)

// Run statuses recorded in RunSummary.Status.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusStopped   = "stopped"
)

// RunDir returns the directory of one run, <expDir>/<arm>/seed-<seed>.
func RunDir(expDir, arm string, seed uint64) string {
	return filepath.Join(expDir, arm, "seed-"+strconv.FormatUint(seed, 10))
}

// ExperimentManifest describes a whole experiment. The engine writes it to
// <expDir>/experiment.json when the experiment starts.
type ExperimentManifest struct {
	Name     string   `json:"name"`
	SpecHash string   `json:"spec_hash"`
	Baseline string   `json:"baseline"` // arm the speedups are measured against
	Arms     []string `json:"arms"`     // in spec order; figures keep this order and colours
	Seeds    []uint64 `json:"seeds"`
	// Target is the episode return that counts as solving the task, for
	// the steps-to-target figure and the optimality gap; nil for none.
	// The renderer's reports.Options.Target overrides it.
	Target *float64 `json:"target,omitempty"`
	// RandomScore is the return that normalises to 0 in the optimality
	// gap (rliable's "random" score); nil means 0.
	RandomScore *float64        `json:"random_score,omitempty"`
	Spec        json.RawMessage `json:"spec,omitempty"` // the resolved spec
	Created     time.Time       `json:"created"`
}

// RunManifest describes one run (arm × seed) and where it ran. The engine
// writes it to <runDir>/manifest.json when the run starts.
type RunManifest struct {
	Experiment string          `json:"experiment"`
	Arm        string          `json:"arm"`
	Seed       uint64          `json:"seed"`
	SpecHash   string          `json:"spec_hash"`
	Config     json.RawMessage `json:"config,omitempty"` // the arm's resolved configuration
	Build      BuildInfo       `json:"build"`
	Hardware   Hardware        `json:"hardware"`
	Created    time.Time       `json:"created"`
}

// RunSummary is the latest state of a run. The engine overwrites
// <runDir>/summary.json at the end of every segment. Float fields that are
// NaN (no episode finished yet) are stored as JSON null.
type RunSummary struct {
	Status       string    `json:"status"` // StatusRunning, StatusCompleted, StatusFailed or StatusStopped
	EnvSteps     int64     `json:"env_steps"`
	Updates      int64     `json:"updates"`
	Episodes     int64     `json:"episodes"`
	FinalReturn  float64   `json:"final_return"` // mean return of the last 100 episodes
	StepsPerS    float64   `json:"steps_per_s"`  // environment steps per wall-clock second over the run
	WallS        float64   `json:"wall_s"`
	ParamsSHA256 string    `json:"params_sha256,omitempty"` // checksum of the latest parameters
	Error        string    `json:"error,omitempty"`         // why the run failed
	Segments     int32     `json:"segments"`                // segments completed
	Updated      time.Time `json:"updated"`
	// EvalReturn is the mean return of the latest segment's evaluation episodes, when
	// HasEval (the spec's evaluation block).
	EvalReturn float64 `json:"eval_return,omitempty"`
	HasEval    bool    `json:"has_eval,omitempty"`
	// EvalSuccess is the success rate of the latest segment's evaluation episodes, when
	// HasEvalSuccess (tasks with a notion of success, such as the tabletop suites): the
	// run's final success once it has ended.
	EvalSuccess    float64 `json:"eval_success,omitempty"`
	HasEvalSuccess bool    `json:"has_eval_success,omitempty"`
	// EvalTasks splits that evaluation by task (the tabletop suites, whose evaluation
	// plays the tasks in a fixed order); EvalSampledTasks the same episodes played
	// sampling the actions (evaluation.sampled). Absent for other environments.
	EvalTasks        []TaskSuccess `json:"eval_tasks,omitempty"`
	EvalSampledTasks []TaskSuccess `json:"eval_sampled_tasks,omitempty"`
	// Warnings lists every problem the run met that did not stop it, such as a corrupt
	// checkpoint skipped in favour of an older one, in the order they happened; they stay
	// here after the run ends.
	Warnings []string `json:"warnings,omitempty"`
}

// MarshalJSON writes NaN and infinite floats as null, which plain
// encoding/json refuses to encode.
func (s RunSummary) MarshalJSON() ([]byte, error) {
	type plain RunSummary // drops the methods, so no recursion
	return json.Marshal(struct {
		plain
		FinalReturn JSONFloat `json:"final_return"`
		StepsPerS   JSONFloat `json:"steps_per_s"`
		WallS       JSONFloat `json:"wall_s"`
	}{plain(s), JSONFloat(s.FinalReturn), JSONFloat(s.StepsPerS), JSONFloat(s.WallS)})
}

// UnmarshalJSON reads null floats back as NaN.
func (s *RunSummary) UnmarshalJSON(data []byte) error {
	type plain RunSummary
	aux := struct {
		*plain
		FinalReturn JSONFloat `json:"final_return"`
		StepsPerS   JSONFloat `json:"steps_per_s"`
		WallS       JSONFloat `json:"wall_s"`
	}{plain: (*plain)(s), FinalReturn: JSONFloat(math.NaN()), StepsPerS: JSONFloat(math.NaN()), WallS: JSONFloat(math.NaN())}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("decode run summary: %w", err)
	}
	s.FinalReturn, s.StepsPerS, s.WallS = float64(aux.FinalReturn), float64(aux.StepsPerS), float64(aux.WallS)
	return nil
}

// JSONFloat is a float64 that encodes NaN and ±Inf as JSON null and decodes
// null as NaN; results.json uses it for every number that may be unknown.
// Convert with float64(x).
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *JSONFloat) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*f = JSONFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*f = JSONFloat(v)
	return nil
}

// PretrainFile is the name of a run's behaviour-cloning summary (the spec's pretrain block).
const PretrainFile = "pretrain.json"

// PixelWorldModelFile and PixelWorldModelStrip are, relative to a run's directory, the
// scores of its pretrained pixel world model (a world_model pixels block; written by
// activities' PretrainWorldModel) and its real-vs-imagined PNG strip.
const (
	PixelWorldModelFile  = "worldmodel/pixel-wm.json"
	PixelWorldModelStrip = "worldmodel/pixel-wm-strip.png"
)

// PretrainSummary is a run's behaviour-cloning warm start, as its PretrainPolicy activity
// measured it: the demonstrations, the loss of every epoch and the cloned policy's success
// rate before RL.
type PretrainSummary struct {
	Demos     int   `json:"demos"`
	DemoSteps int64 `json:"demo_steps"`
	Samples   int   `json:"samples"`
	// EpochLoss is the mean squared error per action value of every epoch.
	EpochLoss []float64 `json:"epoch_loss"`
	// Success is the success rate over EvalEpisodes evaluation episodes (the spec's
	// evaluation protocol), when HasSuccess.
	Success      float64 `json:"success"`
	HasSuccess   bool    `json:"has_success"`
	EvalEpisodes int     `json:"eval_episodes"`
	// SampledSuccess is the success rate of the same episodes played sampling the
	// actions (evaluation.sampled beside greedy), when HasSampledSuccess.
	SampledSuccess    float64 `json:"sampled_success,omitempty"`
	HasSampledSuccess bool    `json:"has_sampled_success,omitempty"`
	// SampledTemperature is the VLA's sampling temperature SampledSuccess was played at
	// (policy.vla.temperature, 1 when unset; 0 for other policies): a cloned policy reused
	// under another temperature plays its sampled evaluation again.
	SampledTemperature float64 `json:"sampled_temperature,omitempty"`
	WallS              float64 `json:"wall_s"`
	// Tasks and SampledTasks split Success and SampledSuccess by task (tabletop suites;
	// absent for others and for clones evaluated before the split was recorded).
	Tasks        []TaskSuccess `json:"tasks,omitempty"`
	SampledTasks []TaskSuccess `json:"sampled_tasks,omitempty"`
}

// TaskSuccess is one task's share of an evaluation: the episodes that played it and those
// that reached its goal.
type TaskSuccess struct {
	Task        int    `json:"task"`        // the task's index in its suite (0..9)
	Instruction string `json:"instruction"` // its language instruction
	Episodes    int    `json:"episodes"`
	Successes   int    `json:"successes"`
}

// Rate is Successes / Episodes (0 for no episodes).
func (t TaskSuccess) Rate() float64 {
	if t.Episodes == 0 {
		return 0
	}
	return float64(t.Successes) / float64(t.Episodes)
}
