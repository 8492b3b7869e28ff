package activities

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// The engine's view of a tabletop suite: the state vector extended by the fingertip-relative
// object offsets (bc.Features, the observation the behaviour-cloned policy reads), optionally
// in action chunks (policy.action_chunk), and for evaluation the suite's fixed initial states
// in a fixed order (LIBERO's protocol) instead of random resets.

// featureEnv presents a tabletop simulator's observation as bc.Features.
type featureEnv struct{ engine.Env }

func (e *featureEnv) ObsDim() int { return bc.FeatureDim }

func (e *featureEnv) Reset(rng *rand.Rand) []float64 {
	return bc.Features(e.Env.Reset(rng), nil)
}

// ResetEpisode implements engine.EpisodeResetter for the environment beneath.
func (e *featureEnv) ResetEpisode(n int, rng *rand.Rand) []float64 {
	return bc.Features(engine.ResetEpisode(e.Env, n, rng), nil)
}

func (e *featureEnv) Step(action []float64) engine.StepResult {
	r := e.Env.Step(action)
	r.Obs = bc.Features(r.Obs, nil)
	return r
}

// fixedInitEnv is the evaluation environment of a tabletop arm: its n-th Reset (from 0)
// starts task tasks[n mod T] from fixed initial state (n div T) mod tabletop.InitStates, so
// an evaluation of E episodes covers the tasks evenly from the same states in every segment,
// arm and run, and 50·T episodes are exactly the LIBERO protocol (every fixed initial state
// of every task, one trial each). The engine gives each evaluation a fresh environment, so
// every evaluation starts at n = 0.
type fixedInitEnv struct {
	engine.Env
	to    fixedStarts // the simulator beneath, in process or remote
	tasks []int
	n     int
}

// fixedStarts is a simulator that starts an episode from a fixed initial state of a task.
type fixedStarts interface {
	ResetTo(task, init int) []float64
}

func (e *fixedInitEnv) Reset(rng *rand.Rand) []float64 { return e.ResetEpisode(e.n, rng) }

// ResetEpisode implements engine.EpisodeResetter: episode n is task tasks[n mod T] from
// fixed initial state (n div T) mod tabletop.InitStates, however many episodes this
// environment played before (an evaluation that plays its episodes on several environments
// side by side numbers them itself); the next Reset is episode n+1.
func (e *fixedInitEnv) ResetEpisode(n int, _ *rand.Rand) []float64 {
	j, i := fixedStart(len(e.tasks), n)
	e.n = n + 1
	return e.to.ResetTo(e.tasks[j], i)
}

// fixedStart is where evaluation episode n of an arm with T tasks starts: the arm's task
// j = n mod T (an index into its task list) from fixed initial state (n div T) mod
// tabletop.InitStates.
func fixedStart(T, n int) (j, init int) {
	return n % T, (n / T) % tabletop.InitStates
}

// taskSuccess splits an evaluation of a tabletop arm by task, in the order of the arm's
// tasks: its evaluation played episode n on the task fixedStart gives. It returns nil for
// other environments and evaluations without a notion of success.
func taskSuccess(env specs.Env, r engine.EvalResult) []runstore.TaskSuccess {
	if env.Kind != specs.EnvTabletop || !r.HasSuccess || len(env.Tasks) == 0 {
		return nil
	}
	out := make([]runstore.TaskSuccess, len(env.Tasks))
	for j, t := range env.Tasks {
		out[j] = runstore.TaskSuccess{Task: t, Instruction: tabletop.Instruction(env.Suite, t)}
	}
	for n, ok := range r.Succeeded {
		j, _ := fixedStart(len(env.Tasks), n)
		out[j].Episodes++
		if ok {
			out[j].Successes++
		}
	}
	return out
}

// chunkEnv runs action chunks: an action is k consecutive actions of the inner environment
// (k·d values), of which the first execute run open loop; the step's reward is their sum,
// and the step ends early when the episode does (the rest of the chunk is dropped, as a
// robot's controller drops a chunk when the episode is reset).
type chunkEnv struct {
	engine.Env
	k, execute int
}

func (e chunkEnv) ActionSpace() engine.ActionSpace {
	in := e.Env.ActionSpace()
	out := engine.ActionSpace{}
	for range e.k {
		out.Low = append(out.Low, in.Low...)
		out.High = append(out.High, in.High...)
	}
	return out
}

// ResetEpisode implements engine.EpisodeResetter for the environment beneath.
func (e chunkEnv) ResetEpisode(n int, rng *rand.Rand) []float64 {
	return engine.ResetEpisode(e.Env, n, rng)
}

func (e chunkEnv) Step(action []float64) engine.StepResult {
	d := len(action) / e.k
	var res engine.StepResult
	sum := 0.0
	for i := range e.execute {
		res = e.Env.Step(action[i*d : (i+1)*d])
		sum += res.Reward
		if res.Terminated || res.Truncated {
			break
		}
	}
	res.Reward = sum
	return res
}

// framedEnv gives a tabletop arm with pixels its frames: the configured cameras' RGB
// images of the current state (H×W×3 bytes each, cameras in the spec's order; rendered
// when asked, as tabletop renders lazily, once per state; a remote world sends them with
// every step), followed by the language instruction as InstructionTokens uint16
// little-endian word ids (tabletop.Tokenize: <bos> … <eos>, padded with tabletop.TokenPad;
// tabletop.Vocabulary() turns them back into words). A step's frame is thus everything a
// vision-language policy reads besides the proprioception, which is the first 8 values of
// the state.
type framedEnv struct {
	engine.Env
	cams frameSource
}

var _ engine.FrameEnv = framedEnv{}

// frameSource is where the images and the instruction of a framedEnv come from: the
// simulator beneath the wrappers (in process, or a remote world).
type frameSource interface {
	FrameBytes() int         // of the images
	Frame(dst []byte) []byte // appends the images
	Instruction() string
}

// InstructionTokens is the room a frame gives the instruction: the longest instruction of
// any suite, <bos> and <eos> included.
var InstructionTokens = func() int {
	n := 0
	for _, s := range tabletop.Suites() {
		for t := range tabletop.TaskCount(s) {
			n = max(n, len(tabletop.Tokenize(tabletop.Instruction(s, t))))
		}
	}
	return n
}()

// ResetEpisode implements engine.EpisodeResetter for the environment beneath.
func (e framedEnv) ResetEpisode(n int, rng *rand.Rand) []float64 {
	return engine.ResetEpisode(e.Env, n, rng)
}

func (e framedEnv) FrameBytes() int { return e.cams.FrameBytes() + 2*InstructionTokens }

func (e framedEnv) Frame(dst []byte) []byte {
	dst = e.cams.Frame(dst)
	ids := tabletop.Tokenize(e.cams.Instruction())
	for i := range InstructionTokens {
		id := tabletop.TokenPad
		if i < len(ids) {
			id = ids[i]
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(id))
	}
	return dst
}

// tabletopFrames is an in-process suite's images.
type tabletopFrames struct{ *tabletop.Env }

func (f tabletopFrames) FrameBytes() int { return f.ImageBytesPerStep() }

func (f tabletopFrames) Frame(dst []byte) []byte {
	for _, im := range f.Images() {
		dst = append(dst, im...)
	}
	return dst
}
