package tabletop

import "math"

// Scene colours not tied to an entity kind.
var (
	tableColor   = [3]uint8{200, 176, 136}
	fingerColor  = [3]uint8{215, 215, 222}
	palmColor    = [3]uint8{55, 55, 66}
	armColor     = [3]uint8{232, 232, 236}
	metalColor   = [3]uint8{190, 190, 198}
	burnerOff    = [3]uint8{40, 40, 44}
	burnerOn     = [3]uint8{255, 70, 20}
	handleColor  = [3]uint8{215, 200, 150}
	shadowFactor = 0.72
)

func darker(c [3]uint8, s float64) [3]uint8 { return shade(c, s) }

// drawScene renders the world from camera c into img (size² × 3 RGB).
func (r *raster) drawScene(w *world, c *camera, img []uint8) {
	r.begin(w, c, img)
	r.box(tableBox, tableColor)
	// Blob shadows on the table under everything that moves, cast along the
	// light, so that height above the table is visible in one image.
	sh := darker(tableColor, shadowFactor)
	for i := range w.ents {
		e := &w.ents[i]
		if e.info().fixture {
			continue
		}
		r.shadow(e.pos, e.info().hx, e.info().hy, sh)
	}
	g := &w.grip
	r.shadow(g.tip, g.w/2+fingerThick, fingerDepth, sh)
	for i := range w.ents {
		r.entity(w, i)
	}
	r.gripper(w, c.name != CameraWrist)
}

// shadow draws a footprint-sized ellipse where the light projects a point
// at height p.z onto the table.
func (r *raster) shadow(p vec3, hx, hy float64, col [3]uint8) {
	t := p.z / r.light.z
	c := vec3{p.x - r.light.x*t, p.y - r.light.y*t, 0.0008}
	r.disc(c, hx, hy, col)
}

// entity draws one entity in its kind's style.
func (r *raster) entity(w *world, i int) {
	e := &w.ents[i]
	inf := e.info()
	col := inf.color
	p := e.pos
	switch e.kind {
	case kindBlackBowl:
		r.cylinder(p, inf.hx*0.62, inf.hx, inf.h, col, [3]uint8{18, 18, 22})
	case kindRamekin:
		r.cylinder(p, inf.hx*0.85, inf.hx, inf.h, col, darker(col, 0.7))
	case kindPlate:
		r.cylinder(p, inf.hx*0.75, inf.hx, inf.h, darker(col, 0.9), col)
	case kindAlphabetSoup, kindTomatoSauce:
		r.cylinder(p, inf.hx, inf.hx, inf.h*0.3, [3]uint8{240, 240, 235}, metalColor)
		r.cylinder(p.add(vec3{0, 0, inf.h * 0.3}), inf.hx, inf.hx, inf.h*0.7, col, metalColor)
	case kindSaladDressing, kindBBQSauce, kindKetchup, kindWineBottle:
		r.cylinder(p, inf.hx, inf.hx, inf.h*0.68, col, col)
		r.cylinder(p.add(vec3{0, 0, inf.h * 0.68}), inf.hx, inf.hx*0.4, inf.h*0.12, col, col)
		r.cylinder(p.add(vec3{0, 0, inf.h * 0.8}), inf.hx*0.4, inf.hx*0.35, inf.h*0.2, darker(col, 0.8), [3]uint8{230, 230, 230})
	case kindMokaPot:
		r.cylinder(p, inf.hx, inf.hx*0.7, inf.h*0.5, col, col)
		r.cylinder(p.add(vec3{0, 0, inf.h * 0.5}), inf.hx*0.7, inf.hx, inf.h*0.4, col, darker(col, 0.8))
		r.cylinder(p.add(vec3{0, 0, inf.h * 0.9}), inf.hx*0.25, inf.hx*0.2, inf.h*0.1, palmColor, palmColor)
		r.box(boxAt(p.add(vec3{inf.hx, 0, inf.h * 0.45}), 0.012, 0.006, inf.h*0.35), palmColor)
	case kindWhiteMug, kindYellowWhiteMug:
		inner := darker(col, 0.55)
		if e.kind == kindYellowWhiteMug {
			r.cylinder(p, inf.hx, inf.hx, inf.h*0.5, [3]uint8{250, 250, 250}, inner)
			r.cylinder(p.add(vec3{0, 0, inf.h * 0.5}), inf.hx, inf.hx, inf.h*0.5, col, inner)
		} else {
			r.cylinder(p, inf.hx, inf.hx, inf.h, col, inner)
		}
		r.box(boxAt(p.add(vec3{inf.hx + 0.008, 0, inf.h * 0.2}), 0.009, 0.005, inf.h*0.6), col)
	case kindMilk, kindOrangeJuice:
		b := e.box()
		b.max.z -= inf.h * 0.15
		r.box(b, col)
		r.box(aabb{vec3{b.min.x, b.min.y, b.max.z}, vec3{b.max.x, b.max.y, e.top()}}, [3]uint8{60, 110, 200})
	case kindBasket, kindCaddy:
		r.container(e)
		if e.kind == kindCaddy {
			r.box(boxAt(p.add(vec3{0, 0, inf.floor}), inf.hx-inf.wall, 0.003, inf.h*0.8), darker(col, 1.2))
		}
	case kindCabinet:
		r.cabinet(w, e)
	case kindStove:
		r.stove(w, e)
	case kindRack:
		r.rack(e)
	default:
		r.box(e.box(), col)
	}
}

