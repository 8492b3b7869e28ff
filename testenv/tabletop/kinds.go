package tabletop

// kindID names a kind of object or fixture; every entity in a scene is one.
type kindID uint8

// Object and fixture kinds. The order is part of the marshalled state
// format; append only.
const (
	kindBlackBowl kindID = iota
	kindPlate
	kindCookieBox
	kindRamekin
	kindAlphabetSoup
	kindCreamCheese
	kindSaladDressing
	kindBBQSauce
	kindKetchup
	kindTomatoSauce
	kindButter
	kindMilk
	kindChocolatePudding
	kindOrangeJuice
	kindWineBottle
	kindMokaPot
	kindWhiteMug
	kindYellowWhiteMug
	kindBook
	kindBasket
	kindCaddy
	kindCabinet
	kindStove
	kindRack
	numKinds
)

// shape is how a kind is drawn and how its footprint is tested.
type shape uint8

const (
	shapeBox shape = iota
	shapeCylinder
)

// kindInfo is the geometry and appearance of a kind. Every entity is
// axis-aligned: a box of half extents hx × hy (a cylinder of radius hx = hy)
// and height h standing on its bottom face.
type kindInfo struct {
	name      string
	shape     shape
	hx, hy, h float64
	// container kinds (bowl, ramekin, basket, caddy) collide through their
	// walls and floor only, so things can sit inside them.
	container   bool
	wall, floor float64
	graspable   bool
	fixture     bool // cabinet, stove, rack: never move
	color       [3]uint8
	// placePoints are offsets from the centre where the expert sets things
	// down on (or in) this kind, tried in order until one is free.
	placePoints [][2]float64
}

// kinds is the catalogue. Sizes are rounded real-object sizes, shrunk where
// the 11 cm gripper opening requires it (a LIBERO bowl is grasped by its rim,
// this one by its body).
var kinds = [numKinds]kindInfo{
	kindBlackBowl:        {name: "black bowl", shape: shapeCylinder, hx: 0.04, hy: 0.04, h: 0.04, container: true, wall: 0.006, floor: 0.006, graspable: true, color: [3]uint8{38, 38, 44}, placePoints: [][2]float64{{0, 0}}},
	kindPlate:            {name: "plate", shape: shapeCylinder, hx: 0.08, hy: 0.08, h: 0.015, color: [3]uint8{246, 246, 240}, placePoints: [][2]float64{{0, 0}}},
	kindCookieBox:        {name: "cookie box", shape: shapeBox, hx: 0.06, hy: 0.075, h: 0.04, color: [3]uint8{214, 84, 30}, placePoints: [][2]float64{{0, 0}}},
	kindRamekin:          {name: "ramekin", shape: shapeCylinder, hx: 0.032, hy: 0.032, h: 0.035, container: true, wall: 0.005, floor: 0.005, graspable: true, color: [3]uint8{150, 185, 235}},
	kindAlphabetSoup:     {name: "alphabet soup", shape: shapeCylinder, hx: 0.033, hy: 0.033, h: 0.08, graspable: true, color: [3]uint8{235, 165, 35}},
	kindCreamCheese:      {name: "cream cheese", shape: shapeBox, hx: 0.03, hy: 0.0225, h: 0.035, graspable: true, color: [3]uint8{60, 110, 215}},
	kindSaladDressing:    {name: "salad dressing", shape: shapeCylinder, hx: 0.025, hy: 0.025, h: 0.12, graspable: true, color: [3]uint8{120, 185, 55}},
	kindBBQSauce:         {name: "bbq sauce", shape: shapeCylinder, hx: 0.025, hy: 0.025, h: 0.11, graspable: true, color: [3]uint8{95, 45, 25}},
	kindKetchup:          {name: "ketchup", shape: shapeCylinder, hx: 0.025, hy: 0.025, h: 0.12, graspable: true, color: [3]uint8{225, 25, 35}},
	kindTomatoSauce:      {name: "tomato sauce", shape: shapeCylinder, hx: 0.033, hy: 0.033, h: 0.07, graspable: true, color: [3]uint8{175, 20, 75}},
	kindButter:           {name: "butter", shape: shapeBox, hx: 0.04, hy: 0.0225, h: 0.03, graspable: true, color: [3]uint8{250, 225, 80}},
	kindMilk:             {name: "milk", shape: shapeBox, hx: 0.0325, hy: 0.0325, h: 0.13, graspable: true, color: [3]uint8{225, 235, 255}},
	kindChocolatePudding: {name: "chocolate pudding", shape: shapeBox, hx: 0.035, hy: 0.025, h: 0.03, graspable: true, color: [3]uint8{125, 72, 40}},
	kindOrangeJuice:      {name: "orange juice", shape: shapeBox, hx: 0.0325, hy: 0.0325, h: 0.13, graspable: true, color: [3]uint8{255, 135, 0}},
	kindWineBottle:       {name: "wine bottle", shape: shapeCylinder, hx: 0.03, hy: 0.03, h: 0.14, graspable: true, color: [3]uint8{25, 105, 50}},
	kindMokaPot:          {name: "moka pot", shape: shapeCylinder, hx: 0.038, hy: 0.038, h: 0.10, graspable: true, color: [3]uint8{175, 178, 190}},
	kindWhiteMug:         {name: "white mug", shape: shapeCylinder, hx: 0.038, hy: 0.038, h: 0.08, graspable: true, color: [3]uint8{252, 252, 252}},
	kindYellowWhiteMug:   {name: "yellow and white mug", shape: shapeCylinder, hx: 0.038, hy: 0.038, h: 0.08, graspable: true, color: [3]uint8{240, 205, 40}},
	kindBook:             {name: "book", shape: shapeBox, hx: 0.012, hy: 0.03, h: 0.09, graspable: true, color: [3]uint8{160, 30, 130}},
	kindBasket:           {name: "basket", shape: shapeBox, hx: 0.10, hy: 0.075, h: 0.07, container: true, wall: 0.008, floor: 0.01, color: [3]uint8{150, 105, 55}, placePoints: [][2]float64{{-0.045, 0}, {0.045, 0}}},
	kindCaddy:            {name: "caddy", shape: shapeBox, hx: 0.09, hy: 0.08, h: 0.06, container: true, wall: 0.006, floor: 0.008, color: [3]uint8{85, 95, 120}},
	kindCabinet:          {name: "wooden cabinet", shape: shapeBox, hx: 0.09, hy: 0.08, h: 0.24, fixture: true, color: [3]uint8{160, 100, 52}, placePoints: [][2]float64{{0, 0}}},
	kindStove:            {name: "stove", shape: shapeBox, hx: 0.12, hy: 0.08, h: 0.04, fixture: true, color: [3]uint8{70, 70, 76}, placePoints: [][2]float64{{-0.06, 0}, {0.06, 0}}},
	kindRack:             {name: "wine rack", shape: shapeBox, hx: 0.07, hy: 0.05, h: 0.10, fixture: true, color: [3]uint8{110, 72, 45}, placePoints: [][2]float64{{0, 0}}},
}

// largeSupport is the footprint size above which On uses "centre inside the
// supporter's footprint" instead of "centres within onRadius": a bowl on a
// 16 cm plate counts anywhere on the plate, a bowl on a ramekin only when
// centred on it.
const largeSupport = 0.08

func (k kindID) info() *kindInfo { return &kinds[k] }

// large reports whether the kind's footprint is wider than largeSupport in
// both directions.
func (k kindID) large() bool {
	i := k.info()
	return 2*i.hx > largeSupport && 2*i.hy > largeSupport
}
