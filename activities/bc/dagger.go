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
}

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
	// motion sums |label - taken| over the motion dimensions; grip counts
	// steps whose gripper signs differ.
	motion [6]float64
	grip   int
	phases map[string]PhaseDisagree // sums, divided in collectDAgger
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
	if in.ExpertNoise > 0 {
		return collectDAgger(in, &ExpertActor{Noise: in.ExpertNoise}, m.EnvConfig(in.Suite), m.Chunk)
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
			r := &daggerRun{env: env, scratch: scratch, x: x, phases: map[string]PhaseDisagree{}, d: ImageDemo{Task: task, Instr: env.InstructionTokens()}}
			runs, envs = append(runs, r), append(envs, env)
		}
	}
	won, err := playLockstep(actor, envs, nil, func(i int, a []float64) error { return runs[i].record(k, a) })
	if err != nil {
		return nil, DAggerStats{}, err
	}
	out := make([]ImageDemo, 0, len(runs))
	st := DAggerStats{Episodes: len(runs), Phases: map[string]PhaseDisagree{}}
	wonSteps := 0
	for i, r := range runs {
		for name, p := range r.phases {
			q := st.Phases[name]
			q.Steps, q.Motion, q.Gripper = q.Steps+p.Steps, q.Motion+p.Motion, q.Gripper+p.Gripper
			for j, b := range p.Bias {
				q.Bias[j] += b
			}
			st.Phases[name] = q
		}
		if won[i] || !in.WonOnly {
			out = append(out, r.d)
		}
		st.Steps += len(r.d.Actions)
		st.Restarts += r.x.Restarts()
		for j, m := range r.motion {
			st.DimDisagree[j] += m
		}
		st.GripperDisagree += float64(r.grip)
		if won[i] {
			st.Successes++
			wonSteps += len(r.d.Actions)
			for _, m := range r.motion {
				st.WonMotionDisagree += m / 6
			}
		}
	}
	if wonSteps > 0 {
		st.WonMotionDisagree /= float64(wonSteps)
	}
	if st.Steps > 0 {
		for j := range st.DimDisagree {
			st.DimDisagree[j] /= float64(st.Steps)
			st.MotionDisagree += st.DimDisagree[j] / 6
		}
		st.GripperDisagree /= float64(st.Steps)
	}
	for name, p := range st.Phases {
		p.Motion, p.Gripper = p.Motion/float64(p.Steps), p.Gripper/float64(p.Steps)
		for j := range p.Bias {
			p.Bias[j] /= float64(p.Steps)
		}
		st.Phases[name] = p
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
	ph.Steps++
	for j := range 6 {
		d := math.Abs(labels[0][j] - taken[j])
		r.motion[j] += d
		ph.Motion += d / 6
		ph.Bias[j] += labels[0][j] - taken[j]
	}
	if labels[0][6]*taken[6] < 0 {
		r.grip++
		ph.Gripper++
	}
	r.phases[r.x.Phase()] = ph
	r.d.record(r.env, labels[0])
	r.d.Labels = append(r.d.Labels, labels)
	return nil
}