// container draws an open box: floor and four walls.
func (r *raster) container(e *entity) {
	inf := e.info()
	b := e.box()
	col, t := inf.color, inf.wall
	r.box(aabb{b.min, vec3{b.max.x, b.max.y, b.min.z + inf.floor}}, darker(col, 0.75))
	r.box(aabb{b.min, vec3{b.min.x + t, b.max.y, b.max.z}}, col)
	r.box(aabb{vec3{b.max.x - t, b.min.y, b.min.z}, b.max}, col)
	r.box(aabb{b.min, vec3{b.max.x, b.min.y + t, b.max.z}}, col)
	r.box(aabb{vec3{b.min.x, b.max.y - t, b.min.z}, b.max}, col)
}

// cabinet draws the body, the three drawer fronts with handles, and the
// trays of open drawers.
func (r *raster) cabinet(w *world, e *entity) {
	col := e.info().color
	r.box(e.box(), col)
	for j := range 3 {
		f := w.drawerFace(j)
		if w.q[j] > 0.003 {
			fl := w.drawerFloor(j)
			in := darker(col, 0.8)
			r.box(fl, darker(col, 0.6))
			r.box(aabb{vec3{fl.min.x, fl.min.y, fl.min.z}, vec3{fl.min.x + 0.006, fl.max.y, f.max.z - 0.01}}, in)
			r.box(aabb{vec3{fl.max.x - 0.006, fl.min.y, fl.min.z}, vec3{fl.max.x, fl.max.y, f.max.z - 0.01}}, in)
		}
		face := f
		face.min.z += 0.003
		face.max.z -= 0.003
		r.box(face, darker(col, 1.18))
		hz := (drawerZ[j][0] + drawerZ[j][1]) / 2
		r.box(aabb{vec3{e.pos.x - 0.035, f.min.y - 0.012, hz - 0.006}, vec3{e.pos.x + 0.035, f.min.y, hz + 0.006}}, handleColor)
	}
}

// stove draws the body, two burners (glowing when the knob is on) and the
// knob, whose bar turns with the joint.
func (r *raster) stove(w *world, e *entity) {
	inf := e.info()
	r.box(e.box(), inf.color)
	burner := burnerOff
	if w.q[jointKnob] >= knobOn {
		burner = burnerOn
	}
	for _, pp := range inf.placePoints {
		c := vec3{e.pos.x + pp[0], e.pos.y + pp[1], e.top()}
		r.cylinder(c, 0.042, 0.042, 0.003, darker(burner, 0.8), burner)
	}
	k := w.knobPos()
	r.cylinder(vec3{k.x, k.y + 0.002, k.z - 0.012}, 0.012, 0.012, 0.024, metalColor, metalColor)
	r.orientedBox(vec3{k.x, k.y - 0.006, k.z}, vec3{0.004, 0.006, 0.014}, rotY(w.q[jointKnob]), [3]uint8{220, 40, 30})
}

// rack draws a wine rack: base, top frame and corner posts.
func (r *raster) rack(e *entity) {
	inf := e.info()
	b := e.box()
	col := inf.color
	r.box(aabb{b.min, vec3{b.max.x, b.max.y, b.min.z + 0.015}}, col)
	top := aabb{vec3{b.min.x, b.min.y, b.max.z - 0.015}, b.max}
	r.box(top, darker(col, 1.25))
	for _, sx := range [2]float64{-1, 1} {
		for _, sy := range [2]float64{-1, 1} {
			c := vec3{e.pos.x + sx*(inf.hx-0.007), e.pos.y + sy*(inf.hy-0.007), b.min.z}
			r.box(boxAt(c, 0.007, 0.007, inf.h), col)
		}
	}
	for k := -1; k <= 1; k++ {
		c := vec3{e.pos.x + float64(k)*inf.hx*0.5, e.pos.y, b.max.z - 0.03}
		r.box(boxAt(c, 0.004, inf.hy, 0.03), darker(col, 0.7))
	}
}

// gripper draws fingers and palm, and for an outside camera the wrist and
// the arm reaching back to a base behind the table.
func (r *raster) gripper(w *world, arm bool) {
	g := &w.grip
	m := g.rotation().mul(rotX(math.Pi)) // undo the pointing-down half turn: local z up
	off := g.w/2 + fingerThick/2
	for _, s := range [2]float64{-1, 1} {
		c := g.tip.add(m.apply(vec3{s * off, 0, fingerLength / 2}))
		r.orientedBox(c, vec3{fingerThick / 2, fingerDepth / 2, fingerLength / 2}, m, fingerColor)
	}
	palm := g.tip.add(m.apply(vec3{0, 0, fingerLength + palmHeight/2}))
	if !arm {
		return // the wrist camera sits just behind the palm
	}
	r.orientedBox(palm, vec3{g.w/2 + fingerThick, fingerDepth/2 + 0.004, palmHeight / 2}, m, palmColor)
	wristTop := g.tip.add(m.apply(vec3{0, 0, fingerLength + palmHeight + 0.09}))
	r.link(palm, wristTop, 0.022, armColor)
	r.link(wristTop, vec3{0, 0.50, 0.42}, 0.03, armColor)
}

// link draws a square beam of half width hw from a to b.
func (r *raster) link(a, b vec3, hw float64, col [3]uint8) {
	d := b.sub(a)
	l := d.norm()
	if l < 1e-9 {
		return
	}
	x := d.scale(1 / l)
	ref := vec3{0, 0, 1}
	if math.Abs(x.z) > 0.9 {
		ref = vec3{1, 0, 0}
	}
	y := ref.cross(x).unit()
	z := x.cross(y)
	m := mat3{{x.x, y.x, z.x}, {x.y, y.y, z.y}, {x.z, y.z, z.z}}
	r.orientedBox(a.add(d.scale(0.5)), vec3{l / 2, hw, hw}, m, col)
}
