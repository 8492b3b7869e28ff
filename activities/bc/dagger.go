package bc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// DAgger (Ross, Gordon and Bagnell, 2011, "A Reduction of Imitation Learning
// and Structured Prediction to No-Regret Online Learning") trains a clone on
// the states it reaches itself: the clone plays, the expert labels every
// state it visits with what it would do there, the labelled states join the
// demonstrations, and the clone trains on the union. Plain BC only sees the
// expert's own states, so a clone that drifts off them meets states it never
// learned a correction for; the measurements of docs/results/vla-bc-notes.md
// point there (held-out error equals training error, twice the
// demonstrations barely move it). The scripted expert is closed loop, so it
// can label any state.

// DAggerInput sizes one DAgger round.
type DAggerInput struct {
	Suite string
	Tasks []int
	// PerTask episodes per task are played by the clone from randomised
	// resets (never the evaluation's fixed initial states); all of them are
	// kept, failed or not.
	PerTask int
	// Seed picks the resets and the labelling experts' streams; give each
	// round its own.
	Seed uint64
	// Decode is how the clone picks its tokens, a deterministic rule:
	// vla.DecodeArgmax is the policy BC evaluates.
	Decode vla.DecodeRule
	// MaxSteps ends each episode after that many steps (0: the suite's
	// time limit). A failing clone plays to the limit, about four times a
	// demonstration's length on the spatial suite, so without a cap its
	// failures' long tails (the same stuck state, labelled over and over)
	// outnumber everything else in the aggregate.
	MaxSteps int
	// WonOnly returns only the episodes the clone won (the stats still
	// count all): the labels on states near the demonstrations without
	// those on the clone's failures.
	WonOnly bool
	// ExpertNoise, when positive, has the scripted expert play the episodes
	// instead of the clone, with that execution noise (the demonstrations'
	// DART σ makes them demonstration-like): the control that tells the
	// labels' form (one plan chunk from each state) apart from the clone's
	// states.
	ExpertNoise float64
	// Kick, when positive, pushes each of the expert's episodes (ExpertNoise
	// must be set) off course once: from a step drawn uniformly below
	// kickStartMax, the arm is driven for Kick steps at full speed in a
	// random horizontal direction (no rotation; the gripper command stays
	// the expert's, so a held object stays held), into states no
	// demonstration shows: the workspace's edges and corners, object in hand
	// or not, out of the fixed camera's view. A clone that loses track ends
	// up there and stays (measured on a 77.6% clone: 76 of its 112 failures
	// end pinned at the workspace's edge), so these are recovery
	// demonstrations: the labeller labels the kicked states, and the expert's
	// way back, like every other state.
	Kick int
}

// kickStartMax bounds the step a kick starts at: about a demonstration's
// length on the spatial suite (56 steps), so kicks come in every phase.
const kickStartMax = 60

// DAggerStats counts a round's episodes and labelled steps.
type DAggerStats struct {
	Episodes  int `json:"episodes"`
	Successes int `json:"successes"`
	Steps     int `json:"steps"`
	// Restarts counts the following experts' plan restarts over all
	// episodes ([tabletop.Expert.Restarts]): states the labeller gave up on
	// (a dropped object, a missed placing).
	Restarts int `json:"restarts"`
	// MotionDisagree is the mean absolute difference between the label's
	// first action and the action the clone took, over the six motion
	// dimensions and all steps (action units, [-1, 1]); GripperDisagree
	// the fraction of steps whose gripper commands have opposite signs.
	// Labels that agree with what a good clone does change little; a
	// round's harm shows here first.
	MotionDisagree  float64 `json:"motion_disagree"`
	GripperDisagree float64 `json:"gripper_disagree"`
	// DimDisagree is MotionDisagree per motion dimension (x, y, z, roll,
	// pitch, yaw).
	DimDisagree [6]float64 `json:"dim_disagree"`
	// WonMotionDisagree is MotionDisagree over the steps of the episodes
	// the clone won: how far the labels are from a clone that is doing
	// well.
	WonMotionDisagree float64 `json:"won_motion_disagree"`
	// Phases breaks the steps down by the labeller's plan phase when it
	// labelled them ([tabletop.Expert.Phase]).
	Phases map[string]PhaseDisagree `json:"phases"`
}

// PhaseDisagree is DAggerStats' disagreement over one phase's steps.
type PhaseDisagree struct {
	Steps int `json:"steps"`
	// Motion is the mean absolute difference per motion dimension, Gripper
	// the fraction of steps with opposite gripper signs.
	Motion  float64 `json:"motion"`
	Gripper float64 `json:"gripper"`
	// Bias is the mean of label minus clone per motion dimension (x, y, z,
	// roll, pitch, yaw): which way the labels pull.
	Bias [6]float64 `json:"bias"`
}

// daggerStream separates the rounds' reset streams from Collect's (whose
// stream is the task index).
const daggerStream = 0xda66e7 << 20

