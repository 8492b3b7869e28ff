package pixelwm

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// TestReplayEnding: replaying a collected episode's own ending actions in a fresh simulator
// reproduces its outcome and its recorded end frame byte for byte (the counterfactual's
// truth is only as good as the replay); a wrong collection index is caught by the state
// check; the held-out indices survive the episodes being loaded back task by task.
func TestReplayEnding(t *testing.T) {
	in, eps := replayEpisodes(t)
	const heldEvery, horizon = 5, 4
	_, held := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	_, want := Split(eps, heldEvery)
	if len(held) != len(want) {
		t.Fatalf("%d held-out episodes, Split holds out %d", len(held), len(want))
	}
	succeeded := 0
	for i, h := range held {
		if h.e >= len(eps) || !slices.Equal(eps[h.e].State[0], h.ep.State[0]) || h.ep.Task != want[i].Task {
			t.Fatalf("held-out episode %d: index %d is not its collection index", i, h.e)
		}
		tt, end, ok := endingWindow(h.ep, 4, horizon)
		if !ok {
			t.Fatalf("episode %d has no ending window", h.e)
		}
		rep, ok, err := replayEnding(in, h.ep, h.e, tt, h.ep.Actions[tt:end])
		if err != nil || !ok {
			t.Fatalf("episode %d: replay %v, reproduced %v", h.e, err, ok)
		}
		got := rep.success[horizon-1]
		if got != h.ep.Succeeded || !bytes.Equal(rep.frame[0], h.ep.Frames[end][0]) || !bytes.Equal(rep.frame[1], h.ep.Frames[end][1]) {
			t.Errorf("episode %d: replayed outcome %v (recorded %v) or its end frame differs", h.e, got, h.ep.Succeeded)
		}
		// Replaying its own actions, the per-step labels are the recorded frames' labels.
		if !slices.Equal(rep.success, h.ep.Success[tt+1:end+1]) || !slices.Equal(rep.ended, h.ep.End[tt+1:end+1]) {
			t.Errorf("episode %d: replayed labels success %v end %v, recorded %v %v", h.e, rep.success, rep.ended, h.ep.Success[tt+1:end+1], h.ep.End[tt+1:end+1])
		}
		if got {
			succeeded++
		}
		if _, ok, _ := replayEnding(in, h.ep, h.e+1, tt, h.ep.Actions[tt:end]); ok {
			t.Errorf("episode %d replayed as episode %d", h.e, h.e+1)
		}
	}
	if succeeded == 0 {
		t.Error("no held-out episode succeeded: the outcome check checked nothing")
	}
	// Loaded back one task's file after another, the held-out episodes keep their indices.
	byTask := slices.Clone(eps)
	slices.SortStableFunc(byTask, func(a, b Episode) int { return a.Task - b.Task })
	idx := func(hs []indexed) []int {
		var out []int
		for _, h := range hs {
			out = append(out, h.e)
		}
		slices.Sort(out)
		return out
	}
	_, heldByTask := splitIndexed(byTask, heldEvery, tabletop.TaskCount(in.Suite))
	if a, b := idx(heldByTask), idx(held); !slices.Equal(a, b) {
		t.Errorf("held-out indices loaded by task %v, collected %v", a, b)
	}

	// The whole evaluation: every ending replays, and the verdicts add up.
	rng := rand.New(rand.NewPCG(1, 1))
	net := edm.NewNet[float32](edm.Config{ImageSize: 16, Cameras: 2, History: 4, ActionDim: tabletop.ActionDim, Channels: []int{4, 4}, CondDim: 4, GroupSize: 2}, rng, nil)
	rew := reward.New(reward.Config{ImageSize: 16, Patch: 8, Cameras: 2, Dim: 8, Hidden: 8}, rng)
	// With 2 swaps each ending is also driven by the episode after the next: twice the
	// verdicts, and the first swap's outcomes among them; more swaps than other endings
	// are capped.
	for _, swaps := range []int{1, 2, 99} {
		ev, err := EvaluateCounterfactual(in, eps, heldEvery, net, edm.DefaultEDM(), rew, horizon, swaps, 0, rng)
		if err != nil {
			t.Fatal(err)
		}
		want := min(swaps, len(held)-1)
		r, im := ev.Real, ev.Imagined
		if want == 1 && ev.RealPairs.Pairs != 0 || ev.RealPairs.Pairs != ev.ImaginedPairs.Pairs || ev.RealPairs.Pairs > ev.Succeeded*(ev.Endings-ev.Succeeded) {
			t.Errorf("%d swaps: pairs %+v and %+v of %d endings, %d succeeded", swaps, ev.RealPairs, ev.ImaginedPairs, ev.Endings, ev.Succeeded)
		}
		if ev.Swaps != want || ev.Endings != want*len(held) || ev.Unreplayable != 0 || r.TP+r.FN != ev.Succeeded || im.TP+im.FN != ev.Succeeded ||
			r.TP+r.FN+r.FP+r.TN != ev.Endings || im.TP+im.FN+im.FP+im.TN != ev.Endings {
			t.Errorf("%d swaps: evaluation %+v over %d held-out endings", swaps, ev, len(held))
		}
	}
	// With action noise each ending is driven by its own actions, jittered, swaps times (not
	// capped by the number of other endings); the outcomes are the simulator's for the
	// jittered actions, reproduced by drawing the same stream in the same order.
	const swaps, sigma = 3, 1.0
	ev, err := EvaluateCounterfactual(in, eps, heldEvery, net, edm.DefaultEDM(), rew, horizon, swaps, sigma, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	r2, succeeded, changed := rand.New(rand.NewPCG(5, 5)), 0, 0
	for _, w := range endingWindows(held, 4, horizon) {
		for range swaps {
			actions := jitterActions(w.ep.Actions[w.t:w.end], sigma, r2)
			rep, _, _ := replayEnding(in, w.ep, w.e, w.t, actions)
			net.Imagine(edm.DefaultEDM(), w.ep.Frames[w.t-3:w.t+1], actions, r2)
			if rep.success[horizon-1] {
				succeeded++
			}
			if rep.success[horizon-1] != w.ep.Succeeded {
				changed++
			}
		}
	}
	if ev.Swaps != swaps || ev.Jitter != sigma || ev.Endings != swaps*len(held) || ev.Succeeded != succeeded || ev.Real.TP+ev.Real.FN != succeeded {
		t.Errorf("jittered: evaluation %+v over %d held-out endings, want %d swaps each and %d successes", ev, len(held), swaps, succeeded)
	}
	if changed == 0 {
		t.Errorf("the noise changed no held-out ending's outcome: the jittered evaluation compared nothing new")
	}
}

// replayEpisodes are 20 spatial episodes of the noisy expert at 16×16 (about 4 in 5
// succeed) and the input that collected them, for the replay tests.
func replayEpisodes(t *testing.T) (CollectInput, []Episode) {
	t.Helper()
	in := CollectInput{Suite: tabletop.SuiteSpatial, Episodes: 20, Behaviour: BehaviourExpertNoisy, Noise: 0.3,
		ImageSize: 16, Linger: 2, Seed: 3}
	eps, err := Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return in, eps
}

// TestRanking: every success–failure pair of one context counted once, ranked by p_success,
// a tie counting half (hand-computed: pairs (0,1) (0,3) (2,1) (2,3); right 3, one tie).
func TestRanking(t *testing.T) {
	var r Ranking
	r.rank([]bool{true, false, true, false}, []float64{0.9, 0.5, 0.5, 0.1})
	if r != (Ranking{Pairs: 4, Right: 3, Ties: 1}) || r.Share() != 0.875 {
		t.Errorf("ranking %+v, share %v; want 4 pairs, 3 right, 1 tie, 0.875", r, r.Share())
	}
	r.rank([]bool{true, true}, []float64{0.1, 0.2}) // equal outcomes: no pair
	if r.Pairs != 4 || (Ranking{}).Share() != 0 {
		t.Errorf("pairs of equal outcomes counted: %+v", r)
	}
}
