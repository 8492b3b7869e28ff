package engine

import (
	"fmt"
	"math"
	"slices"

	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/kernels"
)

// realBuffer is B_real: a ring of the most recent real transitions, each
// with its history window o_{t−k+1..t} (k×d), its action in the
// environment's encoding, o_{t+1}, the reward model's label (r_t in direct
// mode; the episode's success in success mode, −1 until the episode ends)
// and whether o_{t+1} is terminal. Transition id i (counted from 0 over the
// run) lives at position i mod capacity, so positions [0, held) are exactly
// the transitions held, whether or not the ring has wrapped.
type realBuffer struct {
	capacity, d, k, aw int
	hist, act, next    []float64
	label, term        []float64
	total              int64 // transitions ever added
}

func (r *realBuffer) init(capacity, d, k, aw int) {
	r.capacity, r.d, r.k, r.aw = capacity, d, k, aw
	r.hist = make([]float64, capacity*k*d)
	r.act = make([]float64, capacity*aw)
	r.next = make([]float64, capacity*d)
	r.label = make([]float64, capacity)
	r.term = make([]float64, capacity)
}

// held returns the number of transitions held.
func (r *realBuffer) held() int { return int(min(r.total, int64(r.capacity))) }

// add stores a transition, overwriting the oldest when full, and returns
// its id.
func (r *realBuffer) add(hist, act, next []float64, label, term float64) int64 {
	id := r.total
	p := int(id % int64(r.capacity))
	kd := r.k * r.d
	copy(r.hist[p*kd:(p+1)*kd], hist)
	copy(r.act[p*r.aw:(p+1)*r.aw], act)
	copy(r.next[p*r.d:(p+1)*r.d], next)
	r.label[p], r.term[p] = label, term
	r.total++
	return id
}

// setLabel labels transition id if it is still held.
func (r *realBuffer) setLabel(id int64, v float64) {
	if id >= r.total-int64(r.held()) && id < r.total {
		r.label[id%int64(r.capacity)] = v
	}
}

func (r *realBuffer) histAt(p int) []float64 {
	kd := r.k * r.d
	return r.hist[p*kd : (p+1)*kd]
}
func (r *realBuffer) actAt(p int) []float64  { return r.act[p*r.aw : (p+1)*r.aw] }
func (r *realBuffer) nextAt(p int) []float64 { return r.next[p*r.d : (p+1)*r.d] }
func (r *realBuffer) labelAt(p int) float64  { return r.label[p] }
func (r *realBuffer) termAt(p int) float64   { return r.term[p] }

// imagine refills B_img up to this update's imagined share: it draws
// start states uniformly from B_real, rolls them Horizon steps through the
// world model with policy p (the trainer's current parameters, version
// version), and pushes the chunks. The first round starts ceil(need / H)
// extensions; when predicted terminations cut them short, later rounds
// size themselves by the mean length of the previous one (at most eight
// rounds). It returns the imagined steps pushed.
func (w *wmEngine) imagine(p *kernels.Policy, shape ActionShape, version int64, batch int) (int, error) {
	q := imgQuota(w.set.ImaginationRatio, batch)
	held := w.real.held()
	if !w.ready || q == 0 || held == 0 {
		return 0, nil
	}
	h := w.set.Horizon
	pushed := 0
	perStart := float64(h)
	for round := 0; round < 8 && w.imgSteps < q; round++ {
		need := q - w.imgSteps
		starts := make([]worldmodel.StartState, int(math.Ceil(float64(need)/perStart)))
		for i := range starts {
			j := w.rng.IntN(held)
			starts[i] = worldmodel.StartState{Hist: slices.Clone(w.real.histAt(j)), Tag: int64(j)}
		}
		// act records the policy's own action encoding (tokens or raw
		// gaussian samples) per call; Imagine hands the world model only
		// the environment encoding.
		var calls []kernels.Actions
		act := func(obs []float64, m int) (actions, logp, values []float64) {
			a := kernels.Actions{Tokens: make([]int, m*shape.Tokens), Continuous: make([]float64, m*shape.Reals)}
			logp = make([]float64, m*shape.LogProbs)
			values = make([]float64, m)
			p.ActActions(obs, m, w.rng, a, logp, values)
			actions = make([]float64, m*shape.Env)
			p.EnvActions(a, m, actions)
			calls = append(calls, a)
			return actions, logp, values
		}
		imagined, err := worldmodel.Imagine(w.model, starts, act, h, worldmodel.ImagineConfig{TermThreshold: w.set.TermThreshold})
		if err != nil {
			return pushed, fmt.Errorf("world model: %w", err)
		}
		chunks := w.toChunks(imagined, calls, shape, version)
		steps := 0
		for _, c := range chunks {
			steps += c.Len()
		}
		pushed += steps
		perStart = max(1, float64(steps)/float64(len(chunks)))
		w.pushImagined(chunks)
	}
	return pushed, nil
}

// toChunks converts imagined chunks into engine chunks (Env −1, numbered
// by imgSeq), taking each step's policy actions from the recorded act
// calls. Imagine batches the chunks still running at step t in their
// original order, so at step t chunk i is row "number of chunks before i
// with more than t steps" of call t.
func (w *wmEngine) toChunks(im []worldmodel.ImaginedChunk, calls []kernels.Actions, shape ActionShape, version int64) []*Chunk {
	out := make([]*Chunk, len(im))
	for i, ic := range im {
		T := ic.Len()
		c := &Chunk{
			Env: -1, Seq: w.imgSeq,
			Obs: ic.Obs, LogProbs: ic.LogProbs, Values: ic.Values, Rewards: ic.Rewards,
			Actions: make([]int, 0, T*shape.Tokens), ContActions: make([]float64, 0, T*shape.Reals),
			Versions: make([]int64, T), Terminated: ic.Terminated,
		}
		for t := range c.Versions {
			c.Versions[t] = version
		}
		if ic.Bootstrap {
			c.NextObs = ic.NextObs
		}
		w.imgSeq++
		out[i] = c
	}
	for t, a := range calls {
		row := 0
		for i, ic := range im {
			if ic.Len() <= t {
				continue
			}
			c := out[i]
			c.Actions = append(c.Actions, a.Tokens[row*shape.Tokens:(row+1)*shape.Tokens]...)
			c.ContActions = append(c.ContActions, a.Continuous[row*shape.Reals:(row+1)*shape.Reals]...)
			row++
		}
	}
	for i, c := range out {
		if len(c.Actions) != c.Len()*shape.Tokens || len(c.ContActions) != c.Len()*shape.Reals {
			panic(fmt.Sprintf("engine: imagined chunk %d has %d tokens and %d reals for %d steps", i, len(c.Actions), len(c.ContActions), c.Len()))
		}
		if len(c.ContActions) == 0 {
			c.ContActions = nil
		}
	}
	return out
}
