package main

import (
	"context"
	"testing"

	"github.com/accerl/accerl/specs"
)

func TestSolvedAt(t *testing.T) {
	curve := []evalPoint{{256, 100}, {512, 480}, {768, 300}, {1024, 475}, {1280, 490}, {1536, 500}, {1792, 10}}
	for _, tc := range []struct {
		hold  int
		steps int64
		ok    bool
	}{
		{1, 512, true},  // the first evaluation at the target
		{2, 1024, true}, // 512 is followed by 300; 1024 and 1280 are two in a row (475 counts)
		{3, 1024, true}, // 1024, 1280, 1536
		{4, 0, false},   // never four in a row
		{1, 512, true},  // repeatable
	} {
		steps, ok := solvedAt(curve, 475, tc.hold)
		if steps != tc.steps || ok != tc.ok {
			t.Errorf("hold %d: got (%d, %v), want (%d, %v)", tc.hold, steps, ok, tc.steps, tc.ok)
		}
	}
	if _, ok := solvedAt(nil, 475, 1); ok {
		t.Error("an empty curve is solved")
	}
}

// A short no-world-model arm runs segments of --eval-every steps' worth of updates, evaluates
// at the end of each (as `accerl run` does with an evaluation block), and counts evaluation
// steps apart from its online steps.
func TestSampleArmEvaluatesOnSchedule(t *testing.T) {
	cfg := cleanRLConfig(specs.EnvCartPole, specs.AlgorithmPPO, 2048)
	ev := sampleEval{episodes: 2, every: 1100, hold: 1, window: 5, target: 475}
	arm, err := runSampleArm(context.Background(), cfg, 1, ev)
	if err != nil {
		t.Fatal(err)
	}
	// 512 steps per update: 1100 steps are 2 whole updates, so segments of 2 updates end at
	// 1024 and 2048 (the budget) steps.
	want := []int64{1024, 2048}
	if len(arm.Curve) != len(want) || arm.Evaluations != len(want) {
		t.Fatalf("evaluations at %v, want at %v", arm.Curve, want)
	}
	for i, p := range arm.Curve {
		if p.EnvSteps != want[i] {
			t.Fatalf("evaluation %d at %d steps, want %d", i, p.EnvSteps, want[i])
		}
	}
	if arm.EnvSteps != 2048 || arm.Updates != 4 {
		t.Fatalf("arm took %d steps in %d updates, want 2048 in 4", arm.EnvSteps, arm.Updates)
	}
	// Each evaluation plays 2 CartPole episodes; even pushing one way throughout takes about
	// 8 steps to tip the pole past 12°, so 5 per episode is a floor with a margin.
	if arm.EvalSteps < int64(2*5*len(want)) {
		t.Fatalf("evaluation steps %d, want at least %d", arm.EvalSteps, 2*5*len(want))
	}
	// Four updates of PPO do not solve CartPole.
	if arm.Reached || arm.TrainReached {
		t.Fatalf("solved CartPole in 2048 steps: %+v", arm)
	}
}
