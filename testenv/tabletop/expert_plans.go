package tabletop

import "math"

// kindWidth is a kind's width along the opening axis at yaw 0 or π/2.
func kindWidth(inf *kindInfo, yaw float64) float64 {
	if inf.shape == shapeCylinder || math.Abs(yaw) < math.Pi/4 {
		return 2 * inf.hx
	}
	return 2 * inf.hy
}

// openWidth is how far the expert opens the fingers to grasp something of
// width w: 3 cm of slack, within the gripper's range.
func openWidth(w float64) float64 { return math.Min(maxOpening, w+0.03) }

// pickPlace runs the placing plan for On(p.a, p.b) or In(p.a, region).
func (x *Expert) pickPlace(w *world, a []float64, p pred) []float64 {
	g := &w.grip
	obj := p.a
	e := &w.ents[obj]
	holding := g.held == obj
	if math.IsNaN(x.yaw) {
		x.yaw = x.chooseYaw(w, obj, p)
	}
	wOpen := openWidth(kindWidth(e.info(), x.yaw))
	if holding && x.phase < phLift {
		x.next(phLift)
	}
	switch x.phase {
	case phApproach:
		if x.enter() {
			x.travelZ = w.clearHeight(e.pos.x, e.pos.y)
		}
		t, ok := x.approach(w, e.pos)
		if ok && math.Abs(g.w-wOpen) < 0.003 && math.Abs(g.yaw-x.yaw) < 0.03 || x.above(w, e.pos) {
			x.next(phDescend)
			if x.Follow { // label the descent from here, not one more approach step
				return x.pickPlace(w, a, p)
			}
		}
		return x.finish(w, a, t, openCmd(wOpen))
	case phDescend:
		t := vec3{e.pos.x, e.pos.y, graspHeight(e)}
		if reached(w, t) {
			x.next(phGrip)
		} else if x.stalled > 4 {
			x.retry()
		}
		return x.finish(w, a, t, openCmd(wOpen))
	case phGrip:
		if x.count > 6 && !x.Follow {
			x.retry()
		}
		return x.finish(w, a, x.hold(w), 1)
	case phLift:
		if !holding {
			x.retry()
			return x.finish(w, a, x.hold(w), openCmd(wOpen))
		}
		if x.enter() {
			x.dest = x.placePoint(w, p)
			x.travelZ = math.Max(g.tip.z, w.clearHeight(x.dest.x, x.dest.y))
		}
		t := vec3{g.tip.x, g.tip.y, x.travelZ}
		if reached(w, t) || x.stalled > 4 || x.Follow && t.z-g.tip.z < followReach {
			x.travelZ = g.tip.z
			x.next(phCarry)
		}
		return x.finish(w, a, t, 1)
	case phCarry:
		if !holding {
			x.retry()
			return x.finish(w, a, x.hold(w), openCmd(wOpen))
		}
		t := vec3{x.dest.x, x.dest.y, x.travelZ}
		if over := x.overTarget(w, p); reached(w, t) || x.above(w, t) || over {
			if over { // set it down here, not at the plan's place point
				x.dest.x, x.dest.y = g.tip.x, g.tip.y
			}
			x.next(phLower)
			if x.Follow { // label the lowering from here
				return x.pickPlace(w, a, p)
			}
		} else if x.stalled > 6 {
			x.next(phLift) // blocked: lift again and recompute the route
		}
		return x.finish(w, a, t, 1)
	case phLower:
		// Set it down: aim a centimetre into the surface, so the motion
		// ends in contact, and let go on the first step in contact. A
		// release that waits for a waypoint in free space is a decision
		// no observation marks (the states just before and at it are the
		// same), and a cloned policy that creeps toward the waypoint
		// hovers there holding on; contact is a state that pushing down
		// always reaches and that the object's height shows.
		if x.overTarget(w, p) {
			x.dest.x, x.dest.y = g.tip.x, g.tip.y
		}
		t := vec3{x.dest.x, x.dest.y, x.dest.z - 0.01 - g.heldOff.z}
		if w.ents[obj].pos.z <= x.dest.z+0.001 || x.stalled > 3 {
			x.next(phRelease)
			return x.finish(w, a, x.hold(w), openCmd(wOpen))
		}
		return x.finish(w, a, t, 1)
	case phRelease:
		if x.count >= 3 {
			x.next(phRetreat)
			x.target = vec3{g.tip.x, g.tip.y, math.Min(workspaceMax.z, g.tip.z+0.05)}
		}
		return x.finish(w, a, x.hold(w), openCmd(wOpen))
	default: // retreat
		if reached(w, x.target) || x.stalled > 3 {
			x.retry() // the goal would hold by now if the placing worked
		}
		return x.finish(w, a, x.target, openCmd(wOpen))
	}
}

