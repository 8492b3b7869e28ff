package tabletop

// Goal scene entity indices.
const (
	glBowl = iota
	glPlate
	glCheese
	glBottle
	glCabinet
	glStove
	glRack
)

// stoveFront is the region in front of the stove that "push the plate to
// the front of the stove" asks the plate's centre into, relative to the
// stove's centre: its width, from 8.5 to 16 cm in front of its front face.
var stoveFront = aabb{vec3{-0.08, -kinds[kindStove].hy - 0.16, -0.1}, vec3{0.08, -kinds[kindStove].hy - 0.085, 0.1}}

// goalSuite is LIBERO-Goal: one fixed scene (bowl, plate, cream cheese, wine
// bottle, a cabinet with three drawers, a stove with a knob, a wine rack)
// and ten different goals.
func goalSuite() *suiteDef {
	scene := []placement{
		at(kindBlackBowl, -0.10, 0.02),
		at(kindPlate, 0.0, -0.14),
		at(kindCreamCheese, 0.06, 0.03),
		at(kindWineBottle, -0.26, -0.16),
		at(kindCabinet, -0.26, 0.20),
		at(kindStove, 0.22, 0.22),
		at(kindRack, -0.02, 0.25),
	}
	mk := func(instruction string, goal ...pred) task {
		return task{instruction: instruction, ents: scene, goal: goal}
	}
	s := &suiteDef{name: SuiteGoal, maxSteps: 300}
	s.tasks = [TasksPerSuite]task{
		mk("open the middle drawer of the cabinet", goalOpen(jointMiddleDrawer)),
		mk("turn on the stove", goalTurnOn()),
		mk("put the bowl on the plate", goalOn(glBowl, glPlate)),
		mk("push the plate to the front of the stove", goalInBox(glPlate, glStove, stoveFront)),
		mk("put the cream cheese in the bowl", goalInside(glCheese, glBowl)),
		mk("put the bowl on top of the cabinet", goalOn(glBowl, glCabinet)),
		mk("open the top drawer and put the bowl inside", goalOpen(jointTopDrawer), goalInDrawer(glBowl, jointTopDrawer)),
		mk("put the wine bottle on the rack", goalOn(glBottle, glRack)),
		mk("put the bowl on the stove", goalOn(glBowl, glStove)),
		mk("put the wine bottle on top of the cabinet", goalOn(glBottle, glCabinet)),
	}
	return s
}
