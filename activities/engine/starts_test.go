package engine

import (
	"math"
	"slices"
	"testing"
)

// TestRepeatStartsReplaysTheStart checks Config.RepeatStarts on CartPole, whose Reset draws
// four random values: each of a slot's starts comes back RepeatStarts times with its first
// observation and key, the restored environment steps exactly as it did from the first
// play, and then a new start is drawn.
func TestRepeatStartsReplaysTheStart(t *testing.T) {
	cfg := smallConfig(ModeSync)
	cfg.RepeatStarts = 3
	e := mustNew(t, cfg, nil)
	s := e.slots[0]
	first, key := slices.Clone(s.obs), s.startKey
	if key != startKey(first) || key == 0 {
		t.Fatalf("start key %x, want the hash of the first observation %x", key, startKey(first))
	}
	step := func() StepResult { return s.env.Step([]float64{1}) }
	want := step()
	for play := 2; play <= 3; play++ {
		e.ro.reset(s)
		if !slices.Equal(s.obs, first) || s.startKey != key {
			t.Fatalf("play %d of the start: observation %v key %x, want %v %x", play, s.obs, s.startKey, first, key)
		}
		if got := step(); !slices.Equal(got.Obs, want.Obs) || got.Reward != want.Reward {
			t.Fatalf("play %d: the restored start stepped to %v, the first play to %v", play, got.Obs, want.Obs)
		}
	}
	e.ro.reset(s)
	if slices.Equal(s.obs, first) || s.startKey == key {
		t.Fatalf("after 3 plays the start was played again (%v); want a new one", s.obs)
	}
	if s.startLeft != 2 {
		t.Fatalf("a new start has %d plays left, want 2", s.startLeft)
	}

	// Off, every reset draws: the first observations differ.
	cfg.RepeatStarts = 0
	e = mustNew(t, cfg, nil)
	s = e.slots[0]
	first = slices.Clone(s.obs)
	e.ro.reset(s)
	if slices.Equal(s.obs, first) || s.start != nil {
		t.Fatalf("without repeats the start came back (%v) or was captured", s.obs)
	}
}

// TestTrainerGRPOGroupsByStart: with RepeatStarts the episodes of one task are judged
// against the other plays of their start. Five ended two-step episodes of one task:
// start A returns 1 and 0, start B 1 and 1, start C (played once in the batch) 0. By start,
// A's two get ±0.5/(√0.5 + 1e-6), B's two are equal (0) and C has nothing to compare
// with (0); by task, all five would move. The update's statistics count them.
func TestTrainerGRPOGroupsByStart(t *testing.T) {
	c := exactConfig()
	c.AdvEstimator, c.TaskObs, c.RepeatStarts = AdvGRPO, [2]int{0, 1}, 2
	tr := constCriticTrainer(t, c, 2)
	ch := func(env int, seq int64, start uint64, r1 float64) *Chunk {
		x := twoStepChunk(env, seq, true)
		x.Obs = []float64{0, 0} // one task
		x.Rewards = []float64{0, r1}
		x.Start = start
		return x
	}
	chunks := []*Chunk{ch(0, 0, 0xA, 1), ch(0, 1, 0xA, 0), ch(1, 0, 0xB, 1), ch(1, 1, 0xB, 1), ch(2, 0, 0xC, 0)}
	st, _, err := tr.update(chunks)
	if err != nil {
		t.Fatal(err)
	}
	if st.GRPOEpisodes != 5 || st.GRPOMoved != 2 {
		t.Errorf("grpo episodes %d, moved %d; want 5 ended, 2 moved (start A's)", st.GRPOEpisodes, st.GRPOMoved)
	}
	a := 0.5 / (math.Sqrt(0.5) + 1e-6)
	want := []float64{a, a, -a, -a, 0, 0, 0, 0, 0, 0}
	for i := range want {
		// One mean and one square root of exact binary fractions: 1e-12.
		if math.Abs(tr.batch.Advantages[i]-want[i]) > 1e-12 {
			t.Fatalf("advantages %v, want %v", tr.batch.Advantages, want)
		}
	}

	// The same batch grouped by task: every episode moves.
	c.RepeatStarts = 0
	tr = constCriticTrainer(t, c, 2)
	if st, _, err = tr.update(chunks); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(tr.batch.Advantages, 0) || st.GRPOMoved != 5 {
		t.Fatalf("grouped by task, %d of 5 episodes moved (advantages %v); want all 5 (3 successes in 5)", st.GRPOMoved, tr.batch.Advantages)
	}

	// Positive advantages only: of start A's two, the success alone moves the policy.
	c.RepeatStarts, c.Learner.PositiveAdvantages = 2, true
	tr = constCriticTrainer(t, c, 2)
	if st, _, err = tr.update(chunks); err != nil {
		t.Fatal(err)
	}
	if st.GRPOEpisodes != 5 || st.GRPOMoved != 1 {
		t.Errorf("positive advantages: grpo episodes %d, moved %d; want 5 and 1", st.GRPOEpisodes, st.GRPOMoved)
	}
}
