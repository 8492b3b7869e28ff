package bc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

func tinyVLAConfig() VLAConfig {
	return VLAConfig{ImageSize: 16, Patch: 8, Cameras: []string{tabletop.CameraAgentview}, Dim: 16, Layers: 1, Heads: 2,
		MLPRatio: 2, Chunk: 2, Execute: 1, Epochs: 3, Batch: 16, LR: 3e-3, MaxGradNorm: 1, Seed: 4}
}

func tinyImageDemos(t *testing.T) []ImageDemo {
	t.Helper()
	demos, err := CollectImages(ImageCollectInput{CollectInput: CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{0}, PerTask: 2, Noise: 0.1, Seed: 3},
		ImageSize: 16, Cameras: []string{tabletop.CameraAgentview}})
	if err != nil {
		t.Fatal(err)
	}
	return demos
}

// stateThroughJSON returns tr's state after a round trip through JSON, as PretrainPolicy
// checkpoints it.
func stateThroughJSON(t *testing.T, tr *VLATrainer) VLATrainerState {
	t.Helper()
	st, err := tr.State()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	var back VLATrainerState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// A VLA trainer restored from an epoch's state (through JSON, as PretrainPolicy checkpoints
// it) trains the remaining epochs bit-identically to the uninterrupted one, and an epoch
// under a cancelled context gives up at once.
func TestVLATrainerStateResumesExactly(t *testing.T) {
	demos := tinyImageDemos(t)
	ref, err := NewVLATrainer(tinyVLAConfig(), demos)
	if err != nil {
		t.Fatal(err)
	}
	for !ref.Done() {
		if _, err := ref.Epoch(); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := NewVLATrainer(tinyVLAConfig(), demos)
	if _, err := a.Epoch(); err != nil {
		t.Fatal(err)
	}
	back := stateThroughJSON(t, a)
	// A cancelled epoch stops before its next step with the context's error and does not
	// count; the state saved before it still resumes exactly (below).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.EpochContext(ctx); !errors.Is(err, context.Canceled) || a.Epochs() != 1 {
		t.Fatalf("cancelled epoch: error %v, %d epochs counted; want context.Canceled and 1", err, a.Epochs())
	}
	r, _ := NewVLATrainer(tinyVLAConfig(), demos)
	if err := r.Restore(back); err != nil {
		t.Fatal(err)
	}
	for !r.Done() {
		if _, err := r.Epoch(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(r.Model().Net.Params(), ref.Model().Net.Params()) || !slices.Equal(r.Result().EpochLoss, ref.Result().EpochLoss) {
		t.Errorf("resumed training differs: losses %v vs %v", r.Result().EpochLoss, ref.Result().EpochLoss)
	}
	back.Epoch = 7
	if err := r.Restore(back); err == nil {
		t.Error("restore of epoch 7 of 3 epochs: no error")
	}
}

// The folded parameters make the engine's VLA policy, which reads the raw proprioception
// from the observation and the images and instruction from the frame, act as the trained
// model does on standardised proprioception: the same greedy tokens and values.
func TestVLAFoldedParamsMatchEnginePolicy(t *testing.T) {
	m, params, demos := tinyFoldedClone(t)
	mc := m.Net.Config()
	const pad = 9999 // a frame's unused instruction places
	low, high := unitBox(mc.ActionDims)
	pc := vla.PolicyConfig{Model: mc, ObsDim: 10, InstrTokens: mc.MaxInstr, InstrPad: pad, Low: low, High: high}
	pol := vla.NewPolicy(pc, rand.New(rand.NewPCG(1, 1)))
	pol.SetParams(params)

	d := demos[0]
	var obs []float64
	var frames [][]byte
	var ref []vla.Obs
	for _, i := range []int{0, len(d.Actions) / 2, len(d.Actions) - 1} {
		row := append(slices.Clone(d.Proprio[i]), 0.5, -0.5) // two values past the proprio, unused
		obs = append(obs, row...)
		f := slices.Clone(d.Images[i][0])
		for k := range mc.MaxInstr {
			id := pad
			if k < len(d.Instr) {
				id = d.Instr[k]
			}
			f = binary.LittleEndian.AppendUint16(f, uint16(id))
		}
		frames = append(frames, f)
		ref = append(ref, m.obs(d.Images[i], d.Instr, d.Proprio[i]))
	}
	n := len(frames)
	pol.SetFrames(frames)
	a := kernels.Actions{Tokens: make([]int, n*mc.ActionDims)}
	pol.Greedy(obs, n, a)
	vals := make([]float64, n)
	pol.Values(obs, n, vals)
	tok, _, v := m.Net.Act(ref, nil, true)
	for i := range n {
		if !slices.Equal(a.Tokens[i*mc.ActionDims:(i+1)*mc.ActionDims], tok[i]) {
			t.Errorf("row %d: engine policy tokens %v, trained model %v", i, a.Tokens[i*mc.ActionDims:(i+1)*mc.ActionDims], tok[i])
		}
		// float32 arithmetic on re-rounded weights: agreement to ~1e-5 relative; 1e-3
		// absolute is far below any value difference that matters.
		if math.Abs(vals[i]-float64(v[i])) > 1e-3 {
			t.Errorf("row %d: value %v, trained model %v", i, vals[i], v[i])
		}
	}
}

// Random-shift augmentation translates each image by whole pixels with the edges repeated:
// a shift of (1, 0) moves every pixel one place left, the last column repeats.
func TestVLAShiftAugmentation(t *testing.T) {
	cfg := tinyVLAConfig()
	cfg.Shift = 2
	tr := &VLATrainer{cfg: cfg}
	const s = 16
	im := make([]uint8, s*s*3)
	for i := range im {
		im[i] = uint8(i / 3 % 251)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[[2]int]bool{}
	for range 200 {
		out := tr.shifted(0, [][]uint8{im}, rng)[0]
		// Recover the offset from pixel (8, 8), then check every pixel against it.
		var dx, dy int
		found := false
		for oy := -2; oy <= 2 && !found; oy++ {
			for ox := -2; ox <= 2 && !found; ox++ {
				if out[(8*s+8)*3] == im[((8+oy)*s+8+ox)*3] {
					dx, dy, found = ox, oy, true
				}
			}
		}
		if !found {
			t.Fatal("pixel (8, 8) comes from no offset within 2")
		}
		seen[[2]int{dx, dy}] = true
		for y := range s {
			for x := range s {
				sy, sx := min(max(y+dy, 0), s-1), min(max(x+dx, 0), s-1)
				if out[(y*s+x)*3] != im[(sy*s+sx)*3] {
					t.Fatalf("offset (%d, %d): pixel (%d, %d) is %d, want source (%d, %d) = %d", dx, dy, x, y, out[(y*s+x)*3], sx, sy, im[(sy*s+sx)*3])
				}
			}
		}
	}
	if len(seen) != 25 {
		t.Errorf("%d distinct offsets in 200 draws, want all 25 of [−2, 2]²", len(seen))
	}
}

// The learning rate falls linearly from LR to FinalLR (a tenth of LR when 0): on the
// last step of the last epoch it is one step short of the end point, by hand
// LR + (FinalLR − LR)·(total − 1)/total. A FinalLR above LR is refused.
func TestVLATrainerFinalLR(t *testing.T) {
	demos := tinyImageDemos(t)
	for _, final := range []float64{0, 3e-5} {
		cfg := tinyVLAConfig()
		cfg.FinalLR = final
		tr, err := NewVLATrainer(cfg, demos)
		if err != nil {
			t.Fatal(err)
		}
		for !tr.Done() {
			if _, err := tr.Epoch(); err != nil {
				t.Fatal(err)
			}
		}
		end := final
		if end == 0 {
			end = cfg.LR / 10
		}
		total := float64(cfg.Epochs * (tr.Samples() / min(cfg.Batch, tr.Samples())))
		want := cfg.LR + (end-cfg.LR)*(total-1)/total
		// 1e-12 relative: the schedule is one float64 multiply-add.
		if got := tr.opt.LR; math.Abs(got-want) > 1e-12*want {
			t.Errorf("FinalLR %g: last step's learning rate %g, want %g", final, got, want)
		}
	}
	cfg := tinyVLAConfig()
	cfg.FinalLR = 2 * cfg.LR
	if err := cfg.Validate(); err == nil {
		t.Error("FinalLR twice LR: no error")
	}
}

// With EMA the trainer's raw weights train exactly as without it, and Model returns their
// moving average: e₀ = w₀, e_s = d_s·e_{s−1} + (1−d_s)·w_s with d_s = min(EMA, (1+s)/(10+s)),
// recomputed here from the raw weights after each step (one batch of all samples per epoch,
// so an epoch is one step). A resumed trainer carries the average on bit for bit.
func TestVLATrainerEMA(t *testing.T) {
	demos := tinyImageDemos(t)
	cfg := tinyVLAConfig()
	cfg.Batch, cfg.Epochs = 1<<20, 5 // one step per epoch
	plain, err := NewVLATrainer(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	cfg.EMA = 0.33 // d_s = (1+s)/(10+s) is 0.18, 0.25, 0.31 for s = 1..3, then 0.33 (capped): both branches of min
	ema, err := NewVLATrainer(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, len(plain.Model().Net.Params()))
	for i, w := range plain.Model().Net.Params() {
		want[i] = float64(w)
	}
	for s := 1; s <= cfg.Epochs; s++ {
		if _, err := plain.Epoch(); err != nil {
			t.Fatal(err)
		}
		if _, err := ema.Epoch(); err != nil {
			t.Fatal(err)
		}
		d := math.Min(cfg.EMA, (1+float64(s))/(10+float64(s)))
		for i, w := range plain.Model().Net.Params() {
			want[i] = d*want[i] + (1-d)*float64(w)
		}
		if s == 2 { // resume the EMA trainer from its state after two steps
			back := stateThroughJSON(t, ema)
			if ema, err = NewVLATrainer(cfg, demos); err != nil {
				t.Fatal(err)
			}
			if err := ema.Restore(back); err != nil {
				t.Fatal(err)
			}
			noEMA, _ := NewVLATrainer(tinyVLAConfig(), demos)
			if err := noEMA.Restore(back); err == nil {
				t.Error("a state with a weight average restored into a trainer without EMA: no error")
			}
		}
	}
	if !slices.Equal(ema.m.Net.Params(), plain.Model().Net.Params()) {
		t.Fatal("the raw weights trained with EMA differ from those trained without")
	}
	got := ema.Model().Net.Params()
	if slices.Equal(got, ema.m.Net.Params()) {
		t.Fatal("Model returned the raw weights, not their average")
	}
	worst := 0.0
	for i, g := range got {
		// float32 accumulation of five averaging steps against float64: a few ulps of
		// weights of size ≲ 1, so 1e-6 absolute is ample and far below a step's change.
		worst = math.Max(worst, math.Abs(float64(g)-want[i]))
	}
	if worst > 1e-6 {
		t.Errorf("EMA weights off the recomputed average by up to %g", worst)
	}
	if ema.Model() == ema.m || ema.Model().Proprio.Std[0] != ema.m.Proprio.Std[0] {
		t.Error("Model with EMA must be a copy with the trainer's settings")
	}
}

// SetFoldedParams inverts FoldedParams whatever standardisation the receiving model holds:
// a clone's folded parameters unfolded into a model fitted on other demonstrations (another
// mean and spread of the proprioception) fold back to the same parameters, and only the
// proprio layer differs between the two networks.
func TestVLASetFoldedParamsInvertsFold(t *testing.T) {
	m, folded, _ := tinyFoldedClone(t)
	other := *m
	other.Net = vla.New(m.Net.Config(), rand.New(rand.NewPCG(7, 7)))
	other.Proprio = Normaliser{Mean: slices.Clone(m.Proprio.Mean), Std: slices.Clone(m.Proprio.Std)}
	for j := range other.Proprio.Mean {
		other.Proprio.Mean[j] += 0.3 * float64(j+1)
		other.Proprio.Std[j] *= 1.5 + 0.1*float64(j)
	}
	if err := other.SetFoldedParams(folded); err != nil {
		t.Fatal(err)
	}
	again, err := other.FoldedParams()
	if err != nil {
		t.Fatal(err)
	}
	weight, bias, out, in, err := m.proprioLayer()
	if err != nil {
		t.Fatal(err)
	}
	inProprio := func(i int) bool { return i >= weight && i < weight+out*in || i >= bias && i < bias+out }
	for i := range folded {
		// float32 storage: a relative rounding of 2^-24 per operand, over the at most
		// in+1 terms of a folded bias, stays well under 1e-5 of the largest term.
		tol := 1e-5 * (1 + math.Abs(folded[i]))
		if inProprio(i) {
			tol *= float64(in + 1)
		}
		if math.Abs(again[i]-folded[i]) > tol {
			t.Fatalf("parameter %d: folded %v, unfolded and folded again %v", i, folded[i], again[i])
		}
		unfolded, orig := float64(other.Net.Params()[i]), float64(m.Net.Params()[i])
		if !inProprio(i) && unfolded != orig {
			t.Fatalf("parameter %d outside the proprio layer: %v, the clone's %v", i, unfolded, orig)
		}
	}
	if float64(other.Net.Params()[weight]) == float64(m.Net.Params()[weight]) {
		t.Error("the proprio layer's first weight did not change with the standardisation")
	}
	if err := other.SetFoldedParams(folded[1:]); err == nil {
		t.Error("one parameter short: no error")
	}
}

// tinyFoldedClone is a tiny VLA cloned for one epoch on the tiny demonstrations, with its
// parameters folded into the engine policy's layout.
func tinyFoldedClone(t *testing.T) (*VLAModel, []float64, []ImageDemo) {
	t.Helper()
	demos := tinyImageDemos(t)
	cfg := tinyVLAConfig()
	cfg.Epochs = 1
	m, _, err := TrainVLA(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := m.FoldedParams()
	if err != nil {
		t.Fatal(err)
	}
	return m, folded, demos
}
