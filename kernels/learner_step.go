package kernels

import (
	"fmt"
	"math"
)

// step takes one optimizer step on the samples idx of b.
func (l *PolicyLearner) step(b *Batch, idx []int) (UpdateStats, error) {
	terms := l.lossAndGrad(b, idx)
	if err := checkLossFinite(terms); err != nil {
		return UpdateStats{}, err
	}
	if err := l.checkGrads(); err != nil {
		return UpdateStats{}, err
	}
	m := l.Model
	var norm float64
	if l.Cfg.MaxGradNorm > 0 {
		norm = ClipGradNorm(m.Grads(), l.Cfg.MaxGradNorm)
	} else {
		norm = L2Norm(m.Grads())
	}
	if math.IsInf(norm, 0) || math.IsNaN(norm) {
		return UpdateStats{}, fmt.Errorf("gradient norm is %v", norm)
	}

	// Keep what the step changes so a non-finite result can be undone.
	params := m.Params()
	l.saveParams = append(l.saveParams[:0], params...)
	l.saveM = append(l.saveM[:0], l.Opt.M...)
	l.saveV = append(l.saveV[:0], l.Opt.V...)
	if l.Cfg.ValueOnly {
		// Parameters the value loss does not reach (the actor's; the whole
		// transformer of a VLA with a detached value) get exactly 0: keep them,
		// momentum included.
		l.Opt.StepSparse(params, m.Grads())
	} else {
		l.Opt.Step(params, m.Grads())
	}
	if i, ok := allFinite(params); !ok {
		bad := params[i]
		copy(params, l.saveParams)
		copy(l.Opt.M, l.saveM)
		copy(l.Opt.V, l.saveV)
		l.Opt.T--
		m.SyncParams()
		return UpdateStats{}, fmt.Errorf("parameter %s became %v", m.ParamName(i), bad)
	}
	m.SyncParams()
	return UpdateStats{
		PolicyLoss: terms.Policy, ValueLoss: terms.Value, Entropy: terms.Entropy,
		ApproxKL: terms.ApproxKL, ClipFrac: terms.ClipFrac, GradNorm: norm,
		LowWeightFrac: terms.LowWeightFrac, ESS: terms.ESS,
	}, nil
}

// checkGrads names the first non-finite gradient entry.
func (l *PolicyLearner) checkGrads() error {
	m := l.Model
	if i, ok := allFinite(m.Grads()); !ok {
		return fmt.Errorf("gradient of %s is %v", m.ParamName(i), m.Grads()[i])
	}
	return nil
}

// lossAndGrad gathers the minibatch idx, evaluates the model and the loss,
// and leaves ∂loss/∂params in the model's gradient slice.
func (l *PolicyLearner) lossAndGrad(b *Batch, idx []int) LossTerms {
	m := l.Model
	mc := m.Config()
	n, d, t := len(idx), mc.ObsDim, m.TokensPerStep()
	l.obs = grow(l.obs, n*d)
	for _, s := range []*[]float64{&l.val, &l.mOldV, &l.mAdv, &l.mRet, &l.dval} {
		*s = grow(*s, n)
	}
	for _, s := range []*[]float64{&l.lp, &l.ent, &l.oldLP, &l.dlp, &l.dent} {
		*s = grow(*s, n*t)
	}
	var a Actions
	if mc.Head == HeadGaussian {
		ad := mc.ActionDims
		l.cont = grow(l.cont, n*ad)
		for k, i := range idx {
			copy(l.cont[k*ad:(k+1)*ad], b.ContActions[i*ad:(i+1)*ad])
		}
		a.Continuous = l.cont
	} else {
		l.tokens = growInts(l.tokens, n*t)
		for k, i := range idx {
			copy(l.tokens[k*t:(k+1)*t], b.Actions[i*t:(i+1)*t])
		}
		a.Tokens = l.tokens
	}
	for k, i := range idx {
		copy(l.obs[k*d:(k+1)*d], b.Obs[i*d:(i+1)*d])
		copy(l.oldLP[k*t:(k+1)*t], b.LogProbs[i*t:(i+1)*t])
		l.mOldV[k] = l.oldV[i]
		l.mAdv[k] = l.adv[i]
		l.mRet[k] = l.ret[i]
	}
	if l.Cfg.AdvNorm == AdvNormMinibatch {
		normalizeAdvantages(l.mAdv)
	}
	if b.Frames != nil {
		l.frames = l.frames[:0]
		for _, i := range idx {
			l.frames = append(l.frames, b.Frames[i])
		}
		setFrames(m, l.frames)
	}
	if b.Temperatures != nil {
		l.temps = l.temps[:0]
		for _, i := range idx {
			l.temps = append(l.temps, b.Temperatures[i])
		}
		setTemperatures(m, l.temps)
	}

	m.ZeroGrads()
	m.Evaluate(l.obs, n, a, l.lp, l.ent, l.val)
	terms := Loss(l.Cfg.LossConfig, LossInput{
		LogProbs: l.lp, OldLogProbs: l.oldLP, Entropy: l.ent, Values: l.val,
		OldValues: l.mOldV, Advantages: l.mAdv, Returns: l.mRet,
	}, LossGrad{LogProbs: l.dlp, Entropy: l.dent, Values: l.dval})
	m.Backward(l.dlp, l.dent, l.dval)
	return terms
}

