package vla

import (
	"math"
	"unsafe"
)

// The float32 model's transcendental functions. math.Exp and math.Erf work
// in float64 with full argument handling and cost ≈ 12 ns and ≈ 37 ns per
// call on the benchmark machine; the attention softmax, the log-softmax of
// the head and the GELU call them millions of times per batch, which made
// them as expensive as all the matrix products once those moved to the AVX2
// backend. The versions here evaluate short polynomials in float64 (scalar
// float64 costs the same as float32) that are accurate far below float32's
// resolution and round once: exp32 is within 1 ulp of float32 and erf32
// within 1e-7 absolute (TestFastMath measures both). The float64 model
// keeps math.Exp and math.Erf, so the gradient checks run on the library
// functions.

// isF32 reports whether F is float32-sized, a constant per instantiation.
func isF32[F Float]() bool {
	var z F
	return unsafe.Sizeof(z) == 4
}

// expNeg is e^x for x ≤ 0 (every exponential of the model is of a
// log-probability or of a score minus its row maximum): math.Exp for the
// float64 model; for the float32 one expReduced on max(x, −700) rounded to
// float32, which has no branches (and inlines), gives +0 or a subnormal
// where e^x underflows, and keeps NaN. Positive x gives wrong results.
func expNeg[F Float](x F) F {
	if isF32[F]() {
		return F(expNeg32(float32(x)))
	}
	return F(math.Exp(float64(x)))
}

const ln2 = 0.6931471805599453

// exp2Tab[j] holds the float64 bits of 2^(j/32).
var exp2Tab = func() (t [32]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 32))
	}
	return t
}()

// expReduced is e^x for −1022·ln2 < x < 1023·ln2 by table and polynomial
// (Tang 1989, "Table-driven implementation of the exponential function in
// IEEE floating-point arithmetic"): x = (32m + j)·ln2/32 + r with
// |r| ≤ ln2/64, e^x = 2^m · 2^(j/32) · e^r, and e^r by its Taylor
// polynomial of degree 3 (relative truncation error r⁴/24 ≤ 5.7e-10, 0.005
// ulp of float32). The rounding k = 32m + j comes from adding 1.5·2⁵², which
// leaves k in the low mantissa bits (no float-to-int conversion).
func expReduced(x float64) float64 {
	const shift, shiftBits = 0x1.8p52, 0x4338000000000000 // 1.5·2⁵² and its bits
	z := x*(32/ln2) + shift
	k := int64(math.Float64bits(z) - shiftBits)
	r := x - (z-shift)*(ln2/32)
	p := 1 + r*(1+r*(0.5+r*(1.0/6)))
	return math.Float64frombits(exp2Tab[k&31]+uint64(k>>5)<<52) * p
}

// exp32 is e^x for float32 arguments, within 1 ulp: arguments below
// −87.34 (where e^x drops under the smallest normal float32) give 0, above
// 88.72 +Inf; NaN stays NaN.
func exp32(x float32) float32 {
	if !(x > -87.33655) {
		if x != x {
			return x
		}
		return 0
	}
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	return float32(expReduced(float64(x)))
}

// erf32 is the error function by the rational minimax fit of Eigen's
// generic_fast_erf_float (x·P(x²)/Q(x²) on [−4, 4], ±1 beyond, where
// 1 − erf(4) = 1.5e-8 is below float32's resolution at 1), evaluated in
// float64: absolute error ≤ 1e-7. No exponential, no branches.
func erf32(x float64) float64 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x * (-1.60960333262415e-02 + x2*(-2.95459980854025e-03+x2*(-7.34990630326855e-04+
		x2*(-5.69250639462346e-05+x2*(-2.10102402082508e-06+x2*(2.77068142495902e-08+x2*-2.72614225801306e-10))))))
	q := -1.42647390514189e-02 + x2*(-7.37332916720468e-03+x2*(-1.68282697438203e-03+
		x2*(-2.13374055278905e-04+x2*-1.45660718464996e-05)))
	return p / q
}

// gelu32 and geluGrad32 are the exact GELU x·Φ(x) = ½x(1 + erf(x/√2)) and
// its derivative Φ(x) + x·φ(x) for the float32 model.
func gelu32(x float32) float32 {
	u := float64(x)
	return float32(0.5 * u * (1 + erf32(u*(1/math.Sqrt2))))
}

// geluGradFromOutput32 is geluGrad32 given y = gelu32(x) as well: Φ(x) =
// y/x (½ near 0, where y/x loses its meaning), so only φ(x) costs an
// exponential.
func geluGradFromOutput32(x, y float32) float32 {
	const invSqrt2Pi = 0.3989422804014327
	u := float64(x)
	phi := 0.5
	if math.Abs(u) > 1e-20 {
		phi = float64(y) / u
	}
	return float32(phi + u*invSqrt2Pi*expReduced(max(-0.5*u*u, -700)))
}

func geluGrad32(x float32) float32 {
	const invSqrt2Pi = 0.3989422804014327
	u := float64(x)
	// φ(u) underflows to 0 long before the clamp (e^−700) matters.
	return float32(0.5*(1+erf32(u*(1/math.Sqrt2))) + u*invSqrt2Pi*expReduced(max(-0.5*u*u, -700)))
}

// expNeg32 is expNeg's float32 case.
func expNeg32(x float32) float32 { return float32(expReduced(max(float64(x), -700))) }

// as32 views x as []float32 without copying; only for F with isF32[F]().
func as32[F Float](x []F) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// sumExpNeg32 is Σ_j e^(x_j − mx) in float64 for mx ≥ max x (logSoftmax).
func sumExpNeg32(x []float32, mx float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(expNeg32(v - mx))
	}
	return s
}

// entropy32 is entropy's float32 case.
func entropy32(logp []float32) float32 {
	h := 0.0
	for _, l := range logp {
		h -= float64(expNeg32(l) * l)
	}
	return float32(h)
}

// maskedExp32 is maskedSoftmax's exponentials and sum for float32:
// row[j] = e^(row[j] − mx) where valid[j], else 0, for j < len(row); it
// returns the sum.
func maskedExp32(row []float32, valid []bool, mx float32) float64 {
	valid = valid[:len(row)]
	sum := 0.0
	for j, s := range row {
		e := expNeg32(s - mx)
		if !valid[j] {
			e = 0
		}
		row[j] = e
		sum += float64(e)
	}
	return sum
}
