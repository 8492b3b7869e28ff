package edm

import (
	"fmt"
	"math/rand/v2"
)

// Frame is one camera image: ImageSize × ImageSize RGB pixels, row-major,
// channels interleaved (HWC), as tabletop renders them.
type Frame = []uint8

// Sample is one transition of a pixel trajectory.
type Sample struct {
	// Past are the k = History conditioning steps, oldest first, each
	// holding one Frame per camera.
	Past [][]Frame
	// Action is the action taken after the last past frame.
	Action []float64
	// Next holds the frame of each camera one step later (the target).
	Next []Frame
}

// pixelValue maps a pixel byte to [−1, 1]: v/127.5 − 1.
func pixelValue[F Float](v uint8) F { return F(float64(v)/127.5 - 1) }

// writeFrame writes camera frame f of image i into channels ch0 … ch0+2
// of the CNHW tensor dst of n images, mapping pixels to [−1, 1].
func writeFrame[F Float](c Config, dst []F, f Frame, ch0, i, n int) {
	p := c.Pixels()
	if len(f) != 3*p {
		panic(fmt.Sprintf("edm: frame has %d bytes, want %d×%d×3", len(f), c.ImageSize, c.ImageSize))
	}
	for rgb := 0; rgb < 3; rgb++ {
		plane := dst[((ch0+rgb)*n+i)*p:][:p]
		for j := range plane {
			plane[j] = pixelValue[F](f[3*j+rgb])
		}
	}
}

// readFrame returns camera cam of image i of the CNHW frames x (3C × n·S²,
// values in [−1, 1]) as a Frame, rounding (v+1)·127.5 to the nearest byte.
func readFrame[F Float](c Config, x []F, cam, i, n int) Frame {
	p := c.Pixels()
	f := make(Frame, 3*p)
	for rgb := 0; rgb < 3; rgb++ {
		plane := x[((3*cam+rgb)*n+i)*p:][:p]
		for j, v := range plane {
			f[3*j+rgb] = uint8(min(max((float64(v)+1)*127.5+0.5, 0), 255))
		}
	}
	return f
}

// MakeBatch lays samples out as a [Batch] for a model of config c. It
// panics when a sample does not match c (frame count or size, action
// length); a nil Next frame (when sampling) leaves zeros.
func MakeBatch[F Float](c Config, samples []Sample) Batch[F] {
	n, p, fc := len(samples), c.Pixels(), c.FrameChannels()
	b := Batch[F]{N: n, Past: make([]F, c.History*fc*n*p), Action: make([]F, n*c.ActionDim), Next: make([]F, fc*n*p)}
	for i, s := range samples {
		if len(s.Past) != c.History || len(s.Next) != c.Cameras || len(s.Action) != c.ActionDim {
			panic(fmt.Sprintf("edm: MakeBatch: sample %d has %d past steps, %d next frames, %d action values; want %d, %d, %d",
				i, len(s.Past), len(s.Next), len(s.Action), c.History, c.Cameras, c.ActionDim))
		}
		for j, step := range s.Past {
			if len(step) != c.Cameras {
				panic(fmt.Sprintf("edm: MakeBatch: sample %d past step %d has %d frames, want %d", i, j, len(step), c.Cameras))
			}
			for cam, f := range step {
				writeFrame(c, b.Past, f, (j*c.Cameras+cam)*3, i, n)
			}
		}
		for cam, f := range s.Next {
			if f == nil {
				continue // sampling: nothing to predict against
			}
			writeFrame(c, b.Next, f, 3*cam, i, n)
		}
		for j, v := range s.Action {
			b.Action[i*c.ActionDim+j] = F(v)
		}
	}
	return b
}

// Imagine rolls the model out open loop: starting from the real past
// frames past (History steps × Cameras frames, oldest first) it samples
// the next step for actions[0], appends it to the history (dropping the
// oldest step), samples the step after for actions[1], and so on. It
// returns one predicted step (Cameras frames) per action. The imagined
// frames are rounded to bytes before they are fed back, as real frames
// would be.
func (m *Net[F]) Imagine(e EDM, past [][]Frame, actions [][]float64, rng *rand.Rand) [][]Frame {
	hist := append([][]Frame(nil), past...)
	out := make([][]Frame, 0, len(actions))
	for _, a := range actions {
		step := m.Step(e, [][][]Frame{hist}, [][]float64{a}, rng)[0]
		out = append(out, step)
		hist = append(hist[1:len(hist):len(hist)], step)
	}
	return out
}

// Step predicts one step for each of n rollouts at once: past[i] are
// rollout i's History conditioning steps (Cameras frames each, oldest
// first) and actions[i] its action. It returns each rollout's predicted
// frames (Cameras each), rounded to bytes; the noise comes from rng in
// rollout order, so a batch of one is [Net.Imagine]'s step.
func (m *Net[F]) Step(e EDM, past [][][]Frame, actions [][]float64, rng *rand.Rand) [][]Frame {
	n := len(past)
	if n == 0 {
		return nil
	}
	samples := make([]Sample, n)
	for i := range samples {
		samples[i] = Sample{Past: past[i], Action: actions[i], Next: make([]Frame, m.cfg.Cameras)}
	}
	x := m.Sample(e, MakeBatch[F](m.cfg, samples), rng)
	out := make([][]Frame, n)
	for i := range out {
		out[i] = make([]Frame, m.cfg.Cameras)
		for cam := range out[i] {
			out[i][cam] = readFrame(m.cfg, x, cam, i, n)
		}
	}
	return out
}

// FrameMSE is the mean squared difference of two frames in the models' [−1, 1] pixel
// units.
func FrameMSE(a, b Frame) float64 {
	s := 0.0
	for i := range a {
		d := (float64(a[i]) - float64(b[i])) / 127.5
		s += d * d
	}
	return s / float64(len(a))
}

// StepMSE is FrameMSE averaged over the cameras of one step (a frame per camera).
func StepMSE(a, b []Frame) float64 {
	s := 0.0
	for c := range a {
		s += FrameMSE(a[c], b[c])
	}
	return s / float64(len(a))
}
