package tabletop

import "math"

// Predicate thresholds.
const (
	// onContact is how far a's bottom may be from b's top for On(a, b) (m).
	onContact = 0.005
	// onRadius is the largest centre distance for On(a, b) when b is small
	// (footprint at most largeSupport wide); a large b needs a's centre
	// inside b's footprint instead.
	onRadius = 0.03
	// drawerOpen and drawerClosed bound a drawer's opening (m) for Open and
	// Close.
	drawerOpen   = 0.10
	drawerClosed = 0.01
	// knobOn and knobOff bound the stove knob's angle (rad) for TurnOn and
	// TurnOff.
	knobOn  = 0.5
	knobOff = 0.1
)

// predKind is the kind of a goal predicate.
type predKind uint8

const (
	predOn predKind = iota
	predIn
	predOpen
	predClose
	predTurnOn
	predTurnOff
)

// regionKind says where a region of In lies.
type regionKind uint8

const (
	regionInterior regionKind = iota // a container's interior
	regionDrawer                     // a drawer's interior (moves with it)
	regionOffset                     // a box relative to an anchor entity's centre
)

// region is an axis-aligned box In tests against.
type region struct {
	kind   regionKind
	anchor int  // entity index (scene order) for interior and offset
	drawer int  // drawer joint for regionDrawer
	box    aabb // offset box, relative to the anchor's centre
}

// pred is one conjunct of a goal.
type pred struct {
	kind  predKind
	a, b  int // entity indices (b for On)
	reg   region
	joint int
}

// box returns the region's current box.
func (w *world) regionBox(r region) aabb {
	switch r.kind {
	case regionInterior:
		in := w.ents[r.anchor].inner()
		in.max.z += 0.02 // a tall item standing inside still counts
		return in
	case regionDrawer:
		return w.drawerInterior(r.drawer)
	}
	return r.box.shift(w.ents[r.anchor].centre())
}

// resting reports whether entity i is placed: not held, not carried, not
// falling.
func (w *world) resting(i int) bool { return !w.carried(i) && !w.ents[i].falling }

// on tests On(a, b): a rests on b's top (bottom within onContact of it),
// above it, and horizontally over it (see onRadius).
func (w *world) on(a, b int) bool {
	ea, eb := &w.ents[a], &w.ents[b]
	if !w.resting(a) || math.Abs(ea.pos.z-eb.top()) > onContact {
		return false
	}
	return w.centredOn(a, b, 1)
}

// centredOn is On(a, b)'s horizontal test with its tolerance scaled by
// frac: a's centre within frac·onRadius of b's (b small), within frac of
// b's radius (a large cylinder) or half-extents (a large box).
func (w *world) centredOn(a, b int, frac float64) bool {
	ea, eb := &w.ents[a], &w.ents[b]
	dx, dy := ea.pos.x-eb.pos.x, ea.pos.y-eb.pos.y
	if !eb.kind.large() {
		return math.Hypot(dx, dy) < frac*onRadius
	}
	ib := eb.info()
	if ib.shape == shapeCylinder {
		return math.Hypot(dx, dy) < frac*ib.hx
	}
	return math.Abs(dx) < frac*ib.hx && math.Abs(dy) < frac*ib.hy
}

// in tests In(a, r): a's centre inside the region's box, a placed.
func (w *world) in(a int, r region) bool {
	return w.resting(a) && w.regionBox(r).contains(w.ents[a].centre())
}

// holds evaluates one predicate.
func (w *world) holds(p pred) bool {
	switch p.kind {
	case predOn:
		return w.on(p.a, p.b)
	case predIn:
		return w.in(p.a, p.reg)
	case predOpen:
		return w.q[p.joint] >= drawerOpen
	case predClose:
		return w.q[p.joint] <= drawerClosed
	case predTurnOn:
		return w.q[jointKnob] >= knobOn
	case predTurnOff:
		return w.q[jointKnob] <= knobOff
	}
	return false
}

// satisfied evaluates a conjunction.
func (w *world) satisfied(goal []pred) bool {
	for _, p := range goal {
		if !w.holds(p) {
			return false
		}
	}
	return true
}
