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
	// tasks without a notion of success (StepResult.HasSuccess). Succeeded says which ones,
	// episode by episode in order (all false without a notion of success), so a caller that
	// knows which task each episode played can split the rate by task.
	Successes  int
	HasSuccess bool
	Succeeded  []bool
}

// SuccessRate is the share of episodes that succeeded (0 without a notion of success).
func (r EvalResult) SuccessRate() float64 {
	if len(r.Returns) == 0 || !r.HasSuccess {
		return 0
	}
	return float64(r.Successes) / float64(len(r.Returns))
}

// countSuccess adds the last step sr of episode ep to the success count.
func (r *EvalResult) countSuccess(ep int, sr StepResult) {
	if sr.HasSuccess {
		r.HasSuccess = true
		if sr.Success {
			r.Successes++
			r.Succeeded[ep] = true
		}
	}
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
	if rs, ok := p.(RowSampler); ok && episodes > 1 {
		return e.evaluateRows(p, rs, env, episodes, seed, greedy)
	}
	res.Succeeded = make([]bool, episodes)
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
	for ep := range episodes {
		obs := ResetEpisode(env, ep, rng)
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
				res.countSuccess(ep, sr)
				break
			}
		}
		res.Returns = append(res.Returns, ret)
		res.Lengths = append(res.Lengths, n)
		res.Steps += int64(n)
	}
	return res, nil
}

// evalParallel is how many evaluation episodes of a RowSampler policy run side by side, each
// in an environment of its own, acting as one batch.
var evalParallel = 16

// evaluateRows is Evaluate for a RowSampler policy (the VLA, whose one-row calls cost nearly
// what a batch does): up to evalParallel episodes at a time, the first in env and the others
// in environments of their own, acting in one call per step. Episodes start in order, each
// drawing its initial state from the evaluation stream as the one-at-a-time loop does, so a
// greedy evaluation starts from the same states; episode i samples from its own stream, and
// a row's result does not depend on the batch it is in (RowSampler), so the outcome does not
// depend on evalParallel.
func (e *Engine) evaluateRows(p kernels.Network, rs RowSampler, env Env, episodes int, seed uint64, greedy bool) (EvalResult, error) {
	res := EvalResult{Returns: make([]float64, episodes), Lengths: make([]int, episodes), Succeeded: make([]bool, episodes)}
	k := min(episodes, evalParallel)
	envs := []Env{env}
	defer func() {
		for _, x := range envs[1:] {
			CloseEnv(x)
		}
	}()
	for i := 1; i < k; i++ {
		x, err := e.makeEnv(len(e.slots) + i)
		if err != nil {
			return res, fmt.Errorf("evaluate: %w", err)
		}
		envs = append(envs, x)
	}
	fp, frames := p.(kernels.FrameNetwork)
	rng := rand.New(rand.NewPCG(seed, streamEval)) // initial states, in episode order
	type run struct {
		env   Env
		ep    int // episode index; -1 when the slot has no episode left
		obs   []float64
		rng   *rand.Rand
		frame []byte
	}
	runs := make([]run, k)
	next := 0
	start := func(r *run) {
		if next == episodes {
			r.ep = -1
			return
		}
		r.ep, r.obs = next, ResetEpisode(r.env, next, rng)
		r.rng = rand.New(rand.NewPCG(seed^uint64(next+1)*0x9e3779b97f4a7c15, streamEval))
		next++
	}
	for i := range runs {
		runs[i].env = envs[i]
		start(&runs[i])
	}
	sh, d := e.shape, len(runs[0].obs)
	// Buffers for k rows, sliced to the rows still playing.
	var (
		active []*run
		obs    []float64
		rngs   []*rand.Rand
		fr     [][]byte
		tokens = make([]int, k*sh.Tokens)
		reals  = make([]float64, k*sh.Reals)
		logp   = make([]float64, k*sh.LogProbs)
		values = make([]float64, k)
		act    = make([]float64, k*sh.Env)
	)
	for {
		active, obs, rngs, fr = active[:0], obs[:0], rngs[:0], fr[:0]
		for i := range runs {
			if r := &runs[i]; r.ep >= 0 {
				active = append(active, r)
				obs = append(obs, r.obs...)
				rngs = append(rngs, r.rng)
				if frames {
					r.frame = r.env.(FrameEnv).Frame(r.frame[:0])
					fr = append(fr, r.frame)
				}
			}
		}
		n := len(active)
		if n == 0 {
			return res, nil
		}
		if len(obs) != n*d {
			return res, fmt.Errorf("evaluate: observations of %d values, want %d", len(obs)/n, d)
		}
		if frames {
			fp.SetFrames(fr)
		}
		a := kernels.Actions{Tokens: tokens[:n*sh.Tokens], Continuous: reals[:n*sh.Reals]}
		if greedy {
			p.Greedy(obs, n, a)
		} else {
			rs.ActActionsRows(obs, n, rngs, a, logp[:n*sh.LogProbs], values[:n])
		}
		p.EnvActions(a, n, act[:n*sh.Env])
		for i, r := range active {
			sr := r.env.Step(act[i*sh.Env : (i+1)*sh.Env])
			r.obs = sr.Obs
			res.Returns[r.ep] += sr.Reward
			res.Lengths[r.ep]++
			res.Steps++
			if sr.Terminated || sr.Truncated {
				res.countSuccess(r.ep, sr)
				start(r)
			}
		}
	}
}
