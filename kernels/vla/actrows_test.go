package vla

import (
	"math/rand/v2"
	"testing"
)

// TestActRowsMatchesSingle: a batch decoded by ActRows is bit for bit what each sample decodes
// alone (a batch of one) with the same generator (tokens, log-probabilities, values), for batch sizes
// that cross the CPU backend's row blocking, sampled and greedy. Exact equality, no
// tolerance: sync-mode rollout relies on results not depending on how requests are batched.
func TestActRowsMatchesSingle(t *testing.T) {
	c := Config{ImageSize: 16, Patch: 4, Cameras: 2, Dim: 32, Layers: 2, Heads: 2, MLPRatio: 4,
		MaxInstr: 6, WordVocab: 20, VocabSize: 400, ActionDims: 14, Bins: 256, ProprioDim: 8, SlimHead: true}
	for _, slim := range []bool{true, false} {
		c.SlimHead = slim
		if !slim {
			// A full head this wide makes the LM-head product of 16 and 33 rows large enough
			// (2·33·8192·32 flops) for the backend to split it across goroutines.
			c.VocabSize = 8192
		}
		rng := rand.New(rand.NewPCG(3, 4))
		m := New(c, rng)
		perturb(m.Params(), 0.05, rng)
		for _, n := range []int{1, 2, 7, 16, 33} {
			batch := randObs(rng, c, n)
			for _, greedy := range []bool{false, true} {
				rowRNG := func() []*rand.Rand {
					r := make([]*rand.Rand, n)
					for i := range r {
						r[i] = rand.New(rand.NewPCG(uint64(100+i), 7))
					}
					return r
				}
				tok, lp, val := m.ActRows(batch, rowRNG(), greedy)
				single := rowRNG()
				for i := range n {
					st, sl, sv := m.ActRows(batch[i:i+1], single[i:i+1], greedy)
					if sv[0] != val[i] {
						t.Fatalf("slim %v, batch %d, greedy %v, row %d: value %v alone, %v in the batch", slim, n, greedy, i, sv[0], val[i])
					}
					for j := range st[0] {
						if st[0][j] != tok[i][j] || sl[0][j] != lp[i][j] {
							t.Fatalf("slim %v, batch %d, greedy %v, row %d, token %d: (%d, %v) alone, (%d, %v) in the batch",
								slim, n, greedy, i, j, st[0][j], sl[0][j], tok[i][j], lp[i][j])
						}
					}
				}
			}
		}
	}
}
