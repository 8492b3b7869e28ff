package tabletop

import "math"

// Support codes: an entity rests on the table, on another entity (its
// index, ≥ 0), inside drawer j (supDrawer - j), or on nothing (held or
// falling).
const (
	supTable  = -1
	supDrawer = -10 // drawer j is supDrawer - j
	supNone   = -100
)

// Joint indices: the cabinet's three drawers (prismatic, metres pulled out)
// and the stove knob (revolute, radians).
const (
	jointTopDrawer = iota
	jointMiddleDrawer
	jointBottomDrawer
	jointKnob
	numJoints
)

// Joint ranges and the cabinet's drawer geometry.
const (
	drawerMax   = 0.14 // fully pulled out (m)
	drawerDepth = 0.14 // inside length of a drawer (m)
	drawerInset = 0.015
	knobMax     = 1.2 // rad
	// knobGain turns the knob per metre the gripper sweeps through it
	// sideways (+x turns it on): 2 cm is 0.3 rad.
	knobGain = 15.0
)

// drawerZ is the vertical extent of each drawer (top, middle, bottom).
var drawerZ = [3][2]float64{{0.165, 0.235}, {0.09, 0.16}, {0.015, 0.085}}

// Table and workspace limits of the fingertip centre (m).
var (
	tableBox     = aabb{vec3{-0.5, -0.36, -0.05}, vec3{0.5, 0.36, 0}}
	workspaceMin = vec3{-0.38, -0.32, 0.002}
	workspaceMax = vec3{0.38, 0.32, 0.45}
)

// Gripper geometry (m). The fingertip centre is the controlled point; the
// fingers open along the gripper's local x axis (rotated by yaw).
const (
	maxOpening   = 0.11
	fingerThick  = 0.012 // along the opening axis
	fingerDepth  = 0.02  // across it
	fingerLength = 0.05
	palmHeight   = 0.02
	fingerSpeed  = 0.02 // opening change per step
)

// entity is one object or fixture of a scene.
type entity struct {
	kind    kindID
	pos     vec3 // bottom-face centre
	vz      float64
	falling bool
	support int
}

func (e *entity) info() *kindInfo { return e.kind.info() }

// box is the entity's bounding box.
func (e *entity) box() aabb { i := e.info(); return boxAt(e.pos, i.hx, i.hy, i.h) }

// top is the height of the entity's top face.
func (e *entity) top() float64 { return e.pos.z + e.info().h }

// centre is the geometric centre (the position in observations).
func (e *entity) centre() vec3 { return e.pos.add(vec3{0, 0, e.info().h / 2}) }

// inner is a container's interior footprint and height range.
func (e *entity) inner() aabb {
	i := e.info()
	return boxAt(e.pos.add(vec3{0, 0, i.floor}), i.hx-i.wall, i.hy-i.wall, i.h-i.floor)
}

// fitsIn reports whether e is small enough to go inside container c (its
// footprint at most 5 mm wider than c's interior each way; a slightly too
// big item wedges in, as a cream cheese box in a bowl does).
func (e *entity) fitsIn(c *entity) bool {
	i, ci := e.info(), c.info()
	return i.hx <= ci.hx-ci.wall+0.005 && i.hy <= ci.hy-ci.wall+0.005
}

// gripper is the kinematic parallel gripper.
type gripper struct {
	tip              vec3 // fingertip centre
	roll, pitch, yaw float64
	w                float64 // finger opening
	held             int     // entity index or -1
	heldOff          vec3    // held entity's pos minus tip
	closeFrom        float64 // opening at which the fingers last started closing
}

// world is the simulated scene: entities, joints, gripper.
type world struct {
	ents    []entity
	q       [numJoints]float64
	cabinet int // entity index of the cabinet, or -1
	stove   int
	grip    gripper
}

func (w *world) has(i int) bool { return i >= 0 && i < len(w.ents) }

// rotation is the gripper's orientation: pointing down (a half turn about
// x), then roll, pitch, yaw about the world axes.
func (g *gripper) rotation() mat3 {
	return rotZ(g.yaw).mul(rotY(g.pitch)).mul(rotX(g.roll)).mul(rotX(math.Pi))
}

// --- drawers -------------------------------------------------------------

// cabinetFront is the y of the cabinet body's front face.
func (w *world) cabinetFront() float64 {
	c := &w.ents[w.cabinet]
	return c.pos.y - c.info().hy
}

// drawerFace is the front plate of drawer j, 1 cm thick.
func (w *world) drawerFace(j int) aabb {
	c := &w.ents[w.cabinet]
	fy := w.cabinetFront() - w.q[j]
	hx := c.info().hx - 0.004
	return aabb{vec3{c.pos.x - hx, fy - 0.01, drawerZ[j][0]}, vec3{c.pos.x + hx, fy, drawerZ[j][1]}}
}

