package tabletop

import (
	"math"
	"math/rand/v2"
)

// Expert is a scripted, closed-loop policy that solves every task: for
// each conjunct of the goal in order it runs a waypoint plan recomputed
// from the current state (move above → descend → close → lift → carry →
// lower → release for placing; hook and pull or push for drawers; a
// sideways sweep for the knob; pushes along one axis at a time for the
// plate), and it retries a phase that stalls. Gaussian noise of standard
// deviation Noise (action units) is added to the motion dimensions.
type Expert struct {
	// Noise is the standard deviation of the action noise; NewExpert sets
	// 0.05.
	Noise float64
	// KeepYaw makes a retry keep the grasp yaw the plan chose from the
	// state instead of trying the other one. A labeller of states that
	// another policy reached sets it (CollectDAgger): that policy's stalls
	// would otherwise flip the yaw the labels ask for, and the same state
	// would be labelled with both yaws.
	KeepYaw bool
	// Follow makes the expert a labeller of the states another policy
	// reaches (CollectDAgger), where its step-counting signals measure that
	// policy and not the plan: no stall or phase timeout ever triggers a
	// retry or a phase change, and the moves that end at a waypoint above a
	// target (the approach over the object, the carry over the place point)
	// hand over to the next phase once the fingertip is within
	// [followReach] of the waypoint's vertical line, at any height and
	// gripper width or yaw (the next phase corrects them on its way), the
	// lift once it is within followReach of the travel height. The plain
	// expert, following a learner that starts its descent 5 mm beside the
	// bowl, labels that state "climb back to the travel height"; a learner
	// that slows down for five steps is labelled "start over" — the
	// labels that taught clones to back off (docs/results/vla-bc-notes.md).
	// With Follow the first is labelled "descend onto the grasp point",
	// which corrects the offset on the way, and the second "go on".
	Follow bool
	src    *rand.PCG // rng's state, copied by Clone
	rng    *rand.Rand

	episode  uint64
	task     int
	sub      int // index of the goal conjunct being worked on, -1 none
	phase    int
	count    int     // steps in this phase
	fresh    bool    // the phase has not run yet (see enter)
	skip     bool    // the next progress measurement is against the old waypoint
	stalled  int     // consecutive steps without getting closer to the waypoint
	best     float64 // closest distance to the waypoint in this phase
	yaw      float64
	travelZ  float64
	dest     vec3 // place point (x, y) and bottom height (z) for placing
	target   vec3 // waypoint of the current phase
	retries  int  // of the current goal conjunct's plan
	restarts int  // of all plans
	axis     int  // push axis (0 x, 1 y)
}

// NewExpert returns an expert whose noise is drawn from a PCG generator
// seeded with seed.
func NewExpert(seed uint64) *Expert {
	src := rand.NewPCG(seed, 0x6578706572740a)
	return &Expert{Noise: 0.05, src: src, rng: rand.New(src), sub: -1}
}

// Clone returns an independent copy of x: its plan (task, goal conjunct,
// phase, waypoint, stall and retry counts) and its noise stream's position.
// Played on a copy of the environment (Env.MarshalBinary into another
// Env), the clone takes exactly the actions x would take from there, and x
// is left as it was: how DAgger asks the expert for its next K actions from
// a state the learner reached.
func (x *Expert) Clone() *Expert {
	c := *x
	src := *x.src
	c.src = &src
	c.rng = rand.New(c.src)
	return &c
}

// Expert phase numbers (shared by the plans; each plan uses a prefix).
const (
	phApproach = iota
	phDescend
	phGrip // close (placing) or interact (pull, push, sweep)
	phLift
	phCarry
	phLower
	phRelease
	phRetreat
	phEngage // drawers: move in behind the handle
)

// phaseNames names the phases for Phase.
var phaseNames = [...]string{"approach", "descend", "grip", "lift", "carry", "lower", "release", "retreat", "engage"}

