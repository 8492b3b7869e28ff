package worldmodel

import (
	"math"
	"testing"
)

// steps is a chunk of a given length.
type steps int

func (s steps) Len() int { return int(s) }

func chunksOf(n, length int) []steps {
	out := make([]steps, n)
	for i := range out {
		out[i] = steps(length)
	}
	return out
}

func TestMixBatchExactRatios(t *testing.T) {
	// Chunks of 10 and minSteps 200: every quota is a multiple of 10, so
	// the imagined share is exactly the ratio.
	for _, tc := range []struct {
		ratio         float64
		realN, imgN   int // chunks taken
		realSt, imgSt int
	}{
		{0, 20, 0, 200, 0},
		{0.25, 15, 5, 150, 50},
		{0.5, 10, 10, 100, 100},
		{0.9, 2, 18, 20, 180},
	} {
		mix, ok := MixBatch(chunksOf(50, 10), chunksOf(50, 10), tc.ratio, 200)
		if !ok || len(mix.Real) != tc.realN || len(mix.Img) != tc.imgN || mix.RealSteps != tc.realSt || mix.ImgSteps != tc.imgSt {
			t.Errorf("ratio %v: %d real chunks (%d steps), %d imagined (%d steps), ok %v; want %d (%d), %d (%d), true",
				tc.ratio, len(mix.Real), mix.RealSteps, len(mix.Img), mix.ImgSteps, ok, tc.realN, tc.realSt, tc.imgN, tc.imgSt)
		}
		if got := mix.ImgFraction(); got != tc.ratio {
			t.Errorf("ratio %v: imagined fraction %v", tc.ratio, got)
		}
	}
}

func TestMixBatchOvershootsByLessThanAChunk(t *testing.T) {
	// Chunks of 7, minSteps 100, ratio 0.3: imgQuota = 30 → 5 chunks (35
	// steps); realQuota = max(70, 65) = 70 → 10 chunks (70). Fraction
	// 35/105 = 1/3, within one chunk (7/105) of 0.3.
	mix, ok := MixBatch(chunksOf(30, 7), chunksOf(30, 7), 0.3, 100)
	if !ok || mix.ImgSteps != 35 || mix.RealSteps != 70 {
		t.Fatalf("mix = %d real + %d imagined steps (ok %v), want 70 + 35", mix.RealSteps, mix.ImgSteps, ok)
	}
	if d := math.Abs(mix.ImgFraction() - 0.3); d > 7.0/105 {
		t.Errorf("imagined fraction %v is %v from 0.3, more than one chunk", mix.ImgFraction(), d)
	}
	// Sweep: the share stays within one chunk of the ratio, and the batch
	// holds at least minSteps.
	for r := 0; r < 20; r++ {
		ratio := float64(r) / 20
		mix, ok := MixBatch(chunksOf(40, 7), chunksOf(40, 7), ratio, 100)
		total := mix.RealSteps + mix.ImgSteps
		if !ok || total < 100 || math.Abs(mix.ImgFraction()-ratio) > 7.0/float64(total) {
			t.Errorf("ratio %v: %d real + %d imagined (ok %v)", ratio, mix.RealSteps, mix.ImgSteps, ok)
		}
	}
}

func TestMixBatchRealFillsImaginedShortfall(t *testing.T) {
	// Only 2 imagined chunks of 10 for a quota of 50: real makes up 80.
	mix, ok := MixBatch(chunksOf(20, 10), chunksOf(2, 10), 0.5, 100)
	if !ok || mix.ImgSteps != 20 || mix.RealSteps != 80 {
		t.Errorf("mix = %d real + %d imagined (ok %v), want 80 + 20", mix.RealSteps, mix.ImgSteps, ok)
	}
	// Too little real data: not ready, and imagined data does not fill in.
	mix, ok = MixBatch(chunksOf(3, 10), chunksOf(20, 10), 0.5, 100)
	if ok || mix.ImgSteps != 50 || mix.RealSteps != 30 {
		t.Errorf("mix = %d real + %d imagined (ok %v), want 30 + 50 and not ok", mix.RealSteps, mix.ImgSteps, ok)
	}
}

func TestMixBatchKeepsOrder(t *testing.T) {
	real := []steps{1, 2, 3, 4, 5}
	mix, _ := MixBatch(real, []steps{}, 0, 6)
	if len(mix.Real) != 3 || mix.Real[0] != 1 || mix.Real[2] != 3 {
		t.Errorf("picked %v, want the first three chunks [1 2 3]", mix.Real)
	}
}

func TestMixBatchPanicsOnBadRatio(t *testing.T) {
	for _, ratio := range []float64{-0.1, 1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ratio %v did not panic", ratio)
				}
			}()
			MixBatch(chunksOf(1, 1), chunksOf(1, 1), ratio, 1)
		}()
	}
}

func TestMixBatchTakesImaginedChunks(t *testing.T) {
	img := []ImaginedChunk{{Rewards: make([]float64, 4)}, {Rewards: make([]float64, 4)}}
	mix, ok := MixBatch(chunksOf(10, 4), img, 0.5, 8)
	if !ok || mix.ImgSteps != 4 || len(mix.Img) != 1 || mix.RealSteps != 4 {
		t.Errorf("mix = %d real + %d imagined steps in %d chunks (ok %v), want 4 + 4 in 1", mix.RealSteps, mix.ImgSteps, len(mix.Img), ok)
	}
}
