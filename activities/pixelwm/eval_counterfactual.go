package pixelwm

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// CounterfactualEval asks whether M_rew's verdict on an imagined ending follows what the
// actions would really have done. EvaluateEndings's "another's actions" column cannot say
// whether another episode's ending actions should succeed from this context; the simulator
// can. Every held-out episode is replayed in tabletop from its reset with its recorded
// actions up to the start of its ending window (checked against the recorded state, step
// for step), and then the next held-out episode's ending actions are executed instead of
// its own: the simulator's outcome (the goal held within the horizon) is the truth, and
// M_rew judges the real frame after the horizon and M_obs's imagination of the same steps.
// An imagined group's rollouts share a start and differ in their actions, so GRPO on them
// learns only as far as these verdicts agree with the truth.
type CounterfactualEval struct {
	Horizon int `json:"horizon"`
	// Swaps is the number of other episodes' actions each held-out ending is driven by (with
	// Jitter, the number of noisy draws of its own).
	Swaps int `json:"swaps,omitempty"`
	// Jitter, when > 0, is the noise on the episode's own ending actions that drove each
	// ending instead (Swaps draws of it per held-out ending).
	Jitter float64 `json:"jitter,omitempty"`
	// Endings counts the replayed endings; Unreplayable those whose replay did not
	// reproduce the recorded states (not counted).
	Endings      int `json:"endings"`
	Unreplayable int `json:"unreplayable,omitempty"`
	// Succeeded counts the endings whose swapped actions reached the goal in the simulator.
	Succeeded int `json:"succeeded"`
	// Real and Imagined are M_rew's verdicts (p_success ≥ ½) on the real frame after the
	// swapped actions and on M_obs's imagination of it, against the simulator's outcome.
	Real     Confusion `json:"real_end"`
	Imagined Confusion `json:"imagined_end"`
	// RealPairs and ImaginedPairs rank, within each held-out context (Swaps ≥ 2), every
	// two endings the simulator says differ (one reached the goal, one did not) by M_rew's
	// p_success on their end frames: what a graded GRPO group needs, whatever the ½ cut.
	RealPairs     Ranking `json:"real_end_pairs,omitempty"`
	ImaginedPairs Ranking `json:"imagined_end_pairs,omitempty"`
}

// Ranking counts pairs of endings from one context with different outcomes: Right those
// whose success got the higher p_success, Ties those given equal ones.
type Ranking struct {
	Pairs int `json:"pairs"`
	Right int `json:"right"`
	Ties  int `json:"ties,omitempty"`
}

// Share is the share of pairs ranked right, a tie counting half (½ is chance; 0 without
// pairs).
func (r Ranking) Share() float64 {
	if r.Pairs == 0 {
		return 0
	}
	return (float64(r.Right) + float64(r.Ties)/2) / float64(r.Pairs)
}

// rank adds every pair of ps (p_success per ending) whose outcomes differ.
func (r *Ranking) rank(outcomes []bool, ps []float64) {
	for a := range outcomes {
		for b := range outcomes {
			if !outcomes[a] || outcomes[b] {
				continue // a success against a failure
			}
			r.Pairs++
			switch {
			case ps[a] > ps[b]:
				r.Right++
			case ps[a] == ps[b]:
				r.Ties++
			}
		}
	}
}

// Confusion counts verdicts against the truth: TP a success judged one, FN a success
// judged a failure, FP a failure judged a success, TN a failure judged one.
type Confusion struct {
	TP int `json:"true_positive"`
	FN int `json:"false_negative"`
	FP int `json:"false_positive"`
	TN int `json:"true_negative"`
}

func (c *Confusion) add(truth, judged bool) {
	switch {
	case truth && judged:
		c.TP++
	case truth:
		c.FN++
	case judged:
		c.FP++
	default:
		c.TN++
	}
}

// Agree is the share of verdicts that match the truth (0 without any).
func (c Confusion) Agree() float64 {
	n := c.TP + c.FN + c.FP + c.TN
	if n == 0 {
		return 0
	}
	return float64(c.TP+c.TN) / float64(n)
}

// indexed is a held-out episode with its collection index (the e of Collect's episode e).
type indexed struct {
	ep Episode
	e  int
}

// splitIndexed is Split with every episode's collection index, for eps collected by
// Collect in order or loaded back task by task: the j-th episode of task k is Collect's
// episode j·tasks + k, its tasks played round-robin.
func splitIndexed(eps []Episode, heldEvery, tasks int) (train, held []indexed) {
	seen := map[int]int{}
	for _, ep := range eps {
		j := seen[ep.Task]
		seen[ep.Task]++
		if heldOut(ep.Task, j, heldEvery) {
			held = append(held, indexed{ep, j*tasks + ep.Task})
		} else {
			train = append(train, indexed{ep, j*tasks + ep.Task})
		}
	}
	return train, held
}

// window is an episode's ending window: the horizon steps from step t to its end frame.
type window struct {
	indexed
	t, end int
}

// endingWindows are the ending windows of the episodes that have one (endingWindow with
// k context frames).
func endingWindows(eps []indexed, k, horizon int) []window {
	var ws []window
	for _, h := range eps {
		if t, end, ok := endingWindow(h.ep, k, horizon); ok {
			ws = append(ws, window{h, t, end})
		}
	}
	return ws
}