// Phase names the plan's current phase ("approach", "descend", "grip",
// "lift", "carry", "lower", "release", "retreat", "engage"; "done" once the
// goal holds): where a labeller's labels came from.
func (x *Expert) Phase() string {
	if x.sub < 0 {
		return "done"
	}
	return phaseNames[x.phase]
}

// Tolerances of the waypoint controller (m).
const (
	tolXY = 0.003
	tolZ  = 0.002
	// followReach is how close (m) a followed policy must come to a
	// waypoint above a target for a Follow expert to take the next phase
	// (the radius approach uses to decide it need not climb first).
	followReach = 0.01
)

// Restarts returns how many times the expert has restarted a plan since it
// was made (a stall, a timeout, a drop, a missed placing): a measure of how
// often a followed policy reached states the plan gave up on.
func (x *Expert) Restarts() int { return x.restarts }

// above reports whether a Follow expert takes the fingertip as at the
// waypoint t above a target: within followReach of its vertical line.
func (x *Expert) above(w *world, t vec3) bool {
	return x.Follow && math.Hypot(t.x-w.grip.tip.x, t.y-w.grip.tip.y) < followReach
}

// Act returns the expert's next action for env's current state.
func (x *Expert) Act(env *Env) []float64 {
	if env.episodes != x.episode || env.task != x.task {
		x.episode, x.task, x.sub = env.episodes, env.task, -1
	}
	w := &env.w
	goal := env.suite.tasks[env.task].goal
	sub := -1
	for i, p := range goal {
		if !w.holds(p) {
			sub = i
			break
		}
	}
	if x.sub >= 0 && x.sub < len(goal) && x.phase >= phGrip && interacts(w, goal[x.sub]) {
		sub = x.sub // finish a pull, push or sweep before moving on
	}
	if sub != x.sub {
		x.sub, x.retries = sub, 0
		x.next(phApproach)
		x.yaw = math.NaN()
	}
	a := make([]float64, ActionDim)
	if sub < 0 {
		return x.finish(w, a, x.hold(w), 0) // done: hold still
	}
	p := goal[sub]
	switch {
	case p.kind == predOpen:
		return x.drawer(w, a, p.joint, true)
	case p.kind == predClose:
		return x.drawer(w, a, p.joint, false)
	case p.kind == predTurnOn || p.kind == predTurnOff:
		return x.knob(w, a, p.kind == predTurnOn)
	case p.kind == predIn && !w.ents[p.a].info().graspable:
		return x.push(w, a, p)
	}
	return x.pickPlace(w, a, p)
}

// interacts reports whether p's plan moves a joint or pushes (rather than
// placing), so it must run to its end once it has made contact.
func interacts(w *world, p pred) bool {
	switch p.kind {
	case predOpen, predClose, predTurnOn, predTurnOff:
		return true
	case predIn:
		return !w.ents[p.a].info().graspable
	}
	return false
}

// hold is a waypoint at the current fingertip.
func (x *Expert) hold(w *world) vec3 { return w.grip.tip }

// next moves to phase ph.
func (x *Expert) next(ph int) {
	x.phase, x.count, x.stalled, x.fresh, x.skip, x.best = ph, 0, 0, true, true, math.Inf(1)
}

// enter reports, once per phase, that the phase runs for the first time.
func (x *Expert) enter() bool {
	f := x.fresh
	x.fresh = false
	return f
}

// retry restarts the plan from the approach (with the other yaw).
func (x *Expert) retry() {
	x.retries++
	x.restarts++
	x.next(phApproach)
	if !math.IsNaN(x.yaw) && !x.KeepYaw {
		x.yaw = math.Pi/2 - x.yaw
	}
}

// reached reports whether the fingertip is at target within the
// controller's tolerances.
func reached(w *world, t vec3) bool {
	d := t.sub(w.grip.tip)
	return math.Hypot(d.x, d.y) < tolXY && math.Abs(d.z) < tolZ
}