// drawerFloor is the floor slab of drawer j.
func (w *world) drawerFloor(j int) aabb {
	c := &w.ents[w.cabinet]
	fy := w.cabinetFront() - w.q[j]
	hx := c.info().hx - drawerInset
	return aabb{vec3{c.pos.x - hx, fy, drawerZ[j][0]}, vec3{c.pos.x + hx, fy + drawerDepth, drawerZ[j][0] + 0.01}}
}

// drawerInterior is the region In(x, drawer j) tests: the space above the
// floor, moving with the drawer.
func (w *world) drawerInterior(j int) aabb {
	f := w.drawerFloor(j)
	return aabb{vec3{f.min.x, f.min.y, f.max.z}, vec3{f.max.x, f.max.y, drawerZ[j][1]}}
}

// handleZone is where the fingertip hooks drawer j's handle: in front of
// the face, level with the handle.
func (w *world) handleZone(j int) aabb {
	c := &w.ents[w.cabinet]
	fy := w.cabinetFront() - w.q[j]
	hz := (drawerZ[j][0] + drawerZ[j][1]) / 2
	return aabb{vec3{c.pos.x - 0.05, fy - 0.04, hz - 0.03}, vec3{c.pos.x + 0.05, fy - 0.01, hz + 0.02}}
}

// moveDrawer changes drawer j's opening by dq (clamped) and carries what
// rests in it; it returns the change made.
func (w *world) moveDrawer(j int, dq float64) float64 {
	nq := clamp(w.q[j]+dq, 0, drawerMax)
	dq = nq - w.q[j]
	w.q[j] = nq
	if dq != 0 {
		for i := range w.ents {
			if w.ents[i].support == supDrawer-j {
				w.moveWithDeps(i, vec3{0, -dq, 0})
			}
		}
	}
	return dq
}

// --- knob ---------------------------------------------------------------

// knobPos is the stove knob's centre, on the stove's front face.
func (w *world) knobPos() vec3 {
	s := &w.ents[w.stove]
	return vec3{s.pos.x + s.info().hx - 0.05, s.pos.y - s.info().hy - 0.012, 0.02}
}

// knobZone is where the fingertip turns the knob.
func (w *world) knobZone() aabb {
	k := w.knobPos()
	return aabb{vec3{k.x - 0.03, k.y - 0.02, 0}, vec3{k.x + 0.03, k.y + 0.02, 0.045}}
}

// --- support ------------------------------------------------------------

// isDep reports whether entity i rests (directly or through others) on
// entity root, or is root.
func (w *world) isDep(i, root int) bool {
	for n := 0; i >= 0 && n <= len(w.ents); n++ {
		if i == root {
			return true
		}
		i = w.ents[i].support
	}
	return false
}

// carried reports whether entity i moves with the gripper.
func (w *world) carried(i int) bool { return w.grip.held >= 0 && w.isDep(i, w.grip.held) }

// moveWithDeps moves entity i and everything resting on it.
func (w *world) moveWithDeps(i int, d vec3) {
	for j := range w.ents {
		if w.isDep(j, i) {
			w.ents[j].pos = w.ents[j].pos.add(d)
		}
	}
}

// restSurface is the highest surface at or below entity i's bottom that
// would hold it: the table, the top of anything under its footprint, a
// container's floor when its centre is inside the container, a drawer's
// floor when its centre is inside the drawer. It returns the height and the
// support code.
func (w *world) restSurface(i int) (float64, int) {
	e := &w.ents[i]
	fp := e.box()
	c := e.pos
	bottom := e.pos.z + 1e-7
	bestZ, best := 0.0, supTable
	consider := func(z float64, owner int) {
		if z <= bottom && z > bestZ {
			bestZ, best = z, owner
		}
	}
	for j := range w.ents {
		if j == i || w.isDep(j, i) || w.carried(j) || w.ents[j].falling {
			continue
		}
		o := &w.ents[j]
		oi := o.info()
		switch {
		case oi.container && o.inner().containsXY(c.x, c.y) && e.fitsIn(o):
			consider(o.pos.z+oi.floor, j)
		case fp.overlapsXY(o.box()):
			consider(o.top(), j)
		}
	}
	if w.cabinet >= 0 {
		for d := range 3 {
			if w.drawerInterior(d).containsXY(c.x, c.y) {
				consider(w.drawerFloor(d).max.z, supDrawer-d)
			}
		}
	}
	return bestZ, best
}

