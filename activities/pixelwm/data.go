package pixelwm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// Split holds out one episode in heldEvery of every task: the j-th
// episode of task k is held out when (k + j) mod heldEvery = heldEvery − 1.
// The diagonal matters: with Collect's round-robin tasks, holding out
// every heldEvery-th episode of the list would hold out whole tasks (all
// of tasks 4 and 9 at heldEvery 5), a test on unseen layouts rather than
// on unseen episodes. heldEvery < 2 holds out nothing.
func Split(eps []Episode, heldEvery int) (train, held []Episode) {
	seen := map[int]int{}
	for _, e := range eps {
		j := seen[e.Task]
		seen[e.Task]++
		if heldOut(e.Task, j, heldEvery) {
			held = append(held, e)
		} else {
			train = append(train, e)
		}
	}
	return train, held
}

// heldOut says whether Split holds out the j-th episode of task.
func heldOut(task, j, heldEvery int) bool {
	return heldEvery >= 2 && (task+j)%heldEvery == heldEvery-1
}

// Transitions turns a trajectory into M_obs's samples (k = c.History past
// steps, the action after the last of them, the next step), from the
// first step that has k steps of history. frames[t] holds one frame per
// camera; actions[t] is the action between frames[t] and frames[t+1].
func Transitions(c edm.Config, frames [][]edm.Frame, actions [][]float64) []edm.Sample {
	var out []edm.Sample
	for t := c.History - 1; t+1 < len(frames) && t < len(actions); t++ {
		out = append(out, edm.Sample{Past: frames[t-c.History+1 : t+1 : t+1], Action: actions[t], Next: frames[t+1]})
	}
	return out
}

// ObsSamples is Transitions over every episode.
func ObsSamples(c edm.Config, eps []Episode) []edm.Sample {
	var out []edm.Sample
	for _, e := range eps {
		out = append(out, Transitions(c, e.Frames, e.Actions)...)
	}
	return out
}

// checkEDM reports an M_obs σ_data that neither is positive nor is 0 for a residual model
// (which withSigmaData measures on the data), a context noise outside [0, 1], a
// self-forcing depth outside 0…history and a negative or depthless self-forcing start.
func checkEDM(e edm.EDM, history int) error {
	var errs []error
	if !(e.SigmaData > 0 || e.Residual && e.SigmaData == 0) {
		errs = append(errs, fmt.Errorf("observation model: σ_data must be positive (0 only for a residual model, which measures it on the data), got %v", e.SigmaData))
	}
	if !(e.ContextNoise >= 0 && e.ContextNoise <= 1) {
		errs = append(errs, fmt.Errorf("observation model: context noise must be in [0, 1] (a standard deviation in frame units, which span [−1, 1]; 0 trains on the recorded contexts), got %v", e.ContextNoise))
	}
	if e.SelfForcing < 0 || e.SelfForcing > history {
		errs = append(errs, fmt.Errorf("observation model: self-forcing must be 0 to the %d context steps, got %d", history, e.SelfForcing))
	}
	if e.SelfForcingFrom < 0 || e.SelfForcingFrom > 0 && e.SelfForcing == 0 {
		errs = append(errs, fmt.Errorf("observation model: self-forcing from step %d: must not be negative, and needs a self-forcing depth above 0", e.SelfForcingFrom))
	}
	return errors.Join(errs...)
}

// withSigmaData returns e with a residual model's σ_data 0 replaced by the
// frame change's standard deviation on samples (ChangeStd), what it denoises.
func withSigmaData(e edm.EDM, samples []edm.Sample) edm.EDM {
	if e.Residual && e.SigmaData == 0 {
		e.SigmaData = ChangeStd(samples)
	}
	return e
}

// ChangeStd is the standard deviation of the frame change Next − Past[k−1]
// over every pixel value of samples, in the models' [−1, 1] units (0 for
// none).
func ChangeStd(samples []edm.Sample) float64 {
	var sum, sq float64
	n := 0
	for _, s := range samples {
		last := s.Past[len(s.Past)-1]
		for cam, f := range s.Next {
			for i, v := range f {
				d := (float64(v) - float64(last[cam][i])) / 127.5
				sum += d
				sq += d * d
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	m := sum / float64(n)
	return math.Sqrt(max(0, sq/float64(n)-m*m))
}

// RewardExamples labels every frame of every episode for M_rew with the
// simulator's success and end flags.
func RewardExamples(eps []Episode) []reward.Example {
	var out []reward.Example
	for _, e := range eps {
		for t, f := range e.Frames {
			out = append(out, reward.Example{Frames: f, Success: e.Success[t], End: e.End[t]})
		}
	}
	return out
}

// Strided returns the episodes as a policy that executes stride actions per step sees
// them: frames (with their state and proprioception) every stride steps, each step's action
// the stride actions between them concatenated, its reward their sum, and Success/End as of
// the frame kept. An episode becomes stride episodes, one per phase (the first kept frame
// p = 0 … stride−1), so that every recorded frame is the start of some step; with
// firstPhase only phase 0, which is how the policy meets an episode from its reset. A phase
// keeps only whole steps (its frames end at the last one whose stride actions were all
// recorded), and a phase without a whole step is left out. stride ≤ 1 returns eps.
//
// M_obs and the proprio head of a policy with action chunks are trained on these, so that
// one prediction is one policy step: the frames a rollout starts from are the ones the
// engine stored (one per step), and imagination costs one M_obs step per policy step.
func Strided(eps []Episode, stride int, firstPhase bool) []Episode {
	if stride <= 1 {
		return eps
	}
	var out []Episode
	for _, e := range eps {
		phases := stride
		if firstPhase {
			phases = 1
		}
		for p := range phases {
			// Whole steps: frame p+(j+1)·stride exists and its stride actions were recorded.
			last := min(len(e.Actions), e.Len()-1)
			n := (last - p) / stride
			if n < 1 {
				continue
			}
			s := Episode{Task: e.Task, Instr: e.Instr, Steps: e.Steps, Succeeded: e.Succeeded}
			for j := 0; j <= n; j++ {
				t := p + j*stride
				s.Frames = append(s.Frames, e.Frames[t])
				s.State = appendAt(s.State, e.State, t)
				s.Proprio = appendAt(s.Proprio, e.Proprio, t)
				s.Success = appendAt(s.Success, e.Success, t)
				s.End = appendAt(s.End, e.End, t)
				if j == n {
					break
				}
				r := 0.0
				for i := t; i < t+stride && i < len(e.Rewards); i++ {
					r += e.Rewards[i]
				}
				s.Actions = append(s.Actions, slices.Concat(e.Actions[t:t+stride]...))
				s.Rewards = append(s.Rewards, r)
			}
			out = append(out, s)
		}
	}
	return out
}

// appendAt appends src[t] to dst when src has it (episodes loaded without a field keep it
// empty).
func appendAt[T any](dst, src []T, t int) []T {
	if t < len(src) {
		return append(dst, src[t])
	}
	return dst
}
