package bc

import (
	"fmt"
	"time"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// VLAActor plays a VLAModel greedily for [EvaluateEnv] (with
// m.EnvConfig's environments, whose images it reads): every m.Execute
// steps per environment it decodes (argmax, or the actor's rule) all 7·Chunk action
// tokens of the environments that need a new chunk, in one batched
// [vla.Net.Act] (prefix pass, then KV-cached decoding), and runs the
// chunk's first Execute actions (bin centres) in order.
type VLAActor struct {
	// Ensemble > 1 is temporal ensembling (ACT, Zhao et al. 2023): the actor
	// queries the network at every step (m.Execute is ignored) and runs the
	// mean, per motion dimension, of what the Ensemble newest chunks (at most
	// m.Chunk, all those that reach this step) predicted for this step; the
	// gripper command is the newest chunk's, since a mean of open and closed
	// would be a half-open command. 0 or 1 runs chunks as described above.
	// On the spatial suite (docs/results/vla-bc-notes.md, session 7) it did
	// worse than querying every step without it: 29.8% against 37.6% over
	// the same 500 initial states with Ensemble 8.
	Ensemble int

	m     *VLAModel
	rule  vla.DecodeRule
	queue chunkQueue
	hist  map[*tabletop.Env][]stepChunk
	batch []vla.Obs

	// Calls, Rows and ActTime count the Act calls of the network, the
	// observations they decoded and their wall time.
	Calls, Rows int
	ActTime     time.Duration
}

// Actor returns a greedy VLAActor of m.
func (m *VLAModel) Actor() *VLAActor { return &VLAActor{m: m, rule: vla.DecodeArgmax} }

// ActorDecode returns a VLAActor of m that picks each token by rule
// (argmax, mean or median; sampling needs a random stream and is refused).
func (m *VLAModel) ActorDecode(rule vla.DecodeRule) (*VLAActor, error) {
	switch rule {
	case vla.DecodeArgmax, vla.DecodeMean, vla.DecodeMedian:
		return &VLAActor{m: m, rule: rule}, nil
	}
	return nil, fmt.Errorf("bc vla actor: decode rule %v is not deterministic", rule)
}

// stepChunk is a decoded chunk and the episode step it was queried at.
type stepChunk struct {
	step    int
	actions [][]float64
}

// Act implements Actor.
func (a *VLAActor) Act(envs []*tabletop.Env, _ [][]float64, need []int, out [][]float64) {
	if a.Ensemble > 1 {
		a.actEnsemble(envs, need, out)
		return
	}
	if ask := a.queue.empty(envs, need); len(ask) > 0 {
		for r, c := range a.decode(envs, ask) {
			a.queue.set(envs[ask[r]], c[:a.m.Execute])
		}
	}
	a.queue.pop(envs, need, out)
}

// decode runs one batched network call for the environments envs[ask]
// and returns their decoded chunks.
func (a *VLAActor) decode(envs []*tabletop.Env, ask []int) [][][]float64 {
	a.batch = a.batch[:0]
	for _, i := range ask {
		// Images are referenced, not copied: the batch is consumed
		// before any environment steps again.
		e := envs[i]
		a.batch = append(a.batch, a.m.obs(e.Images(), e.InstructionTokens(), e.Proprio()))
	}
	start := time.Now()
	tokens, _, _ := a.m.Net.ActDecode(a.batch, nil, a.rule)
	a.ActTime += time.Since(start)
	a.Calls++
	a.Rows += len(ask)
	chunks := make([][][]float64, len(ask))
	for r := range ask {
		chunks[r] = tokensToChunk(a.m.Net.Config(), tokens[r])
	}
	return chunks
}

// actEnsemble is Act with temporal ensembling (a.Ensemble > 1).
func (a *VLAActor) actEnsemble(envs []*tabletop.Env, need []int, out [][]float64) {
	if a.hist == nil {
		a.hist = map[*tabletop.Env][]stepChunk{}
	}
	keep := min(a.Ensemble, a.m.Chunk)
	chunks := a.decode(envs, need)
	for r, i := range need {
		e := envs[i]
		t := e.Steps()
		h := a.hist[e]
		if t == 0 {
			h = h[:0] // a new episode
		}
		h = append(h, stepChunk{step: t, actions: chunks[r]})
		if len(h) > keep {
			h = h[len(h)-keep:]
		}
		a.hist[e] = h
		o := out[i]
		clear(o)
		n := 0
		for _, c := range h {
			if k := t - c.step; k < len(c.actions) {
				for j := range tabletop.ActionDim - 1 {
					o[j] += c.actions[k][j]
				}
				n++
			}
		}
		for j := range tabletop.ActionDim - 1 {
			o[j] /= float64(n)
		}
		o[tabletop.ActionDim-1] = chunks[r][0][tabletop.ActionDim-1]
	}
}

// MeanActLatency is the mean wall time of one batched network Act call.
func (a *VLAActor) MeanActLatency() time.Duration {
	if a.Calls == 0 {
		return 0
	}
	return a.ActTime / time.Duration(a.Calls)
}
