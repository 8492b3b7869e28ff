package kernels

// BCScratch holds the buffers of BehaviourCloningStep, reused across calls.
type BCScratch struct {
	logp, ent, val, dlogp, dent, dval []float64
}

// BehaviourCloningStep takes one gradient step of behaviour cloning (BC) on n demonstration
// steps: obs (n×ObsDim) and the expert's actions a in the head's form (tokens for the
// categorical and tokens heads, reals for the gaussian head). The loss is the negative
// log-likelihood of the expert's action tokens, averaged over the n·TokensPerStep tokens,
//
//	L = −1/(n·T) Σ_i Σ_k log π_θ(a_ik | o_i, a_i,<k)
//
// the cross-entropy of each action token, as OpenVLA's fine-tuning on demonstrations; the
// critic is not trained (dL/dV = 0). The gradient is clipped to a global norm of maxGradNorm
// (0: no clipping) before opt's step. It returns the loss before the step.
func BehaviourCloningStep(p *Policy, opt *Adam, obs []float64, n int, a Actions, maxGradNorm float64, s *BCScratch) (loss float64) {
	t := p.TokensPerStep()
	s.logp, s.ent, s.dlogp, s.dent = grow(s.logp, n*t), grow(s.ent, n*t), grow(s.dlogp, n*t), grow(s.dent, n*t)
	s.val, s.dval = grow(s.val, n), grow(s.dval, n)
	p.ZeroGrads()
	p.Evaluate(obs, n, a, s.logp, s.ent, s.val)
	w := -1 / float64(n*t)
	for i, lp := range s.logp {
		loss += w * lp
		s.dlogp[i] = w
	}
	clear(s.dent)
	clear(s.dval)
	p.Backward(s.dlogp, s.dent, s.dval)
	if maxGradNorm > 0 {
		ClipGradNorm(p.Grads(), maxGradNorm)
	}
	opt.Step(p.Params(), p.Grads())
	return loss
}
