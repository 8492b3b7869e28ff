package tabletop

import (
	"hash/fnv"
	"math/rand/v2"
)

// Suite names.
const (
	SuiteSpatial = "spatial"
	SuiteObject  = "object"
	SuiteGoal    = "goal"
	SuiteLong    = "long"
)

// Evaluation protocol constants.
const (
	// TasksPerSuite is the number of tasks in every suite.
	TasksPerSuite = 10
	// InitStates is the number of fixed initial states per task (LIBERO's
	// evaluation protocol: one trial from each).
	InitStates = 50
	// DemosPerTask is the number of expert demonstrations per task, one
	// from each fixed initial state.
	DemosPerTask = 50
)

// Default jitter half-widths of initial positions (m): objects move
// uniformly within ±1 cm of their layout position, fixtures within ±0.5 cm.
const (
	objectJitter  = 0.01
	fixtureJitter = 0.005
)

// placement is where a task's layout puts one entity.
type placement struct {
	kind kindID
	// x, y are the table position, or for on ≥ 0 the offset from the
	// supporter's centre, or for a drawer the offset from the centre of its
	// exposed part.
	x, y float64
	on   int // supTable, an entity index, or supDrawer - j
}

// task is one of a suite's ten: instruction, layout, initial joints, goal.
type task struct {
	instruction string
	ents        []placement
	q           [numJoints]float64
	goal        []pred
}

// suiteDef is a suite's tasks and limits.
type suiteDef struct {
	name     string
	maxSteps int
	tasks    [TasksPerSuite]task
}

// suites lists the four suites in the order Suites reports them (sorted).
var suites = []*suiteDef{goalSuite(), longSuite(), objectSuite(), spatialSuite()}

func findSuite(name string) *suiteDef {
	for _, s := range suites {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Goal constructors used by the suite files.

func goalOn(a, b int) pred { return pred{kind: predOn, a: a, b: b} }
func goalInside(a, container int) pred {
	return pred{kind: predIn, a: a, reg: region{kind: regionInterior, anchor: container}}
}
func goalInDrawer(a, j int) pred {
	return pred{kind: predIn, a: a, reg: region{kind: regionDrawer, drawer: j}}
}
func goalInBox(a, anchor int, box aabb) pred {
	return pred{kind: predIn, a: a, reg: region{kind: regionOffset, anchor: anchor, box: box}}
}
func goalOpen(j int) pred  { return pred{kind: predOpen, joint: j} }
func goalClose(j int) pred { return pred{kind: predClose, joint: j} }
func goalTurnOn() pred     { return pred{kind: predTurnOn, joint: jointKnob} }

// initSeed is the PCG seed of a suite's fixed initial states: a hash of
// the suite name, so that the states never depend on suite order.
func initSeed(suite string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("accerl/tabletop/" + suite))
	return h.Sum64()
}

// fixedInitRNG is the generator of fixed initial state idx of a task.
func fixedInitRNG(suite string, taskIdx, idx int) *rand.Rand {
	return rand.New(rand.NewPCG(initSeed(suite), uint64(taskIdx)<<32|uint64(idx)))
}

// build lays the task's scene out with positions jittered by rng.
func (t *task) build(rng *rand.Rand) world {
	w := world{cabinet: -1, stove: -1}
	w.q = t.q
	w.ents = make([]entity, len(t.ents))
	placed := make([]bool, len(t.ents))
	jit := func(j float64) float64 { return j * (2*rng.Float64() - 1) }
	w.cabinet, w.stove = t.fixtures()
	// Table-standing entities first, in layout order, then whatever stands
	// on them, so that supporters are placed before what rests on them.
	for pass := 0; pass <= len(t.ents); pass++ {
		for i, p := range t.ents {
			if placed[i] || (p.on >= 0 && !placed[p.on]) || (p.on <= supDrawer && (w.cabinet < 0 || !placed[w.cabinet])) {
				continue
			}
			j := objectJitter
			if p.kind.info().fixture {
				j = fixtureJitter
			}
			e := entity{kind: p.kind, support: p.on}
			switch {
			case p.on == supTable:
				e.pos = vec3{p.x + jit(j), p.y + jit(j), 0}
			case p.on >= 0:
				s := &w.ents[p.on]
				z := s.top()
				if s.info().container && e.fitsIn(s) {
					z = s.pos.z + s.info().floor
				}
				e.pos = vec3{s.pos.x + p.x + jit(j/2), s.pos.y + p.y + jit(j/2), z}
			default:
				d := supDrawer - p.on
				in := w.drawerInterior(d)
				front := w.cabinetFront()
				e.pos = vec3{in.centre().x + p.x + jit(j/2), (in.min.y+front)/2 + p.y + jit(j/2), in.min.z}
			}
			w.ents[i] = e
			placed[i] = true
		}
	}
	w.grip = gripper{
		tip: vec3{jit(0.01), -0.12 + jit(0.01), 0.26 + jit(0.01)},
		w:   maxOpening, held: -1,
	}
	w.settle()
	return w
}

// fixtures returns the entity indices of the cabinet and the stove, -1
// where the scene has none.
func (t *task) fixtures() (cabinet, stove int) {
	cabinet, stove = -1, -1
	for i, p := range t.ents {
		switch p.kind {
		case kindCabinet:
			cabinet = i
		case kindStove:
			stove = i
		}
	}
	return cabinet, stove
}

// slots is the order of entities in observations: each goal's object and
// destination (entity, region anchor, cabinet for drawers, stove for the
// knob), then the rest in layout order.
func (t *task) slots() []int {
	var order []int
	seen := make([]bool, len(t.ents))
	add := func(i int) {
		if i >= 0 && i < len(t.ents) && !seen[i] {
			seen[i] = true
			order = append(order, i)
		}
	}
	find := func(k kindID) int {
		for i, p := range t.ents {
			if p.kind == k {
				return i
			}
		}
		return -1
	}
	for _, g := range t.goal {
		switch g.kind {
		case predOn:
			add(g.a)
			add(g.b)
		case predIn:
			add(g.a)
			if g.reg.kind == regionDrawer {
				add(find(kindCabinet))
			} else {
				add(g.reg.anchor)
			}
		case predOpen, predClose:
			add(find(kindCabinet))
		case predTurnOn, predTurnOff:
			add(find(kindStove))
		}
	}
	for i := range t.ents {
		add(i)
	}
	return order
}
