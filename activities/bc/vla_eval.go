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
	m     *VLAModel
	rule  vla.DecodeRule
	queue chunkQueue
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

// Act implements Actor.
func (a *VLAActor) Act(envs []*tabletop.Env, _ [][]float64, need []int, out [][]float64) {
	if ask := a.queue.empty(envs, need); len(ask) > 0 {
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
		for r, i := range ask {
			a.queue.set(envs[i], tokensToChunk(a.m.Net.Config(), tokens[r])[:a.m.Execute])
		}
	}
	a.queue.pop(envs, need, out)
}

// MeanActLatency is the mean wall time of one batched network Act call.
func (a *VLAActor) MeanActLatency() time.Duration {
	if a.Calls == 0 {
		return 0
	}
	return a.ActTime / time.Duration(a.Calls)
}