// EvaluateCounterfactual replays the held-out episodes of eps (Collect's with in, split at
// one in heldEvery) as CounterfactualEval describes, imagining with net (whose action width
// must be tabletop.ActionDim: one action per step) and judging with rew; rng draws the
// imaginations' noise. Each held-out ending is driven by the ending actions of the swaps
// held-out episodes after it in turn (1 to one fewer than the endings; 1: the next one's
// only), so that more swaps give more verdicts from the same held-out contexts. With
// jitter > 0 each is driven instead by its own ending actions with fresh Gaussian noise of
// that standard deviation on their motion values (jitterActions), swaps times: endings that
// differ as little as the rollouts of one GRPO group do.
func EvaluateCounterfactual(in CollectInput, eps []Episode, heldEvery int, net *edm.Net[float32], e edm.EDM, rew *reward.Model, horizon, swaps int, jitter float64, rng *rand.Rand) (CounterfactualEval, error) {
	ev := CounterfactualEval{Horizon: horizon, Jitter: jitter}
	if net.Config().ActionDim != tabletop.ActionDim {
		return ev, fmt.Errorf("counterfactual endings: M_obs takes %d action values, want one action of %d", net.Config().ActionDim, tabletop.ActionDim)
	}
	k := net.Config().History
	_, held := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	ws := endingWindows(held, k, horizon)
	if len(ws) < 2 {
		return ev, nil
	}
	ev.Swaps = max(swaps, 1)
	if jitter == 0 {
		ev.Swaps = min(ev.Swaps, len(ws)-1)
	}
	for i, w := range ws {
		var outcomes []bool
		var real, imagined []float64
		for j := 1; j <= ev.Swaps; j++ {
			var actions [][]float64
			if jitter > 0 {
				actions = jitterActions(w.ep.Actions[w.t:w.end], jitter, rng)
			} else {
				o := ws[(i+j)%len(ws)]
				actions = o.ep.Actions[o.t:o.end]
			}
			rep, ok, err := replayEnding(in, w.ep, w.e, w.t, actions)
			if err != nil {
				return ev, err
			}
			if !ok {
				ev.Unreplayable++
				continue
			}
			imag := net.Imagine(e, w.ep.Frames[w.t-k+1:w.t+1], actions, rng)
			p, _ := rew.Predict([][][]uint8{rep.frame, imag[horizon-1]})
			succeeded := rep.success[horizon-1]
			ev.Endings++
			if succeeded {
				ev.Succeeded++
			}
			ev.Real.add(succeeded, p[0] >= 0.5)
			ev.Imagined.add(succeeded, p[1] >= 0.5)
			outcomes, real, imagined = append(outcomes, succeeded), append(real, p[0]), append(imagined, p[1])
		}
		ev.RealPairs.rank(outcomes, real)
		ev.ImaginedPairs.rank(outcomes, imagined)
	}
	return ev, nil
}

// replay is what the simulator did after a replayed episode's ending actions were swapped:
// success[i] says whether the goal had held at any of the first i+1 swapped steps and
// ended[i] whether the episode had ended by then (goal or time limit) — the labels
// Episode.Success and Episode.End give the frames after them — and frame is what the
// cameras saw after the last.
type replay struct {
	success, ended []bool
	frame          [][]uint8
}

// replayEnding replays Collect's episode e (ep, collected with in) in a fresh simulator from
// its reset through its recorded actions up to step t, then executes actions instead of
// its own. ok is false when the replay did not reproduce the recorded state at every step
// up to t.
func replayEnding(in CollectInput, ep Episode, e, t int, actions [][]float64) (rep replay, ok bool, err error) {
	env, err := in.newEnv(ep.Task)
	if err != nil {
		return rep, false, fmt.Errorf("counterfactual endings: %w", err)
	}
	obs := env.Reset(episodeRand(in, uint64(e)))
	for s := 0; ; s++ {
		if !slices.Equal(obs, ep.State[s]) {
			return rep, false, nil
		}
		if s == t {
			break
		}
		obs, _, _, _ = env.Step(ep.Actions[s])
	}
	succeeded, ended := false, false
	for _, a := range actions {
		_, _, term, trunc := env.Step(a)
		succeeded = succeeded || env.Success()
		ended = ended || term || trunc
		rep.success, rep.ended = append(rep.success, succeeded), append(rep.ended, ended)
	}
	rep.frame = copyFrames(env.Images())
	return rep, true, nil
}

// jitterActions is a copy of actions with Gaussian noise of standard deviation sigma (action
// units, drawn from rng) added to each action's motion values, clamped to the action space
// [−1, 1], as the noisy expert's execution noise is; the gripper command is kept. Such
// endings differ from the recorded one about as the sampled rollouts of a GRPO group differ
// from each other, rather than as another episode's ending does.
func jitterActions(actions [][]float64, sigma float64, rng *rand.Rand) [][]float64 {
	out := make([][]float64, len(actions))
	for t, a := range actions {
		b := slices.Clone(a)
		for i := range min(len(b), tabletop.ActionDim-1) {
			b[i] = max(-1, min(1, b[i]+sigma*rng.NormFloat64()))
		}
		out[t] = b
	}
	return out
}
