package tabletop

func at(k kindID, x, y float64) placement { return placement{kind: k, x: x, y: y, on: supTable} }
func onTop(k kindID, support int, dx, dy float64) placement {
	return placement{kind: k, x: dx, y: dy, on: support}
}
func inDrawer(k kindID, j int) placement { return placement{kind: k, on: supDrawer - j} }

// Spatial scene entity indices: the bowl to move, the other bowl, plate,
// cookie box, ramekin, cabinet, stove.
const (
	spBowl = iota
	spOtherBowl
	spPlate
	spBox
	spRamekin
	spCabinet
	spStove
)

// spatialLayout places the five objects of a spatial task: the plate, the
// cookie box, the ramekin and the other bowl on the table at the given
// points, and the target bowl as bowl says.
func spatialLayout(instruction string, plate, box, ramekin, other [2]float64, bowl placement, q [numJoints]float64) task {
	return task{
		instruction: instruction,
		ents: []placement{
			bowl,
			at(kindBlackBowl, other[0], other[1]),
			at(kindPlate, plate[0], plate[1]),
			at(kindCookieBox, box[0], box[1]),
			at(kindRamekin, ramekin[0], ramekin[1]),
			at(kindCabinet, -0.26, 0.20),
			at(kindStove, 0.24, 0.22),
		},
		q:    q,
		goal: []pred{goalOn(spBowl, spPlate)},
	}
}

// spatialSuite is LIBERO-Spatial: the same objects in ten layouts; the
// instruction names which of two identical black bowls to put on the plate
// by its spatial relation.
func spatialSuite() *suiteDef {
	bowl := func(x, y float64) placement { return at(kindBlackBowl, x, y) }
	type p = [2]float64
	var none [numJoints]float64
	topOpen := none
	topOpen[jointTopDrawer] = 0.13
	s := &suiteDef{name: SuiteSpatial, maxSteps: 220}
	s.tasks = [TasksPerSuite]task{
		spatialLayout("pick up the black bowl between the plate and the ramekin and place it on the plate",
			p{0.13, -0.06}, p{-0.22, -0.20}, p{-0.15, -0.06}, p{0.14, -0.22}, bowl(-0.01, -0.06), none),
		spatialLayout("pick up the black bowl next to the ramekin and place it on the plate",
			p{0.10, -0.16}, p{-0.22, -0.16}, p{0.05, 0.04}, p{0.26, -0.02}, bowl(-0.05, 0.04), none),
		spatialLayout("pick up the black bowl from table center and place it on the plate",
			p{-0.18, -0.16}, p{0.22, 0.01}, p{0.16, -0.20}, p{0.0, -0.22}, bowl(0.0, -0.02), none),
		spatialLayout("pick up the black bowl on the cookie box and place it on the plate",
			p{0.16, -0.16}, p{-0.05, 0.0}, p{-0.22, -0.14}, p{0.18, 0.02}, onTop(kindBlackBowl, spBox, 0, 0), none),
		spatialLayout("pick up the black bowl in the top drawer of the wooden cabinet and place it on the plate",
			p{0.12, -0.14}, p{-0.12, -0.18}, p{0.02, 0.05}, p{0.27, 0.0}, inDrawer(kindBlackBowl, jointTopDrawer), topOpen),
		spatialLayout("pick up the black bowl on the ramekin and place it on the plate",
			p{-0.18, -0.14}, p{0.20, -0.14}, p{0.02, -0.02}, p{0.0, -0.22}, onTop(kindBlackBowl, spRamekin, 0, 0), none),
		spatialLayout("pick up the black bowl next to the cookie box and place it on the plate",
			p{-0.18, -0.16}, p{0.12, -0.02}, p{0.20, -0.20}, p{-0.20, 0.04}, bowl(-0.01, -0.02), none),
		spatialLayout("pick up the black bowl on the stove and place it on the plate",
			p{-0.05, -0.12}, p{-0.22, -0.14}, p{0.18, -0.16}, p{0.08, 0.04}, onTop(kindBlackBowl, spStove, -0.06, 0), none),
		spatialLayout("pick up the black bowl next to the plate and place it on the plate",
			p{-0.08, -0.10}, p{-0.25, -0.15}, p{0.20, -0.20}, p{0.18, 0.04}, bowl(0.07, -0.10), none),
		spatialLayout("pick up the black bowl on the wooden cabinet and place it on the plate",
			p{0.05, -0.12}, p{0.22, -0.02}, p{-0.12, -0.18}, p{-0.06, 0.04}, onTop(kindBlackBowl, spCabinet, 0, 0), none),
	}
	return s
}
