package tabletop

import "math"

// camera is a pinhole camera: a name, and its pose as a function of the
// world (the wrist camera rides on the gripper).
type camera struct {
	name string
	fov  float64 // vertical field of view (rad)
}

func newCamera(name string) *camera {
	switch name {
	case CameraWrist:
		return &camera{name: name, fov: 80 * math.Pi / 180}
	}
	return &camera{name: name, fov: 50 * math.Pi / 180}
}

// pose returns the camera's eye, forward, right and up vectors.
func (c *camera) pose(w *world) (eye, fwd, right, up vec3) {
	var target, upHint vec3
	switch c.name {
	case CameraWrist:
		g := &w.grip
		r := rotZ(g.yaw)
		eye = g.tip.add(r.apply(vec3{0, -0.07, 0.11}))
		target = g.tip.add(r.apply(vec3{0, 0.035, 0}))
		upHint = r.apply(vec3{0, 1, 0})
	default:
		eye = vec3{0, -0.60, 0.56}
		target = vec3{0, 0.03, 0.0}
		upHint = vec3{0, 0, 1}
	}
	fwd = target.sub(eye).unit()
	right = fwd.cross(upHint).unit()
	up = right.cross(fwd)
	return eye, fwd, right, up
}

// raster is a software rasteriser: perspective projection, near-plane
// clipping, a depth buffer over 1/z, flat Lambert shading.
type raster struct {
	size  int
	depth []float64 // 1/z of the nearest surface so far (0 = nothing)
	img   []uint8
	// per-frame camera
	eye, fwd, right, up vec3
	focal               float64
	light               vec3
}

func newRaster(size int) *raster {
	return &raster{size: size, depth: make([]float64, size*size), light: vec3{-0.35, -0.55, 1}.unit()}
}

// Shading constants: the ambient share and the background colour.
const ambient = 0.42

var background = [3]uint8{118, 128, 140}

// begin clears img to the background and sets the camera.
func (r *raster) begin(w *world, c *camera, img []uint8) {
	if len(img) != r.size*r.size*3 {
		panic("tabletop: image buffer has the wrong size")
	}
	r.img = img
	for i := range r.depth {
		r.depth[i] = 0
	}
	for i := 0; i < len(img); i += 3 {
		img[i], img[i+1], img[i+2] = background[0], background[1], background[2]
	}
	r.eye, r.fwd, r.right, r.up = c.pose(w)
	r.focal = float64(r.size) / 2 / math.Tan(c.fov/2)
}

// camPoint is a vertex in camera coordinates (x right, y up, z forward).
type camPoint struct{ x, y, z float64 }

func (r *raster) toCam(p vec3) camPoint {
	d := p.sub(r.eye)
	return camPoint{d.dot(r.right), d.dot(r.up), d.dot(r.fwd)}
}

const nearPlane = 0.01

// tri draws a face triangle of a closed solid with outward normal n
// (world) in colour col, shaded by the light; faces turned away from the
// camera are culled (every solid drawn is closed, or capped, so they are
// hidden anyway).
func (r *raster) tri(a, b, c vec3, n vec3, col [3]uint8) {
	if r.eye.sub(a).dot(n) <= 0 {
		return
	}
	s := ambient + (1-ambient)*math.Max(0, n.dot(r.light))
	r.triFlat(a, b, c, shade(col, s))
}

func shade(col [3]uint8, s float64) [3]uint8 {
	var out [3]uint8
	for i, v := range col {
		out[i] = uint8(math.Min(255, float64(v)*s+0.5))
	}
	return out
}

// triFlat draws a triangle in one colour.
func (r *raster) triFlat(a, b, c vec3, col [3]uint8) {
	in := [3]camPoint{r.toCam(a), r.toCam(b), r.toCam(c)}
	// Clip against the near plane (Sutherland–Hodgman on one plane).
	var poly [4]camPoint
	n := 0
	for i := range 3 {
		p, q := in[i], in[(i+1)%3]
		pin, qin := p.z >= nearPlane, q.z >= nearPlane
		if pin {
			poly[n] = p
			n++
		}
		if pin != qin {
			t := (nearPlane - p.z) / (q.z - p.z)
			poly[n] = camPoint{p.x + t*(q.x-p.x), p.y + t*(q.y-p.y), nearPlane}
			n++
		}
	}
	for i := 1; i+1 < n; i++ {
		r.fill(poly[0], poly[i], poly[i+1], col)
	}
}

