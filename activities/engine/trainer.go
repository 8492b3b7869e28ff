package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels"
)

// trainer turns sampled chunks into one PPO update. It owns the learner's
// parameters, the optimiser and the minibatch-shuffle RNG.
type trainer struct {
	cfg   Config
	ppo   *kernels.PPO
	src   *rand.PCG
	rng   *rand.Rand
	batch kernels.Batch

	version int64 // policy version of the current parameters
	updates int64 // run-wide updates done

	next     []float64 // NextObs of bootstrapped chunks, row-major
	nextVals []float64
}

// batchInfo summarises the data an update consumed.
type batchInfo struct {
	steps     int
	staleness []int // staleness histogram of the batch's steps
	meanStale float64
	lr        float64
}

// update sorts chunks by (Env, Seq) so that the batch does not depend on
// the order in which concurrent workers finished them, computes advantages
// and returns by GAE per chunk, and runs one PPO update. It does not publish
// the new weights; the caller does.
func (t *trainer) update(chunks []*Chunk) (kernels.UpdateStats, batchInfo, error) {
	slices.SortFunc(chunks, func(a, b *Chunk) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Seq, b.Seq))
	})
	model := t.ppo.Model
	d := model.Config().ObsDim
	n := 0
	for _, c := range chunks {
		n += c.Len()
	}
	b := &t.batch
	b.N = n
	b.Obs = b.Obs[:0]
	b.Actions = b.Actions[:0]
	b.LogProbs = b.LogProbs[:0]
	b.Values = b.Values[:0]
	info := batchInfo{steps: n}
	var staleSum int64
	t.next = t.next[:0]
	for _, c := range chunks {
		b.Obs = append(b.Obs, c.Obs...)
		b.Actions = append(b.Actions, c.Actions...)
		b.LogProbs = append(b.LogProbs, c.LogProbs...)
		b.Values = append(b.Values, c.Values...)
		if !c.Terminated {
			if len(c.NextObs) != d {
				panic(fmt.Sprintf("engine: trainer: chunk (%d, %d) is not terminated but has %d next-observation values", c.Env, c.Seq, len(c.NextObs)))
			}
			t.next = append(t.next, c.NextObs...)
		}
		for _, s := range c.Staleness {
			for int(s) >= len(info.staleness) {
				info.staleness = append(info.staleness, 0)
			}
			info.staleness[s]++
			staleSum += s
		}
	}
	if n > 0 {
		info.meanStale = float64(staleSum) / float64(n)
	}
	if t.cfg.RecomputeValues {
		model.Values(b.Obs, n, b.Values)
	}
	nb := len(t.next) / d
	t.nextVals = grow(t.nextVals, nb)
	if nb > 0 {
		model.Values(t.next, nb, t.nextVals)
	}

	b.Advantages = grow(b.Advantages, n)
	b.Returns = grow(b.Returns, n)
	off, k := 0, 0
	for _, c := range chunks {
		T := c.Len()
		boot := 0.0
		if !c.Terminated {
			boot = t.nextVals[k]
			k++
		}
		kernels.GAE(c.Rewards, b.Values[off:off+T], boot, t.cfg.Gamma, t.cfg.GAELambda,
			b.Advantages[off:off+T], b.Returns[off:off+T])
		off += T
	}
	if t.cfg.GlobalAdvNorm {
		normalize(b.Advantages)
	}
	for i, a := range b.Advantages {
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b.Returns[i]) || math.IsInf(b.Returns[i], 0) {
			return kernels.UpdateStats{}, info, fmt.Errorf("update %d: advantage or return of sample %d is not finite", t.updates+1, i)
		}
	}

	info.lr = t.cfg.learningRate(t.updates)
	t.ppo.Cfg.LR = info.lr
	stats, err := t.ppo.Update(b, t.rng)
	if err != nil {
		return stats, info, fmt.Errorf("update %d: %w", t.updates+1, err)
	}
	t.updates++
	t.version++
	return stats, info, nil
}

// normalize sets a ← (a−μ)/sqrt(σ²+1e-8) with μ, σ² the mean and population
// variance of a.
func normalize(a []float64) {
	if len(a) == 0 {
		return
	}
	var mean float64
	for _, v := range a {
		mean += v
	}
	mean /= float64(len(a))
	var v2 float64
	for _, v := range a {
		v2 += (v - mean) * (v - mean)
	}
	scale := 1 / math.Sqrt(v2/float64(len(a))+1e-8)
	for i, v := range a {
		a[i] = (v - mean) * scale
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
