package vla

import (
	"errors"
	"fmt"
	"math"
)

// Config sizes a micro-VLA. The observation prefix of every sample has the
// same length, [Config.PrefixLen]: Cameras·(ImageSize/Patch)² image
// patches, MaxInstr instruction positions (padding masked) and one
// proprioception token; ActionDims action positions follow.
type Config struct {
	ImageSize int // side S of the square S×S RGB camera images, in pixels
	Patch     int // side P of the square patches; must divide ImageSize
	Cameras   int // number of cameras (LIBERO: agentview + wrist = 2)

	Dim      int // model width: every token is a Dim-vector
	Layers   int // number of transformer blocks
	Heads    int // attention heads per block; must divide Dim
	MLPRatio int // MLP hidden width as a multiple of Dim (GPT: 4)

	MaxInstr  int // instruction length in word tokens; shorter ones are padded
	WordVocab int // word ids are 0 … WordVocab−1
	VocabSize int // V: words, 2 specials, unused ids and Bins action tokens

	ActionDims int // action tokens per step (7: dx dy dz droll dpitch dyaw gripper)
	Bins       int // bins per action dimension = number of action tokens (256)
	ProprioDim int // length of the proprioception vector (8)

	// SlimHead restricts the LM head to its Bins action-token rows
	// (vocabulary slimming): logits, softmax, entropy and gradients cover
	// only those rows, and the other V−Bins rows get no gradient and no
	// optimizer state. False uses the full-vocabulary head: softmax over
	// all V logits, gradients into every row.
	SlimHead bool
}

// DefaultConfig is the benchmark size: width 128, 4 layers of 4 heads, two
// 64×64 cameras in 8×8 patches (64 tokens each), 16 instruction words of a
// 1000-word vocabulary, an LM-like vocabulary of 32000 tokens, 7 action
// tokens of 256 bins, 8-D proprio, slim head.
func DefaultConfig() Config {
	return Config{ImageSize: 64, Patch: 8, Cameras: 2, Dim: 128, Layers: 4, Heads: 4, MLPRatio: 4,
		MaxInstr: 16, WordVocab: 1000, VocabSize: 32000, ActionDims: 7, Bins: 256, ProprioDim: 8, SlimHead: true}
}

// SmallConfig is the RL-sized preset: width 64, 2 layers of 2 heads, two
// 32×32 cameras in 8×8 patches (16 tokens each), 16 instruction words of a
// 1000-word vocabulary, a 4096-token vocabulary, 7 action tokens of 256
// bins, 8-D proprio, slim head — a 49-token prefix and 0.65 M parameters,
// about 10× cheaper per sample than DefaultConfig (see [Bench]).
func SmallConfig() Config {
	return Config{ImageSize: 32, Patch: 8, Cameras: 2, Dim: 64, Layers: 2, Heads: 2, MLPRatio: 4,
		MaxInstr: 16, WordVocab: 1000, VocabSize: 4096, ActionDims: 7, Bins: 256, ProprioDim: 8, SlimHead: true}
}

// NumSpecial is the number of special tokens after the words: <pad> (id
// WordVocab, masked out of attention) and <act> (id WordVocab+1, the input
// at the first action position).
const NumSpecial = 2

// PadID is the id that pads instructions shorter than MaxInstr.
func (c Config) PadID() int { return c.WordVocab }

// ActID is the <act> token, the input at action position 0.
func (c Config) ActID() int { return c.WordVocab + 1 }

// ActionTokenID is the vocabulary id of action bin b: the action tokens are
// the last Bins ids, V−Bins … V−1 (as OpenVLA overwrites its least used
// tokens).
func (c Config) ActionTokenID(b int) int { return c.VocabSize - c.Bins + b }

// PatchesPerCamera is (ImageSize/Patch)².
func (c Config) PatchesPerCamera() int { g := c.ImageSize / c.Patch; return g * g }

// PrefixLen is the observation prefix length: image patches of every
// camera, MaxInstr instruction positions and the proprio token.
func (c Config) PrefixLen() int { return c.Cameras*c.PatchesPerCamera() + c.MaxInstr + 1 }

// SeqLen is PrefixLen + ActionDims, the teacher-forced sequence length.
func (c Config) SeqLen() int { return c.PrefixLen() + c.ActionDims }

