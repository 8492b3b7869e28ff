package pixelwm

import (
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// EndingEval asks whether M_obs imagines an episode's ending well enough for M_rew to
// judge it as on the real frames: for every held-out episode, M_obs imagines the last
// horizon steps before its end frame (its first End frame: the first success frame of a
// successful episode, the time limit's frame of a failed one) from the real context frames with the
// recorded actions, and M_rew scores the real start frame, the real end frame and the
// imagined end frame. An imagined rollout that GRPO compares with others of its start
// only carries a learning signal when the imagined frame is judged as the real one
// would be: a success that M_obs cannot imagine is, to the policy, a failure.
type EndingEval struct {
	Horizon int `json:"horizon"`
	// Succeeded and Failed are the held-out episodes' ends, by their real outcome.
	Succeeded EndingScores `json:"succeeded"`
	Failed    EndingScores `json:"failed"`
}

// EndingScores are M_rew's success verdicts (p_success ≥ ½) and mean p_success on one
// set of held-out endings.
type EndingScores struct {
	Episodes int `json:"episodes"`
	// Start is the real frame the imagination starts from, Real the real end frame,
	// Imagined M_obs's imagined end frame.
	StartJudged    int     `json:"start_judged_success"`
	RealJudged     int     `json:"real_end_judged_success"`
	ImaginedJudged int     `json:"imagined_end_judged_success"`
	StartP         float64 `json:"start_mean_p_success"`
	RealP          float64 `json:"real_end_mean_p_success"`
	ImaginedP      float64 `json:"imagined_end_mean_p_success"`
	// Swapped is the imagined end frame from the same context and sampling noise but with
	// the last horizon actions of another held-out episode (the next one with an ending
	// window): a verdict that reads the actions calls a success imagined with the
	// episode's own actions more often than with another's, and only such a verdict can
	// tell a group's rollouts from one start apart. Counted from 2 episodes with an
	// ending window up.
	SwappedJudged int     `json:"swapped_end_judged_success"`
	SwappedP      float64 `json:"swapped_end_mean_p_success"`
}

// EvaluateEndings scores the held-out episodes' endings (see EndingEval); episodes whose
// end frame is less than horizon steps after a full context are skipped.
func EvaluateEndings(net *edm.Net[float32], e edm.EDM, rew *reward.Model, held []Episode, horizon int, rng *rand.Rand) EndingEval {
	k := net.Config().History
	ev := EndingEval{Horizon: horizon}
	type window struct {
		ep     Episode
		t, end int
	}
	var ws []window
	for _, ep := range held {
		if t, end, ok := endingWindow(ep, k, horizon); ok {
			ws = append(ws, window{ep: ep, t: t, end: end})
		}
	}
	for i, w := range ws {
		// Both imaginations draw the same sampling noise, so that they differ by the
		// actions alone.
		noise := [2]uint64{rng.Uint64(), rng.Uint64()}
		ctx := w.ep.Frames[w.t-k+1 : w.t+1]
		imag := net.Imagine(e, ctx, w.ep.Actions[w.t:w.end], rand.New(rand.NewPCG(noise[0], noise[1])))
		frames := [][][]uint8{w.ep.Frames[w.t], w.ep.Frames[w.end], imag[horizon-1]}
		if len(ws) >= 2 {
			o := ws[(i+1)%len(ws)]
			sw := net.Imagine(e, ctx, o.ep.Actions[o.t:o.end], rand.New(rand.NewPCG(noise[0], noise[1])))
			frames = append(frames, sw[horizon-1])
		}
		p, _ := rew.Predict(frames)
		s := &ev.Failed
		if w.ep.Succeeded {
			s = &ev.Succeeded
		}
		s.add(p)
	}
	ev.Succeeded.mean()
	ev.Failed.mean()
	return ev
}

// add counts one ending's p_success of its real start, real end, imagined end and (when
// there is a fourth) swapped-action imagined end frames.
func (s *EndingScores) add(p []float64) {
	s.Episodes++
	for i, n := range []*int{&s.StartJudged, &s.RealJudged, &s.ImaginedJudged, &s.SwappedJudged}[:len(p)] {
		if p[i] >= 0.5 {
			*n++
		}
	}
	for i, sum := range []*float64{&s.StartP, &s.RealP, &s.ImaginedP, &s.SwappedP}[:len(p)] {
		*sum += p[i]
	}
}

func (s *EndingScores) mean() {
	if n := float64(s.Episodes); n > 0 {
		s.StartP, s.RealP, s.ImaginedP, s.SwappedP = s.StartP/n, s.RealP/n, s.ImaginedP/n, s.SwappedP/n
	}
}

// endingWindow places an imagination of horizon steps that ends at ep's end frame (its
// first End frame) after k context frames: it starts from real frame t; ok is false when
// the episode has no end frame or too few frames before it.
func endingWindow(ep Episode, k, horizon int) (t, end int, ok bool) {
	end = slices.Index(ep.End, true)
	t = end - horizon
	return t, end, end >= 0 && t >= k-1
}

// ImaginedRewardExamples are M_rew examples drawn by M_obs: for every episode, rollouts
// imagined rollouts of the horizon steps before its end frame (as EvaluateEndings imagines
// them, each with its own sampling noise), every imagined frame labelled with the success
// and end flags of the real frame it stands for. M_rew trained on real frames alone judges
// M_obs's blurrier frames by what it never saw: of 18 held-out successful endings it called
// 16 real end frames successes and 0 imagined ones (Results, #15). Trained on these too, it
// learns what a success looks like as M_obs draws it. Episodes EvaluateEndings would skip
// give none.
func ImaginedRewardExamples(net *edm.Net[float32], e edm.EDM, eps []Episode, horizon, rollouts int, rng *rand.Rand) []reward.Example {
	k := net.Config().History
	var out []reward.Example
	for _, ep := range eps {
		t, end, ok := endingWindow(ep, k, horizon)
		if !ok {
			continue
		}
		for range rollouts {
			imag := net.Imagine(e, ep.Frames[t-k+1:t+1], ep.Actions[t:end], rng)
			for i, f := range imag {
				out = append(out, reward.Example{Frames: f, Success: ep.Success[t+1+i], End: ep.End[t+1+i]})
			}
		}
	}
	return out
}

// imaginedRewardFrames is how many examples ImaginedRewardExamples draws for eps with k
// context frames, without drawing them: horizon per rollout of every episode with an
// ending window.
func imaginedRewardFrames(eps []Episode, k, horizon, rollouts int) int {
	n := 0
	for _, ep := range eps {
		if _, _, ok := endingWindow(ep, k, horizon); ok {
			n += rollouts * horizon
		}
	}
	return n
}
