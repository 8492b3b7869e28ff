package edm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNoiseContext checks the context augmentation against its definition: each image's
// past frames get Gaussian noise whose standard deviation is that image's level, drawn
// uniformly in [0, ContextNoise] from the same stream first; values stay in [−1, 1]; Next
// and Action are untouched; and ContextNoise 0 neither changes the batch nor draws from
// the stream (so runs without it keep their random sequence).
func TestNoiseContext(t *testing.T) {
	c := Config{ImageSize: 32, Cameras: 2, History: 4, ActionDim: 3, Channels: []int{4}, CondDim: 4, GroupSize: 2}
	m := NewNet[float64](c, rand.New(rand.NewPCG(1, 2)), nil)
	const n = 3
	b := randBatch(rand.New(rand.NewPCG(3, 4)), c, n)
	for j := range b.Past { // room below the clip: |x| ≤ 0.25, noise ≤ 0.2 has ~4σ before ±1
		b.Past[j] *= 0.5
	}
	orig := Batch[float64]{N: n, Past: append([]float64(nil), b.Past...), Action: append([]float64(nil), b.Action...), Next: append([]float64(nil), b.Next...)}

	off := DefaultEDM()
	rng := rand.New(rand.NewPCG(7, 8))
	m.NoiseContext(off, b, rng)
	if rng.Uint64() != rand.New(rand.NewPCG(7, 8)).Uint64() {
		t.Error("ContextNoise 0 drew from the stream")
	}
	for j := range b.Past {
		if b.Past[j] != orig.Past[j] {
			t.Fatalf("ContextNoise 0 changed past value %d", j)
		}
	}

	on := DefaultEDM()
	on.ContextNoise = 0.2
	m.NoiseContext(on, b, rand.New(rand.NewPCG(9, 10)))
	levels := rand.New(rand.NewPCG(9, 10))
	plane := c.Pixels()
	for i := 0; i < n; i++ {
		want := on.ContextNoise * levels.Float64()
		var sum, sq float64
		count := 0
		for j := range b.Past {
			if (j/plane)%n != i {
				continue
			}
			d := b.Past[j] - orig.Past[j]
			if math.Abs(b.Past[j]) > 1 {
				t.Fatalf("past value %d is %v, outside [−1, 1]", j, b.Past[j])
			}
			sum += d
			sq += d * d
			count++
		}
		mean := sum / float64(count)
		std := math.Sqrt(sq/float64(count) - mean*mean)
		// count = 4 steps · 6 channels · 1,024 pixels = 24,576 draws: the sample standard
		// deviation's relative error is about 1/√(2·24,576) ≈ 0.0045, so 3% is ~6 standard
		// errors; the mean's standard error is want/157.
		if math.Abs(std-want) > 0.03*want || math.Abs(mean) > 5*want/math.Sqrt(float64(count)) {
			t.Errorf("image %d: noise mean %.5f std %.5f, want 0 and the drawn level %.5f", i, mean, std, want)
		}
	}
	for j := range b.Next {
		if b.Next[j] != orig.Next[j] {
			t.Fatalf("Next value %d changed", j)
		}
	}
	for j := range b.Action {
		if b.Action[j] != orig.Action[j] {
			t.Fatalf("action value %d changed", j)
		}
	}

	// Clipping: a frame at the bound stays inside it.
	for j := range b.Past {
		b.Past[j] = 1
	}
	on.ContextNoise = 1
	m.NoiseContext(on, b, rand.New(rand.NewPCG(11, 12)))
	for j, v := range b.Past {
		if v > 1 || v < -1 {
			t.Fatalf("past value %d is %v after noising a saturated frame", j, v)
		}
	}
}
