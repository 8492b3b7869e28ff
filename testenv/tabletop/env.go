package tabletop

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/testenv"
)

// Observation layout (the same in every suite):
//
//	[0:3]   fingertip position (m)
//	[3:6]   gripper orientation, axis-angle (rad), axis in the +x
//	        hemisphere so that it is continuous (see Proprio)
//	[6:8]   finger positions (+w/2, −w/2) (m)
//	[8:32]  ObjectSlots × (x, y, z) entity centres: the task's object and
//	        destination first (for two-part goals, each part's in turn), then
//	        the other entities of the scene; zeros past the last
//	[32:36] joints: top, middle, bottom drawer opening (m), stove knob (rad);
//	        zeros where the scene has no cabinet or stove
//	[36:46] one-hot task index within the suite
const (
	ProprioDim  = 8
	ObjectSlots = 8
	JointDim    = numJoints
	TaskDim     = TasksPerSuite
	ObsDim      = ProprioDim + 3*ObjectSlots + JointDim + TaskDim
	// ActionDim is the action length: dx, dy, dz, droll, dpitch, dyaw,
	// gripper.
	ActionDim = 7
	// historyLen is the window of outcomes per task that weights task
	// sampling.
	historyLen = 100
)

// Env is a tabletop manipulation environment: one suite, a set of its
// tasks, and optional cameras. It implements testenv.Env and is not safe
// for concurrent use.
type Env struct {
	cfg   Config
	suite *suiteDef
	w     world
	task  int
	slots []int

	steps    int
	started  bool
	ended    bool // the episode terminated or was truncated (outcome recorded)
	success  bool
	episodes uint64
	history  [TasksPerSuite]outcomes

	cams     []*camera
	images   [][]uint8
	rendered bool // images match the current state
	raster   *raster
}

var _ testenv.Env = (*Env)(nil)

// outcomes is a ring of the last historyLen episode outcomes of a task.
type outcomes struct {
	failed  [historyLen]bool
	n, next int
}

func (o *outcomes) add(failed bool) {
	o.failed[o.next] = failed
	o.next = (o.next + 1) % historyLen
	o.n = min(o.n+1, historyLen)
}

func (o *outcomes) failures() int {
	n := 0
	for i := range o.n {
		if o.failed[i] {
			n++
		}
	}
	return n
}

