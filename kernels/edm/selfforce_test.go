package edm

import (
	"bytes"
	"testing"
)

// TestSelfForce checks the self-forced contexts against their definition, one example at
// a time so that an example's rollout is Net.Imagine's from the same random state: the
// depth is the drawn d ∈ 0…SelfForcing lowered to the transitions before the example in
// its own trajectory (never across a trajectory boundary), the first History−d context
// steps are the example's real ones, and the last d are what Imagine draws from the real
// context d transitions earlier with the recorded actions. Action and Next stay the
// example's.
func TestSelfForce(t *testing.T) {
	c := Config{ImageSize: 16, Cameras: 1, History: 2, ActionDim: 2, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
	const perTraj = 4 // movingSquares: History+3 actions give 4 transitions per trajectory
	data := movingSquares(c, 3, 5)
	for s := perTraj; s < len(data); s += perTraj {
		if bytes.Equal(data[s-1].Next[0], data[s].Past[c.History-1][0]) {
			t.Fatalf("trajectories meet at transition %d with equal frames; pick another seed", s)
		}
	}
	e := DefaultEDM()
	e.SelfForcing = 2
	tr, err := NewTrainer(c, e, TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for round := range 12 {
		snap, err := tr.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		restore := func() *Trainer {
			var r Trainer
			if err := r.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
			return &r
		}
		for s := range data {
			got, depth := restore().selfForce(data, []int{s})
			ref := restore()
			d := min(ref.rng.IntN(e.SelfForcing+1), s%perTraj)
			if depth[0] != d {
				t.Fatalf("round %d, transition %d (position %d in its trajectory): depth %d, want %d", round, s, s%perTraj, depth[0], d)
			}
			seen[d]++
			var acts [][]float64
			for j := s - d; j < s; j++ {
				acts = append(acts, data[j].Action)
			}
			want := append(append([][]Frame(nil), data[s].Past[:c.History-d]...), ref.Net.Imagine(e, data[s-d].Past, acts, ref.rng)...)
			for j := range want {
				if !bytes.Equal(got[0].Past[j][0], want[j][0]) {
					t.Fatalf("round %d, transition %d, depth %d: context step %d differs from the expected one", round, s, d, j)
				}
			}
			if &got[0].Next[0][0] != &data[s].Next[0][0] || &got[0].Action[0] != &data[s].Action[0] {
				t.Fatalf("transition %d: Next or Action is not the example's", s)
			}
		}
		if _, err := tr.Step(data); err != nil { // move the random state and the weights on
			t.Fatal(err)
		}
	}
	if seen[1] == 0 || seen[2] == 0 {
		t.Errorf("depths seen %v: the check never rolled a context forward", seen)
	}
	// A rolled-forward context is the model's drawing, not the real frame it stands for.
	forced := false
	for try := 0; try < 20 && !forced; try++ {
		const s = 3
		if got, d := tr.selfForce(data, []int{s}); d[0] > 0 {
			forced = true
			if bytes.Equal(got[0].Past[c.History-1][0], data[s].Past[c.History-1][0]) {
				t.Error("a self-forced context step equals the real frame")
			}
		}
	}
	if !forced {
		t.Error("20 draws never rolled transition 3's context forward")
	}
}

// TestSelfForcingRange: NewTrainer refuses a depth outside 0…History.
func TestSelfForcingRange(t *testing.T) {
	c := tinyConfig()
	for _, d := range []int{-1, c.History + 1} {
		e := DefaultEDM()
		e.SelfForcing = d
		if _, err := NewTrainer(c, e, DefaultTrainConfig(1), nil); err == nil {
			t.Errorf("self-forcing %d accepted with %d context steps", d, c.History)
		}
	}
}

// TestSelfForcingFrom: with SelfForcingFrom = 2 a trainer takes its first two steps exactly
// as one without self-forcing (same losses, no extra draws), and its third differently.
func TestSelfForcingFrom(t *testing.T) {
	c := Config{ImageSize: 16, Cameras: 1, History: 2, ActionDim: 2, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
	data := movingSquares(c, 3, 5)
	late := DefaultEDM()
	late.SelfForcing, late.SelfForcingFrom = 2, 2
	tc := TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: 3}
	a, err := NewTrainer(c, late, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewTrainer(c, DefaultEDM(), tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		la, errA := a.Step(data)
		lb, errB := b.Step(data)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if same := la == lb; same != (step <= 2) {
			t.Errorf("step %d: loss %v with self-forcing from step 2, %v without; want equal only before step 3", step, la, lb)
		}
	}
}
