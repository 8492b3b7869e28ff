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
}

// EvaluateEndings scores the held-out episodes' endings (see EndingEval); episodes whose
// end frame is less than horizon steps after a full context are skipped.
func EvaluateEndings(net *edm.Net[float32], e edm.EDM, rew *reward.Model, held []Episode, horizon int, rng *rand.Rand) EndingEval {
	k := net.Config().History
	ev := EndingEval{Horizon: horizon}
	for _, ep := range held {
		end := slices.Index(ep.End, true)
		t := end - horizon
		if end < 0 || t < k-1 {
			continue
		}
		imag := net.Imagine(e, ep.Frames[t-k+1:t+1], ep.Actions[t:end], rng)
		p, _ := rew.Predict([][][]uint8{ep.Frames[t], ep.Frames[end], imag[horizon-1]})
		s := &ev.Failed
		if ep.Succeeded {
			s = &ev.Succeeded
		}
		s.add(p)
	}
	ev.Succeeded.mean()
	ev.Failed.mean()
	return ev
}

func (s *EndingScores) add(p []float64) {
	s.Episodes++
	for i, n := range []*int{&s.StartJudged, &s.RealJudged, &s.ImaginedJudged} {
		if p[i] >= 0.5 {
			*n++
		}
	}
	s.StartP, s.RealP, s.ImaginedP = s.StartP+p[0], s.RealP+p[1], s.ImaginedP+p[2]
}

func (s *EndingScores) mean() {
	if n := float64(s.Episodes); n > 0 {
		s.StartP, s.RealP, s.ImaginedP = s.StartP/n, s.RealP/n, s.ImaginedP/n
	}
}