// overTarget reports whether a Follow expert takes the held object as over
// a spot where setting it down satisfies p (an On goal): the horizontal part
// of On's test with half its tolerance. A learner's own spot on the plate is
// then as good as the plan's place point, and its labels say "lower here"
// rather than "move on to the place point" from states that look alike.
func (x *Expert) overTarget(w *world, p pred) bool {
	return x.Follow && p.kind == predOn && w.grip.held == p.a && w.centredOn(p.a, p.b, 0.5)
}

// placePoint is where the expert sets entity obj down for p: the first
// free place point of the destination, and the height of the surface
// there (in z).
func (x *Expert) placePoint(w *world, p pred) vec3 {
	var pts [][2]float64
	var base vec3
	support, want := -1, supNone // want: the support code a free point gives
	switch {
	case p.kind == predOn:
		support, want = p.b, p.b
		base = w.ents[p.b].pos
		pts = w.ents[p.b].info().placePoints
	case p.reg.kind == regionInterior:
		support, want = p.reg.anchor, p.reg.anchor
		base = w.ents[p.reg.anchor].pos
		pts = w.ents[p.reg.anchor].info().placePoints
	case p.reg.kind == regionDrawer:
		in := w.drawerInterior(p.reg.drawer)
		base = vec3{in.centre().x, (in.min.y + w.cabinetFront()) / 2, 0}
		want = supDrawer - p.reg.drawer
	default:
		c := w.regionBox(p.reg).centre()
		base = vec3{c.x, c.y, 0}
	}
	if len(pts) == 0 {
		pts = [][2]float64{{0, 0}}
	}
	e := &w.ents[p.a]
	inf := e.info()
	saved := e.pos
	defer func() { e.pos = saved }()
	var first vec3
	for k, pp := range pts {
		e.pos = vec3{base.x + pp[0], base.y + pp[1], 10}
		z, owner := w.restSurface(p.a)
		pt := vec3{e.pos.x, e.pos.y, z}
		if k == 0 {
			first = pt
		}
		fp := boxAt(pt, inf.hx+0.005, inf.hy+0.005, 1)
		free := want == supNone || owner == want
		for j := range w.ents {
			if j == p.a || j == support || w.carried(j) || w.ents[j].info().fixture {
				continue
			}
			if o := &w.ents[j]; o.top() > z+0.001 && fp.overlapsXY(o.box()) {
				free = false
			}
		}
		if free {
			return pt
		}
	}
	return first
}

// chooseYaw picks the finger direction (along x or along y) that fits obj
// and leaves the fingers most room at the pick and the place poses.
func (x *Expert) chooseYaw(w *world, obj int, p pred) float64 {
	e := &w.ents[obj]
	dest := x.placePoint(w, p)
	best, bestScore := 0.0, math.Inf(-1)
	for _, yaw := range [2]float64{0, math.Pi / 2} {
		width := kindWidth(e.info(), yaw)
		if width > maxOpening-0.01 {
			continue
		}
		off := graspHeight(e) - e.pos.z
		probe := gripper{yaw: yaw, w: openWidth(width)}
		score := math.Inf(1)
		obs := w.obstacles(nil, func(j int) bool { return j == obj || w.carried(j) })
		for _, tip := range [2]vec3{{e.pos.x, e.pos.y, e.pos.z + off}, {dest.x, dest.y, dest.z + 0.012 + off}} {
			probe.tip = tip
			for _, f := range probe.fingerBoxes() {
				for _, o := range obs {
					score = math.Min(score, separation(f, o.box))
				}
			}
		}
		if score > bestScore+0.002 {
			best, bestScore = yaw, score
		}
	}
	return best
}

// separation is the largest gap between a and b along any axis (negative
// when they overlap).
func separation(a, b aabb) float64 {
	s := math.Inf(-1)
	for k := range 3 {
		s = math.Max(s, math.Max(b.min.axis(k)-a.max.axis(k), a.min.axis(k)-b.max.axis(k)))
	}
	return s
}