// fill rasterises one projected triangle, testing pixel centres.
func (r *raster) fill(a, b, c camPoint, col [3]uint8) {
	half := float64(r.size) / 2
	proj := func(p camPoint) (float64, float64, float64) {
		iz := 1 / p.z
		return half + r.focal*p.x*iz, half - r.focal*p.y*iz, iz
	}
	x0, y0, w0 := proj(a)
	x1, y1, w1 := proj(b)
	x2, y2, w2 := proj(c)
	area := (x1-x0)*(y2-y0) - (x2-x0)*(y1-y0)
	if math.Abs(area) < 1e-12 {
		return
	}
	minX := max(0, int(math.Floor(math.Min(x0, math.Min(x1, x2)))))
	maxX := min(r.size-1, int(math.Ceil(math.Max(x0, math.Max(x1, x2)))))
	minY := max(0, int(math.Floor(math.Min(y0, math.Min(y1, y2)))))
	maxY := min(r.size-1, int(math.Ceil(math.Max(y0, math.Max(y1, y2)))))
	inv := 1 / area
	for py := minY; py <= maxY; py++ {
		fy := float64(py) + 0.5
		for px := minX; px <= maxX; px++ {
			fx := float64(px) + 0.5
			l1 := ((fx-x0)*(y2-y0) - (x2-x0)*(fy-y0)) * inv
			l2 := ((x1-x0)*(fy-y0) - (fx-x0)*(y1-y0)) * inv
			l0 := 1 - l1 - l2
			if l0 < 0 || l1 < 0 || l2 < 0 {
				continue
			}
			iz := l0*w0 + l1*w1 + l2*w2
			k := py*r.size + px
			if iz <= r.depth[k] {
				continue
			}
			r.depth[k] = iz
			r.img[3*k], r.img[3*k+1], r.img[3*k+2] = col[0], col[1], col[2]
		}
	}
}

// box draws an axis-aligned box.
func (r *raster) box(b aabb, col [3]uint8) {
	r.orientedBox(b.centre(), b.max.sub(b.min).scale(0.5), identity(), col)
}

// orientedBox draws a box of half extents h rotated by m about centre c.
func (r *raster) orientedBox(c, h vec3, m mat3, col [3]uint8) {
	var v [8]vec3
	for i := range 8 {
		l := vec3{h.x, h.y, h.z}
		if i&1 == 0 {
			l.x = -l.x
		}
		if i&2 == 0 {
			l.y = -l.y
		}
		if i&4 == 0 {
			l.z = -l.z
		}
		v[i] = c.add(m.apply(l))
	}
	faces := [6][4]int{{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}}
	normals := [6]vec3{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}
	for f, q := range faces {
		n := m.apply(normals[f])
		r.tri(v[q[0]], v[q[1]], v[q[2]], n, col)
		r.tri(v[q[0]], v[q[2]], v[q[3]], n, col)
	}
}

// cylinderSides is the number of facets of a drawn cylinder.
const cylinderSides = 14

// cylinder draws a vertical cylinder (a frustum when rBottom ≠ rTop)
// standing on base, with its top cap in capCol.
func (r *raster) cylinder(base vec3, rBottom, rTop, h float64, col, capCol [3]uint8) {
	top := base.add(vec3{0, 0, h})
	for i := range cylinderSides {
		a0 := 2 * math.Pi * float64(i) / cylinderSides
		a1 := 2 * math.Pi * float64(i+1) / cylinderSides
		d0 := vec3{math.Cos(a0), math.Sin(a0), 0}
		d1 := vec3{math.Cos(a1), math.Sin(a1), 0}
		p0, p1 := base.add(d0.scale(rBottom)), base.add(d1.scale(rBottom))
		q0, q1 := top.add(d0.scale(rTop)), top.add(d1.scale(rTop))
		mid := (a0 + a1) / 2
		n := vec3{math.Cos(mid), math.Sin(mid), (rBottom - rTop) / h}.unit()
		r.tri(p0, p1, q1, n, col)
		r.tri(p0, q1, q0, n, col)
		r.tri(top, q0, q1, vec3{0, 0, 1}, capCol)
	}
}

// disc draws a flat horizontal disc (an ellipse when sx ≠ sy) unshaded.
func (r *raster) disc(c vec3, sx, sy float64, col [3]uint8) {
	for i := range cylinderSides {
		a0 := 2 * math.Pi * float64(i) / cylinderSides
		a1 := 2 * math.Pi * float64(i+1) / cylinderSides
		r.triFlat(c, c.add(vec3{sx * math.Cos(a0), sy * math.Sin(a0), 0}), c.add(vec3{sx * math.Cos(a1), sy * math.Sin(a1), 0}), col)
	}
}
