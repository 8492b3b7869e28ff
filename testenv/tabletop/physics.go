package tabletop

import (
	"math"
	"slices"
)

// Control constants. One action unit moves the fingertip 1.5 cm per step
// along each axis (0.3 m/s at 20 Hz) and turns it 0.1 rad per step.
const (
	controlHz   = 20.0
	maxStepPos  = 0.015
	maxStepRot  = 0.1
	maxTilt     = 0.5         // roll and pitch limit (rad)
	maxYaw      = math.Pi / 2 // a parallel gripper is symmetric under a half turn
	graspTilt   = 0.35        // grasping needs roll and pitch within this (rad)
	releaseGap  = 0.002       // opening beyond the held width that lets go (m)
	graspTopGap = 0.008       // fingertips must be this far below the top (m)
	// contactSlop is the overlap that still counts as touching: a wrist
	// turn can sink a finger a little into what it touches, and it must
	// still push rather than pass through. Deeper overlaps are ignored so
	// that tangled boxes can separate.
	contactSlop = 0.004
)

// step advances the world by one control period under action a (already
// clipped to [-1, 1]).
func (w *world) step(a []float64) {
	g := &w.grip
	g.roll = clamp(g.roll+maxStepRot*a[3], -maxTilt, maxTilt)
	g.pitch = clamp(g.pitch+maxStepRot*a[4], -maxTilt, maxTilt)
	dyaw := clamp(g.yaw+maxStepRot*a[5], -maxYaw, maxYaw) - g.yaw
	g.yaw += dyaw

	before := g.tip
	for k := range 3 {
		w.moveAxis(k, maxStepPos*a[k])
	}
	if w.stove >= 0 {
		// The part of the sideways sweep inside the knob's zone turns it.
		kz := w.knobZone()
		inYZ := func(p vec3) bool { return p.y >= kz.min.y && p.y <= kz.max.y && p.z >= kz.min.z && p.z <= kz.max.z }
		if inYZ(before) && inYZ(g.tip) {
			lo, hi := math.Max(math.Min(before.x, g.tip.x), kz.min.x), math.Min(math.Max(before.x, g.tip.x), kz.max.x)
			turn := 0.0
			if hi > lo {
				turn = math.Copysign(knobGain*(hi-lo), g.tip.x-before.x)
			}
			if kz.contains(g.tip) && g.w < 0.02 && g.held < 0 {
				turn += dyaw // a closed gripper on the knob turns it with its wrist
			}
			w.q[jointKnob] = clamp(w.q[jointKnob]+turn, 0, knobMax)
		}
	}
	w.fingers(a[6])
	w.settle()
}

// moveAxis moves the fingertip by delta along axis k as far as collisions
// allow, pushing free objects and drawer fronts in its way and pulling a
// hooked drawer.
func (w *world) moveAxis(k int, delta float64) {
	g := &w.grip
	cur := g.tip.axis(k)
	delta = clamp(cur+delta, workspaceMin.axis(k), workspaceMax.axis(k)) - cur
	if delta == 0 {
		return
	}
	sign := 1.0
	if delta < 0 {
		sign = -1
	}
	allowed := math.Abs(delta)

	fb := g.fingerBoxes()
	colliders := fb[:]
	var heldBoxes [5]aabb
	if g.held >= 0 {
		colliders = append(colliders, w.entityBoxes(heldBoxes[:0], g.held)...)
	}
	obs := w.obstacles(nil, w.carried)
	type push struct {
		gap   float64
		kind  obstacleKind
		owner int
	}
	var pushes []push
	for _, o := range obs {
		for _, c := range colliders {
			if !c.overlapAxis(o.box, (k+1)%3) || !c.overlapAxis(o.box, (k+2)%3) {
				continue
			}
			var gap float64
			if sign > 0 {
				gap = o.box.min.axis(k) - c.max.axis(k)
			} else {
				gap = c.min.axis(k) - o.box.max.axis(k)
			}
			if gap < -contactSlop || gap >= allowed {
				continue // deep in it already (let it separate), or out of reach
			}
			gap = math.Max(gap, 0)
			switch {
			case o.kind == obsPushable && k != 2:
				pushes = append(pushes, push{gap, o.kind, o.owner})
			case o.kind == obsDrawerFace && k == 1:
				pushes = append(pushes, push{gap, o.kind, o.owner})
			default:
				allowed = gap
			}
		}
	}
	// Pushes resolve nearest first; equal gaps in entity order, so the
	// outcome never depends on map or slice iteration accidents.
	slices.SortStableFunc(pushes, func(a, b push) int {
		switch {
		case a.gap < b.gap:
			return -1
		case a.gap > b.gap:
			return 1
		}
		return int(a.kind) - int(b.kind)
	})
	done := map[[2]int]bool{}
	for _, p := range pushes {
		key := [2]int{int(p.kind), p.owner}
		if p.gap >= allowed || done[key] {
			continue
		}
		done[key] = true
		want := allowed - p.gap
		var got float64
		if p.kind == obsDrawerFace {
			got = math.Abs(w.moveDrawer(p.owner, -sign*want))
		} else {
			got = w.pushEntity(p.owner, k, sign*want)
		}
		allowed = math.Min(allowed, p.gap+got)
	}
	// A fingertip hooked behind a handle pulls the drawer open with it.
	if k == 1 && sign < 0 && w.cabinet >= 0 {
		for j := range 3 {
			if w.handleZone(j).contains(g.tip) {
				allowed = math.Min(allowed, drawerMax-w.q[j])
				w.moveDrawer(j, allowed)
			}
		}
	}
	d := vec3{}.withAxis(k, sign*allowed)
	g.tip = g.tip.add(d)
	if g.held >= 0 {
		w.moveWithDeps(g.held, d)
	}
}

