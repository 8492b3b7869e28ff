package reward

import (
	"fmt"
	"slices"

	"github.com/accerl/accerl/kernels/vla"
)

// CopyVLAStem initialises the model's patch stems from a (trained) VLA:
// camera c's stem.c.weight and stem.c.bias are copied, and its position
// embeddings become vla's stem.c.pos plus camera_embed row c, so that each
// pre-activation a_{c,p} is exactly the token the VLA feeds its
// transformer for that patch. The head is left as it is. The VLA's image
// size, patch, camera count and width must be the model's.
func (m *Model) CopyVLAStem(v *vla.Model) error {
	vc, c := v.Config(), m.cfg
	if vc.ImageSize != c.ImageSize || vc.Patch != c.Patch || vc.Cameras != c.Cameras || vc.Dim != c.Dim {
		return fmt.Errorf("copy vla stem: the VLA has %d cameras of %d×%d in %d×%d patches, width %d; the reward model %d of %d×%d in %d×%d, width %d (build the reward model with ConfigFromVLA)",
			vc.Cameras, vc.ImageSize, vc.ImageSize, vc.Patch, vc.Patch, vc.Dim, c.Cameras, c.ImageSize, c.ImageSize, c.Patch, c.Patch, c.Dim)
	}
	spans := map[string]vla.Span{}
	for _, s := range v.Spans() {
		spans[s.Name] = s
	}
	params := v.Params()
	get := func(name string, shape ...int) ([]float32, error) {
		s, ok := spans[name]
		if !ok {
			return nil, fmt.Errorf("copy vla stem: the VLA has no parameter %q", name)
		}
		if !slices.Equal(s.Shape, shape) {
			return nil, fmt.Errorf("copy vla stem: %s has shape %v, want %v", name, s.Shape, shape)
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		return params[s.Offset : s.Offset+n], nil
	}
	d, np := c.Dim, c.PatchesPerCamera()
	camEmb, err := get("camera_embed", c.Cameras, d)
	if err != nil {
		return err
	}
	for cam := range c.Cameras {
		w, err := get(fmt.Sprintf("stem.%d.weight", cam), d, c.PatchDim())
		if err != nil {
			return err
		}
		b, err := get(fmt.Sprintf("stem.%d.bias", cam), d)
		if err != nil {
			return err
		}
		pos, err := get(fmt.Sprintf("stem.%d.pos", cam), np, d)
		if err != nil {
			return err
		}
		for i, x := range w {
			m.stemW[cam].w[i] = float64(x)
		}
		for i, x := range b {
			m.stemB[cam].w[i] = float64(x)
		}
		for i, x := range pos {
			m.pos[cam].w[i] = float64(x) + float64(camEmb[cam*d+i%d])
		}
	}
	return nil
}

// ConfigFromVLA is the reward model whose stems have the VLA's shape, with
// a head hidden units wide.
func ConfigFromVLA(v vla.Config, hidden int) Config {
	return Config{ImageSize: v.ImageSize, Patch: v.Patch, Cameras: v.Cameras, Dim: v.Dim, Hidden: hidden}
}
