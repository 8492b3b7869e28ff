package pixelwm

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// TestImaginationActionEffect covers EvaluateImagination's swapped-action measures: with
// the same actions in every held-out episode, imagining with another episode's actions is
// imagining with the episode's own (the same sampling noise: SwappedMSE equals MSE bit for
// bit and the action effect is 0); with different actions an M_obs of random weights,
// which reads its action input, imagines different frames at every step; an episode too
// short for the horizon is skipped, and one long episode alone has nothing to swap with.
func TestImaginationActionEffect(t *testing.T) {
	const side, horizon = 8, 3
	rng := rand.New(rand.NewPCG(4, 2))
	cfg := edm.Config{ImageSize: side, Cameras: 1, History: 2, ActionDim: 2, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
	net := edm.NewNet[float32](cfg, rng, nil)
	e := edm.DefaultEDM()
	episode := func(steps int, actions func(t int) []float64) Episode {
		var ep Episode
		for t := range steps {
			f := make([]uint8, side*side*3)
			for i := range f {
				f[i] = uint8(rng.IntN(256))
			}
			ep.Frames = append(ep.Frames, [][]uint8{f})
			ep.Actions = append(ep.Actions, actions(t))
		}
		return ep
	}
	same := func(t int) []float64 { return []float64{0.5, -0.25 * float64(t)} }
	held := []Episode{episode(6, same), episode(6, same), episode(3, same), episode(6, same)}
	ev, _ := EvaluateImagination(net, e, held, 1, horizon, rand.New(rand.NewPCG(1, 1)))
	if ev.Rollouts != 3 || !slices.Equal(ev.SwappedMSE, ev.MSE) || slices.ContainsFunc(ev.ActionEffectMSE, func(x float64) bool { return x != 0 }) {
		t.Errorf("same actions: %d rollouts, MSE %v, swapped %v, action effect %v; want 3, swapped = MSE, effect 0", ev.Rollouts, ev.MSE, ev.SwappedMSE, ev.ActionEffectMSE)
	}
	// A fresh net zero-initialises layers that would pass its action on (it starts by
	// ignoring the action), so every weight is drawn at random first.
	for i, p := range net.Params() {
		net.Params()[i] = p + float32(0.2*rng.NormFloat64())
	}
	differ := func(t int) []float64 { return []float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1} }
	held = []Episode{episode(6, differ), episode(6, differ), episode(6, differ)}
	ev, _ = EvaluateImagination(net, e, held, 1, horizon, rand.New(rand.NewPCG(1, 1)))
	for h, x := range ev.ActionEffectMSE {
		if !(x > 0) || slices.Equal(ev.SwappedMSE, ev.MSE) {
			t.Errorf("different actions, step %d: action effect %v, swapped %v, MSE %v; want an effect and a different error", h+1, x, ev.SwappedMSE, ev.MSE)
		}
	}
	ev, _ = EvaluateImagination(net, e, held[:1], 1, horizon, rand.New(rand.NewPCG(1, 1)))
	if ev.Rollouts != 1 || ev.SwappedMSE != nil || ev.ActionEffectMSE != nil {
		t.Errorf("one episode: %d rollouts, swapped %v, effect %v; want 1 and none", ev.Rollouts, ev.SwappedMSE, ev.ActionEffectMSE)
	}
}

// TestEvaluateEndings checks which frames EvaluateEndings scores: for each episode the real
// frame horizon steps before its first End frame, that End frame, and M_obs's imagination
// of it from the real context with the recorded actions (the same noise stream); a
// success's are counted under Succeeded, a failure's under Failed, and an episode ending
// too early for a full context is skipped.
func TestEvaluateEndings(t *testing.T) {
	const horizon = 2
	rng := rand.New(rand.NewPCG(7, 3))
	net, episode := endingsFixture(rng)
	rew := reward.New(reward.Config{ImageSize: endingsSide, Patch: 4, Cameras: 1, Dim: 8, Hidden: 8}, rng)
	e := edm.DefaultEDM()
	held := []Episode{episode(9, 5, true), episode(7, 6, false), episode(6, 2, true), episode(8, 4, true)}
	ev := EvaluateEndings(net, e, rew, held, horizon, rand.New(rand.NewPCG(9, 9)))

	// The same frames and imaginations, picked by hand: episode 2 ends at frame 2, whose
	// start (frame 0) has no full context of 2 frames, so it is skipped.
	// Each is imagined again with the next one's ending actions (episode 3's with episode
	// 0's), from the same noise.
	rng2 := rand.New(rand.NewPCG(9, 9))
	var want [2]EndingScores
	var first float64 // episode 0's imagined p_success
	cases := []struct{ ep, start, end, set int }{{0, 3, 5, 0}, {1, 4, 6, 1}, {3, 2, 4, 0}}
	for i, c := range cases {
		ep, o := held[c.ep], cases[(i+1)%len(cases)]
		a, b := rng2.Uint64(), rng2.Uint64()
		ctx := ep.Frames[c.start-1 : c.start+1]
		imag := net.Imagine(e, ctx, ep.Actions[c.start:c.end], rand.New(rand.NewPCG(a, b)))
		sw := net.Imagine(e, ctx, held[o.ep].Actions[o.start:o.end], rand.New(rand.NewPCG(a, b)))
		p, _ := rew.Predict([][][]uint8{ep.Frames[c.start], ep.Frames[c.end], imag[horizon-1], sw[horizon-1]})
		want[c.set].add(p)
		if i == 0 {
			first = p[2]
		}
	}
	want[0].mean()
	want[1].mean()
	if ev.Horizon != horizon || ev.Succeeded != want[0] || ev.Failed != want[1] {
		t.Errorf("got %+v\nwant succeeded %+v, failed %+v", ev, want[0], want[1])
	}
	if ev.Succeeded.Episodes != 2 || ev.Failed.Episodes != 1 || ev.Succeeded.ImaginedP == ev.Succeeded.RealP ||
		ev.Succeeded.SwappedP == ev.Succeeded.ImaginedP || ev.Succeeded.SwappedP == 0 {
		t.Errorf("episodes %d succeeded, %d failed (want 2, 1); imagined p %v, swapped %v, real %v (want them to differ)",
			ev.Succeeded.Episodes, ev.Failed.Episodes, ev.Succeeded.ImaginedP, ev.Succeeded.SwappedP, ev.Succeeded.RealP)
	}
	// One ending alone has no other actions to swap in: the swapped scores stay 0, the
	// imagined one is the same (the same noise).
	one := EvaluateEndings(net, e, rew, held[:1], horizon, rand.New(rand.NewPCG(9, 9)))
	if one.Succeeded.Episodes != 1 || one.Succeeded.SwappedP != 0 || one.Succeeded.SwappedJudged != 0 || one.Succeeded.ImaginedP != first {
		t.Errorf("one ending: %+v", one.Succeeded)
	}
}

