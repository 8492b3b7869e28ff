package pixelwm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/testenv/tabletop"
)

// TestCounterfactualRewardExamples: every training episode with an ending window gets
// `swaps` endings of horizon imagined frames; each ending's labels are what the simulator
// says some other training episode's ending actions do from that episode's window
// (checked by replaying every candidate; the held-out episodes' endings are not among
// them, or the count would differ), at least one ending's labels differ from its own
// episode's recorded ones (so they are not copied from the episode), the labels latch
// (a success or an end stays), and the counts add up.
func TestCounterfactualRewardExamples(t *testing.T) {
	in, eps := replayEpisodes(t)
	const heldEvery, horizon, swaps = 5, 6, 2
	rng := rand.New(rand.NewPCG(1, 2))
	net := edm.NewNet[float32](edm.Config{ImageSize: 16, Cameras: 2, History: 4, ActionDim: tabletop.ActionDim, Channels: []int{4, 4}, CondDim: 4, GroupSize: 2}, rng, nil)
	ex, st, err := CounterfactualRewardExamples(in, eps, heldEvery, net, edm.DefaultEDM(), horizon, swaps, rng)
	if err != nil {
		t.Fatal(err)
	}
	train, _ := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	ws := endingWindows(train, 4, horizon)
	if len(ws) < 10 {
		t.Fatalf("only %d training endings; the test needs a few", len(ws))
	}
	if st.Unreplayable != 0 || st.Endings != swaps*len(ws) || st.Frames != st.Endings*horizon || len(ex) != st.Frames {
		t.Fatalf("counts %+v with %d examples, want %d endings of %d frames", st, len(ex), swaps*len(ws), horizon)
	}
	differs, succeeded := 0, 0
	for n := range st.Endings {
		w := ws[n/swaps]
		group := ex[n*horizon : (n+1)*horizon]
		success, ended := make([]bool, horizon), make([]bool, horizon)
		for s, x := range group {
			if len(x.Frames) != 2 || len(x.Frames[0]) != 16*16*3 {
				t.Fatalf("ending %d frame %d: %d cameras of %d bytes", n, s, len(x.Frames), len(x.Frames[0]))
			}
			success[s], ended[s] = x.Success, x.End
			if s > 0 && (success[s-1] && !x.Success || ended[s-1] && !x.End) || x.Success && !x.End {
				t.Errorf("ending %d: labels do not latch: success %v end %v", n, success, ended)
			}
		}
		if success[horizon-1] {
			succeeded++
		}
		if !slices.Equal(success, w.ep.Success[w.t+1:w.end+1]) {
			differs++
		}
		found := false
		for j, o := range ws {
			if j == n/swaps {
				continue
			}
			rep, ok, err := replayEnding(in, w.ep, w.e, w.t, o.ep.Actions[o.t:o.end])
			if err != nil || !ok {
				t.Fatalf("replay: %v %v", ok, err)
			}
			if slices.Equal(rep.success, success) && slices.Equal(rep.ended, ended) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("ending %d (episode %d): labels success %v end %v are no other training ending's outcome from its window", n, w.e, success, ended)
		}
	}
	if succeeded != st.Succeeded || succeeded == 0 || succeeded == st.Endings {
		t.Errorf("%d of %d endings labelled successes, counted %d; the test needs both outcomes", succeeded, st.Endings, st.Succeeded)
	}
	if differs == 0 {
		t.Error("every ending's labels equal its own episode's: the swap did not change an outcome")
	}
}
