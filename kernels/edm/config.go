package edm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Config sizes a [Net].
type Config struct {
	// ImageSize is the side of the square working resolution in pixels; it
	// must be divisible by 2^(len(Channels)−1) (every level halves it).
	ImageSize int
	// Cameras is the number of cameras C; each contributes 3 RGB channels
	// to the predicted frame and to each conditioning frame.
	Cameras int
	// History is k, the number of past frames of each camera the next
	// frame is conditioned on (DIAMOND and AcceRL: 4).
	History int
	// ActionDim is the length of the action vector (tabletop: 7).
	ActionDim int
	// Channels are the U-Net's widths per resolution level, one residual
	// block per level on each side (DIAMOND: [64, 64, 64, 64], two blocks
	// per level; see the package doc for why this package's default is
	// smaller).
	Channels []int
	// CondDim is the width of the conditioning vector e (noise-level
	// embedding + action embedding) that every group norm reads.
	CondDim int
	// GroupSize is the number of channels per group-norm group (DIAMOND:
	// 32); a norm over c channels uses the largest divisor of c that is at
	// most max(1, c/GroupSize) groups.
	GroupSize int
}

// DefaultConfig is the 32×32 working-resolution model for cameras cameras
// and actions of actionDim values: k = 4 conditioning frames, channels
// [32, 32, 64], a 64-wide conditioning vector and 32-channel groups.
func DefaultConfig(cameras, actionDim int) Config {
	return Config{ImageSize: 32, Cameras: cameras, History: 4, ActionDim: actionDim,
		Channels: []int{32, 32, 64}, CondDim: 64, GroupSize: 32}
}

// Validate reports the first field that cannot build a model.
func (c Config) Validate() error {
	switch {
	case c.Cameras < 1:
		return fmt.Errorf("cameras must be at least 1, got %d", c.Cameras)
	case c.History < 1:
		return fmt.Errorf("history must be at least 1, got %d", c.History)
	case c.ActionDim < 1:
		return fmt.Errorf("action dim must be at least 1, got %d", c.ActionDim)
	case len(c.Channels) < 1:
		return errors.New("channels must name at least one level")
	case c.CondDim < 2 || c.CondDim%2 != 0:
		return fmt.Errorf("cond dim must be even and at least 2, got %d", c.CondDim)
	case c.GroupSize < 1:
		return fmt.Errorf("group size must be at least 1, got %d", c.GroupSize)
	}
	for _, ch := range c.Channels {
		if ch < 1 {
			return fmt.Errorf("channels must be positive, got %v", c.Channels)
		}
	}
	if f := 1 << (len(c.Channels) - 1); c.ImageSize < f || c.ImageSize%f != 0 {
		return fmt.Errorf("image size %d is not divisible by 2^%d for %d levels", c.ImageSize, len(c.Channels)-1, len(c.Channels))
	}
	return nil
}

// FrameChannels is 3·Cameras, the channels of one time step.
func (c Config) FrameChannels() int { return 3 * c.Cameras }

// Pixels is ImageSize², the pixels of one plane.
func (c Config) Pixels() int { return c.ImageSize * c.ImageSize }

// groups returns the number of group-norm groups for ch channels.
func (c Config) groups(ch int) int {
	g := max(1, ch/c.GroupSize)
	for ch%g != 0 {
		g--
	}
	return g
}

// Span names one parameter tensor inside the flat parameter slice.
// Shapes are PyTorch's: a conv weight is out × in × kh × kw, a linear
// weight out × in.
type Span struct {
	Name   string
	Offset int
	Shape  []int
}

// layout assigns parameter tensors consecutive ranges of the flat slices
// as the model is built, then binds their views once the total is known.
type layout[F Float] struct {
	spans []Span
	refs  []*tensor[F]
	fans  []int // fan-in of each weight, 0 for biases and zero-initialised weights
	off   int
}

func (b *layout[F]) add(name string, t *tensor[F], fan int, shape ...int) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	b.spans = append(b.spans, Span{Name: name, Offset: b.off, Shape: shape})
	b.refs = append(b.refs, t)
	b.fans = append(b.fans, fan)
	b.off += n
}

func (b *layout[F]) conv(l *conv[F], name string, cin, cout, size, stride int) {
	*l = conv[F]{cin: cin, cout: cout, size: size, stride: stride}
	b.add(name+".weight", &l.w, cin*size*size, cout, cin, size, size)
	b.add(name+".bias", &l.b, 0, cout)
}

func (b *layout[F]) dense(l *dense[F], name string, in, out int) {
	*l = dense[F]{in: in, out: out}
	b.add(name+".weight", &l.w, in, out, in)
	b.add(name+".bias", &l.b, 0, out)
}

func (b *layout[F]) norm(l *adaNorm[F], name string, c, groups, condDim int) {
	*l = adaNorm[F]{c: c, groups: groups}
	b.dense(&l.film, name+".film", condDim, 2*c)
}

func (b *layout[F]) res(l *resBlock[F], name string, cfg Config, cin, cout int) {
	*l = resBlock[F]{}
	b.norm(&l.norm1, name+".norm1", cin, cfg.groups(cin), cfg.CondDim)
	b.conv(&l.conv1, name+".conv1", cin, cout, 3, 1)
	b.norm(&l.norm2, name+".norm2", cout, cfg.groups(cout), cfg.CondDim)
	b.conv(&l.conv2, name+".conv2", cout, cout, 3, 1)
	if cin != cout {
		l.proj = new(conv[F])
		b.conv(l.proj, name+".proj", cin, cout, 1, 1)
	}
}

// bind allocates the flat parameter and gradient slices, points every
// tensor into them and initialises the weights as PyTorch's default
// (U(−1/√fan_in, 1/√fan_in), Kaiming-uniform with a = √5) with zero biases.
func (b *layout[F]) bind(rng *rand.Rand) (params, grads []F) {
	params, grads = make([]F, b.off), make([]F, b.off)
	for i, t := range b.refs {
		s := b.spans[i]
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		t.w = params[s.Offset : s.Offset+n : s.Offset+n]
		t.g = grads[s.Offset : s.Offset+n : s.Offset+n]
		if fan := b.fans[i]; fan > 0 && rng != nil {
			bound := 1 / math.Sqrt(float64(fan))
			for j := range t.w {
				t.w[j] = F(bound * (2*rng.Float64() - 1))
			}
		}
	}
	return params, grads
}
