package tabletop

import (
	"fmt"
	"slices"

	"github.com/accerl/accerl/testenv"
)

// The binary state format is
//
//	tag "tabletop" (length-prefixed) | version (1 byte) | fields (little-endian)
//
// with fields: suite, task list, step limit, task, step count, flags,
// episode count, per-task outcome history, joints, gripper, entities.

// stateTag keeps another kind's state from being loaded into a tabletop environment; the
// codec (testenv.StateWriter) adds its format version.
const stateTag = "tabletop"

// vec writes a point as three floats; readVec reads one back.
func writeVec(w *testenv.StateWriter, v vec3) { w.F64(v.x); w.F64(v.y); w.F64(v.z) }
func readVec(r *testenv.StateReader) vec3     { return vec3{r.F64(), r.F64(), r.F64()} }

// MarshalBinary encodes the complete episode state: suite, task list, step
// limit, current task, step count and flags, episode count, the outcome
// history that weights task sampling, joints, gripper and every entity.
func (e *Env) MarshalBinary() ([]byte, error) {
	w := testenv.NewStateWriter(stateTag)
	w.Bytes([]byte(e.suite.name))
	w.Int(len(e.cfg.Tasks))
	for _, t := range e.cfg.Tasks {
		w.Int(t)
	}
	w.Int(e.cfg.MaxEpisodeSteps)
	w.Int(e.task)
	w.Int(e.steps)
	w.Bool(e.started)
	w.Bool(e.ended)
	w.Bool(e.success)
	w.U64(e.episodes)
	for i := range e.history {
		h := &e.history[i]
		w.Int(h.n)
		w.Int(h.next)
		for _, f := range h.failed {
			w.Bool(f)
		}
	}
	for _, q := range e.w.q {
		w.F64(q)
	}
	g := &e.w.grip
	writeVec(w, g.tip)
	w.F64(g.roll)
	w.F64(g.pitch)
	w.F64(g.yaw)
	w.F64(g.w)
	w.Int(g.held)
	writeVec(w, g.heldOff)
	w.Int(len(e.w.ents))
	for i := range e.w.ents {
		en := &e.w.ents[i]
		w.Byte(byte(en.kind))
		writeVec(w, en.pos)
		w.F64(en.vz)
		w.Bool(en.falling)
		w.Int(en.support)
	}
	return w.Data(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary into an
// environment of the same suite, task list and step limit; stepping after
// it gives bit-identical observations and images.
func (e *Env) UnmarshalBinary(data []byte) error {
	wrap := func(err error) error { return fmt.Errorf("tabletop: unmarshal state: %w", err) }
	r := testenv.NewStateReader(data, stateTag)
	if err := r.Err(); err != nil {
		return wrap(err)
	}
	suite := string(r.Bytes())
	tasks := make([]int, r.Count(TasksPerSuite))
	for i := range tasks {
		tasks[i] = r.Int()
	}
	maxSteps := r.Int()
	task := r.Int()
	steps := r.Int()
	started, ended, success := r.Bool(), r.Bool(), r.Bool()
	episodes := r.U64()
	var hist [TasksPerSuite]outcomes
	for i := range hist {
		hist[i].n = r.Count(historyLen)
		hist[i].next = r.Count(historyLen - 1)
		for k := range hist[i].failed {
			hist[i].failed[k] = r.Bool()
		}
	}
	var q [numJoints]float64
	for j := range q {
		q[j] = r.F64()
	}
	var g gripper
	g.tip = readVec(r)
	g.roll, g.pitch, g.yaw, g.w = r.F64(), r.F64(), r.F64(), r.F64()
	g.held = r.Int()
	g.heldOff = readVec(r)
	ents := make([]entity, r.Count(64))
	for i := range ents {
		ents[i].kind = kindID(r.Byte())
		ents[i].pos = readVec(r)
		ents[i].vz = r.F64()
		ents[i].falling = r.Bool()
		ents[i].support = r.Int()
	}
	if err := r.Done(); err != nil {
		return wrap(err)
	}
	switch {
	case suite != e.suite.name:
		return wrap(fmt.Errorf("state is for suite %q, environment has %q", suite, e.suite.name))
	case !slices.Equal(tasks, e.cfg.Tasks):
		return wrap(fmt.Errorf("state has tasks %v, environment has %v", tasks, e.cfg.Tasks))
	case maxSteps != e.cfg.MaxEpisodeSteps:
		return wrap(fmt.Errorf("step limit %d in state, environment has %d", maxSteps, e.cfg.MaxEpisodeSteps))
	case task < 0 || task >= TasksPerSuite:
		return wrap(fmt.Errorf("task %d out of range", task))
	}
	layout := e.suite.tasks[task].ents
	if len(ents) != len(layout) {
		return wrap(fmt.Errorf("state has %d entities, task %d has %d", len(ents), task, len(layout)))
	}
	for i := range ents {
		if ents[i].kind != layout[i].kind {
			return wrap(fmt.Errorf("entity %d is kind %d, task %d has kind %d", i, ents[i].kind, task, layout[i].kind))
		}
		if s := ents[i].support; s >= len(ents) || (s < supTable && s != supNone && (s > supDrawer || s < supDrawer-2)) {
			return wrap(fmt.Errorf("entity %d has invalid support %d", i, s))
		}
	}
	if g.held < -1 || g.held >= len(ents) {
		return wrap(fmt.Errorf("held entity %d out of range", g.held))
	}
	t := &e.suite.tasks[task]
	e.task, e.slots = task, t.slots()
	e.w = world{ents: ents, q: q, grip: g}
	e.w.cabinet, e.w.stove = t.fixtures()
	e.steps, e.started, e.ended, e.success, e.episodes, e.history = steps, started, ended, success, episodes, hist
	e.rendered = false
	if e.cfg.Render {
		e.render()
	}
	return nil
}