// daggerRun is one episode of a round: the environment the clone acts in,
// the expert that tracks it, a scratch environment for the expert's
// lookahead, and the episode recorded so far.
type daggerRun struct {
	env, scratch *tabletop.Env
	x            *tabletop.Expert
	d            ImageDemo
	// all sums the labels' disagreement with the clone over the episode,
	// phases over each labeller phase's steps.
	all    disagreement
	phases map[string]*disagreement
}

// disagreement sums how far labels are from the actions taken, over steps.
type disagreement struct {
	steps     int
	abs, bias [6]float64 // |label − taken| and label − taken per motion dimension
	grip      int        // steps with opposite gripper signs
}

// add counts one step.
func (d *disagreement) add(label, taken []float64) {
	d.steps++
	for j := range d.abs {
		d.abs[j] += math.Abs(label[j] - taken[j])
		d.bias[j] += label[j] - taken[j]
	}
	if label[6]*taken[6] < 0 {
		d.grip++
	}
}

// merge adds o's steps to d.
func (d *disagreement) merge(o *disagreement) {
	d.steps += o.steps
	for j := range d.abs {
		d.abs[j] += o.abs[j]
		d.bias[j] += o.bias[j]
	}
	d.grip += o.grip
}

// mean returns the per-step means (zero for no steps).
func (d *disagreement) mean() PhaseDisagree {
	p := PhaseDisagree{Steps: d.steps}
	if d.steps == 0 {
		return p
	}
	n := float64(d.steps)
	for j := range d.abs {
		p.Motion += d.abs[j] / (6 * n)
		p.Bias[j] = d.bias[j] / n
	}
	p.Gripper = float64(d.grip) / n
	return p
}

// CollectDAgger plays m's clone (m.Execute actions of each decoded chunk,
// all episodes in lockstep as [EvaluateEnv] plays them) for in.PerTask
// episodes per task and records, before every step, the camera images and
// proprioception the clone read and the expert's label: the m.Chunk actions
// a noise-free expert would take from that state on ([ImageDemo.Labels]).
// The first of them comes from an expert that has followed the episode (its
// plan, phase and retries track the clone's states); the rest from a clone
// of that expert playing on in a copy of the environment, so that a chunk is
// the expert's plan from the state, not the clone's later states' labels.
// The following expert is a labeller ([tabletop.Expert.Follow]): the
// clone's slow or cut-corner moves neither make it start over nor send the
// clone back up to the travel height, and it keeps its grasp yaw on the
// retries that remain ([tabletop.Expert.KeepYaw]; with the plain expert's
// yaw flip a stall relabelled the states around the object with the other
// yaw: measured on a 10% clone, one flip in 28 of 30 episodes, then ~200
// steps of "turn 90°" labels each).
func CollectDAgger(in DAggerInput, m *VLAModel) ([]ImageDemo, DAggerStats, error) {
	if in.PerTask < 1 || len(in.Tasks) == 0 {
		return nil, DAggerStats{}, fmt.Errorf("bc dagger: %d episodes per task of %d tasks: want at least one", in.PerTask, len(in.Tasks))
	}
	if in.MaxSteps < 0 {
		return nil, DAggerStats{}, fmt.Errorf("bc dagger: MaxSteps %d: want 0 (the suite's time limit) or more", in.MaxSteps)
	}
	if in.Kick < 0 || (in.Kick > 0 && in.ExpertNoise <= 0) {
		return nil, DAggerStats{}, fmt.Errorf("bc dagger: Kick %d: want 0, or more with the expert playing (ExpertNoise > 0)", in.Kick)
	}
	if in.ExpertNoise > 0 {
		var actor Actor = &ExpertActor{Noise: in.ExpertNoise}
		if in.Kick > 0 {
			actor = &kickActor{Actor: actor, steps: in.Kick, rng: rand.New(rand.NewPCG(in.Seed, daggerStream|0x6b1c)), kicks: map[*tabletop.Env]kick{}}
		}
		return collectDAgger(in, actor, m.EnvConfig(in.Suite), m.Chunk)
	}
	actor, err := m.ActorDecode(in.Decode)
	if err != nil {
		return nil, DAggerStats{}, fmt.Errorf("bc dagger: %w", err)
	}
	return collectDAgger(in, actor, m.EnvConfig(in.Suite), m.Chunk)
}

