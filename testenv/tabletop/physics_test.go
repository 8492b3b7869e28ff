package tabletop

import (
	"math"
	"testing"
)

// drive steps w toward fingertip target for n steps with gripper command
// grip, as a noiseless proportional controller.
func drive(w *world, target vec3, grip float64, n int) {
	for range n {
		d := target.sub(w.grip.tip)
		w.step([]float64{clamp(d.x/maxStepPos, -1, 1), clamp(d.y/maxStepPos, -1, 1), clamp(d.z/maxStepPos, -1, 1), 0, 0, 0, grip})
	}
}

func TestGraspCarryRelease(t *testing.T) {
	w := goalWorld(t)
	bowl := &w.ents[glBowl]
	start := bowl.pos
	// Off centre by more than the slack (one finger over the rim), the
	// finger lands on the rim and stops there, and closing grasps nothing.
	off := maxOpening/2 + fingerThick/2 - (bowl.info().hx - bowl.info().wall/2)
	drive(&w, vec3{bowl.pos.x + off, bowl.pos.y, 0.12}, -1, 30)
	drive(&w, vec3{bowl.pos.x + off, bowl.pos.y, 0.016}, -1, 20)
	if z := w.grip.tip.z; z < bowl.top()-1e-9 {
		t.Errorf("finger went into the bowl's wall: tip z %.4f below its top %.4f", z, bowl.top())
	}
	drive(&w, w.grip.tip, 1, 8)
	if w.grip.held >= 0 {
		t.Fatalf("grasped entity %d with the fingers off to the side", w.grip.held)
	}
	// Centred, level with the body: the bowl is held and lifts.
	drive(&w, vec3{bowl.pos.x, bowl.pos.y, 0.12}, -1, 30)
	drive(&w, vec3{bowl.pos.x, bowl.pos.y, 0.016}, -1, 20)
	drive(&w, w.grip.tip, 1, 8)
	if w.grip.held != glBowl {
		t.Fatalf("held %d, want the bowl", w.grip.held)
	}
	if want := 2 * bowl.info().hx; math.Abs(w.grip.w-want) > 1e-12 {
		t.Errorf("finger opening %.4f while holding, want the bowl's width %.4f", w.grip.w, want)
	}
	plate := &w.ents[glPlate]
	drive(&w, vec3{bowl.pos.x, bowl.pos.y, 0.12}, 1, 20)
	if bowl.pos.z < 0.09 {
		t.Errorf("bowl bottom at %.3f after lifting to 0.12", bowl.pos.z)
	}
	drive(&w, vec3{plate.pos.x, plate.pos.y, 0.12}, 1, 30)
	// Released 10 cm up, it falls and comes to rest exactly on the plate.
	drive(&w, w.grip.tip, -1, 15)
	if w.grip.held >= 0 || bowl.falling {
		t.Fatalf("held %d, falling %v after opening", w.grip.held, bowl.falling)
	}
	if bowl.pos.z != plate.top() || bowl.support != glPlate || !w.on(glBowl, glPlate) {
		t.Errorf("bowl rests at z %.4f on %d, want the plate's top %.4f; On = %v", bowl.pos.z, bowl.support, plate.top(), w.on(glBowl, glPlate))
	}
	if d := math.Hypot(bowl.pos.x-start.x, bowl.pos.y-start.y); d < 0.1 {
		t.Errorf("bowl moved only %.3f m", d)
	}
}

func TestPushPlate(t *testing.T) {
	w := goalWorld(t)
	plate := &w.ents[glPlate]
	x0 := plate.pos.x
	left := plate.pos.x - plate.info().hx - 0.03
	drive(&w, vec3{left, plate.pos.y, 0.08}, 1, 30)
	drive(&w, vec3{left, plate.pos.y, 0.006}, 1, 10)
	drive(&w, vec3{left + 0.10, plate.pos.y, 0.006}, 1, 12)
	// The fingers' front face is fingerThick ahead of the tip, so it starts
	// 3 cm − fingerThick from the plate's edge, and the plate moves the
	// rest of the 10 cm; 1e-9 covers rounding of the summed steps.
	want := 0.10 - (0.03 - fingerThick)
	if got := plate.pos.x - x0; math.Abs(got-want) > 1e-9 {
		t.Errorf("plate moved %.5f m, want %.5f", got, want)
	}
	// Something resting on the plate rides along.
	cheese := &w.ents[glCheese]
	cheese.pos = vec3{plate.pos.x, plate.pos.y, plate.top()}
	w.settle()
	cx := cheese.pos.x
	drive(&w, w.grip.tip.add(vec3{0.03, 0, 0}), 1, 4)
	if cheese.support != glPlate || math.Abs((cheese.pos.x-cx)-0.03) > 1e-9 {
		t.Errorf("cheese on the plate moved %.4f with a 3 cm push (support %d)", cheese.pos.x-cx, cheese.support)
	}
}