// settle lets unsupported entities fall (gravity at the 20 Hz control
// period) and records what each resting entity stands on.
func (w *world) settle() {
	const g, dt = 9.81, 1.0 / controlHz
	for i := range w.ents {
		e := &w.ents[i]
		if e.info().fixture || i == w.grip.held || w.carried(i) {
			continue
		}
		if e.support >= 0 && w.ents[e.support].falling {
			continue // rides on its falling supporter
		}
		z, owner := w.restSurface(i)
		if !e.falling {
			if e.pos.z <= z+1e-7 {
				e.support = owner
				continue
			}
			e.falling, e.vz, e.support = true, 0, supNone
		}
		e.vz += g * dt
		dz := e.vz * dt
		if e.pos.z-dz <= z {
			dz = e.pos.z - z
			e.falling, e.vz = false, 0
		}
		w.moveWithDeps(i, vec3{0, 0, -dz})
		if !e.falling {
			e.pos.z = z // exact, so that contact tests see no rounding gap
			e.support = owner
		}
	}
}

// --- obstacles ----------------------------------------------------------

// obstacleKind says how a collision box reacts to the gripper.
type obstacleKind uint8

const (
	obsStatic     obstacleKind = iota // blocks
	obsPushable                       // a free object: moves along horizontally
	obsDrawerFace                     // moves the drawer along y
)

// obstacle is one collision box.
type obstacle struct {
	box   aabb
	kind  obstacleKind
	owner int // entity index, or drawer index for obsDrawerFace, or -1
}

// entityBoxes appends the collision boxes of entity i: walls and floor for
// containers, the body for everything else.
func (w *world) entityBoxes(dst []aabb, i int) []aabb {
	e := &w.ents[i]
	inf := e.info()
	b := e.box()
	if !inf.container {
		return append(dst, b)
	}
	t := inf.wall
	return append(dst,
		aabb{b.min, vec3{b.max.x, b.max.y, b.min.z + inf.floor}},
		aabb{b.min, vec3{b.min.x + t, b.max.y, b.max.z}},
		aabb{vec3{b.max.x - t, b.min.y, b.min.z}, b.max},
		aabb{b.min, vec3{b.max.x, b.min.y + t, b.max.z}},
		aabb{vec3{b.min.x, b.max.y - t, b.min.z}, b.max},
	)
}

// obstacles lists every collision box except those of entities skip
// accepts.
func (w *world) obstacles(dst []obstacle, skip func(int) bool) []obstacle {
	var boxes [5]aabb
	for i := range w.ents {
		if skip(i) {
			continue
		}
		kind := obsPushable
		if w.ents[i].info().fixture || w.ents[i].falling {
			kind = obsStatic
		}
		for _, b := range w.entityBoxes(boxes[:0], i) {
			dst = append(dst, obstacle{b, kind, i})
		}
	}
	if w.cabinet >= 0 {
		for j := range 3 {
			dst = append(dst, obstacle{w.drawerFace(j), obsDrawerFace, j}, obstacle{w.drawerFloor(j), obsStatic, -1})
		}
	}
	return dst
}

// fingerBoxes are the gripper's collision boxes: two fingers and the palm
// above them, as axis-aligned bounds of the yawed shapes.
func (g *gripper) fingerBoxes() [3]aabb {
	c, s := math.Abs(math.Cos(g.yaw)), math.Abs(math.Sin(g.yaw))
	ux, uy := math.Cos(g.yaw), math.Sin(g.yaw)
	half := func(a, b float64) (float64, float64) { return c*a + s*b, s*a + c*b }
	fx, fy := half(fingerThick/2, fingerDepth/2)
	off := g.w/2 + fingerThick/2
	var out [3]aabb
	for k, sign := range [2]float64{-1, 1} {
		p := g.tip.add(vec3{sign * off * ux, sign * off * uy, 0})
		out[k] = boxAt(p, fx, fy, fingerLength)
	}
	px, py := half(g.w/2+fingerThick, fingerDepth/2+0.002)
	out[2] = boxAt(g.tip.add(vec3{0, 0, fingerLength}), px, py, palmHeight)
	return out
}

// projWidth is entity i's width along the gripper's opening axis.
func (w *world) projWidth(i int) float64 {
	inf := w.ents[i].info()
	if inf.shape == shapeCylinder {
		return 2 * inf.hx
	}
	c, s := math.Abs(math.Cos(w.grip.yaw)), math.Abs(math.Sin(w.grip.yaw))
	return 2 * (c*inf.hx + s*inf.hy)
}

// projDepth is entity i's half extent across the opening axis.
func (w *world) projHalfDepth(i int) float64 {
	inf := w.ents[i].info()
	if inf.shape == shapeCylinder {
		return inf.hx
	}
	c, s := math.Abs(math.Cos(w.grip.yaw)), math.Abs(math.Sin(w.grip.yaw))
	return s*inf.hx + c*inf.hy
}