// endingsSide is the frame side of endingsFixture's episodes.
const endingsSide = 8

// endingsFixture is a small M_obs with perturbed weights (so that its imaginations differ
// from copies) and a maker of random episodes of n frames of one camera that end at frame
// end, with End (and, for a successful episode, Success) from there on.
func endingsFixture(rng *rand.Rand) (*edm.Net[float32], func(n, end int, succeeded bool) Episode) {
	net := edm.NewNet[float32](edm.Config{ImageSize: endingsSide, Cameras: 1, History: 2, ActionDim: 2, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}, rng, nil)
	for i, p := range net.Params() {
		net.Params()[i] = p + float32(0.2*rng.NormFloat64())
	}
	return net, func(n, end int, succeeded bool) Episode {
		ep := Episode{Succeeded: succeeded, Steps: end}
		for t := range n {
			f := make([]uint8, endingsSide*endingsSide*3)
			for i := range f {
				f[i] = uint8(rng.IntN(256))
			}
			ep.Frames = append(ep.Frames, [][]uint8{f})
			ep.Actions = append(ep.Actions, []float64{rng.Float64(), -rng.Float64()})
			ep.End = append(ep.End, t >= end)
			ep.Success = append(ep.Success, succeeded && t >= end)
		}
		return ep
	}
}

func TestImaginedRewardExamples(t *testing.T) {
	const horizon, rollouts = 3, 2
	rng := rand.New(rand.NewPCG(5, 1))
	net, episode := endingsFixture(rng)
	e := edm.DefaultEDM()
	// Episode 1 ends at frame 3: its window would start at frame 0, before 2 context
	// frames exist, so it gives nothing.
	eps := []Episode{episode(9, 6, true), episode(5, 3, true), episode(8, 7, false)}
	got := ImaginedRewardExamples(net, e, eps, horizon, rollouts, rand.New(rand.NewPCG(2, 2)))

	// By hand: episode 0 imagines frames 4..6 from context 2, 3; episode 2 frames 5..7
	// from 3, 4; each twice, one noise stream in that order.
	noise := rand.New(rand.NewPCG(2, 2))
	var want []reward.Example
	for _, c := range []struct{ ep, start int }{{0, 3}, {2, 4}} {
		ep := eps[c.ep]
		for range rollouts {
			imag := net.Imagine(e, ep.Frames[c.start-1:c.start+1], ep.Actions[c.start:c.start+horizon], noise)
			for i, f := range imag {
				want = append(want, reward.Example{Frames: f, Success: ep.Success[c.start+1+i], End: ep.End[c.start+1+i]})
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d examples, want %d (or their frames or labels differ)", len(got), len(want))
	}
	// The labels as a person reads them: episode 0's last imagined frame of each rollout is
	// its success frame, episode 2's its time limit's (end, no success); nothing before.
	var labels []string
	for _, x := range got {
		labels = append(labels, fmt.Sprintf("%v/%v", x.Success, x.End))
	}
	s, f, n := "true/true", "false/true", "false/false"
	wantLabels := []string{n, n, s, n, n, s, n, n, f, n, n, f}
	if !slices.Equal(labels, wantLabels) {
		t.Errorf("labels %v, want %v", labels, wantLabels)
	}
	// Imagined, not copied: the frames differ from the real ones they stand for.
	if bytes.Equal(got[2].Frames[0], eps[0].Frames[6][0]) {
		t.Error("the imagined success frame is the real one")
	}
	if ImaginedRewardExamples(net, e, eps, horizon, 0, noise) != nil {
		t.Error("0 rollouts gave examples")
	}
}
