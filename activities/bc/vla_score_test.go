package bc

import (
	"math"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// tinyVLADemos records two wrist-camera demonstrations per task of spatial
// tasks 0 and 1 at 16×16, and a tiny config for them.
func tinyVLADemos(t *testing.T, perTask int) ([]ImageDemo, VLAConfig) {
	t.Helper()
	cfg := DefaultVLAConfig()
	cfg.ImageSize, cfg.Patch, cfg.Cameras = 16, 8, []string{tabletop.CameraWrist}
	cfg.Dim, cfg.Layers, cfg.Chunk, cfg.Execute, cfg.Epochs = 16, 1, 2, 1, 1
	demos, err := CollectImages(ImageCollectInput{CollectInput: CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{0, 1},
		PerTask: perTask, Noise: 0.1, Seed: 3}, ImageSize: cfg.ImageSize, Cameras: cfg.Cameras})
	if err != nil {
		t.Fatal(err)
	}
	return demos, cfg
}

// TestSplitDemos keeps the first perTask episodes of each task for
// training, in order, and holds out the rest.
func TestSplitDemos(t *testing.T) {
	var demos []ImageDemo
	for _, task := range []int{0, 0, 0, 1, 1, 1} {
		demos = append(demos, ImageDemo{Task: task, Actions: make([][]float64, len(demos)+1)})
	}
	train, held := SplitDemos(demos, 2)
	lens := func(ds []ImageDemo) (out []int) {
		for _, d := range ds {
			out = append(out, len(d.Actions))
		}
		return out
	}
	if !slices.Equal(lens(train), []int{1, 2, 4, 5}) || !slices.Equal(lens(held), []int{3, 6}) {
		t.Errorf("train %v, held out %v; want [1 2 4 5] and [3 6]", lens(train), lens(held))
	}
}

