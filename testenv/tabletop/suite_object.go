package tabletop

// objectItems are LIBERO-Object's ten grocery items, one target per task.
var objectItems = [TasksPerSuite]kindID{
	kindAlphabetSoup, kindCreamCheese, kindSaladDressing, kindBBQSauce, kindKetchup,
	kindTomatoSauce, kindButter, kindMilk, kindChocolatePudding, kindOrangeJuice,
}

// objectSpots are the table points grocery items stand on; the basket
// stands at the back right.
var objectSpots = [6][2]float64{
	{-0.24, -0.16}, {-0.10, -0.17}, {0.04, -0.16}, {0.19, -0.12}, {-0.22, 0.04}, {-0.06, 0.06},
}

// objectSuite is LIBERO-Object: a basket and six of the ten grocery items;
// each task asks for a different item in the basket, among five
// distractors that change with the task.
func objectSuite() *suiteDef {
	s := &suiteDef{name: SuiteObject, maxSteps: 280}
	for t := range TasksPerSuite {
		target := objectItems[t]
		ents := []placement{{}, at(kindBasket, 0.19, 0.12)}
		spot := t % len(objectSpots)
		ents[0] = at(target, objectSpots[spot][0], objectSpots[spot][1])
		next := 1
		for k := range objectSpots {
			if k == spot {
				continue
			}
			item := objectItems[(t+next*3)%TasksPerSuite]
			if item == target {
				item = objectItems[(t+next*3+1)%TasksPerSuite]
			}
			ents = append(ents, at(item, objectSpots[k][0], objectSpots[k][1]))
			next++
		}
		s.tasks[t] = task{
			instruction: "pick up the " + target.info().name + " and place it in the basket",
			ents:        ents,
			goal:        []pred{goalInside(0, 1)},
		}
	}
	return s
}
