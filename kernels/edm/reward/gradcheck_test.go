package reward

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels/internal/gradcheck"
	"github.com/accerl/accerl/kernels/vla"
)

// The gradient checks compare every backward pass with central
// differences in float64 (gradcheck.Check). At step h = 1e-5 the quotient
// errs by its truncation term h²·|L⁽³⁾|/6 — the test losses L = Σ y ⊙ r
// (r ~ N(0, 1)) or the focal loss itself have |L⁽³⁾| ≲ 10 here, SiLU's
// third derivative being at most 0.5 and the focal loss's at most ~2 in
// the logit for γ ≤ 2 — plus float64 rounding 2.2e-16·|L|/h with |L| ≲ 50:
// ≲ 2e-9 + 1e-9 in all. The tolerance, 1e-6 relative to
// max(1, |analytic|), leaves a margin of ~300×; a wrong or missing term
// moves a gradient by ≳ 1e-3 (a dropped 1/(C·np) pooling factor by a
// factor 32, a sign error in the focal term by 2·|γ p_t log p_t|).
const (
	fdStep  = 1e-5
	gradTol = 1e-6
)

var randVec, dot = gradcheck.RandVec, gradcheck.Dot

func TestFocalLossGradients(t *testing.T) {
	for _, f := range []Focal{{Gamma: 2}, {Gamma: 2, Alpha: 0.25}, {Gamma: 0.5, Alpha: 0.75}, {Gamma: 0}} {
		rng := rand.New(rand.NewPCG(1, 2))
		const n, k = 6, 2
		z := randVec(rng, n*k, 3) // easy and hard examples of both signs
		y := make([]float64, n*k)
		for i := range y {
			y[i] = float64(rng.IntN(2))
		}
		loss := func() float64 { l, _ := f.Loss(z, y, n); return l }
		_, dz := f.Loss(z, y, n)
		gradcheck.Check(t, "focal logits", loss, z, dz, fdStep, gradTol)
	}
}

// TestFocalLossValues pins the loss to its formula: at γ = 0 without α it
// is the binary cross-entropy, and at γ = 2, α = 0.25 one positive logit of
// 0 (p = ½) costs 0.25·¼·ln 2.
func TestFocalLossValues(t *testing.T) {
	z := []float64{-2, 0.5, 30, -40}
	y := []float64{0, 1, 1, 0}
	ce := 0.0
	for i := range z {
		p := 1 / (1 + math.Exp(-z[i]))
		if y[i] == 1 {
			ce -= math.Log(p)
		} else {
			ce -= math.Log(1 - p)
		}
	}
	if l, _ := (Focal{}).Loss(z, y, 2); math.Abs(l-ce/2) > 1e-12 {
		t.Errorf("γ = 0 focal loss %v, want cross-entropy %v", l, ce/2)
	}
	if l, _ := (Focal{Gamma: 2, Alpha: 0.25}).Loss([]float64{0}, []float64{1}, 1); math.Abs(l-0.25*0.25*math.Ln2) > 1e-15 {
		t.Errorf("focal loss at p = ½: %v, want %v", l, 0.25*0.25*math.Ln2)
	}
	// Saturated logits stay finite, with gradients that vanish or are ±α_t·1/n.
	l, dz := (Focal{Gamma: 2}).Loss([]float64{800, -800}, []float64{0, 1}, 1)
	if math.IsInf(l, 0) || math.IsNaN(l) || math.Abs(dz[0]-1) > 1e-12 || math.Abs(dz[1]+1) > 1e-12 {
		t.Errorf("saturated wrong logits: loss %v, gradient %v; want finite, [1, -1]", l, dz)
	}
}

func TestMeanPoolGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, np, d, cams = 3, 4, 5, 2
	tok := [][]float64{randVec(rng, n*np*d, 1), randVec(rng, n*np*d, 1)}
	r := randVec(rng, n*d, 1)
	loss := func() float64 { return dot(meanPool(tok, n, np, d), r) }
	dt := meanPoolBack(r, n, np, d, cams)
	for c := range cams {
		gradcheck.Check(t, "pool tokens", loss, tok[c], dt, fdStep, gradTol)
	}
}

// tinyConfig is small enough to finite-difference every parameter: two
// 8×8 cameras in 4×4 patches, 5-wide tokens, a 4-wide head.
func tinyConfig() Config { return Config{ImageSize: 8, Patch: 4, Cameras: 2, Dim: 5, Hidden: 4} }