func TestDrawerPullPush(t *testing.T) {
	w := goalWorld(t)
	j := jointMiddleDrawer
	hz := (drawerZ[j][0] + drawerZ[j][1]) / 2
	cx := w.ents[glCabinet].pos.x
	front := w.cabinetFront()
	drive(&w, vec3{cx, front - 0.05, 0.3}, 1, 30)
	drive(&w, vec3{cx, front - 0.05, hz}, 1, 20)
	if w.q != ([numJoints]float64{}) {
		t.Fatalf("joints moved while descending in front of the cabinet: %v", w.q)
	}
	drive(&w, vec3{cx, front - 0.026, hz}, 1, 5) // behind the handle
	drive(&w, vec3{cx, front - 0.026 - 0.12, hz}, 1, 12)
	if math.Abs(w.q[j]-0.12) > 1e-9 || w.q[jointTopDrawer] != 0 || w.q[jointBottomDrawer] != 0 {
		t.Errorf("after a 12 cm pull, drawers at %v, want only the middle one at 0.12", w.q)
	}
	// Pushing the front back in closes it; the body stops the fingers.
	drive(&w, w.grip.tip.add(vec3{0, -0.03, 0}), 1, 4)
	drive(&w, vec3{cx, front + 0.05, hz}, 1, 20)
	if w.q[j] != 0 || w.grip.tip.y > front-0.01-fingerDepth/2+1e-9 {
		t.Errorf("after pushing, drawer at %.4f and tip at y %.4f (front face %.4f)", w.q[j], w.grip.tip.y, front)
	}
}

func TestKnobSweep(t *testing.T) {
	w := goalWorld(t)
	k := w.knobPos()
	drive(&w, vec3{k.x - 0.045, k.y, 0.2}, 1, 30)
	drive(&w, vec3{k.x - 0.045, k.y, 0.02}, 1, 20)
	if w.q[jointKnob] != 0 {
		t.Fatalf("knob at %.3f before the sweep", w.q[jointKnob])
	}
	drive(&w, vec3{k.x + 0.035, k.y, 0.02}, 1, 10)
	// The 6 cm of the sweep inside the zone count, at knobGain rad per
	// metre; 1e-9 covers rounding of the summed step lengths.
	if got, want := w.q[jointKnob], 0.06*knobGain; math.Abs(got-want) > 1e-9 || !w.holds(goalTurnOn()) {
		t.Errorf("knob at %.3f rad after the sweep, want about %.2f and on", got, want)
	}
	drive(&w, vec3{k.x - 0.045, k.y, 0.02}, 1, 10)
	if !w.holds(pred{kind: predTurnOff, joint: jointKnob}) {
		t.Errorf("knob at %.3f after sweeping back, want off", w.q[jointKnob])
	}
}

// TestGraspToleratesSlack checks that a bowl anywhere within the opening's
// slack ((11 − 8)/2 = 1.5 cm along the opening axis) is grasped and pushed
// to the centre between the fingers, as a real parallel gripper does; the
// 2 cm finger travel per step must not shrink the tolerance to the last
// step's opening.
func TestGraspToleratesSlack(t *testing.T) {
	for _, off := range []float64{0.005, 0.01, 0.014} {
		w := goalWorld(t)
		bowl := &w.ents[glBowl]
		drive(&w, vec3{bowl.pos.x + off, bowl.pos.y, 0.12}, -1, 30)
		drive(&w, vec3{bowl.pos.x + off, bowl.pos.y, 0.016}, -1, 20)
		drive(&w, w.grip.tip, 1, 8)
		if w.grip.held != glBowl {
			t.Fatalf("offset %.3f: held %d, want the bowl", off, w.grip.held)
		}
		if d := bowl.pos.x - w.grip.tip.x; math.Abs(d) > 1e-9 {
			t.Errorf("offset %.3f: bowl %.4f off the fingertip centre, want centred", off, d)
		}
	}
}
