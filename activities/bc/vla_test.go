package bc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/accerl/accerl/testenv/tabletop"
)

// TestActionBinning checks the discretisation's documented bound: every
// value of [−1, 1] decodes to within half a bin, 1/256, and the chunk
// target repeats the episode's last action past its end.
func TestActionBinning(t *testing.T) {
	mc := DefaultVLAConfig().ModelConfig()
	worst := 0.0
	for i := 0; i <= 10000; i++ {
		v := -1 + 2*float64(i)/10000
		a := []float64{v, -v, v, 0, 1, -1, v / 2}
		got := tokensToChunk(mc, chunkTokens(mc, [][]float64{a}, 0, 1))[0]
		for d := range a {
			worst = max(worst, math.Abs(got[d]-a[d]))
		}
	}
	// Half a bin, plus float64 rounding of the centre's arithmetic.
	if worst > 1.0/256+1e-12 {
		t.Errorf("worst rounding error %v, want ≤ 1/256 = %v", worst, 1.0/256)
	}
	acts := [][]float64{{1, 0, 0, 0, 0, 0, -1}, {0, 1, 0, 0, 0, 0, 1}}
	tk := chunkTokens(mc, acts, 1, 3)
	if len(tk) != 21 || !slices.Equal(tk[7:14], tk[:7]) || !slices.Equal(tk[14:], tk[:7]) {
		t.Errorf("chunk from the last step %v, want the last action's 7 bins three times", tk)
	}
	if tk[1] != 255 || tk[0] != 128 || tk[6] != 255 {
		t.Errorf("bins %v: want 1 → 255 and 0 → 128", tk[:7])
	}
}

// TestCollectImagesMatchesCollect checks that recording images leaves the
// episodes as Collect plays them and stores a frame per step.
func TestCollectImagesMatchesCollect(t *testing.T) {
	in := CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{3}, PerTask: 2, Noise: 0.1, Seed: 5}
	plain, err := Collect(in)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := CollectImages(ImageCollectInput{CollectInput: in, ImageSize: 16, Cameras: []string{tabletop.CameraWrist}})
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) != len(plain) {
		t.Fatalf("%d image demos, %d plain", len(imgs), len(plain))
	}
	for k, d := range imgs {
		p := plain[k]
		if len(d.Actions) != len(p.Actions) || len(d.Images) != len(d.Actions) || len(d.Proprio) != len(d.Actions) {
			t.Fatalf("demo %d: %d actions, %d images, %d proprio; plain %d actions", k, len(d.Actions), len(d.Images), len(d.Proprio), len(p.Actions))
		}
		for i := range d.Actions {
			if !slices.Equal(d.Actions[i], p.Actions[i]) || !slices.Equal(d.Proprio[i], p.Obs[i][:tabletop.ProprioDim]) {
				t.Fatalf("demo %d step %d differs from Collect's", k, i)
			}
			if len(d.Images[i]) != 1 || len(d.Images[i][0]) != 16*16*3 {
				t.Fatalf("demo %d step %d: images of shape %d × %d bytes", k, i, len(d.Images[i]), len(d.Images[i][0]))
			}
		}
		if slices.Equal(d.Images[0][0], d.Images[len(d.Images)-1][0]) {
			t.Errorf("demo %d: first and last wrist frames are equal; frames must be copies", k)
		}
		if d.Task != 3 || len(d.Instr) == 0 {
			t.Errorf("demo %d: task %d, instruction %v", k, d.Task, d.Instr)
		}
	}
}

// randomActor plays uniform actions in [−1, 1]⁷, the baseline of the
// smoke test.
type randomActor struct{ rng *rand.Rand }

func (r randomActor) Act(_ []*tabletop.Env, _ [][]float64, need []int, out [][]float64) {
	for _, i := range need {
		for d := range out[i] {
			out[i][d] = 2*r.rng.Float64() - 1
		}
	}
}

// TestCloneSpatialTask0FromPixels is the pixel recipe's smoke test: a
// width-32, one-layer micro-VLA cloned from 30 demonstrations of spatial
// task 0 (both cameras at 32×32, chunk 8 / execute 4, 8 epochs, about 360
// steps of batch 32) must lower its token cross-entropy and solve some of
// the task's first 10 fixed initial states greedily, which a uniformly
// random policy never does.
func TestCloneSpatialTask0FromPixels(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for ~25 s")
	}
	const inits = 10
	rnd, err := Evaluate(randomActor{rand.New(rand.NewPCG(1, 1))}, tabletop.SuiteSpatial, []int{0}, inits)
	if err != nil {
		t.Fatal(err)
	}
	// Measured 0 over all 50 initial states as well: random motion never
	// grasps the bowl, let alone places it.
	if rnd.SuccessRate != 0 {
		t.Fatalf("random policy success %.2f, the baseline assumes 0", rnd.SuccessRate)
	}
	cfg := DefaultVLAConfig()
	cfg.Dim, cfg.Layers, cfg.Epochs, cfg.LR = 32, 1, 8, 6e-3
	// The recipe this test measured: one-hot labels, 4 of each chunk executed.
	cfg.LabelSigma, cfg.Execute = 0, 4
	demos, err := CollectImages(ImageCollectInput{CollectInput: CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{0},
		PerTask: 30, Noise: 0.1, Seed: 7}, ImageSize: cfg.ImageSize, Cameras: cfg.Cameras})
	if err != nil {
		t.Fatal(err)
	}
	m, tr, err := TrainVLA(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Actor()
	r, err := EvaluateEnv(a, m.EnvConfig(tabletop.SuiteSpatial), []int{0}, inits)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples, %.0f samples/s; cross-entropy %.3f at the start, %.3f → %.3f per epoch; token accuracy %.3f; success %.2f (random %.2f); act %v per call",
		tr.Samples, tr.SamplesPerS, tr.InitialLoss, tr.EpochLoss[0], tr.FinalLoss, tr.EpochAccuracy[len(tr.EpochAccuracy)-1], r.SuccessRate, rnd.SuccessRate, a.MeanActLatency())
	// The near-uniform head starts at log 256 = 5.55 nats. Half of that,
	// log 16, is the cross-entropy of a distribution spread evenly over 16
	// bins (±0.06 action units) around the expert's value: a clone that
	// places its mass that close has learned the actions. Measured 2.22.
	if math.Abs(tr.InitialLoss-math.Log(256)) > 0.1 {
		t.Errorf("initial cross-entropy %.3f, want ≈ log 256 = %.3f", tr.InitialLoss, math.Log(256))
	}
	if tr.FinalLoss >= tr.InitialLoss/2 {
		t.Errorf("cross-entropy %.3f → %.3f, want below half", tr.InitialLoss, tr.FinalLoss)
	}
	// Measured 0.4 with this seed (0.3 with model seeds 2 and 3); any
	// success beats the random policy's 0.
	if r.SuccessRate <= rnd.SuccessRate {
		t.Errorf("greedy pixel BC success %.2f on spatial task 0, want above the random policy's %.2f", r.SuccessRate, rnd.SuccessRate)
	}
}
