package tabletop

import (
	"math/rand/v2"
	"testing"
)

// hair is the distance either side of a threshold the predicate tests
// probe: far above float64 rounding of positions near 1 m (1e-16) and far
// below any threshold (≥ 5 mm).
const hair = 1e-5

// goalWorld lays out the goal suite's scene (bowl 0, plate 1, cream cheese
// 2, wine bottle 3, cabinet 4, stove 5, rack 6) from a fixed seed.
func goalWorld(t *testing.T) world {
	t.Helper()
	return findSuite(SuiteGoal).tasks[0].build(rand.New(rand.NewPCG(1, 2)))
}

func TestOnLargeSupport(t *testing.T) {
	w := goalWorld(t)
	plate := &w.ents[glPlate]
	bowl := &w.ents[glBowl]
	r := plate.info().hx // a plate is large: anywhere over its footprint
	for _, c := range []struct {
		dx, dz float64
		want   bool
	}{
		{0, 0, true},
		{r - hair, 0, true}, {r + hair, 0, false},
		{0, onContact - hair, true}, {0, onContact + hair, false},
		{0, -onContact + hair, true}, {0, -onContact - hair, false},
	} {
		bowl.pos = vec3{plate.pos.x + c.dx, plate.pos.y, plate.top() + c.dz}
		if got := w.on(glBowl, glPlate); got != c.want {
			t.Errorf("bowl at dx %.5f dz %.5f: On = %v, want %v", c.dx, c.dz, got, c.want)
		}
	}
	bowl.pos = vec3{plate.pos.x, plate.pos.y, plate.top()}
	w.grip.held = glBowl
	if w.on(glBowl, glPlate) {
		t.Error("a held bowl counts as On the plate")
	}
	w.grip.held = -1
	bowl.falling = true
	if w.on(glBowl, glPlate) {
		t.Error("a falling bowl counts as On the plate")
	}
}

func TestOnSmallSupportAndBoxFootprint(t *testing.T) {
	w := goalWorld(t)
	bowl, cheese := &w.ents[glBowl], &w.ents[glCheese]
	// A bowl (8 cm) is small: centres within onRadius.
	for _, c := range []struct {
		dx   float64
		want bool
	}{{onRadius - hair, true}, {onRadius + hair, false}} {
		cheese.pos = vec3{bowl.pos.x + c.dx, bowl.pos.y, bowl.top()}
		if got := w.on(glCheese, glBowl); got != c.want {
			t.Errorf("cheese %.5f off the bowl's centre: On = %v, want %v", c.dx, got, c.want)
		}
	}
	// The cabinet top is a large box: inside its rectangle.
	cab := &w.ents[glCabinet]
	hy := cab.info().hy
	for _, c := range []struct {
		dy   float64
		want bool
	}{{hy - hair, true}, {hy + hair, false}, {-hy + hair, true}, {-hy - hair, false}} {
		bowl.pos = vec3{cab.pos.x, cab.pos.y + c.dy, cab.top()}
		if got := w.on(glBowl, glCabinet); got != c.want {
			t.Errorf("bowl %.5f off the cabinet's centre in y: On = %v, want %v", c.dy, got, c.want)
		}
	}
}

func TestInRegions(t *testing.T) {
	w := goalWorld(t)
	bowl, cheese := &w.ents[glBowl], &w.ents[glCheese]
	inBowl := goalInside(glCheese, glBowl).reg
	half := bowl.info().hx - bowl.info().wall
	floor := bowl.pos.z + bowl.info().floor
	for _, c := range []struct {
		dx   float64
		want bool
	}{{0, true}, {half - hair, true}, {half + hair, false}, {-half - hair, false}} {
		cheese.pos = vec3{bowl.pos.x + c.dx, bowl.pos.y, floor}
		if got := w.in(glCheese, inBowl); got != c.want {
			t.Errorf("cheese %.5f off the bowl's centre: In = %v, want %v", c.dx, got, c.want)
		}
	}
	// The drawer's interior moves with the drawer.
	drawer := goalInDrawer(glCheese, jointTopDrawer).reg
	w.q[jointTopDrawer] = 0.12
	in := w.drawerInterior(jointTopDrawer)
	for _, c := range []struct {
		y    float64
		want bool
	}{{in.min.y + hair, true}, {in.min.y - hair, false}, {in.max.y - hair, true}, {in.max.y + hair, false}} {
		cheese.pos = vec3{in.centre().x, c.y, in.min.z}
		if got := w.in(glCheese, drawer); got != c.want {
			t.Errorf("cheese centre at y %.5f (drawer interior %.5f..%.5f): In = %v, want %v", c.y, in.min.y, in.max.y, got, c.want)
		}
	}
	cheese.pos = vec3{in.centre().x, in.centre().y, in.min.z}
	w.moveDrawer(jointTopDrawer, -0.05) // cheese does not rest in it (support unset): stays
	if w.in(glCheese, drawer) != w.regionBox(drawer).contains(cheese.centre()) {
		t.Error("In disagrees with the region box")
	}
	// Front of the stove: a box anchored to the stove's centre.
	front := findSuite(SuiteGoal).tasks[3].goal[0]
	plate := &w.ents[glPlate]
	b := w.regionBox(front.reg)
	for _, c := range []struct {
		y    float64
		want bool
	}{{b.max.y - hair, true}, {b.max.y + hair, false}, {b.min.y + hair, true}, {b.min.y - hair, false}} {
		plate.pos = vec3{b.centre().x, c.y, 0}
		if got := w.holds(front); got != c.want {
			t.Errorf("plate centre at y %.5f (region %.5f..%.5f): In = %v, want %v", c.y, b.min.y, b.max.y, got, c.want)
		}
	}
}

func TestJointPredicates(t *testing.T) {
	w := goalWorld(t)
	for _, c := range []struct {
		p    pred
		q    float64
		want bool
	}{
		{goalOpen(jointMiddleDrawer), drawerOpen + hair, true},
		{goalOpen(jointMiddleDrawer), drawerOpen - hair, false},
		{goalClose(jointMiddleDrawer), drawerClosed - hair, true},
		{goalClose(jointMiddleDrawer), drawerClosed + hair, false},
		{goalTurnOn(), knobOn + hair, true},
		{goalTurnOn(), knobOn - hair, false},
		{pred{kind: predTurnOff, joint: jointKnob}, knobOff - hair, true},
		{pred{kind: predTurnOff, joint: jointKnob}, knobOff + hair, false},
	} {
		w.q[c.p.joint] = c.q
		if got := w.holds(c.p); got != c.want {
			t.Errorf("predicate %d at joint value %.5f = %v, want %v", c.p.kind, c.q, got, c.want)
		}
	}
	w.q[jointTopDrawer], w.q[jointKnob] = 0.12, 0.7
	if !w.satisfied([]pred{goalOpen(jointTopDrawer), goalTurnOn()}) || w.satisfied([]pred{goalOpen(jointTopDrawer), goalOpen(jointBottomDrawer)}) {
		t.Error("conjunction evaluated wrongly")
	}
}
