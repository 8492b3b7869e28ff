package kernels

import (
	"math"
	"testing"
)

// TestGroupAdvantages against a hand-computed batch: task "a" has three ended episodes with
// returns 1, 0, 0 (one of them in two pieces, one carried over from an earlier batch), task
// "b" one ended episode and one cut at the batch's end, task "c" two failures.
//
//	a: mean 1/3, std (G−1) = sqrt(((2/3)² + 2·(1/3)²)/2) = sqrt(1/3) = 0.57735…
//	   A = (1 − 1/3)/0.57735 = 1.15470, (0 − 1/3)/0.57735 = −0.57735
//	b: one ended episode → 0; the cut one → 0.   c: equal outcomes → 0.
func TestGroupAdvantages(t *testing.T) {
	rewards := []float64{
		0, 1, // 0–1: a, ends, succeeded (R 1)
		0, 0, 0, // 2–4: a, first piece of an episode …
		0, 0, // 5–6: … its second piece, ends (R 0)
		0,    // 7: a, ends (R 0)
		0, 1, // 8–9: b, ends (R 1)
		0, 0, // 10–11: b, cut
		0, 0, 0, // 12–14: c, ends (R 0)
		0, // 15: c, ends (R 0)
	}
	pieces := []EpisodePiece{
		{Start: 0, Len: 2, Ends: true, Group: "a"},
		{Start: 2, Len: 3, Group: "a"},
		{Start: 5, Len: 2, Ends: true, Continues: true, Group: "a"},
		{Start: 7, Len: 1, Ends: true, Group: "a"},
		{Start: 8, Len: 2, Ends: true, Group: "b"},
		{Start: 10, Len: 2, Group: "b"},
		{Start: 12, Len: 3, Ends: true, Group: "c"},
		{Start: 15, Len: 1, Ends: true, Group: "c"},
	}
	adv := make([]float64, len(rewards))
	for i := range adv {
		adv[i] = 99 // overwritten everywhere
	}
	eps, groups := GroupAdvantages(rewards, pieces, adv)
	hi, lo := (2.0/3)/(math.Sqrt(1.0/3)+1e-6), (-1.0/3)/(math.Sqrt(1.0/3)+1e-6)
	want := []float64{hi, hi, lo, lo, lo, lo, lo, lo, 0, 0, 0, 0, 0, 0, 0, 0}
	if eps != 6 || groups != 2 {
		t.Errorf("%d ended episodes in %d groups of ≥ 2, want 6 in 2", eps, groups)
	}
	for i := range want {
		// Hand values in float64; the only rounding is in the sums of 3 terms: 1e-12.
		if math.Abs(adv[i]-want[i]) > 1e-12 {
			t.Errorf("sample %d: advantage %.6f, want %.6f", i, adv[i], want[i])
		}
	}
	// A piece that continues no open episode (the batch's first, say) starts one.
	adv2 := make([]float64, 3)
	GroupAdvantages([]float64{1, 0, 0}, []EpisodePiece{{Start: 0, Len: 1, Ends: true, Continues: true, Group: "a"},
		{Start: 1, Len: 1, Ends: true, Group: "a"}, {Start: 2, Len: 1, Ends: true, Group: "a"}}, adv2)
	if !(adv2[0] > 1 && adv2[1] < 0 && adv2[1] == adv2[2]) {
		t.Errorf("advantages %v: want the success above and the two failures equal below", adv2)
	}
}

// TestGroupAdvantagesCentred covers EpisodePiece.Centred: a group marked on its first
// ended episode gets R_i − mean(R) (graded outcomes 0.3, 0.1, −0.1 → 0.2, 0, −0.2, where
// the std-scaled advantages would be ±1), while a group beside it keeps the scaled ones.
func TestGroupAdvantagesCentred(t *testing.T) {
	rewards := []float64{0.2, 0.1, 0.1, 0, -0.1, 1, 0}
	pieces := []EpisodePiece{
		{Start: 0, Len: 2, Ends: true, Group: "img", Centred: true},
		{Start: 2, Len: 2, Ends: true, Group: "img"},
		{Start: 4, Len: 1, Ends: true, Group: "img"},
		{Start: 5, Len: 1, Ends: true, Group: "real"},
		{Start: 6, Len: 1, Ends: true, Group: "real"},
	}
	adv := make([]float64, len(rewards))
	GroupAdvantages(rewards, pieces, adv)
	s := 1 / (math.Sqrt(0.5) + 1e-6) // the real group's 1 and 0: mean 1/2, std √(1/2)
	want := []float64{0.2, 0.2, 0, 0, -0.2, 0.5 * s, -0.5 * s}
	for i := range want {
		// Hand values; the sums and means of three float64 terms round at ~1e-16.
		if math.Abs(adv[i]-want[i]) > 1e-12 {
			t.Errorf("sample %d: advantage %.6f, want %.6f", i, adv[i], want[i])
		}
	}
}