// collectDAgger is CollectDAgger with any actor (the unit test plays the
// expert itself) on environments of envCfg, labelling chunks of k actions.
func collectDAgger(in DAggerInput, actor Actor, envCfg tabletop.Config, k int) ([]ImageDemo, DAggerStats, error) {
	var runs []*daggerRun
	var envs []*tabletop.Env
	for _, task := range in.Tasks {
		for e := range in.PerTask {
			cfg := envCfg
			cfg.Tasks = []int{task}
			cfg.MaxEpisodeSteps = in.MaxSteps
			env, err := tabletop.New(cfg)
			if err != nil {
				return nil, DAggerStats{}, fmt.Errorf("bc dagger: %w", err)
			}
			scratch, err := tabletop.New(tabletop.Config{Suite: in.Suite, Tasks: []int{task}, MaxEpisodeSteps: in.MaxSteps}) // the same limit: its state is env's
			if err != nil {
				return nil, DAggerStats{}, fmt.Errorf("bc dagger: %w", err)
			}
			id := uint64(task)<<16 | uint64(e)
			env.Reset(rand.New(rand.NewPCG(in.Seed, daggerStream|id)))
			x := tabletop.NewExpert(in.Seed*1000003 + daggerStream | id)
			x.Noise, x.KeepYaw, x.Follow = 0, true, true
			r := &daggerRun{env: env, scratch: scratch, x: x, phases: map[string]*disagreement{}, d: ImageDemo{Task: task, Instr: env.InstructionTokens()}}
			runs, envs = append(runs, r), append(envs, env)
		}
	}
	won, err := playLockstep(actor, envs, nil, func(i int, a []float64) error { return runs[i].record(k, a) })
	if err != nil {
		return nil, DAggerStats{}, err
	}
	out := make([]ImageDemo, 0, len(runs))
	st := DAggerStats{Episodes: len(runs), Phases: map[string]PhaseDisagree{}}
	var all, wonAll disagreement
	phases := map[string]*disagreement{}
	for i, r := range runs {
		for name, p := range r.phases {
			if phases[name] == nil {
				phases[name] = &disagreement{}
			}
			phases[name].merge(p)
		}
		if won[i] || !in.WonOnly {
			out = append(out, r.d)
		}
		st.Steps += len(r.d.Actions)
		st.Restarts += r.x.Restarts()
		all.merge(&r.all)
		if won[i] {
			st.Successes++
			wonAll.merge(&r.all)
		}
	}
	m := all.mean()
	st.MotionDisagree, st.GripperDisagree, st.WonMotionDisagree = m.Motion, m.Gripper, wonAll.mean().Motion
	if all.steps > 0 {
		for j, a := range all.abs {
			st.DimDisagree[j] = a / float64(all.steps)
		}
	}
	for name, p := range phases {
		st.Phases[name] = p.mean()
	}
	return out, st, nil
}

// record appends the current step ([ImageDemo.record]) and the expert's
// chunk of k actions from this state, and compares the chunk's first
// action with taken, the clone's.
func (r *daggerRun) record(k int, taken []float64) error {
	labels := make([][]float64, 0, k)
	labels = append(labels, r.x.Act(r.env))
	if k > 1 {
		b, err := r.env.MarshalBinary()
		if err != nil {
			return fmt.Errorf("bc dagger: %w", err)
		}
		if err := r.scratch.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("bc dagger: %w", err)
		}
		plan := r.x.Clone()
		_, _, term, _ := r.scratch.Step(labels[0])
		for len(labels) < k {
			if term { // the goal holds: the chunk ends as a demonstration's does, on its last action
				labels = append(labels, labels[len(labels)-1])
				continue
			}
			a := plan.Act(r.scratch)
			labels = append(labels, a)
			_, _, term, _ = r.scratch.Step(a)
		}
	}
	ph := r.phases[r.x.Phase()]
	if ph == nil {
		ph = &disagreement{}
		r.phases[r.x.Phase()] = ph
	}
	ph.add(labels[0], taken)
	r.all.add(labels[0], taken)
	r.d.record(r.env, labels[0])
	r.d.Labels = append(r.d.Labels, labels)
	return nil
}

// kickActor is DAggerInput.Kick: Actor's actions, except that each episode
// is once driven off course for steps steps.
type kickActor struct {
	Actor
	steps int
	rng   *rand.Rand
	kicks map[*tabletop.Env]kick
}

// kick is one episode's push: its first step and its direction (action units).
type kick struct {
	start  int
	dx, dy float64
}

// Act implements Actor: the wrapped actor's actions, with the motion of the
// environments inside their kick replaced. Kicks are drawn in need's order
// the first time an environment is seen, so a round is reproducible.
func (k *kickActor) Act(envs []*tabletop.Env, obs [][]float64, need []int, out [][]float64) {
	k.Actor.Act(envs, obs, need, out)
	for _, i := range need {
		e := envs[i]
		kk, ok := k.kicks[e]
		if !ok {
			th := 2 * math.Pi * k.rng.Float64()
			kk = kick{start: k.rng.IntN(kickStartMax), dx: math.Cos(th), dy: math.Sin(th)}
			k.kicks[e] = kk
		}
		if t := e.Steps(); t >= kk.start && t < kk.start+k.steps {
			a := out[i]
			a[0], a[1], a[2], a[3], a[4], a[5] = kk.dx, kk.dy, 0, 0, 0, 0
		}
	}
}
