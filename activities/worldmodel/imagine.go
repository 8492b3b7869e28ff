package worldmodel

import (
	"fmt"
	"math"
)

// StartState is a real state an imagined extension starts from.
type StartState struct {
	// Hist is the history window o_{t−k+1} … o_t (History×ObsDim features,
	// oldest first, zeros before the episode's start; see FillHistory).
	// The last row, o_t, is the chunk's first observation.
	Hist []float64
	// Tag is the caller's identifier (an environment index, a replay
	// position), copied into the chunk.
	Tag int64
}

// ActFunc is the current policy as imagination sees it: for n observations
// (n×ObsDim, row-major) it returns n actions in the environment's encoding
// (n×ActionWidth: a discrete index as a float, or the continuous vector),
// their log-probabilities (n×P values: P ≥ 1 per step, one per action
// token, the same P on every call) and the critic's values V(o) (n).
type ActFunc func(obs []float64, n int) (actions, logp, values []float64)

// ImagineConfig sets up Imagine.
type ImagineConfig struct {
	// TermThreshold is the predicted termination probability at or above
	// which an imagined episode ends; 0 means 0.5.
	TermThreshold float64
}

// ImaginedChunk is one imagined trajectory of T ≤ H steps, laid out like
// the engine's replay chunks so the engine can push it to B_img: step t
// holds the observation the policy saw, what it did, and what the world
// model predicted would follow.
//
//	Obs[t]       o_0 = the real start (StartState's newest row), then ô_1 … ô_{T−1}   (T×ObsDim)
//	Actions[t]   a_t ~ π(·|ô_t)                                                         (T×ActionWidth)
//	LogProbs[t]  log π(a_t|ô_t) per token                                               (T×P)
//	Values[t]    V(ô_t) under the acting policy                                         (T)
//	Rewards[t]   r̂_t: M_rew(ô_{t+1}) (direct), or p(ô_{t+1}) − p(ô_t) (success_delta)   (T)
//	TermProbs[t] predicted P(ô_{t+1} is terminal)                                        (T)
//
// Terminated means the world model predicted a termination after the last
// step (TermProbs[T−1] ≥ threshold): the trainer bootstraps with 0.
// Otherwise the chunk ran the full horizon, Bootstrap is true, NextObs holds
// ô_T and BootstrapValue the acting policy's V(ô_T); a trainer that
// recomputes values uses V(NextObs) with its current critic instead, as for
// a truncated real chunk.
type ImaginedChunk struct {
	Tag            int64     `json:"tag"`
	Obs            []float64 `json:"obs"`
	Actions        []float64 `json:"actions"`
	LogProbs       []float64 `json:"log_probs"`
	Values         []float64 `json:"values"`
	Rewards        []float64 `json:"rewards"`
	TermProbs      []float64 `json:"term_probs"`
	Terminated     bool      `json:"terminated"`
	Bootstrap      bool      `json:"bootstrap"`
	NextObs        []float64 `json:"next_obs,omitempty"`
	BootstrapValue float64   `json:"bootstrap_value"`
}

// Len returns the number of imagined steps T.
func (c ImaginedChunk) Len() int { return len(c.Rewards) }

