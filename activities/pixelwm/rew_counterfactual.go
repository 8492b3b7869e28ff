package pixelwm

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// CounterfactualExamples counts what CounterfactualRewardExamples drew.
type CounterfactualExamples struct {
	// Endings counts the swapped endings replayed, Succeeded those whose swapped actions
	// reached the goal in the simulator, Unreplayable those whose replay did not reproduce
	// the recorded states (none drawn from them).
	Endings      int `json:"endings"`
	Succeeded    int `json:"succeeded"`
	Unreplayable int `json:"unreplayable,omitempty"`
	// Frames counts the imagined frames added to M_rew's training examples.
	Frames int `json:"frames"`
}

// CounterfactualRewardExamples are M_rew examples whose labels come from the simulator
// rather than from the recorded episode. ImaginedRewardExamples labels M_obs's imagination
// of an episode's own ending with that episode's outcome; an M_rew trained on those learns
// that an imagined ending which starts near a success is one, whatever the actions — from
// 20 steps before the end, with another episode's ending actions, its verdicts agree with
// the simulator's outcome no better than chance (Results, #15). Here every training episode
// of eps (Collect's with in, split at one in heldEvery; the held-out ones are never touched)
// with an ending window of horizon steps gets `swaps` endings driven by the ending actions
// of other training episodes, drawn uniformly by rng: the simulator replays the episode to
// the start of its window and executes the other's actions (replayEnding), net imagines the
// same steps from the same real context, and each imagined frame is labelled with the
// success and end flags the simulator had at that step. Imagined rollouts that share a
// start and differ in their actions — GRPO's groups — then differ in their labels as the
// simulator says they should. With an M_obs whose action is several environment actions
// (a policy with action chunks, Strided), horizon and context count its policy steps and
// the episodes are replayed an action at a time. With jitter > 0 the endings are driven by
// the episode's own ending actions with fresh noise of that standard deviation on their
// motion values instead (jitterActions): near misses and near successes of one start.
func CounterfactualRewardExamples(in CollectInput, eps []Episode, heldEvery int, net *edm.Net[float32], e edm.EDM, horizon, swaps int, jitter float64, rng *rand.Rand) ([]reward.Example, CounterfactualExamples, error) {
	var st CounterfactualExamples
	// A policy with action chunks steps `stride` actions at a time (Strided): M_obs takes
	// their values together, and its horizon and context count policy steps.
	ad := net.Config().ActionDim
	stride := ad / tabletop.ActionDim
	if stride < 1 || ad%tabletop.ActionDim != 0 {
		return nil, st, fmt.Errorf("counterfactual M_rew examples: M_obs takes %d action values, not a whole number of %d-D actions", ad, tabletop.ActionDim)
	}
	k := net.Config().History
	train, _ := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	// Windows of horizon policy steps, with k context frames a policy step apart before them.
	ws := endingWindows(train, (k-1)*stride+1, horizon*stride)
	if len(ws) < 2 {
		return nil, st, nil
	}
	var out []reward.Example
	for i, w := range ws {
		var context [][][]uint8
		for f := w.t - (k-1)*stride; f <= w.t; f += stride {
			context = append(context, w.ep.Frames[f])
		}
		for range swaps {
			var raw [][]float64
			if jitter > 0 {
				raw = jitterActions(w.ep.Actions[w.t:w.end], jitter, rng)
			} else {
				// Another training episode than w, uniformly.
				j := rng.IntN(len(ws) - 1)
				if j >= i {
					j++
				}
				o := ws[j]
				raw = o.ep.Actions[o.t:o.end]
			}
			rep, ok, err := replayEnding(in, w.ep, w.e, w.t, raw)
			if err != nil {
				return nil, st, err
			}
			if !ok {
				st.Unreplayable++
				continue
			}
			st.Endings++
			if rep.success[len(raw)-1] {
				st.Succeeded++
			}
			imag := net.Imagine(e, context, policySteps(raw, stride), rng)
			for s, f := range imag {
				last := (s+1)*stride - 1 // the frame after the policy step's last action
				out = append(out, reward.Example{Frames: f, Success: rep.success[last], End: rep.ended[last]})
			}
		}
	}
	st.Frames = len(out)
	return out, st, nil
}

// policySteps groups actions into steps of stride actions, each step's values concatenated
// (as Strided does).
func policySteps(actions [][]float64, stride int) [][]float64 {
	if stride == 1 {
		return actions
	}
	var out [][]float64
	for t := 0; t+stride <= len(actions); t += stride {
		out = append(out, slices.Concat(actions[t:t+stride]...))
	}
	return out
}

// rewCounterfactualRand is the random stream of CounterfactualRewardExamples (the other
// episodes drawn and the imaginations' noise).
func rewCounterfactualRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1e)) }
