package tabletop

// caddyBack is the caddy's back compartment, relative to its centre.
var caddyBack = aabb{
	vec3{-kinds[kindCaddy].hx + kinds[kindCaddy].wall, 0, -0.03},
	vec3{kinds[kindCaddy].hx - kinds[kindCaddy].wall, kinds[kindCaddy].hy - kinds[kindCaddy].wall, 0.1},
}

// rightOfPlate is the region "to the right of the plate", relative to the
// plate's centre: 10 to 22 cm to its right, within 7 cm front to back.
var rightOfPlate = aabb{vec3{0.10, -0.07, -0.05}, vec3{0.22, 0.07, 0.10}}

// longSuite is LIBERO-10 (LIBERO-Long): two-part goals in varied scenes.
// The microwave task ("put the yellow and white mug in the microwave and
// close it") is replaced by a drawer task with the same structure (put an
// item into a compartment, then close it), since a front-loading microwave
// does not fit a top-down 2.5-D gripper.
func longSuite() *suiteDef {
	var none [numJoints]float64
	bottomOpen, topOpen := none, none
	bottomOpen[jointBottomDrawer] = 0.13
	topOpen[jointTopDrawer] = 0.13
	basket := func(instruction string, a, b kindID, others ...kindID) task {
		spots := objectSpots
		ents := []placement{at(a, spots[1][0], spots[1][1]), at(b, spots[2][0], spots[2][1]), at(kindBasket, 0.19, 0.12)}
		for i, k := range others {
			s := [...]int{0, 3, 4, 5}[i]
			ents = append(ents, at(k, spots[s][0], spots[s][1]))
		}
		return task{instruction: instruction, ents: ents, goal: []pred{goalInside(0, 2), goalInside(1, 2)}}
	}
	s := &suiteDef{name: SuiteLong, maxSteps: 520}
	s.tasks = [TasksPerSuite]task{
		basket("put both the alphabet soup and the tomato sauce in the basket",
			kindAlphabetSoup, kindTomatoSauce, kindCreamCheese, kindKetchup, kindMilk, kindButter),
		basket("put both the cream cheese box and the butter in the basket",
			kindCreamCheese, kindButter, kindAlphabetSoup, kindTomatoSauce, kindOrangeJuice, kindKetchup),
		{
			instruction: "turn on the stove and put the moka pot on it",
			ents: []placement{
				at(kindMokaPot, -0.10, -0.12), at(kindStove, 0.20, 0.20),
				at(kindBlackBowl, -0.22, 0.06), at(kindPlate, 0.10, -0.16),
			},
			goal: []pred{goalTurnOn(), goalOn(0, 1)},
		},
		{
			instruction: "put the black bowl in the bottom drawer of the cabinet and close it",
			ents: []placement{
				at(kindBlackBowl, 0.05, -0.12), at(kindCabinet, -0.24, 0.20),
				at(kindPlate, 0.20, 0.02), at(kindCreamCheese, -0.14, -0.18),
			},
			q:    bottomOpen,
			goal: []pred{goalInDrawer(0, jointBottomDrawer), goalClose(jointBottomDrawer)},
		},
		{
			instruction: "put the white mug on the left plate and put the yellow and white mug on the right plate",
			ents: []placement{
				at(kindWhiteMug, -0.08, -0.16), at(kindPlate, -0.16, 0.10),
				at(kindYellowWhiteMug, 0.10, -0.17), at(kindPlate, 0.16, 0.10),
				at(kindChocolatePudding, 0.0, -0.02),
			},
			goal: []pred{goalOn(0, 1), goalOn(2, 3)},
		},
		{
			instruction: "pick up the book and place it in the back compartment of the caddy",
			ents: []placement{
				at(kindBook, -0.12, -0.10), at(kindCaddy, 0.12, 0.12),
				at(kindWhiteMug, -0.22, 0.10), at(kindCreamCheese, 0.10, -0.16),
			},
			goal: []pred{goalInBox(0, 1, caddyBack)},
		},
		{
			instruction: "put the white mug on the plate and put the chocolate pudding to the right of the plate",
			ents: []placement{
				at(kindWhiteMug, -0.18, -0.12), at(kindPlate, 0.0, 0.08),
				at(kindChocolatePudding, 0.10, -0.17), at(kindYellowWhiteMug, -0.22, 0.12),
			},
			goal: []pred{goalOn(0, 1), goalInBox(2, 1, rightOfPlate)},
		},
		basket("put both the alphabet soup and the cream cheese box in the basket",
			kindAlphabetSoup, kindCreamCheese, kindTomatoSauce, kindButter, kindMilk, kindKetchup),
		{
			instruction: "put both moka pots on the stove",
			ents: []placement{
				at(kindMokaPot, -0.14, -0.10), at(kindMokaPot, 0.04, -0.16),
				at(kindStove, 0.18, 0.20), at(kindPlate, -0.20, 0.10),
			},
			goal: []pred{goalOn(0, 2), goalOn(1, 2)},
		},
		{
			instruction: "put the chocolate pudding in the top drawer of the cabinet and close it",
			ents: []placement{
				at(kindChocolatePudding, 0.05, -0.12), at(kindCabinet, -0.24, 0.20),
				at(kindWhiteMug, 0.18, -0.02), at(kindBlackBowl, -0.12, -0.18),
			},
			q:    topOpen,
			goal: []pred{goalInDrawer(0, jointTopDrawer), goalClose(jointTopDrawer)},
		},
	}
	return s
}