// checkBatch panics on a batch whose shapes do not fit the model and the
// algorithm.
func (l *PolicyLearner) checkBatch(b *Batch) {
	const op = "PolicyLearner.Update"
	m := l.Model
	mc := m.Config()
	d, t := mc.ObsDim, m.TokensPerStep()
	if b.N <= 0 || len(b.Obs) != b.N*d {
		panic(fmt.Sprintf("kernels: %s: batch has N=%d and %d obs values, want N > 0 and N*ObsDim = %d",
			op, b.N, len(b.Obs), b.N*d))
	}
	if b.Frames != nil {
		checkN(op+" batch frames", b.N, len(b.Frames))
	}
	if b.Temperatures != nil {
		checkN(op+" batch temperatures", b.N, len(b.Temperatures))
		if _, ok := m.(TemperedNetwork); !ok {
			panic(fmt.Sprintf("kernels: %s: the batch has per-sample temperatures, the network (%T) evaluates at its own only", op, m))
		}
	}
	if mc.Head == HeadGaussian {
		checkN(op+" batch actions (N×ActionDims)", b.N*mc.ActionDims, len(b.ContActions))
	} else {
		checkN(op+" batch actions (N×TokensPerStep)", b.N*t, len(b.Actions))
	}
	checkN(op+" batch log-probs (N×TokensPerStep)", b.N*t, len(b.LogProbs))
	if l.Cfg.Algo == AlgoVTrace {
		checkPieces(op, b, d)
		return
	}
	checkN(op+" batch", b.N, len(b.Advantages), len(b.Returns), len(b.Values))
}

// checkPieces panics unless b has N rewards and pieces that cover 0…N−1 in
// order, each non-terminal one with an ObsDim-wide NextObs.
func checkPieces(op string, b *Batch, obsDim int) {
	checkN(op+" batch rewards", b.N, len(b.Rewards))
	next := 0
	for j, p := range b.Pieces {
		if p.Start != next || p.Len < 1 {
			panic(fmt.Sprintf("kernels: %s: piece %d covers [%d, %d), want it to start at %d with a positive length",
				op, j, p.Start, p.Start+p.Len, next))
		}
		if !p.Terminal && len(p.NextObs) != obsDim {
			panic(fmt.Sprintf("kernels: %s: piece %d is not terminal but its NextObs has %d values, want %d",
				op, j, len(p.NextObs), obsDim))
		}
		next += p.Len
	}
	if next != b.N {
		panic(fmt.Sprintf("kernels: %s: pieces cover %d samples, want N = %d", op, next, b.N))
	}
}

// RecomputeGAE is value recomputation for policy-lag compensation: it
// evaluates V(o_t) for every sample of b and V(NextObs) for every
// non-terminal piece with the model's CURRENT parameters, then runs [GAE]
// on each piece, and overwrites b.Values with the recomputed values and
// b.Advantages, b.Returns with the results (allocating them when their
// length is not N). b needs Rewards and Pieces.
func RecomputeGAE(m Network, b *Batch, gamma, lambda float64) {
	const op = "RecomputeGAE"
	d := m.Config().ObsDim
	if b.N <= 0 || len(b.Obs) != b.N*d {
		panic(fmt.Sprintf("kernels: %s: batch has N=%d and %d obs values, want N > 0 and N*ObsDim = %d",
			op, b.N, len(b.Obs), b.N*d))
	}
	checkPieces(op, b, d)
	for _, s := range []*[]float64{&b.Values, &b.Advantages, &b.Returns} {
		if len(*s) != b.N {
			*s = make([]float64, b.N)
		}
	}
	if b.Frames != nil {
		setFrames(m, b.Frames)
	}
	m.Values(b.Obs, b.N, b.Values)
	var scratch BootstrapScratch
	boot := scratch.BootstrapValues(m, b)
	for j, p := range b.Pieces {
		r, e := p.Start, p.Start+p.Len
		GAE(b.Rewards[r:e], b.Values[r:e], boot[j], gamma, lambda, b.Advantages[r:e], b.Returns[r:e])
	}
}