// TestVLAModelRoundTrip: a saved and loaded model decodes the same tokens,
// and a file whose settings do not fit its network is refused.
func TestVLAModelRoundTrip(t *testing.T) {
	demos, cfg := tinyVLADemos(t, 1)
	m, _, err := TrainVLA(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back VLAModel
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if back.Chunk != m.Chunk || back.Execute != m.Execute || back.ImageSize != m.ImageSize || !slices.Equal(back.Cameras, m.Cameras) ||
		!slices.Equal(back.Proprio.Mean, m.Proprio.Mean) || !slices.Equal(back.Proprio.Std, m.Proprio.Std) {
		t.Errorf("settings changed: %+v, want %+v", back, *m)
	}
	d := demos[0]
	obs := []vla.Obs{m.obs(d.Images[3], d.Instr, d.Proprio[3])}
	want, _, _ := m.Net.Act(obs, nil, true)
	got, _, _ := back.Net.Act([]vla.Obs{back.obs(d.Images[3], d.Instr, d.Proprio[3])}, nil, true)
	if !slices.Equal(got[0], want[0]) {
		t.Errorf("loaded model decodes %v, saved one %v", got[0], want[0])
	}
	bad := *m
	bad.Chunk = 3
	b, _ = bad.MarshalBinary()
	if err := back.UnmarshalBinary(b); err == nil {
		t.Error("a model file with chunk 3 for a network of 2 actions per query was accepted")
	}
}

// TestVLAScore: the teacher-forced numbers are what training reports on
// the same steps, the decoded-action errors are those of the decoded
// tokens by hand, and a model trained with soft labels scores too.
func TestVLAScore(t *testing.T) {
	demos, cfg := tinyVLADemos(t, 2)
	cfg.LabelSigma = 2
	cfg.Epochs = 2
	m, tr, err := TrainVLA(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	if !(tr.FinalLoss < tr.InitialLoss) {
		t.Errorf("soft-label training: cross-entropy %.3f → %.3f, want it to fall", tr.InitialLoss, tr.FinalLoss)
	}
	s, err := m.Score(demos, 0, 7, vla.DecodeArgmax)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range demos {
		n += len(d.Actions)
	}
	if s.Samples != n || s.Decode != "argmax" {
		t.Errorf("scored %d samples with %q, want all %d with argmax", s.Samples, s.Decode, n)
	}
	// By hand on every step, one batch: cross-entropy and translation error.
	mc := m.Net.Config()
	var obs []vla.Obs
	var tok [][]int
	var want [][]float64
	for _, d := range demos {
		for i := range d.Actions {
			obs = append(obs, m.obs(d.Images[i], d.Instr, d.Proprio[i]))
			tok = append(tok, chunkTokens(mc, d.Actions, i, m.Chunk))
			want = append(want, d.Actions[i])
		}
	}
	ce, acc, _ := vla.CrossEntropy(m.Net.Forward(obs, tok))
	got, _, _ := m.Net.Act(obs, nil, true)
	mae := 0.0
	for r, g := range got {
		a := tokensToChunk(mc, g)[0]
		for d := range 3 {
			mae += math.Abs(a[d] - want[r][d])
		}
	}
	mae /= 3 * float64(len(got))
	if math.Abs(s.CrossEntropy-ce) > 1e-4 || math.Abs(s.Accuracy-acc) > 1e-9 || math.Abs(s.MAETranslation-mae) > 1e-9 || s.MAEFirstTranslation != s.MAETranslation {
		t.Errorf("score %+v; by hand cross-entropy %v, accuracy %v, translation MAE %v (execute 1: first = all)", s, ce, acc, mae)
	}
	if s.GripperWrong < 0 || s.GripperWrong > 1 || s.MAEGripper < 0 || s.MAERotation < 0 {
		t.Errorf("score %+v out of range", s)
	}
	// A stride: at most maxSamples steps.
	if s2, err := m.Score(demos, 10, 4, vla.DecodeMean); err != nil || s2.Samples > 10 || s2.Samples < 5 || s2.Decode != "mean" {
		t.Errorf("strided score: %+v, %v; want 5–10 samples decoded by the mean rule", s2, err)
	}
	if _, err := m.ActorDecode(vla.DecodeSample); err == nil {
		t.Error("ActorDecode accepted the sampling rule")
	}
	cfg.LabelSigma = -1
	if err := cfg.Validate(); err == nil {
		t.Error("a negative label sigma validated")
	}
}

// TestVLAActorEnsemble: with temporal ensembling the actor queries every
// step and runs the mean of the motion the newest chunks predicted for the
// step (the first step only its own chunk's), with the newest chunk's
// gripper command.
func TestVLAActorEnsemble(t *testing.T) {
	demos, cfg := tinyVLADemos(t, 1)
	m, _, err := TrainVLA(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	env, err := tabletop.New(m.EnvConfig(tabletop.SuiteSpatial))
	if err != nil {
		t.Fatal(err)
	}
	obs := [][]float64{env.ResetTo(0, 0)}
	ens := m.Actor()
	ens.Ensemble = 5 // more than the chunk of 2: the chunk bounds it
	ref := m.Actor()
	out := [][]float64{make([]float64, tabletop.ActionDim)}
	var prev [][]float64
	for step := range 4 {
		ens.Act([]*tabletop.Env{env}, obs, []int{0}, out)
		cur := ref.decode([]*tabletop.Env{env}, []int{0})[0]
		want := slices.Clone(cur[0])
		if prev != nil {
			for j := range tabletop.ActionDim - 1 {
				want[j] = (cur[0][j] + prev[1][j]) / 2
			}
		}
		for j := range want {
			if math.Abs(out[0][j]-want[j]) > 1e-12 {
				t.Fatalf("step %d: action %v, want %v", step, out[0], want)
			}
		}
		prev = cur
		obs[0], _, _, _ = env.Step(out[0])
	}
	if ens.Calls != 4 {
		t.Errorf("%d network calls over 4 steps, want one per step", ens.Calls)
	}
}
