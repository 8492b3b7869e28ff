package bc

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// TestDAggerLabelsAreTheExpertsPlan lets the noise-free expert itself be the
// learner: then the state it reaches after j steps is the one the lookahead
// simulated, so every step's label chunk must equal the actions the episode
// actually took next (bit for bit, the last repeated past the end), every
// episode must succeed, and each step must carry its images and
// proprioception.
func TestDAggerLabelsAreTheExpertsPlan(t *testing.T) {
	const k = 5
	in := DAggerInput{Suite: tabletop.SuiteSpatial, Tasks: []int{2, 7}, PerTask: 2, Seed: 3}
	envCfg := tabletop.Config{Suite: in.Suite, ImageSize: 16, Cameras: []string{tabletop.CameraWrist}}
	demos, st, err := collectDAgger(in, &ExpertActor{Follow: true}, envCfg, k)
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 4 || st.Successes != 4 || len(demos) != 4 {
		t.Fatalf("stats %+v, %d episodes; want 4 successful", st, len(demos))
	}
	steps := 0
	for n, d := range demos {
		T := len(d.Actions)
		steps += T
		if len(d.Labels) != T || len(d.Images) != T || len(d.Proprio) != T || T < 10 {
			t.Fatalf("episode %d: %d actions, %d labels, %d frames, %d proprio", n, T, len(d.Labels), len(d.Images), len(d.Proprio))
		}
		for i := range T {
			if len(d.Labels[i]) != k {
				t.Fatalf("episode %d step %d: chunk of %d, want %d", n, i, len(d.Labels[i]), k)
			}
			for j, a := range d.Labels[i] {
				if want := d.Actions[min(i+j, T-1)]; !slices.Equal(a, want) {
					t.Fatalf("episode %d step %d: label %d is %v, the episode took %v", n, i, j, a, want)
				}
			}
			if len(d.Images[i]) != 1 || len(d.Images[i][0]) != 16*16*3 {
				t.Fatalf("episode %d step %d: %d images", n, i, len(d.Images[i]))
			}
		}
		if slices.Equal(d.Images[0][0], d.Images[T-1][0]) {
			t.Errorf("episode %d: first and last frames equal; frames must be copies", n)
		}
		if d.Task != in.Tasks[n/2] || len(d.Instr) == 0 {
			t.Errorf("episode %d: task %d, instruction %v", n, d.Task, d.Instr)
		}
	}
	if st.Steps != steps {
		t.Errorf("stats count %d steps, the episodes %d", st.Steps, steps)
	}
	if st.MotionDisagree != 0 || st.GripperDisagree != 0 || st.Restarts != 0 {
		t.Errorf("the expert labelling itself: disagreement %g motion, %g gripper, %d restarts; want none", st.MotionDisagree, st.GripperDisagree, st.Restarts)
	}
	// Another round's seed resets other scenes.
	in.Seed = 4
	other, _, err := collectDAgger(in, &ExpertActor{Follow: true}, envCfg, k)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other[0].Proprio[0], demos[0].Proprio[0]) && slices.Equal(other[0].Images[0][0], demos[0].Images[0][0]) {
		t.Error("seeds 3 and 4 start the same scene")
	}
	// MaxSteps ends every episode there: the expert needs more than 12
	// steps for any of these tasks (each episode above ran at least 10 and
	// won), so each capped one has exactly 12 and none is won.
	in.MaxSteps = 12
	capped, st, err := collectDAgger(in, &ExpertActor{Follow: true}, envCfg, k)
	if err != nil {
		t.Fatal(err)
	}
	for n, d := range capped {
		if len(d.Actions) != in.MaxSteps || len(d.Labels) != in.MaxSteps {
			t.Errorf("capped episode %d: %d steps, %d labels; want %d", n, len(d.Actions), len(d.Labels), in.MaxSteps)
		}
	}
	if st.Successes != 0 || st.Steps != 4*in.MaxSteps {
		t.Errorf("capped stats %+v; want 0 successes in %d steps", st, 4*in.MaxSteps)
	}
	// WonOnly keeps none of them (and every won one, the first run's).
	in.WonOnly = true
	if kept, st, err := collectDAgger(in, &ExpertActor{Follow: true}, envCfg, k); err != nil || len(kept) != 0 || st.Episodes != 4 {
		t.Errorf("WonOnly, none won: kept %d of %d episodes (%v); want 0", len(kept), st.Episodes, err)
	}
	in.MaxSteps = 0
	if kept, _, err := collectDAgger(in, &ExpertActor{Follow: true}, envCfg, k); err != nil || len(kept) != 4 {
		t.Errorf("WonOnly, all won: kept %d of 4 episodes (%v)", len(kept), err)
	}
	in.WonOnly, in.MaxSteps = false, 12
	// A learner that holds still with the gripper closed while the expert
	// opens it and moves on: the stats count every step against it (the
	// expert's first moves are saturated approach steps, so well over 0.1
	// per motion dimension; the gripper disagrees until a grasp, which 12
	// steps never reach).
	_, st, err = collectDAgger(in, stillActor{}, envCfg, k)
	if err != nil {
		t.Fatal(err)
	}
	if st.MotionDisagree < 0.1 || st.GripperDisagree != 1 {
		t.Errorf("a still learner: disagreement %g per motion dimension, gripper %g; want > 0.1 and 1", st.MotionDisagree, st.GripperDisagree)
	}
	in.MaxSteps = -1
	if _, _, err := CollectDAgger(in, nil); err == nil || !strings.Contains(err.Error(), "MaxSteps") {
		t.Errorf("MaxSteps -1: error %v, want one naming MaxSteps", err)
	}
}

