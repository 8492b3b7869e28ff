package kernels

import (
	"fmt"
	"math"
)

// Advantage-normalisation modes accepted by [LearnerConfig].AdvNorm.
const (
	AdvNormNone      = "none"      // use advantages as given
	AdvNormMinibatch = "minibatch" // CleanRL: (A − mean)/(std + 1e-8) per minibatch, unbiased std
	AdvNormBatch     = "batch"     // (A − μ)/sqrt(σ² + ε) once over the whole training batch
	AdvNormGlobal    = "global"    // as batch, with μ, σ² merged across trainer shards (Batch.AdvStats)
)

// AdvStats are the sufficient statistics of a set of advantages for
// normalisation: their sum, sum of squares and count. Shards of one
// training batch held by different trainers each Add their own
// advantages, exchange the three numbers, Merge them, and then Normalize
// with identical μ and σ² — the same result as normalising the
// concatenation on one machine.
type AdvStats struct {
	Sum, SumSq float64
	N          int
}

// Add accumulates the advantages adv.
func (s *AdvStats) Add(adv []float64) {
	for _, a := range adv {
		s.Sum += a
		s.SumSq += a * a
	}
	s.N += len(adv)
}

// Merge accumulates another shard's statistics.
func (s *AdvStats) Merge(o AdvStats) {
	s.Sum += o.Sum
	s.SumSq += o.SumSq
	s.N += o.N
}

// Mean returns μ = Sum/N.
func (s AdvStats) Mean() float64 { return s.Sum / float64(s.N) }

// Var returns the population variance σ² = SumSq/N − μ², clamped at 0
// (rounding can make the difference slightly negative when all advantages
// are nearly equal).
func (s AdvStats) Var() float64 {
	m := s.Mean()
	return math.Max(0, s.SumSq/float64(s.N)-m*m)
}

// Normalize sets adv[i] ← (adv[i] − μ)/sqrt(σ² + eps) with the merged μ
// and σ². It panics when N is 0 (no statistics to normalise with).
//
// The one-pass variance loses relative precision when |μ| ≫ σ (about
// (μ/σ)²·1e-16); advantages are centred near 0 by construction, so this is
// far below anything a learner notices.
func (s AdvStats) Normalize(adv []float64, eps float64) {
	if s.N <= 0 {
		panic(fmt.Sprintf("kernels: AdvStats.Normalize: no advantages accumulated (N = %d)", s.N))
	}
	m := s.Mean()
	inv := 1 / math.Sqrt(s.Var()+eps)
	for i, a := range adv {
		adv[i] = (a - m) * inv
	}
}

// normalizeAdvantages sets a ← (a − mean)/(std + 1e-8) with the unbiased
// (n−1) standard deviation, as torch.Tensor.std in CleanRL (AdvNormMinibatch);
// a single sample has std 0 and becomes 0.
func normalizeAdvantages(a []float64) {
	mean := 0.0
	for _, v := range a {
		mean += v
	}
	mean /= float64(len(a))
	ss := 0.0
	for _, v := range a {
		ss += (v - mean) * (v - mean)
	}
	std := 0.0
	if len(a) > 1 {
		std = math.Sqrt(ss / float64(len(a)-1))
	}
	for i, v := range a {
		a[i] = (v - mean) / (std + 1e-8)
	}
}
