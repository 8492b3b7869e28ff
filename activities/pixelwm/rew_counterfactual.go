package pixelwm

import (
	"fmt"
	"math/rand/v2"

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
// simulator says they should.
func CounterfactualRewardExamples(in CollectInput, eps []Episode, heldEvery int, net *edm.Net[float32], e edm.EDM, horizon, swaps int, rng *rand.Rand) ([]reward.Example, CounterfactualExamples, error) {
	var st CounterfactualExamples
	if net.Config().ActionDim != tabletop.ActionDim {
		return nil, st, fmt.Errorf("counterfactual M_rew examples: M_obs takes %d action values, want one action of %d", net.Config().ActionDim, tabletop.ActionDim)
	}
	k := net.Config().History
	train, _ := splitIndexed(eps, heldEvery, tabletop.TaskCount(in.Suite))
	ws := endingWindows(train, k, horizon)
	if len(ws) < 2 {
		return nil, st, nil
	}
	var out []reward.Example
	for i, w := range ws {
		for range swaps {
			// Another training episode than w, uniformly.
			j := rng.IntN(len(ws) - 1)
			if j >= i {
				j++
			}
			o := ws[j]
			actions := o.ep.Actions[o.t:o.end]
			rep, ok, err := replayEnding(in, w.ep, w.e, w.t, actions)
			if err != nil {
				return nil, st, err
			}
			if !ok {
				st.Unreplayable++
				continue
			}
			st.Endings++
			if rep.success[horizon-1] {
				st.Succeeded++
			}
			imag := net.Imagine(e, w.ep.Frames[w.t-k+1:w.t+1], actions, rng)
			for s, f := range imag {
				out = append(out, reward.Example{Frames: f, Success: rep.success[s], End: rep.ended[s]})
			}
		}
	}
	st.Frames = len(out)
	return out, st, nil
}

// rewCounterfactualRand is the random stream of CounterfactualRewardExamples (the other
// episodes drawn and the imaginations' noise).
func rewCounterfactualRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1e)) }
