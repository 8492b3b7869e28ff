package tabletop

import "math"

// vec3 is a point or direction in table coordinates (metres): x to the
// right, y away from the agentview camera (the back of the table), z up from
// the table top.
type vec3 struct{ x, y, z float64 }

func (a vec3) add(b vec3) vec3      { return vec3{a.x + b.x, a.y + b.y, a.z + b.z} }
func (a vec3) sub(b vec3) vec3      { return vec3{a.x - b.x, a.y - b.y, a.z - b.z} }
func (a vec3) scale(s float64) vec3 { return vec3{a.x * s, a.y * s, a.z * s} }
func (a vec3) dot(b vec3) float64   { return a.x*b.x + a.y*b.y + a.z*b.z }
func (a vec3) norm() float64        { return math.Sqrt(a.dot(a)) }
func (a vec3) axis(k int) float64   { return [3]float64{a.x, a.y, a.z}[k] }
func (a vec3) cross(b vec3) vec3 {
	return vec3{a.y*b.z - a.z*b.y, a.z*b.x - a.x*b.z, a.x*b.y - a.y*b.x}
}
func (a vec3) unit() vec3 { return a.scale(1 / a.norm()) }
func (a vec3) withAxis(k int, v float64) vec3 {
	switch k {
	case 0:
		a.x = v
	case 1:
		a.y = v
	default:
		a.z = v
	}
	return a
}

// aabb is an axis-aligned box.
type aabb struct{ min, max vec3 }

// boxAt returns the box with bottom-face centre c, half extents hx, hy and
// height h.
func boxAt(c vec3, hx, hy, h float64) aabb {
	return aabb{vec3{c.x - hx, c.y - hy, c.z}, vec3{c.x + hx, c.y + hy, c.z + h}}
}

func (b aabb) shift(d vec3) aabb { return aabb{b.min.add(d), b.max.add(d)} }

// overlapAxis reports whether b and o overlap strictly (by more than eps)
// along axis k.
func (b aabb) overlapAxis(o aabb, k int) bool {
	return b.min.axis(k) < o.max.axis(k)-overlapEps && o.min.axis(k) < b.max.axis(k)-overlapEps
}

// overlaps reports strict overlap along all three axes.
func (b aabb) overlaps(o aabb) bool {
	return b.overlapAxis(o, 0) && b.overlapAxis(o, 1) && b.overlapAxis(o, 2)
}

// overlapsXY reports strict overlap of the footprints.
func (b aabb) overlapsXY(o aabb) bool { return b.overlapAxis(o, 0) && b.overlapAxis(o, 1) }

// containsXY reports whether (x, y) lies inside the footprint.
func (b aabb) containsXY(x, y float64) bool {
	return x >= b.min.x && x <= b.max.x && y >= b.min.y && y <= b.max.y
}

// contains reports whether p lies inside the box (boundary included).
func (b aabb) contains(p vec3) bool {
	return b.containsXY(p.x, p.y) && p.z >= b.min.z && p.z <= b.max.z
}

func (b aabb) centre() vec3 { return b.min.add(b.max).scale(0.5) }

// overlapEps keeps touching boxes (an object resting on another, a finger
// flush against a face) from counting as overlapping; it is far below any
// motion a step can make (1 µm).
const overlapEps = 1e-6

// mat3 is a row-major rotation matrix.
type mat3 [3][3]float64

func (m mat3) apply(v vec3) vec3 {
	return vec3{
		m[0][0]*v.x + m[0][1]*v.y + m[0][2]*v.z,
		m[1][0]*v.x + m[1][1]*v.y + m[1][2]*v.z,
		m[2][0]*v.x + m[2][1]*v.y + m[2][2]*v.z,
	}
}

func (m mat3) mul(n mat3) mat3 {
	var r mat3
	for i := range 3 {
		for j := range 3 {
			r[i][j] = m[i][0]*n[0][j] + m[i][1]*n[1][j] + m[i][2]*n[2][j]
		}
	}
	return r
}

func identity() mat3 { return mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} }

func rotX(a float64) mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

func rotY(a float64) mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

func rotZ(a float64) mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// axisAngle converts a rotation matrix to an axis-angle vector (axis times
// angle in radians), as robosuite's quat2axisangle reports orientation.
func axisAngle(m mat3) vec3 {
	tr := m[0][0] + m[1][1] + m[2][2]
	cosA := math.Max(-1, math.Min(1, (tr-1)/2))
	angle := math.Acos(cosA)
	if angle < 1e-9 {
		return vec3{}
	}
	if math.Pi-angle < 1e-6 {
		// Near π the antisymmetric part vanishes; take the axis from the
		// diagonal of (R + I) / 2 = a aᵀ.
		ax := vec3{math.Sqrt(math.Max(0, (m[0][0]+1)/2)), math.Sqrt(math.Max(0, (m[1][1]+1)/2)), math.Sqrt(math.Max(0, (m[2][2]+1)/2))}
		switch {
		case ax.x >= ax.y && ax.x >= ax.z:
			ax.y = math.Copysign(ax.y, m[0][1]+m[1][0])
			ax.z = math.Copysign(ax.z, m[0][2]+m[2][0])
		case ax.y >= ax.z:
			ax.x = math.Copysign(ax.x, m[0][1]+m[1][0])
			ax.z = math.Copysign(ax.z, m[1][2]+m[2][1])
		default:
			ax.x = math.Copysign(ax.x, m[0][2]+m[2][0])
			ax.y = math.Copysign(ax.y, m[1][2]+m[2][1])
		}
		return ax.unit().scale(angle)
	}
	ax := vec3{m[2][1] - m[1][2], m[0][2] - m[2][0], m[1][0] - m[0][1]}.scale(1 / (2 * math.Sin(angle)))
	return ax.scale(angle)
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