// pushEntity slides entity i (with what rests on it) by up to delta along
// horizontal axis k, stopping at obstacles and the table edge; it returns
// the distance moved.
func (w *world) pushEntity(i, k int, delta float64) float64 {
	sign := 1.0
	if delta < 0 {
		sign = -1
	}
	allowed := math.Abs(delta)
	e := &w.ents[i]
	b := e.box()
	if sign > 0 {
		allowed = math.Min(allowed, math.Max(0, tableBox.max.axis(k)-b.max.axis(k)))
	} else {
		allowed = math.Min(allowed, math.Max(0, b.min.axis(k)-tableBox.min.axis(k)))
	}
	var mine [5]aabb
	boxes := w.entityBoxes(mine[:0], i)
	obs := w.obstacles(nil, func(j int) bool { return w.isDep(j, i) || w.carried(j) })
	for _, o := range obs {
		for _, c := range boxes {
			if !c.overlapAxis(o.box, (k+1)%3) || !c.overlapAxis(o.box, (k+2)%3) {
				continue
			}
			var gap float64
			if sign > 0 {
				gap = o.box.min.axis(k) - c.max.axis(k)
			} else {
				gap = c.min.axis(k) - o.box.max.axis(k)
			}
			if gap < -contactSlop {
				continue
			}
			allowed = math.Min(allowed, math.Max(gap, 0))
		}
	}
	if allowed > 0 {
		w.moveWithDeps(i, vec3{}.withAxis(k, sign*allowed))
	}
	return allowed
}

// fingers moves the fingers toward the opening that command c in [-1, 1]
// asks for (−1 open, +1 closed), grasping what they close on and letting go
// when opened.
func (w *world) fingers(c float64) {
	g := &w.grip
	target := maxOpening * (1 - c) / 2
	if g.held >= 0 {
		width := w.projWidth(g.held)
		if target <= width+releaseGap {
			g.w = width
			return
		}
		e := &w.ents[g.held]
		e.support, e.falling, e.vz = supNone, false, 0
		g.held = -1
		g.w = math.Min(target, width+fingerSpeed)
		return
	}
	prev := g.w
	next := prev + clamp(target-prev, -fingerSpeed, fingerSpeed)
	g.w = next
	if next >= prev {
		g.closeFrom = next
		return
	}
	// What sits between the fingers when they start closing stays between
	// them: the finger that touches first pushes it toward the other one.
	// So the slack is judged at the opening the close started from, not
	// at this step's (which the 2 cm finger travel per step would make a
	// 5 mm tolerance for a bowl in an 11 cm opening).
	best, bestW := -1, 0.0
	for i := range w.ents {
		if width := w.projWidth(i); width <= prev && width > next && w.graspable(i, math.Max(prev, g.closeFrom)) && width > bestW {
			best, bestW = i, width
		}
	}
	if best >= 0 {
		e := &w.ents[best]
		w.centreBetweenFingers(best)
		g.held, g.w = best, bestW
		g.heldOff = e.pos.sub(g.tip)
		e.support, e.falling, e.vz = supNone, false, 0
	}
}

// centreBetweenFingers slides entity i (with what rests on it) along the
// opening axis toward the fingertip centre, as closing fingers push an
// off-centre object until both touch it; obstacles can stop it short.
func (w *world) centreBetweenFingers(i int) {
	g := &w.grip
	d := w.ents[i].pos.sub(g.tip)
	ux, uy := math.Cos(g.yaw), math.Sin(g.yaw)
	along := d.x*ux + d.y*uy
	if math.Abs(along) < 1e-6 {
		return
	}
	w.pushEntity(i, 0, -along*ux)
	w.pushEntity(i, 1, -along*uy)
}

// graspable reports whether entity i sits between fingers opened to
// opening so that closing them grips it: its width along the opening axis
// fits, both fingers reach its sides (centred within the slack), the
// fingertips are level with its body, and the gripper is not tilted much.
func (w *world) graspable(i int, opening float64) bool {
	g := &w.grip
	e := &w.ents[i]
	if !e.info().graspable || math.Abs(g.roll) > graspTilt || math.Abs(g.pitch) > graspTilt {
		return false
	}
	width := w.projWidth(i)
	d := e.pos.sub(g.tip)
	ux, uy := math.Cos(g.yaw), math.Sin(g.yaw)
	along := d.x*ux + d.y*uy
	across := -d.x*uy + d.y*ux
	if math.Abs(along) > (opening-width)/2+1e-9 || math.Abs(across) >= w.projHalfDepth(i) {
		return false
	}
	return g.tip.z >= e.pos.z-0.003 && g.tip.z <= e.top()-graspTopGap
}
