package tabletop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The binary state format is
//
//	tag "tabletop" (length-prefixed) | version (1 byte) | fields (little-endian)
//
// with fields: suite, task list, step limit, task, step count, flags,
// episode count, per-task outcome history, joints, gripper, entities.

const (
	stateTag     = "tabletop"
	stateVersion = 1
)

type stateWriter struct{ b []byte }

func (w *stateWriter) u64(v uint64)   { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *stateWriter) f64(v float64)  { w.u64(math.Float64bits(v)) }
func (w *stateWriter) int(v int)      { w.u64(uint64(int64(v))) }
func (w *stateWriter) bytes(p []byte) { w.u64(uint64(len(p))); w.b = append(w.b, p...) }
func (w *stateWriter) vec(v vec3)     { w.f64(v.x); w.f64(v.y); w.f64(v.z) }
func (w *stateWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

type stateReader struct {
	b   []byte
	err error
}

var errShortState = errors.New("state is truncated")

func (r *stateReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errShortState
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *stateReader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }
func (r *stateReader) int() int     { return int(int64(r.u64())) }
func (r *stateReader) vec() vec3    { return vec3{r.f64(), r.f64(), r.f64()} }

func (r *stateReader) byte() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *stateReader) bool() bool {
	switch b := r.byte(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		if r.err == nil {
			r.err = fmt.Errorf("invalid boolean byte %d", b)
		}
		return false
	}
}

func (r *stateReader) bytes() []byte {
	n := r.u64()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errShortState
		return nil
	}
	return r.take(int(n))
}

// count reads a length and checks it against a bound.
func (r *stateReader) count(limit int) int {
	n := r.int()
	if r.err == nil && (n < 0 || n > limit) {
		r.err = fmt.Errorf("count %d out of range 0..%d", n, limit)
		return 0
	}
	return n
}

// MarshalBinary encodes the complete episode state: suite, task list, step
// limit, current task, step count and flags, episode count, the outcome
// history that weights task sampling, joints, gripper and every entity.
func (e *Env) MarshalBinary() ([]byte, error) {
	w := &stateWriter{}
	w.bytes([]byte(stateTag))
	w.b = append(w.b, stateVersion)
	w.bytes([]byte(e.suite.name))
	w.int(len(e.cfg.Tasks))
	for _, t := range e.cfg.Tasks {
		w.int(t)
	}
	w.int(e.cfg.MaxEpisodeSteps)
	w.int(e.task)
	w.int(e.steps)
	w.bool(e.started)
	w.bool(e.ended)
	w.bool(e.success)
	w.u64(e.episodes)
	for i := range e.history {
		h := &e.history[i]
		w.int(h.n)
		w.int(h.next)
		for _, f := range h.failed {
			w.bool(f)
		}
	}
	for _, q := range e.w.q {
		w.f64(q)
	}
	g := &e.w.grip
	w.vec(g.tip)
	w.f64(g.roll)
	w.f64(g.pitch)
	w.f64(g.yaw)
	w.f64(g.w)
	w.int(g.held)
	w.vec(g.heldOff)
	w.int(len(e.w.ents))
	for i := range e.w.ents {
		en := &e.w.ents[i]
		w.b = append(w.b, byte(en.kind))
		w.vec(en.pos)
		w.f64(en.vz)
		w.bool(en.falling)
		w.int(en.support)
	}
	return w.b, nil
}

// UnmarshalBinary restores a state written by MarshalBinary into an
// environment of the same suite, task list and step limit; stepping after
// it gives bit-identical observations and images.
func (e *Env) UnmarshalBinary(data []byte) error {
	wrap := func(err error) error { return fmt.Errorf("tabletop: unmarshal state: %w", err) }
	r := &stateReader{b: data}
	if tag := string(r.bytes()); r.err == nil && tag != stateTag {
		return wrap(fmt.Errorf("state is for %q, not %q", tag, stateTag))
	}
	if v := r.byte(); r.err == nil && v != stateVersion {
		return wrap(fmt.Errorf("state version %d, want %d", v, stateVersion))
	}
	suite := string(r.bytes())
	tasks := make([]int, r.count(TasksPerSuite))
	for i := range tasks {
		tasks[i] = r.int()
	}
	maxSteps := r.int()
	task := r.int()
	steps := r.int()
	started, ended, success := r.bool(), r.bool(), r.bool()
	episodes := r.u64()
	var hist [TasksPerSuite]outcomes
	for i := range hist {
		hist[i].n = r.count(historyLen)
		hist[i].next = r.count(historyLen - 1)
		for k := range hist[i].failed {
			hist[i].failed[k] = r.bool()
		}
	}
	var q [numJoints]float64
	for j := range q {
		q[j] = r.f64()
	}
	var g gripper
	g.tip = r.vec()
	g.roll, g.pitch, g.yaw, g.w = r.f64(), r.f64(), r.f64(), r.f64()
	g.held = r.int()
	g.heldOff = r.vec()
	ents := make([]entity, r.count(64))
	for i := range ents {
		ents[i].kind = kindID(r.byte())
		ents[i].pos = r.vec()
		ents[i].vz = r.f64()
		ents[i].falling = r.bool()
		ents[i].support = r.int()
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d unexpected trailing bytes", len(r.b))
	}
	if r.err != nil {
		return wrap(r.err)
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