func randSteps(rng *rand.Rand, c Config, n int) [][][]uint8 {
	steps := make([][][]uint8, n)
	for i := range steps {
		for range c.Cameras {
			f := make([]uint8, c.FrameBytes())
			for j := range f {
				f[j] = uint8(rng.IntN(256))
			}
			steps[i] = append(steps[i], f)
		}
	}
	return steps
}

// newTestModel returns a tiny model whose biases and position embeddings
// are perturbed away from their init, so that no term is negligible.
func newTestModel(seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := New(tinyConfig(), rng)
	for i := range m.params {
		m.params[i] += 0.3 * rng.NormFloat64()
	}
	return m
}

// TestHeadGradients checks the head (linear, SiLU, linear) with respect to
// its input (the pooled vector) and its parameters.
func TestHeadGradients(t *testing.T) {
	m := newTestModel(5)
	rng := rand.New(rand.NewPCG(5, 6))
	c := m.cfg
	const n = 3
	h := randVec(rng, n*c.Dim, 1)
	r := randVec(rng, n*Outputs, 1)
	head := func() float64 {
		u := silu(linearForward(h, n, c.Dim, c.Hidden, m.fc1W.w, m.fc1B.w))
		return dot(linearForward(u, n, c.Hidden, Outputs, m.fc2W.w, m.fc2B.w), r)
	}
	m.ZeroGrads()
	u1 := linearForward(h, n, c.Dim, c.Hidden, m.fc1W.w, m.fc1B.w)
	dhid := linearBackward(silu(u1), r, n, c.Hidden, Outputs, m.fc2W.w, m.fc2W.g, m.fc2B.g, true)
	dh := linearBackward(h, siluBack(u1, dhid), n, c.Dim, c.Hidden, m.fc1W.w, m.fc1W.g, m.fc1B.g, true)
	gradcheck.Check(t, "head input", head, h, dh, fdStep, gradTol)
	for _, v := range []struct {
		name string
		v    view
	}{{"fc1.weight", m.fc1W}, {"fc1.bias", m.fc1B}, {"fc2.weight", m.fc2W}, {"fc2.bias", m.fc2B}} {
		gradcheck.Check(t, v.name, head, v.v.w, v.v.g, fdStep, gradTol)
	}
}

// TestStemGradients checks one camera's stem (linear patch projection,
// position embedding, SiLU).
func TestStemGradients(t *testing.T) {
	m := newTestModel(8)
	rng := rand.New(rand.NewPCG(8, 9))
	c := m.cfg
	const n = 2
	np, pd, d := c.PatchesPerCamera(), c.PatchDim(), c.Dim
	x := patchify(c, randSteps(rng, c, n), 1)
	r := randVec(rng, n*np*d, 1)
	stem := func() float64 {
		a := linearForward(x, n*np, pd, d, m.stemW[1].w, m.stemB[1].w)
		addPositions(a, m.pos[1].w, n, np, d)
		return dot(silu(a), r)
	}
	m.ZeroGrads()
	a := linearForward(x, n*np, pd, d, m.stemW[1].w, m.stemB[1].w)
	addPositions(a, m.pos[1].w, n, np, d)
	da := siluBack(a, r)
	addPositionsBack(da, m.pos[1].g, n, np, d)
	dx := linearBackward(x, da, n*np, pd, d, m.stemW[1].w, m.stemW[1].g, m.stemB[1].g, true)
	gradcheck.Check(t, "stem input", stem, x, dx, fdStep, gradTol)
	gradcheck.Check(t, "stem weight", stem, m.stemW[1].w, m.stemW[1].g, fdStep, gradTol)
	gradcheck.Check(t, "stem bias", stem, m.stemB[1].w, m.stemB[1].g, fdStep, gradTol)
	gradcheck.Check(t, "stem pos", stem, m.pos[1].w, m.pos[1].g, fdStep, gradTol)
}

