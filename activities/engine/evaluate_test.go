package engine

import (
	"slices"
	"strings"
	"testing"
)

// Evaluation is repeatable, sums its steps, and leaves the engine exactly
// as it was: an engine that evaluates between segments trains to the same
// parameters and step count as one that does not.
func TestEvaluateIsRepeatableAndChangesNothing(t *testing.T) {
	cfg := smallConfig(ModeSync)
	a, b := mustNew(t, cfg, nil), mustNew(t, cfg, nil)
	mustRun(t, a, 3, nil)
	mustRun(t, b, 3, nil)

	for _, greedy := range []bool{false, true} {
		r1, err := a.Evaluate(4, 11, greedy)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := a.Evaluate(4, 11, greedy)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r1.Returns, r2.Returns) || !slices.Equal(r1.Lengths, r2.Lengths) {
			t.Fatalf("greedy=%v: same seed, different episodes: %v vs %v", greedy, r1.Lengths, r2.Lengths)
		}
		var sum int64
		for i, n := range r1.Lengths {
			// CartPole pays 1 per step, so an episode's return is its length; the
			// default limit is 500 steps.
			if n < 1 || n > 500 || r1.Returns[i] != float64(n) {
				t.Fatalf("greedy=%v: episode %d has %d steps and return %v", greedy, i, n, r1.Returns[i])
			}
			sum += int64(n)
		}
		if r1.Steps != sum || len(r1.Returns) != 4 {
			t.Fatalf("greedy=%v: %d episodes, Steps %d, want 4 and %d", greedy, len(r1.Returns), r1.Steps, sum)
		}
		if want := float64(sum) / 4; r1.Mean() != want {
			t.Fatalf("greedy=%v: Mean %v, want %v", greedy, r1.Mean(), want)
		}
	}

	sa, sb := mustRun(t, a, 3, nil), mustRun(t, b, 3, nil)
	if a.ParamsSHA256() != b.ParamsSHA256() || sa.EnvSteps != sb.EnvSteps {
		t.Fatalf("evaluating changed training: params %s vs %s, steps %d vs %d", a.ParamsSHA256(), b.ParamsSHA256(), sa.EnvSteps, sb.EnvSteps)
	}
}

func TestEvaluateRejectsNoEpisodes(t *testing.T) {
	e := mustNew(t, smallConfig(ModeSync), nil)
	if _, err := e.Evaluate(0, 1, false); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("Evaluate(0) = %v, want an error naming the minimum", err)
	}
}