// TestDAggerRound clones a tiny model from a few demonstrations, plays a
// DAgger round with it and trains on the union: the round's episodes are
// recorded (failures too), the samples grow by exactly the round's steps,
// Aggregate schedules the round's epochs, the chunk targets of the new
// samples are the labels, and training goes on with a finite loss.
func TestDAggerRound(t *testing.T) {
	cfg := DefaultVLAConfig()
	cfg.ImageSize, cfg.Cameras, cfg.Dim, cfg.Layers, cfg.Chunk, cfg.Epochs = 16, []string{tabletop.CameraWrist}, 16, 1, 3, 1
	demos, err := CollectImages(ImageCollectInput{CollectInput: CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{1},
		PerTask: 3, Noise: 0.1, Seed: 2}, ImageSize: cfg.ImageSize, Cameras: cfg.Cameras})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewVLATrainer(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Aggregate(nil, 1, 1e-3); err == nil {
		t.Error("Aggregate before the epochs ran was accepted")
	}
	if _, err := tr.Epoch(); err != nil {
		t.Fatal(err)
	}
	before := tr.Samples()
	round, st, err := CollectDAgger(DAggerInput{Suite: tabletop.SuiteSpatial, Tasks: []int{1}, PerTask: 2, Seed: 9, Decode: vla.DecodeArgmax}, tr.Model())
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 2 || st.Steps < 2 || len(round) != 2 {
		t.Fatalf("round %+v", st)
	}
	if _, _, err := CollectDAgger(DAggerInput{Suite: tabletop.SuiteSpatial, Tasks: []int{1}, PerTask: 1, Seed: 9, Decode: vla.DecodeSample}, tr.Model()); err == nil {
		t.Error("a sampling clone was accepted; DAgger's rollouts must be reproducible")
	}
	// ExpertNoise: the noisy expert plays instead of the barely trained
	// clone, so every episode is won, and the labels differ from what it
	// did by about its noise (σ 0.1 → E|N| = 0.08 on the unclamped motion
	// dimensions; the Follow labeller's earlier descents add some in z).
	_, xst, err := CollectDAgger(DAggerInput{Suite: tabletop.SuiteSpatial, Tasks: []int{1}, PerTask: 2, Seed: 9, ExpertNoise: 0.1}, tr.Model())
	if err != nil || xst.Successes != 2 || xst.MotionDisagree < 0.04 || xst.MotionDisagree > 0.2 {
		t.Errorf("the noisy expert's round: %+v (%v); want both won, disagreement about 0.1", xst, err)
	}
	if err := tr.Aggregate(round, 2, 1e-3); err != nil {
		t.Fatal(err)
	}
	if tr.Samples() != before+st.Steps || tr.Done() {
		t.Fatalf("%d samples after aggregating %d steps to %d; done %v", tr.Samples(), st.Steps, before, tr.Done())
	}
	mc := tr.mc
	last := round[1]
	if got, want := tr.tok[tr.Samples()-1], chunkTokens(mc, last.Labels[len(last.Labels)-1], 0, cfg.Chunk); !slices.Equal(got, want) {
		t.Errorf("last sample's target %v, want its label chunk %v", got, want)
	}
	for !tr.Done() {
		l, err := tr.Epoch()
		if err != nil || math.IsNaN(l) {
			t.Fatalf("epoch after aggregating: loss %v, %v", l, err)
		}
	}
	if r := tr.Result(); len(r.EpochLoss) != 3 {
		t.Errorf("%d epoch losses, want 1 + 2", len(r.EpochLoss))
	}
}

