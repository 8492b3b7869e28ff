package worldmodel

import (
	"fmt"
	"math"
)

// Sized is a chunk of steps: the engine's *engine.Chunk and ImaginedChunk
// (or a pointer to one) both qualify.
type Sized interface{ Len() int }

// Mix is a training batch drawn from the two buffers.
type Mix[R, I Sized] struct {
	Real      []R // chunks from B_real, in the order given
	Img       []I // chunks from B_img, in the order given
	RealSteps int
	ImgSteps  int
}

// ImgFraction returns ImgSteps / (RealSteps + ImgSteps), 0 for an empty mix.
func (m Mix[R, I]) ImgFraction() float64 {
	if m.RealSteps+m.ImgSteps == 0 {
		return 0
	}
	return float64(m.ImgSteps) / float64(m.RealSteps+m.ImgSteps)
}

// MixBatch picks whole chunks, in the order given (oldest first, say),
// from the real and imagined candidates for a batch of at least minSteps
// steps of which a share ratio (the imagination ratio, in [0, 1)) is
// imagined:
//
//	imgQuota  = round(ratio · minSteps)
//	take imagined chunks while ImgSteps  < imgQuota
//	realQuota = max(minSteps − imgQuota, minSteps − ImgSteps)
//	take real chunks     while RealSteps < realQuota
//
// Chunks are never split, so each side overshoots its quota by less than
// one chunk and the imagined share is within about one chunk's worth of
// ratio. When B_img holds too little, real steps make up the difference,
// so training never waits for imagination; the converse is not done, since
// a batch of mostly imagined data would train the policy on the world
// model's errors. ok is false when the real candidates cannot fill their
// quota: the batch is not ready, wait for more real data.
func MixBatch[R, I Sized](real []R, img []I, ratio float64, minSteps int) (mix Mix[R, I], ok bool) {
	if !(ratio >= 0 && ratio < 1) || minSteps < 1 {
		panic(fmt.Sprintf("worldmodel: MixBatch: ratio must be in [0, 1) and minSteps at least 1, got %v and %d", ratio, minSteps))
	}
	imgQuota := int(math.Round(ratio * float64(minSteps)))
	for _, c := range img {
		if mix.ImgSteps >= imgQuota {
			break
		}
		mix.Img = append(mix.Img, c)
		mix.ImgSteps += c.Len()
	}
	realQuota := max(minSteps-imgQuota, minSteps-mix.ImgSteps)
	for _, c := range real {
		if mix.RealSteps >= realQuota {
			break
		}
		mix.Real = append(mix.Real, c)
		mix.RealSteps += c.Len()
	}
	return mix, mix.RealSteps >= realQuota
}