// finish fills the motion part of a toward target with yaw, adds noise,
// sets the gripper command, and tracks stalls.
func (x *Expert) finish(w *world, a []float64, target vec3, grip float64) []float64 {
	g := &w.grip
	d := target.sub(g.tip)
	a[0], a[1], a[2] = d.x/maxStepPos, d.y/maxStepPos, d.z/maxStepPos
	a[3], a[4] = -g.roll/maxStepRot, -g.pitch/maxStepRot
	if !math.IsNaN(x.yaw) {
		a[5] = (x.yaw - g.yaw) / maxStepRot
	}
	for i := range 6 {
		a[i] = clamp(a[i]+x.Noise*x.rng.NormFloat64(), -1, 1)
	}
	a[6] = grip
	// Progress is measured against the best distance so far, so that noise
	// jitter against an obstacle still counts as stalled.
	if x.skip {
		x.skip = false
	} else if x.Follow {
		// a followed policy's pace is not the plan's: never stalled
	} else if dist := d.norm(); dist < x.best-0.0005 {
		x.best, x.stalled = dist, 0
	} else {
		x.stalled++
	}
	x.count++
	return a
}

// openCmd is the gripper command that opens the fingers to width.
func openCmd(width float64) float64 { return clamp(1-2*width/maxOpening, -1, 1) }

// graspHeight is the fingertip height that grips entity i: low on short
// things, high enough on tall ones that the palm clears their top.
func graspHeight(e *entity) float64 {
	h := e.info().h
	z := math.Max(e.pos.z+math.Min(0.03, 0.4*h), e.top()-fingerLength+0.01)
	return math.Min(z, e.top()-graspTopGap-0.004)
}

// approach is the shared move-above-then-descend logic: rise to the travel
// height before moving sideways, then move level to above dst.
func (x *Expert) approach(w *world, dst vec3) (vec3, bool) {
	g := &w.grip
	if math.Hypot(dst.x-g.tip.x, dst.y-g.tip.y) > 0.01 && g.tip.z < x.travelZ-0.005 {
		return vec3{g.tip.x, g.tip.y, x.travelZ}, false
	}
	t := vec3{dst.x, dst.y, x.travelZ}
	return t, reached(w, t)
}

// clearHeight is the fingertip height at which moving level from the tip
// to (tx, ty) clears everything not carried by 2 cm, with the held object
// (if any) hanging below the fingertips.
func (w *world) clearHeight(tx, ty float64) float64 {
	g := &w.grip
	bx, by, hang := g.w/2+fingerThick+0.01, g.w/2+fingerThick+0.01, 0.0
	if g.held >= 0 {
		inf := w.ents[g.held].info()
		bx, by = math.Max(bx, inf.hx+0.01), math.Max(by, inf.hy+0.01)
		hang = -g.heldOff.z
	}
	top := 0.0
	hit := func(b aabb) {
		b.min.x, b.min.y, b.max.x, b.max.y = b.min.x-bx, b.min.y-by, b.max.x+bx, b.max.y+by
		if segmentHitsRect(g.tip.x, g.tip.y, tx, ty, b) {
			top = math.Max(top, b.max.z)
		}
	}
	for i := range w.ents {
		if !w.carried(i) {
			hit(w.ents[i].box())
		}
	}
	if w.cabinet >= 0 {
		for j := range 3 {
			hit(w.drawerFace(j))
		}
	}
	return math.Min(workspaceMax.z-0.005, math.Max(0.08, top+0.02+hang))
}

// segmentHitsRect reports whether the segment (x0, y0)–(x1, y1) meets the
// footprint of b (Liang–Barsky clipping).
func segmentHitsRect(x0, y0, x1, y1 float64, b aabb) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := x1-x0, y1-y0
	for _, c := range [4][2]float64{{-dx, x0 - b.min.x}, {dx, b.max.x - x0}, {-dy, y0 - b.min.y}, {dy, b.max.y - y0}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}
