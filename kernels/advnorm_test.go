package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAdvStatsByHand(t *testing.T) {
	// [1, 2, 3, 6]: sum 12, sum of squares 50, N 4 → μ = 3, σ² = 50/4 − 9 = 3.5;
	// normalised (A − 3)/sqrt(3.5 + 1e-8) = [−2, −1, 0, 3]/1.8708287.
	a := []float64{1, 2, 3, 6}
	var s AdvStats
	s.Add(a)
	if s.Sum != 12 || s.SumSq != 50 || s.N != 4 || s.Mean() != 3 || s.Var() != 3.5 {
		t.Fatalf("stats %+v mean %v var %v", s, s.Mean(), s.Var())
	}
	s.Normalize(a, 1e-8)
	for i, d := range []float64{-2, -1, 0, 3} {
		if want := d / math.Sqrt(3.5+1e-8); math.Abs(a[i]-want) > 1e-15 { // a few ulps of order-1 values
			t.Errorf("a[%d] = %v, want %v", i, a[i], want)
		}
	}
	// Equal advantages have σ² = 0 and become 0, not NaN.
	eq := []float64{2, 2, 2}
	var se AdvStats
	se.Add(eq)
	se.Normalize(eq, 1e-8)
	if eq[0] != 0 || eq[2] != 0 {
		t.Errorf("equal advantages normalised to %v, want zeros", eq)
	}
}

func TestAdvStatsShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	all := randSlice(rng, 30, 2)
	for i := range all {
		all[i] += 0.7 // a non-zero mean
	}
	// Reference: normalise the concatenation with the two-pass mean and
	// population variance.
	mean := 0.0
	for _, v := range all {
		mean += v
	}
	mean /= float64(len(all))
	v2 := 0.0
	for _, v := range all {
		v2 += (v - mean) * (v - mean)
	}
	v2 /= float64(len(all))
	want := make([]float64, len(all))
	for i, v := range all {
		want[i] = (v - mean) / math.Sqrt(v2+1e-8)
	}

	// One shard: Add + Normalize on the whole batch.
	one := append([]float64(nil), all...)
	var s1 AdvStats
	s1.Add(one)
	s1.Normalize(one, 1e-8)

	// Three shards of 7, 11 and 12 samples: each adds its own, the merged
	// statistics normalise each shard separately.
	shards := [][]float64{append([]float64(nil), all[:7]...), append([]float64(nil), all[7:18]...), append([]float64(nil), all[18:]...)}
	var merged AdvStats
	for _, sh := range shards {
		var local AdvStats
		local.Add(sh)
		merged.Merge(local)
	}
	if merged.N != 30 {
		t.Fatalf("merged N = %d, want 30", merged.N)
	}
	var got []float64
	for _, sh := range shards {
		merged.Normalize(sh, 1e-8)
		got = append(got, sh...)
	}
	for i := range want {
		// One-pass against two-pass variance and different summation
		// orders: values of order 1-10 agree to ~1e-14.
		if math.Abs(one[i]-want[i]) > 1e-13 || math.Abs(got[i]-want[i]) > 1e-13 {
			t.Errorf("sample %d: one shard %v, three shards %v, want %v", i, one[i], got[i], want[i])
		}
	}
}

func TestNormalizeAdvantages(t *testing.T) {
	// [1, 2, 3, 6]: mean 3, deviations [−2, −1, 0, 3], unbiased variance
	// (4+1+0+9)/3 = 14/3, std 2.1602469; result = deviation/(std + 1e-8).
	a := []float64{1, 2, 3, 6}
	normalizeAdvantages(a)
	std := math.Sqrt(14.0 / 3)
	for i, d := range []float64{-2, -1, 0, 3} {
		if want := d / (std + 1e-8); math.Abs(a[i]-want) > 1e-15 { // a few ulps of order-1 values
			t.Errorf("a[%d] = %v, want %v", i, a[i], want)
		}
	}
	one := []float64{5}
	normalizeAdvantages(one)
	if one[0] != 0 {
		t.Errorf("single advantage normalised to %v, want 0", one[0])
	}
}
