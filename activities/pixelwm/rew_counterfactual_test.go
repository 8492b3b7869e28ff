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
	// Stride 2: policy steps of two actions (action chunks), 3 of them over the same 6
	// environment steps, and context frames two steps apart.
	for _, stride := range []int{1, 2} {
		const heldEvery, rawHorizon, swaps, k = 5, 6, 2, 4
		horizon := rawHorizon / stride
		net := randomNet(k, stride)
		ex, st, err := CounterfactualRewardExamples(in, eps, heldEvery, net, edm.DefaultEDM(), horizon, swaps, 0, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		train, _ := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
		ws := endingWindows(train, (k-1)*stride+1, rawHorizon)
		if len(ws) < 10 {
			t.Fatalf("stride %d: only %d training endings; the test needs a few", stride, len(ws))
		}
		if st.Unreplayable != 0 || st.Endings != swaps*len(ws) || st.Frames != st.Endings*horizon || len(ex) != st.Frames {
			t.Fatalf("stride %d: counts %+v with %d examples, want %d endings of %d frames", stride, st, len(ex), swaps*len(ws), horizon)
		}
		// The frames are M_obs's imagination from the window's last k policy steps' frames
		// with the other episode's actions, a policy step's concatenated: the same random
		// stream drawn the same way gives the same frames.
		rng := rand.New(rand.NewPCG(1, 2))
		for i, w := range ws {
			var context [][][]uint8
			for f := k - 1; f >= 0; f-- {
				context = append(context, w.ep.Frames[w.t-f*stride])
			}
			for sw := range swaps {
				j := rng.IntN(len(ws) - 1)
				if j >= i {
					j++
				}
				o := ws[j]
				var actions [][]float64
				for s := range horizon {
					actions = append(actions, slices.Concat(o.ep.Actions[o.t+s*stride:o.t+(s+1)*stride]...))
				}
				n := i*swaps + sw
				for s, f := range net.Imagine(edm.DefaultEDM(), context, actions, rng) {
					if !slices.Equal(f[0], ex[n*horizon+s].Frames[0]) || !slices.Equal(f[1], ex[n*horizon+s].Frames[1]) {
						t.Fatalf("stride %d, ending %d, step %d: the imagined frame is not M_obs's from the window's context with the other's actions", stride, n, s)
					}
				}
			}
		}
		differs, succeeded := 0, 0
		for n := range st.Endings {
			w := ws[n/swaps]
			group := ex[n*horizon : (n+1)*horizon]
			success, ended, own := make([]bool, horizon), make([]bool, horizon), make([]bool, horizon)
			for s, x := range group {
				if len(x.Frames) != 2 || len(x.Frames[0]) != 16*16*3 {
					t.Fatalf("ending %d frame %d: %d cameras of %d bytes", n, s, len(x.Frames), len(x.Frames[0]))
				}
				success[s], ended[s], own[s] = x.Success, x.End, w.ep.Success[w.t+(s+1)*stride]
				if s > 0 && (success[s-1] && !x.Success || ended[s-1] && !x.End) || x.Success && !x.End {
					t.Errorf("stride %d, ending %d: labels do not latch: success %v end %v", stride, n, success, ended)
				}
			}
			if success[horizon-1] {
				succeeded++
			}
			if !slices.Equal(success, own) {
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
				var rs, re []bool
				for s := range horizon {
					rs, re = append(rs, rep.success[(s+1)*stride-1]), append(re, rep.ended[(s+1)*stride-1])
				}
				if slices.Equal(rs, success) && slices.Equal(re, ended) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("stride %d, ending %d (episode %d): labels success %v end %v are no other training ending's outcome from its window", stride, n, w.e, success, ended)
			}
		}
		if succeeded != st.Succeeded || succeeded == 0 || succeeded == st.Endings {
			t.Errorf("stride %d: %d of %d endings labelled successes, counted %d; the test needs both outcomes", stride, succeeded, st.Endings, st.Succeeded)
		}
		if differs == 0 {
			t.Errorf("stride %d: every ending's labels equal its own episode's: the swap did not change an outcome", stride)
		}
	}
}

