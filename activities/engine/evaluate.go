package engine

import (
	"fmt"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// streamEval is the PCG stream (under the evaluation seed) of evaluation
// episodes' initial states and sampled actions; no training stream uses it.
const streamEval = 5

// EvalSeed is the evaluation seed of a run with seed runSeed: the runs of
// every arm with that seed evaluate from the same start states.
func EvalSeed(runSeed uint64) uint64 { return runSeed ^ 0x5eed_e7a1 }

// EvalResult is the outcome of Evaluate: the return and length of each
// evaluation episode, in order.
type EvalResult struct {
	Returns []float64
	Lengths []int
	// Steps is the environment steps the evaluation took (the sum of
	// Lengths). They are not training interactions: they change nothing
	// the engine holds and do not count toward EnvSteps or the budget.
	Steps int64
	// Successes counts the episodes that reached their task's goal; HasSuccess is false for
	// tasks without a notion of success (StepResult.HasSuccess).
	Successes  int
	HasSuccess bool
}

// SuccessRate is the share of episodes that succeeded (0 without a notion of success).
func (r EvalResult) SuccessRate() float64 {
	if len(r.Returns) == 0 || !r.HasSuccess {
		return 0
	}
	return float64(r.Successes) / float64(len(r.Returns))
}

// Mean returns the mean evaluation return (0 for no episodes).
func (r EvalResult) Mean() float64 {
	if len(r.Returns) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range r.Returns {
		s += v
	}
	return s / float64(len(r.Returns))
}

// Evaluate plays episodes complete episodes of a fresh environment (built
// like the training environments, without their latency) with a copy of the
// current policy, one at a time, and returns their returns.
// With greedy the policy takes its most likely action (kernels.Policy.Greedy);
// otherwise it samples, as it does in training. Initial states and samples
// come from seed on their own stream, so two calls with the same seed and
// parameters return the same episodes, and evaluating changes nothing the
// engine holds: not its RNGs, buffers, counters or environments.
//
// This is the usual protocol of sample-efficiency studies: a policy is
// judged on separate evaluation episodes, and only training interactions
// count as online steps. Call it between Run calls, never during one.
func (e *Engine) Evaluate(episodes int, seed uint64, greedy bool) (EvalResult, error) {
	var res EvalResult
	if episodes < 1 {
		return res, fmt.Errorf("evaluate: episodes must be at least 1, got %d", episodes)
	}
	// The same kind of environment the engine trains on, without the simulated step
	// latency, numbered after the training environments.
	env, err := e.makeEnv(len(e.slots))
	if err != nil {
		return res, fmt.Errorf("evaluate: %w", err)
	}
	defer CloseEnv(env)
	p := e.tr.model().CloneNetwork()
	fp, frames := p.(kernels.FrameNetwork)
	var frame []byte
	see := func() {
		if frames {
			frame = env.(FrameEnv).Frame(frame[:0])
			fp.SetFrames([][]byte{frame})
		}
	}
	rng := rand.New(rand.NewPCG(seed, streamEval))
	sh := e.shape
	a := kernels.Actions{Tokens: make([]int, sh.Tokens), Continuous: make([]float64, sh.Reals)}
	logp, val := make([]float64, sh.LogProbs), make([]float64, 1)
	act := make([]float64, sh.Env)
	for range episodes {
		obs := env.Reset(rng)
		ret, n := 0.0, 0
		for {
			see()
			if greedy {
				p.Greedy(obs, 1, a)
			} else {
				p.ActActions(obs, 1, rng, a, logp, val)
			}
			p.EnvActions(a, 1, act)
			sr := env.Step(act)
			obs = sr.Obs
			ret += sr.Reward
			n++
			if sr.Terminated || sr.Truncated {
				if sr.HasSuccess {
					res.HasSuccess = true
					if sr.Success {
						res.Successes++
					}
				}
				break
			}
		}
		res.Returns = append(res.Returns, ret)
		res.Lengths = append(res.Lengths, n)
		res.Steps += int64(n)
	}
	return res, nil
}