// TestModelGradients checks the whole model under the focal loss, every
// parameter span.
func TestModelGradients(t *testing.T) {
	m := newTestModel(10)
	rng := rand.New(rand.NewPCG(10, 11))
	steps := randSteps(rng, m.cfg, 3)
	ex := []Example{{Frames: steps[0], Success: true}, {Frames: steps[1], End: true}, {Frames: steps[2], Success: true, End: true}}
	f := Focal{Gamma: 2, Alpha: 0.75}
	loss := func() float64 {
		tp := m.forward(frames(ex))
		l, _ := f.Loss(tp.logits, labels(ex), len(ex))
		return l
	}
	m.ZeroGrads()
	m.Loss(f, ex)
	for _, s := range m.Spans() {
		n := 1
		for _, v := range s.Shape {
			n *= v
		}
		gradcheck.Check(t, s.Name, loss, m.params[s.Offset:s.Offset+n], m.grads[s.Offset:s.Offset+n], fdStep, gradTol)
	}
}

func TestCopyVLAStem(t *testing.T) {
	vc := vla.SmallConfig()
	vc.ImageSize, vc.Patch, vc.Dim, vc.Heads, vc.Layers, vc.VocabSize = 16, 4, 8, 2, 1, 1300
	v := vla.New(vc, rand.New(rand.NewPCG(1, 1)))
	m := New(ConfigFromVLA(vc, 4), rand.New(rand.NewPCG(2, 2)))
	if err := m.CopyVLAStem(v); err != nil {
		t.Fatal(err)
	}
	find := func(name string) []float32 {
		for _, s := range v.Spans() {
			if s.Name == name {
				n := 1
				for _, d := range s.Shape {
					n *= d
				}
				return v.Params()[s.Offset : s.Offset+n]
			}
		}
		t.Fatalf("no span %s", name)
		return nil
	}
	cam := find("camera_embed")
	for c := range vc.Cameras {
		w, pos := find(fmt.Sprintf("stem.%d.weight", c)), find(fmt.Sprintf("stem.%d.pos", c))
		for i := range w {
			if m.stemW[c].w[i] != float64(w[i]) {
				t.Fatalf("camera %d weight %d: %v, want %v", c, i, m.stemW[c].w[i], w[i])
			}
		}
		for i := range pos {
			if want := float64(pos[i]) + float64(cam[c*vc.Dim+i%vc.Dim]); m.pos[c].w[i] != want {
				t.Fatalf("camera %d pos %d: %v, want %v", c, i, m.pos[c].w[i], want)
			}
		}
	}
	other := New(Config{ImageSize: 16, Patch: 8, Cameras: 2, Dim: 8, Hidden: 4}, rand.New(rand.NewPCG(3, 3)))
	if err := other.CopyVLAStem(v); err == nil {
		t.Error("copying a 4×4-patch stem into an 8×8-patch model succeeded")
	}
}

func TestIncrementsAndScore(t *testing.T) {
	r := Increments([]float64{0.1, 0.2, 0.9, 0.8})
	if want := []float64{0.1, 0.7, -0.1}; len(r) != 3 || math.Abs(r[0]-want[0]) > 1e-15 || math.Abs(r[1]-want[1]) > 1e-15 || math.Abs(r[2]-want[2]) > 1e-15 {
		t.Errorf("increments %v, want %v", r, want)
	}
	m := newTestModel(12)
	steps := randSteps(rand.New(rand.NewPCG(12, 13)), m.cfg, 4)
	p, _ := m.Predict(steps)
	if got, want := m.Rewards(steps), Increments(p); !slices.Equal(got, want) || len(got) != 3 {
		t.Errorf("Rewards %v, want Increments of p_success %v", got, want)
	}
	s := Score([]float64{0.9, 0.2, 0.7, 0.1, 0.6}, []bool{true, true, false, false, false}, 0.5)
	if s.TP != 1 || s.FN != 1 || s.FP != 2 || s.TN != 1 || s.Accuracy != 0.4 || s.Majority != 0.6 ||
		math.Abs(s.Precision-1.0/3) > 1e-15 || s.Recall != 0.5 {
		t.Errorf("scores %+v", s)
	}
}

func TestConfigErrors(t *testing.T) {
	err := Config{ImageSize: 30, Patch: 8, Cameras: 0, Dim: 4, Hidden: 4}.Validate()
	if err == nil || !strings.Contains(err.Error(), "patch 8 does not divide the image size 30") ||
		!strings.Contains(err.Error(), "cameras must be at least 1") {
		t.Errorf("err %v, want the patch and the cameras named", err)
	}
	if err := (TrainConfig{LR: 1e-3, BatchSize: 8, Focal: Focal{Gamma: 2, Alpha: 1}}).Validate(); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("alpha 1 accepted: %v", err)
	}
}
