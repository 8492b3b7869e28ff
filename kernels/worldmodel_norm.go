package kernels

import (
	"fmt"
	"math"
)

// Normalization is a fixed per-feature affine map x ↦ (x − Mean)/Std used
// by the world-model networks for their inputs and targets. It is fitted
// from data once ([FitNormalization]) and saved with the parameters; it is
// not trained.
type Normalization struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// IdentityNormalization returns Mean = 0, Std = 1 for d features.
func IdentityNormalization(d int) Normalization {
	n := Normalization{Mean: make([]float64, d), Std: make([]float64, d)}
	for j := range n.Std {
		n.Std[j] = 1
	}
	return n
}

// MinStd is the smallest standard deviation [FitNormalization] keeps: a
// feature that varies less than this in the data (a constant, or one only
// float32 rounding moves) is left unscaled (Std = 1) rather than blown up.
const MinStd = 1e-6

// FitNormalization returns the per-column mean and (population) standard
// deviation of the n×d row-major matrix x; a column whose standard
// deviation is below MinStd gets Std = 1. It panics on a shape mismatch or
// n == 0.
func FitNormalization(x []float64, n, d int) Normalization {
	if n <= 0 || d <= 0 || len(x) != n*d {
		panic(fmt.Sprintf("kernels: FitNormalization: %d values for n=%d, d=%d (both > 0)", len(x), n, d))
	}
	out := Normalization{Mean: make([]float64, d), Std: make([]float64, d)}
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			out.Mean[j] += v
		}
	}
	for j := range out.Mean {
		out.Mean[j] /= float64(n)
	}
	// Two-pass variance: Σ(x − mean)² does not cancel catastrophically.
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			r := v - out.Mean[j]
			out.Std[j] += r * r
		}
	}
	for j := range out.Std {
		s := math.Sqrt(out.Std[j] / float64(n))
		if !(s >= MinStd) {
			s = 1
		}
		out.Std[j] = s
	}
	return out
}

func (n Normalization) clone() Normalization {
	return Normalization{Mean: append([]float64(nil), n.Mean...), Std: append([]float64(nil), n.Std...)}
}

// apply writes (x − Mean)/Std into y.
func (n Normalization) apply(x, y []float64) {
	for j, v := range x {
		y[j] = (v - n.Mean[j]) / n.Std[j]
	}
}

// check panics unless n has d finite means and d positive finite stds.
func (n Normalization) check(op string, d int) {
	if len(n.Mean) != d || len(n.Std) != d {
		panic(fmt.Sprintf("kernels: %s: normalisation has %d means and %d stds, want %d", op, len(n.Mean), len(n.Std), d))
	}
	for j := 0; j < d; j++ {
		if math.IsNaN(n.Mean[j]) || math.IsInf(n.Mean[j], 0) || !(n.Std[j] > 0) || math.IsInf(n.Std[j], 0) {
			panic(fmt.Sprintf("kernels: %s: feature %d has mean %v and std %v; want a finite mean and a positive finite std",
				op, j, n.Mean[j], n.Std[j]))
		}
	}
}

// Encoder maps raw observations to the feature vectors the world model
// works on (see "Encoder seam" at [ObsModel]). Vector observations use
// [IdentityEncoder]; an image encoder would implement the same interface
// (and, if learned, add parameters and a backward pass of its own).
type Encoder interface {
	// RawDim is the width of one raw observation.
	RawDim() int
	// FeatureDim is the width of one feature vector.
	FeatureDim() int
	// Encode fills feat (n×FeatureDim) from raw (n×RawDim).
	Encode(raw []float64, n int, feat []float64)
}

// IdentityEncoder is the [Encoder] for vector observations: features are
// the observation itself.
type IdentityEncoder struct{ Dim int }

// RawDim returns Dim.
func (e IdentityEncoder) RawDim() int { return e.Dim }

// FeatureDim returns Dim.
func (e IdentityEncoder) FeatureDim() int { return e.Dim }

// Encode copies raw into feat; both must hold n×Dim values.
func (e IdentityEncoder) Encode(raw []float64, n int, feat []float64) {
	checkN("IdentityEncoder.Encode", n*e.Dim, len(raw), len(feat))
	copy(feat, raw)
}

var _ Encoder = IdentityEncoder{}