// stillActor holds the arm still with the gripper closing (command 1).
type stillActor struct{}

func (stillActor) Act(_ []*tabletop.Env, _ [][]float64, need []int, out [][]float64) {
	for _, i := range need {
		clear(out[i])
		out[i][6] = 1
	}
}

// Kick replaces the player's motion, once per episode, by Kick steps at full
// speed in one horizontal direction, keeps its gripper command, and carries the
// arm far from where the player left it; without the expert playing it is an
// error.
func TestDAggerKick(t *testing.T) {
	const steps = 12
	k := &kickActor{Actor: stillActor{}, steps: steps, rng: rand.New(rand.NewPCG(3, 4)), kicks: map[*tabletop.Env]kick{}}
	var envs []*tabletop.Env
	for task := range 3 {
		e, err := tabletop.New(tabletop.Config{Suite: tabletop.SuiteSpatial, Tasks: []int{task}, MaxEpisodeSteps: kickStartMax + steps + 5})
		if err != nil {
			t.Fatal(err)
		}
		e.ResetTo(task, 0)
		envs = append(envs, e)
	}
	out := make([][]float64, len(envs))
	for i := range out {
		out[i] = make([]float64, tabletop.ActionDim)
	}
	kicked := make([]int, len(envs))
	first := []int{-1, -1, -1}
	start := make([][]float64, len(envs))
	far := make([]float64, len(envs))
	for i, e := range envs {
		start[i] = e.Proprio()
	}
	for range kickStartMax + steps + 5 {
		k.Act(envs, nil, []int{0, 1, 2}, out)
		for i, e := range envs {
			if out[i][6] != 1 {
				t.Fatalf("env %d step %d: gripper command %v, want the player's 1", i, e.Steps(), out[i][6])
			}
			if n := math.Hypot(out[i][0], out[i][1]); n != 0 {
				// A kick is a unit horizontal direction (full speed), nothing else.
				if math.Abs(n-1) > 1e-12 || out[i][2] != 0 || out[i][5] != 0 {
					t.Fatalf("env %d step %d: kicked action %v", i, e.Steps(), out[i])
				}
				if first[i] < 0 {
					first[i] = e.Steps()
				}
				kicked[i]++
			}
			e.Step(out[i])
			p := e.Proprio()
			far[i] = max(far[i], math.Hypot(p[0]-start[i][0], p[1]-start[i][1]))
		}
	}
	for i := range envs {
		// 12 steps at 1.5 cm carry the tip ≥ 10 cm unless an edge stops it (the
		// workspace is ±0.38 × ±0.32 m, the start near its middle).
		if kicked[i] != steps || first[i] < 0 || first[i] >= kickStartMax || far[i] < 0.08 {
			t.Errorf("env %d: %d kicked steps from step %d, tip moved %.3f m; want %d from below %d, ≥ 0.08 m", i, kicked[i], first[i], far[i], steps, kickStartMax)
		}
	}
	if first[0] == first[1] && first[1] == first[2] {
		t.Errorf("all three kicks start at step %d; each episode draws its own", first[0])
	}
	if _, _, err := CollectDAgger(DAggerInput{Suite: tabletop.SuiteSpatial, Tasks: []int{1}, PerTask: 1, Kick: 5}, nil); err == nil || !strings.Contains(err.Error(), "ExpertNoise") {
		t.Errorf("Kick without the expert playing: %v, want an error naming ExpertNoise", err)
	}
}
