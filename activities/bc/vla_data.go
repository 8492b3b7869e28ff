package bc

import (
	"slices"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// ImageDemo is one successful expert episode as a pixel policy sees it:
// before each step the camera images, the proprioception and the expert's
// noise-free action; the instruction is the episode's.
type ImageDemo struct {
	Task    int
	Instr   []int       // tabletop word ids (tabletop.Env.InstructionTokens)
	Images  [][][]uint8 // len T, each one ImageSize×ImageSize×3 RGB image per camera
	Proprio [][]float64 // len T, each tabletop.ProprioDim
	Actions [][]float64 // len T, each tabletop.ActionDim
	// Labels, when set (DAgger episodes, [CollectDAgger]), is per step the
	// expert's next actions from that step's state, the teacher-forced target
	// chunk; Actions[t] is then Labels[t][0]. Nil for the expert's own
	// episodes, whose chunk at t is Actions[t:t+K].
	Labels [][][]float64
}

// chunk returns the K actions of step t's target chunk: Labels[t] when the
// episode has labels, else Actions[t:t+K]; either is padded by repeating
// its last action.
func (d *ImageDemo) chunk(t, k int) [][]float64 {
	src, at := d.Actions, t
	if d.Labels != nil {
		src, at = d.Labels[t], 0
	}
	out := make([][]float64, k)
	for j := range out {
		out[j] = src[min(at+j, len(src)-1)]
	}
	return out
}

// record appends env's current step to d: its camera images (copied, one
// allocation for all cameras: the env reuses its buffers), its
// proprioception and the action a taken from it.
func (d *ImageDemo) record(env *tabletop.Env, a []float64) {
	ims := env.Images()
	buf := make([]uint8, 0, len(ims)*len(ims[0]))
	frame := make([][]uint8, len(ims))
	for c, im := range ims {
		buf = append(buf, im...)
		frame[c] = buf[len(buf)-len(im):]
	}
	d.Images = append(d.Images, frame)
	d.Proprio = append(d.Proprio, env.Proprio())
	d.Actions = append(d.Actions, a)
}

// ImageCollectInput sizes a demonstration set with images.
type ImageCollectInput struct {
	CollectInput
	ImageSize int      // camera side in pixels (a power of two, 16…256)
	Cameras   []string // tabletop camera names, in the policy's order; empty: agentview, wrist
}

// CollectImages is [Collect] that also records the camera images before
// every step (rendered by a render-enabled environment at in.ImageSize) and
// the instruction. The episodes are the same as Collect's with the same
// CollectInput: rendering consumes no randomness.
func CollectImages(in ImageCollectInput) ([]ImageDemo, error) {
	var out []ImageDemo
	var d ImageDemo
	envCfg := tabletop.Config{ImageSize: in.ImageSize, Cameras: in.Cameras, Render: true}
	err := playExpert(in.CollectInput, envCfg, demoRecorder{
		begin: func(env *tabletop.Env) { d = ImageDemo{Task: env.Task(), Instr: env.InstructionTokens()} },
		step: func(env *tabletop.Env, _, a []float64) {
			d.record(env, a)
		},
		keep: func() { out = append(out, d) },
	})
	return out, err
}

// ActionBins is the number of bins per action dimension of the VLA policy.
const ActionBins = 256

// Action discretisation. Each action value a ∈ [−1, 1] becomes the bin
//
//	b = clamp(⌊(a + 1)/2 · 256⌋, 0, 255)
//
// ([vla.Config.ActionToTokens] with low −1, high 1) and a bin decodes to its
// centre −1 + (b + ½)·2/256. The bins are 2/256 = 0.0078 wide, so the
// decoded value is within half a bin, 1/256 ≈ 0.0039 action units (0.06 mm
// of fingertip motion, 0.4 mrad of rotation), of any a in [−1, 1]; the end
// values ±1 (the gripper's commands, the expert's clamped moves) come back
// as ±(1 − 1/256), exactly that far.
var actionLow, actionHigh = unitBox(tabletop.ActionDim)

// unitBox returns n lows of −1 and n highs of 1.
func unitBox(n int) (low, high []float64) {
	low, high = make([]float64, n), make([]float64, n)
	for i := range low {
		low[i], high[i] = -1, 1
	}
	return low, high
}

// demoTokens returns the tokens of step t's target chunk of d ([ImageDemo.chunk]).
func demoTokens(c vla.Config, d *ImageDemo, t, k int) []int {
	return chunkTokens(c, d.chunk(t, k), 0, k)
}

// chunkTokens returns the tokens of the chunk a_t … a_{t+K−1} of actions
// (the last action repeated past the end): 7 bins per action, action-major,
// the teacher-forced target of step t.
func chunkTokens(c vla.Config, actions [][]float64, t, k int) []int {
	out := make([]int, 0, k*tabletop.ActionDim)
	one := c
	one.ActionDims = tabletop.ActionDim
	for j := range k {
		out = append(out, one.ActionToTokens(actions[min(t+j, len(actions)-1)], actionLow, actionHigh)...)
	}
	return out
}

// tokensToChunk decodes 7·K bins into K actions (bin centres).
func tokensToChunk(c vla.Config, tokens []int) [][]float64 {
	one := c
	one.ActionDims = tabletop.ActionDim
	out := make([][]float64, 0, len(tokens)/tabletop.ActionDim)
	for s := range slices.Chunk(tokens, tabletop.ActionDim) {
		out = append(out, one.TokensToAction(s, actionLow, actionHigh))
	}
	return out
}