// Imagine rolls every start state h steps forward through the world model
// with the current policy act, all start states as one batch per step:
//
//	for t = 0 … h−1, for every chunk still running:
//	    a_t, log π, V  = act(ô_t)
//	    ô_{t+1}        = M_obs(ô_{t−k+1..t}, a_t)
//	    r̂_t, p_term    = M_rew(ô_{t+1})   (success_delta: r̂_t = p(ô_{t+1}) − p(ô_t))
//	    stop the chunk if p_term ≥ threshold (Terminated, bootstrap 0)
//
// with ô_0 = o_0 the real start and p(ô_0) = M_rew(o_0). Chunks still
// running after h steps get Bootstrap, NextObs = ô_h and BootstrapValue
// from one more act call. The history window slides over the imagined
// observations. A non-finite prediction (a diverged model) is an error;
// wrong shapes from act panic. h must be at least 1.
func Imagine(wm *WorldModel, start []StartState, act ActFunc, h int, cfg ImagineConfig) ([]ImaginedChunk, error) {
	if h < 1 {
		panic(fmt.Sprintf("worldmodel: Imagine: horizon must be at least 1, got %d", h))
	}
	thr := cfg.TermThreshold
	if thr == 0 {
		thr = 0.5
	}
	c := wm.Config
	d, k, aw := c.ObsDim, c.History, c.ActionWidth()
	success := c.RewardMode == RewardSuccessDelta
	n := len(start)
	chunks := make([]ImaginedChunk, n)
	if n == 0 {
		return chunks, nil
	}
	hist := make([]float64, n*k*d) // every chunk's window, rows of live chunks first after compaction
	for i, s := range start {
		if len(s.Hist) != k*d {
			panic(fmt.Sprintf("worldmodel: Imagine: start %d has %d history values, want History*ObsDim = %d", i, len(s.Hist), k*d))
		}
		copy(hist[i*k*d:], s.Hist)
		chunks[i].Tag = s.Tag
	}
	live := make([]int, n) // live[j] = chunk index of batch row j
	for i := range live {
		live[i] = i
	}
	obs := make([]float64, n*d)
	next := make([]float64, n*d)
	rew, term := make([]float64, n), make([]float64, n)
	pPrev := make([]float64, n) // p(ô_t), success mode
	newest := func(m int) {
		for j := 0; j < m; j++ {
			copy(obs[j*d:(j+1)*d], hist[(j*k+k-1)*d:(j*k+k)*d])
		}
	}
	newest(n)
	if success {
		wm.Rew().Predict(obs, n, pPrev, term)
	}
	p := 0 // log-probabilities per step
	for t := 0; t < h && len(live) > 0; t++ {
		m := len(live)
		actions, logp, values := act(obs[:m*d], m)
		p = checkAct(actions, logp, values, m, aw, p)
		wm.Obs().Predict(hist[:m*k*d], actions, m, next[:m*d])
		if j, ok := finite(next[:m*d]); !ok {
			return nil, fmt.Errorf("imagine: step %d: predicted observation of start %d is %v", t, live[j/d], next[j])
		}
		wm.Rew().Predict(next[:m*d], m, rew[:m], term[:m])
		kept := 0
		for j, ci := range live {
			ch := &chunks[ci]
			r := rew[j]
			if success {
				r = rew[j] - pPrev[j]
			}
			if math.IsNaN(r) || math.IsInf(r, 0) || math.IsNaN(term[j]) {
				return nil, fmt.Errorf("imagine: step %d: predicted reward of start %d is %v (termination %v)", t, ci, r, term[j])
			}
			ch.Obs = append(ch.Obs, obs[j*d:(j+1)*d]...)
			ch.Actions = append(ch.Actions, actions[j*aw:(j+1)*aw]...)
			ch.LogProbs = append(ch.LogProbs, logp[j*p:(j+1)*p]...)
			ch.Values = append(ch.Values, values[j])
			ch.Rewards = append(ch.Rewards, r)
			ch.TermProbs = append(ch.TermProbs, term[j])
			if term[j] >= thr {
				ch.Terminated = true
				continue
			}
			// Keep the chunk: slide its window onto ô_{t+1} and move it to
			// batch row kept (kept ≤ j, so nothing unread is overwritten).
			w := hist[kept*k*d : (kept+1)*k*d]
			copy(w, hist[j*k*d+d:(j+1)*k*d])
			copy(w[(k-1)*d:], next[j*d:(j+1)*d])
			pPrev[kept] = rew[j]
			live[kept] = ci
			kept++
		}
		live = live[:kept]
		newest(kept)
	}
	if len(live) > 0 {
		m := len(live)
		_, _, values := act(obs[:m*d], m)
		if len(values) != m {
			panic(fmt.Sprintf("worldmodel: Imagine: act returned %d values for %d observations", len(values), m))
		}
		for j, ci := range live {
			ch := &chunks[ci]
			ch.Bootstrap = true
			ch.NextObs = append([]float64(nil), obs[j*d:(j+1)*d]...)
			ch.BootstrapValue = values[j]
		}
	}
	return chunks, nil
}

// checkAct panics on act results of the wrong shape and returns the
// log-probabilities per step (fixed by the first call: prev = 0).
func checkAct(actions, logp, values []float64, n, aw, prev int) int {
	if len(actions) != n*aw || len(values) != n || len(logp) == 0 || len(logp)%n != 0 {
		panic(fmt.Sprintf("worldmodel: Imagine: act returned %d actions, %d log-probs and %d values for %d observations; want %d, a positive multiple of %d, and %d",
			len(actions), len(logp), len(values), n, n*aw, n, n))
	}
	p := len(logp) / n
	if prev != 0 && p != prev {
		panic(fmt.Sprintf("worldmodel: Imagine: act returned %d log-probs per step, earlier %d", p, prev))
	}
	return p
}

// finite returns the index of the first non-finite value.
func finite(x []float64) (int, bool) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i, false
		}
	}
	return -1, true
}