// Validate reports every inconsistency of the sizes.
func (c Config) Validate() error {
	var errs []error
	pos := func(name string, v int) bool {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
			return false
		}
		return true
	}
	if pos("image size", c.ImageSize) && pos("patch", c.Patch) && c.ImageSize%c.Patch != 0 {
		errs = append(errs, fmt.Errorf("patch %d does not divide the image size %d", c.Patch, c.ImageSize))
	}
	pos("cameras", c.Cameras)
	if pos("dim", c.Dim) && pos("heads", c.Heads) && c.Dim%c.Heads != 0 {
		errs = append(errs, fmt.Errorf("dim %d is not divisible by heads %d", c.Dim, c.Heads))
	}
	pos("layers", c.Layers)
	pos("mlp ratio", c.MLPRatio)
	if c.MaxInstr < 0 {
		errs = append(errs, fmt.Errorf("max instruction length must not be negative, got %d", c.MaxInstr))
	}
	pos("word vocabulary", c.WordVocab)
	pos("action dims", c.ActionDims)
	pos("bins", c.Bins)
	pos("proprio dim", c.ProprioDim)
	if need := c.WordVocab + NumSpecial + c.Bins; c.VocabSize < need {
		errs = append(errs, fmt.Errorf("vocabulary size %d is too small for %d words + %d specials + %d action bins = %d",
			c.VocabSize, c.WordVocab, NumSpecial, c.Bins, need))
	}
	return errors.Join(errs...)
}

// ParamCount is the number of parameters, the length of [Net.Params].
func (c Config) ParamCount() int {
	_, _, total, _ := buildLayout[float32](c, nil, nil)
	return total
}

// TrainableCount is the number of parameters that get gradients and
// optimizer state, the length of [Net.Grads]: ParamCount, less the
// (V−Bins)·Dim non-action LM-head rows with the slim head.
func (c Config) TrainableCount() int {
	_, _, total, frozen := buildLayout[float32](c, nil, nil)
	if c.SlimHead {
		return total - frozen
	}
	return total
}

// ParamBytes is the float32 storage of the parameters, 4·ParamCount.
func (c Config) ParamBytes() int { return 4 * c.ParamCount() }

// TrainBytes is what training holds per parameter in float32: the
// parameters, plus gradients and Adam's two moments for the trainable ones:
// 4·(ParamCount + 3·TrainableCount). Activations are not included.
func (c Config) TrainBytes() int { return 4 * (c.ParamCount() + 3*c.TrainableCount()) }

// ActionToTokens maps a continuous action to one bin per dimension:
// ⌊(a_d − low_d)/(high_d − low_d)·Bins⌋, clamped to [0, Bins−1] (values
// outside [low, high] go to the end bins, NaN to bin 0).
func (c Config) ActionToTokens(action, low, high []float64) []int {
	if len(action) != c.ActionDims || len(low) != c.ActionDims || len(high) != c.ActionDims {
		panic(fmt.Sprintf("vla: ActionToTokens: action %d, low %d, high %d values; want %d each",
			len(action), len(low), len(high), c.ActionDims))
	}
	t := make([]int, c.ActionDims)
	for d, x := range action {
		f := math.Floor((x - low[d]) / (high[d] - low[d]) * float64(c.Bins))
		switch {
		case !(f >= 0): // also NaN
			t[d] = 0
		case f >= float64(c.Bins):
			t[d] = c.Bins - 1
		default:
			t[d] = int(f)
		}
	}
	return t
}

// TokensToAction maps bins back to their centres low_d + (b + ½)(high_d −
// low_d)/Bins, the inverse of ActionToTokens up to half a bin.
func (c Config) TokensToAction(tokens []int, low, high []float64) []float64 {
	if len(tokens) != c.ActionDims || len(low) != c.ActionDims || len(high) != c.ActionDims {
		panic(fmt.Sprintf("vla: TokensToAction: tokens %d, low %d, high %d values; want %d each",
			len(tokens), len(low), len(high), c.ActionDims))
	}
	a := make([]float64, c.ActionDims)
	for d, b := range tokens {
		if b < 0 || b >= c.Bins {
			panic(fmt.Sprintf("vla: TokensToAction: token %d of dimension %d out of range [0, %d)", b, d, c.Bins))
		}
		a[d] = low[d] + (float64(b)+0.5)*(high[d]-low[d])/float64(c.Bins)
	}
	return a
}