// randomNet is a small M_obs over k context frames taking policy steps of stride actions,
// with random weights everywhere (a new net's output layer starts at zero), so that every
// context frame and action value shows in what it imagines.
func randomNet(k, stride int) *edm.Net[float32] {
	net := edm.NewNet[float32](edm.Config{ImageSize: 16, Cameras: 2, History: k, ActionDim: stride * tabletop.ActionDim, Channels: []int{4, 4}, CondDim: 4, GroupSize: 2}, rand.New(rand.NewPCG(9, 9)), nil)
	wr := rand.New(rand.NewPCG(9, 10))
	for i, p := range net.Params() {
		net.Params()[i] = p + float32(0.3*wr.NormFloat64())
	}
	return net
}

// TestCounterfactualRewardExamplesJitter: with action noise, each training ending is driven
// by its own ending actions with fresh noise (policy steps of two actions): the imagined
// frames are M_obs's with those jittered actions and the labels are the simulator's replay of
// them — reproduced here by drawing the same stream in the same order — and some endings'
// outcomes differ from the recorded ones (the noise changes what happens).
func TestCounterfactualRewardExamplesJitter(t *testing.T) {
	in, eps := replayEpisodes(t)
	const heldEvery, stride, horizon, swaps, k, sigma = 5, 2, 3, 2, 4, 1.0
	net := randomNet(k, stride)
	ex, st, err := CounterfactualRewardExamples(in, eps, heldEvery, net, edm.DefaultEDM(), horizon, swaps, sigma, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	train, _ := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	ws := endingWindows(train, (k-1)*stride+1, horizon*stride)
	if st.Unreplayable != 0 || st.Endings != swaps*len(ws) || len(ex) != st.Endings*horizon {
		t.Fatalf("counts %+v with %d examples, want %d endings of %d frames", st, len(ex), swaps*len(ws), horizon)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	differs, succeeded := 0, 0
	for i, w := range ws {
		var context [][][]uint8
		for f := k - 1; f >= 0; f-- {
			context = append(context, w.ep.Frames[w.t-f*stride])
		}
		for sw := range swaps {
			raw := jitterActions(w.ep.Actions[w.t:w.end], sigma, rng)
			rep, ok, err := replayEnding(in, w.ep, w.e, w.t, raw)
			if err != nil || !ok {
				t.Fatalf("replay: %v %v", ok, err)
			}
			n := i*swaps + sw
			for s, f := range net.Imagine(edm.DefaultEDM(), context, policySteps(raw, stride), rng) {
				x := ex[n*horizon+s]
				last := (s+1)*stride - 1
				if !slices.Equal(f[0], x.Frames[0]) || x.Success != rep.success[last] || x.End != rep.ended[last] {
					t.Fatalf("ending %d, step %d: not M_obs's frame and the simulator's labels for the episode's own jittered actions", n, s)
				}
			}
			if rep.success[len(raw)-1] {
				succeeded++
			}
			if rep.success[len(raw)-1] != w.ep.Success[w.end] {
				differs++
			}
		}
	}
	if succeeded != st.Succeeded || differs == 0 {
		t.Errorf("%d endings succeeded (counted %d), %d of %d outcomes changed by the noise; want some", succeeded, st.Succeeded, differs, st.Endings)
	}
}

// TestJitterActions: noise of σ on the six motion values of every action, drawn in order
// from the stream, clamped to [−1, 1]; the gripper command and the input are kept.
func TestJitterActions(t *testing.T) {
	in := [][]float64{{0, 0.5, -0.5, 0.9, -0.9, 0.1, 1}, {0.2, 0, 0, 0, 0, 0, -1}}
	orig := [][]float64{slices.Clone(in[0]), slices.Clone(in[1])}
	const sigma = 0.5
	got := jitterActions(in, sigma, rand.New(rand.NewPCG(4, 4)))
	z := rand.New(rand.NewPCG(4, 4))
	clamped := 0
	for a := range in {
		if !slices.Equal(in[a], orig[a]) {
			t.Fatalf("action %d changed in place: %v", a, in[a])
		}
		for i, v := range got[a] {
			want := in[a][i]
			if i < tabletop.ActionDim-1 {
				want += sigma * z.NormFloat64()
			}
			if want > 1 || want < -1 {
				want, clamped = max(-1, min(1, want)), clamped+1
			}
			if v != want {
				t.Errorf("action %d value %d = %v, want %v", a, i, v, want)
			}
		}
	}
	if clamped == 0 {
		t.Log("no value needed clamping with this stream") // the clamp is then unexercised
	}
}