// drawer runs the plan that opens (hook behind the handle and pull) or
// closes (push the front) drawer j.
func (x *Expert) drawer(w *world, a []float64, j int, open bool) []float64 {
	g := &w.grip
	cab := &w.ents[w.cabinet]
	front := w.cabinetFront()
	fy := front - w.q[j]
	hz := (drawerZ[j][0] + drawerZ[j][1]) / 2
	x.yaw = 0
	// Come down well in front of the face (clear of every handle), then
	// move in behind the handle to hook it.
	start := vec3{cab.pos.x, fy - 0.05, hz - 0.005}
	hook := vec3{cab.pos.x, fy - 0.026, hz - 0.005}
	if !open {
		start = vec3{cab.pos.x, fy - 0.04, hz}
	}
	if g.held >= 0 {
		return x.finish(w, a, x.hold(w), -1) // let go of anything first
	}
	switch x.phase {
	case phApproach:
		if x.enter() {
			x.travelZ = w.clearHeight(start.x, start.y)
		}
		t, ok := x.approach(w, start)
		if ok && g.w < 0.005 {
			x.next(phDescend)
		}
		return x.finish(w, a, t, 1)
	case phDescend:
		if reached(w, start) {
			if open {
				x.next(phEngage)
			} else {
				x.next(phGrip)
			}
		} else if x.stalled > 4 {
			x.retry()
		}
		return x.finish(w, a, start, 1)
	case phEngage:
		if reached(w, hook) {
			x.next(phGrip)
		} else if x.stalled > 4 {
			x.retry()
		}
		return x.finish(w, a, hook, 1)
	case phGrip:
		var t vec3
		done := false
		if open {
			t = vec3{cab.pos.x, front - 0.125 - 0.026, hz - 0.005}
			done = w.q[j] >= 0.12
		} else {
			t = vec3{cab.pos.x, front - 0.022, hz}
			done = w.q[j] <= 0.003
		}
		if done || reached(w, t) || x.stalled > 3 {
			x.next(phRetreat)
			x.target = vec3{g.tip.x, g.tip.y - 0.02, math.Min(workspaceMax.z, g.tip.z+0.06)}
		}
		return x.finish(w, a, t, 1)
	default:
		if reached(w, x.target) || x.stalled > 3 {
			x.retry()
		}
		return x.finish(w, a, x.target, 1)
	}
}

// knob runs the plan that sweeps the closed gripper sideways through the
// stove knob (+x turns it on, −x off).
func (x *Expert) knob(w *world, a []float64, on bool) []float64 {
	g := &w.grip
	k := w.knobPos()
	dir := 1.0
	if !on {
		dir = -1
	}
	x.yaw = 0
	start := vec3{k.x - dir*0.045, k.y, 0.02}
	end := vec3{k.x + dir*0.035, k.y, 0.02}
	if g.held >= 0 {
		return x.finish(w, a, x.hold(w), -1)
	}
	switch x.phase {
	case phApproach:
		if x.enter() {
			x.travelZ = w.clearHeight(start.x, start.y)
		}
		t, ok := x.approach(w, start)
		if ok && g.w < 0.005 {
			x.next(phDescend)
		}
		return x.finish(w, a, t, 1)
	case phDescend:
		if reached(w, start) {
			x.next(phGrip)
		} else if x.stalled > 4 {
			x.retry()
		}
		return x.finish(w, a, start, 1)
	case phGrip:
		if reached(w, end) || x.stalled > 3 {
			x.next(phRetreat)
			x.target = vec3{g.tip.x, g.tip.y, g.tip.z + 0.06}
		}
		return x.finish(w, a, end, 1)
	default:
		if reached(w, x.target) || x.stalled > 3 {
			x.retry()
		}
		return x.finish(w, a, x.target, 1)
	}
}

// push runs the plan that slides a too-large-to-grasp object into a
// region: one axis at a time (x first), the closed fingers behind it at
// its mid-height.
func (x *Expert) push(w *world, a []float64, p pred) []float64 {
	g := &w.grip
	e := &w.ents[p.a]
	inf := e.info()
	goal := w.regionBox(p.reg).centre()
	x.yaw = 0
	if g.held >= 0 {
		return x.finish(w, a, x.hold(w), -1)
	}
	if x.phase == phApproach && x.fresh {
		x.axis = 1
		if math.Abs(goal.x-e.pos.x) > 0.01 {
			x.axis = 0
		}
	}
	k := x.axis
	dir := 1.0
	if goal.axis(k) < e.pos.axis(k) {
		dir = -1
	}
	half := [2]float64{inf.hx, inf.hy}[k]
	pusher := [2]float64{fingerThick, fingerDepth / 2}[k]
	z := math.Min(0.006, inf.h/2)
	start := e.pos.withAxis(k, e.pos.axis(k)-dir*(half+pusher+0.012)).withAxis(2, z)
	switch x.phase {
	case phApproach:
		if x.enter() {
			x.travelZ = w.clearHeight(start.x, start.y)
		}
		t, ok := x.approach(w, start)
		if ok && g.w < 0.005 {
			x.next(phDescend)
		}
		return x.finish(w, a, t, 1)
	case phDescend:
		if reached(w, start) {
			x.next(phGrip)
		} else if x.stalled > 4 {
			x.retry()
		}
		return x.finish(w, a, start, 1)
	case phGrip:
		t := start.withAxis(k, goal.axis(k)-dir*(half+pusher))
		if math.Abs(goal.axis(k)-e.pos.axis(k)) < 0.004 || x.stalled > 3 {
			x.next(phRetreat)
			x.target = vec3{g.tip.x, g.tip.y, 0.08}
		}
		return x.finish(w, a, t, 1)
	default:
		if reached(w, x.target) || x.stalled > 3 {
			x.next(phApproach)
		}
		return x.finish(w, a, x.target, 1)
	}
}
