package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
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

// Every action head evaluates: tokens on Pendulum and gaussian on MountainCarContinuous
// play whole episodes of the configured length, and greedy play repeats exactly.
func TestEvaluateEveryHead(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		len  int
	}{
		{"tokens", func(c *Config) {
			c.Env, c.MaxEpisodeSteps = testenv.KindPendulum, 20
			c.Policy.Head, c.Policy.Bins = kernels.HeadTokens, 9
		}, 20},
		{"gaussian", func(c *Config) {
			c.Env, c.MaxEpisodeSteps = testenv.KindMountainCarContinuous, 30
			c.Policy.Head, c.Policy.InitLogStd = kernels.HeadGaussian, -0.5
		}, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig(ModeSync)
			tc.edit(&cfg)
			e := mustNew(t, cfg, nil)
			mustRun(t, e, 1, nil)
			for _, greedy := range []bool{false, true} {
				r1, err := e.Evaluate(2, 3, greedy)
				if err != nil {
					t.Fatal(err)
				}
				r2, _ := e.Evaluate(2, 3, greedy)
				// Neither environment ends an episode early from its start states within so
				// few steps (Pendulum never terminates; MountainCar needs hundreds of steps to
				// reach the flag), so every episode is truncated at the limit.
				if !slices.Equal(r1.Lengths, []int{tc.len, tc.len}) || !slices.Equal(r1.Returns, r2.Returns) {
					t.Errorf("greedy=%v: lengths %v, returns %v then %v", greedy, r1.Lengths, r1.Returns, r2.Returns)
				}
			}
		})
	}
}