// New builds an environment; an invalid cfg is an error (see
// ValidateConfig).
func New(cfg Config) (*Env, error) {
	if err := ValidateConfig(cfg); err != nil {
		return nil, fmt.Errorf("tabletop: new environment: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &Env{cfg: cfg, suite: findSuite(cfg.Suite), task: cfg.Tasks[0]}
	for _, name := range cfg.Cameras {
		e.cams = append(e.cams, newCamera(name))
		e.images = append(e.images, make([]uint8, cfg.ImageSize*cfg.ImageSize*3))
	}
	e.raster = newRaster(cfg.ImageSize)
	e.loadTask(e.task, rand.New(rand.NewPCG(0, 0)))
	return e, nil
}

// Config returns the environment's configuration with defaults filled in.
func (e *Env) Config() Config {
	c := e.cfg
	c.Tasks = append([]int(nil), c.Tasks...)
	c.Cameras = append([]string(nil), c.Cameras...)
	return c
}

// ObsDim returns ObsDim (46).
func (e *Env) ObsDim() int { return ObsDim }

// ActionSpace returns the 7-D continuous space [−1, 1]⁷.
func (e *Env) ActionSpace() testenv.ActionSpace {
	lo, hi := make([]float64, ActionDim), make([]float64, ActionDim)
	for i := range lo {
		lo[i], hi[i] = -1, 1
	}
	return testenv.ActionSpace{Low: lo, High: hi}
}

// Reset samples a task among Config.Tasks with weight (its failures in its
// last 100 episodes) + 1, lays its scene out with positions jittered from
// rng, and returns the first observation.
func (e *Env) Reset(rng *rand.Rand) []float64 {
	total := 0
	for _, t := range e.cfg.Tasks {
		total += e.history[t].failures() + 1
	}
	pick := rng.IntN(total)
	task := e.cfg.Tasks[len(e.cfg.Tasks)-1]
	for _, t := range e.cfg.Tasks {
		pick -= e.history[t].failures() + 1
		if pick < 0 {
			task = t
			break
		}
	}
	e.loadTask(task, rng)
	return e.afterReset()
}

// ResetTo starts task taskIdx from its fixed initial state initIdx
// (0..InitStates−1), the evaluation protocol's starting points, regenerated
// identically in every run. A task outside Config.Tasks is allowed; an
// index out of range panics. The episode's outcome enters the task's
// history (which weights Reset's sampling) like any other.
func (e *Env) ResetTo(taskIdx, initIdx int) []float64 {
	if taskIdx < 0 || taskIdx >= TasksPerSuite || initIdx < 0 || initIdx >= InitStates {
		panic(fmt.Sprintf("tabletop: ResetTo(%d, %d): task must be in 0..%d and init state in 0..%d", taskIdx, initIdx, TasksPerSuite-1, InitStates-1))
	}
	e.loadTask(taskIdx, fixedInitRNG(e.suite.name, taskIdx, initIdx))
	return e.afterReset()
}

func (e *Env) loadTask(taskIdx int, rng *rand.Rand) {
	t := &e.suite.tasks[taskIdx]
	e.task = taskIdx
	e.w = t.build(rng)
	e.slots = t.slots()
}

func (e *Env) afterReset() []float64 {
	e.steps, e.started, e.ended = 0, true, false
	e.episodes++
	e.success = e.w.satisfied(e.suite.tasks[e.task].goal)
	e.rendered = false
	if e.cfg.Render {
		e.render()
	}
	return e.obs()
}

// Step applies a 7-D action (clipped to [−1, 1]): fingertip translation of
// 1.5 cm per unit, rotation of 0.1 rad per unit, and the gripper command
// (−1 open, +1 closed). The reward is 1 on the step at which the goal first
// holds, which terminates the episode; the episode is truncated when the
// step count reaches the limit. Stepping on after the end keeps simulating
// and pays 0.
func (e *Env) Step(action []float64) ([]float64, float64, bool, bool) {
	if !e.started {
		panic("tabletop: Step called before Reset")
	}
	if len(action) != ActionDim {
		panic(fmt.Sprintf("tabletop: action has %d values, want %d", len(action), ActionDim))
	}
	var a [ActionDim]float64
	for i, v := range action {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			panic(fmt.Sprintf("tabletop: action[%d] = %v is not finite", i, v))
		}
		a[i] = clamp(v, -1, 1)
	}
	e.w.step(a[:])
	e.steps++
	was := e.success
	e.success = e.w.satisfied(e.suite.tasks[e.task].goal)
	reward := 0.0
	if e.success && !was && !e.ended {
		reward = 1
	}
	terminated := e.success
	truncated := e.steps >= e.cfg.MaxEpisodeSteps
	if !e.ended && (terminated || truncated) {
		e.ended = true
		e.history[e.task].add(!e.success)
	}
	e.rendered = false
	if e.cfg.Render {
		e.render()
	}
	return e.obs(), reward, terminated, truncated
}

// obs builds the observation vector at float32 precision.
func (e *Env) obs() []float64 {
	o := make([]float64, ObsDim)
	copy(o, e.Proprio())
	for s, i := range e.slots {
		if s == ObjectSlots {
			break
		}
		c := e.w.ents[i].centre()
		o[ProprioDim+3*s], o[ProprioDim+3*s+1], o[ProprioDim+3*s+2] = c.x, c.y, c.z
	}
	for j := range numJoints {
		o[ProprioDim+3*ObjectSlots+j] = e.w.q[j]
	}
	o[ProprioDim+3*ObjectSlots+JointDim+e.task] = 1
	for i, v := range o {
		o[i] = float64(float32(v))
	}
	return o
}

// Proprio returns the 8-D proprioception at float32 precision: fingertip
// position, orientation as axis-angle, finger positions. Of the two
// axis-angle vectors of a half turn's neighbourhood it gives the one with
// the axis toward +x (its norm then exceeds π a little for some tilts),
// which keeps the orientation continuous around pointing down.
func (e *Env) Proprio() []float64 {
	g := &e.w.grip
	aa := continuousAxisAngle(axisAngle(g.rotation()))
	p := []float64{g.tip.x, g.tip.y, g.tip.z, aa.x, aa.y, aa.z, g.w / 2, -g.w / 2}
	for i, v := range p {
		p[i] = float64(float32(v))
	}
	return p
}

// continuousAxisAngle picks, of the two axis-angle vectors θu and
// −(2π − θ)u of one rotation, the one whose axis points to +x. Pointing
// down is a half turn about x, exactly where axis-angle flips from θu to
// −θu as θ crosses π, so the plain vector jumped by about 2π in x with
// every small roll or pitch jitter; with the axis held in the +x
// hemisphere (every reachable orientation: yaw within ±π/2 keeps the
// axis within 45° of x, tilts within 0.5 rad barely move it) it is a
// continuous function of roll, pitch and yaw.
func continuousAxisAngle(aa vec3) vec3 {
	theta := aa.norm()
	if aa.x >= 0 || theta == 0 {
		return aa
	}
	return aa.sub(aa.scale(2 * math.Pi / theta))
}

// Task returns the current task index within the suite.
func (e *Env) Task() int { return e.task }

// Suite returns the suite name.
func (e *Env) Suite() string { return e.suite.name }

// Steps returns the number of steps taken in the current episode.
func (e *Env) Steps() int { return e.steps }

// Success reports whether the current task's goal holds.
func (e *Env) Success() bool { return e.success }

// EdgeTolerance is how near (m) the fingertip must be to the workspace's
// horizontal limits for [Env.AtEdge]: a third of one full-speed step (1.5 cm),
// so a tip the limits stopped counts and one passing near them does not.
const EdgeTolerance = 0.005

// AtEdge reports whether the fingertip is within EdgeTolerance of the
// workspace's horizontal limits (x ±0.38 m, y ±0.32 m): where a policy that
// lost track of the task ends up when it drives on out of the camera's view
// and the limits stop it. Evaluations count the failed episodes that end
// there ([bc.EvalResult]) to tell such runaways from near misses.
func (e *Env) AtEdge() bool {
	t := e.w.grip.tip
	return t.x <= workspaceMin.x+EdgeTolerance || t.x >= workspaceMax.x-EdgeTolerance ||
		t.y <= workspaceMin.y+EdgeTolerance || t.y >= workspaceMax.y-EdgeTolerance
}

// Succeeded reports whether an episode that ended with these flags succeeded
// (testenv.Env): a tabletop episode terminates exactly when its goal holds, so
// success is termination; a truncated episode failed.
func (e *Env) Succeeded(terminated, truncated bool) (success, ok bool) { return terminated, true }

// Instruction returns the current task's language instruction.
func (e *Env) Instruction() string { return e.suite.tasks[e.task].instruction }

// InstructionTokens returns the instruction as vocabulary ids, between
// <bos> and <eos>.
func (e *Env) InstructionTokens() []int { return Tokenize(e.Instruction()) }

// Failures returns the failures among the last 100 finished episodes of a
// task (the weight of task sampling is this plus one).
func (e *Env) Failures(taskIdx int) int { return e.history[taskIdx].failures() }

// Images returns one RGB image per configured camera (row-major, height ×
// width × 3 bytes, Config.Cameras order), rendering them first if the
// state changed since. The buffers are reused by later calls; copy them to
// keep them.
func (e *Env) Images() [][]uint8 {
	if !e.rendered {
		e.render()
	}
	return e.images
}

// Image returns the image of one configured camera, or nil if the camera
// is not configured.
func (e *Env) Image(camera string) []uint8 {
	for i, c := range e.cfg.Cameras {
		if c == camera {
			return e.Images()[i]
		}
	}
	return nil
}

// ImageBytesPerStep is the number of image bytes one step produces: cameras
// × size² × 3.
func (e *Env) ImageBytesPerStep() int { return len(e.cams) * e.cfg.ImageSize * e.cfg.ImageSize * 3 }

func (e *Env) render() {
	for i, c := range e.cams {
		e.raster.drawScene(&e.w, c, e.images[i])
	}
	e.rendered = true
}
