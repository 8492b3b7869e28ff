package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Learner is one training update on a batch, for any algorithm and head;
// [PolicyLearner] implements it.
type Learner interface {
	Update(b *Batch, rng *rand.Rand) (UpdateStats, error)
}

var _ Learner = (*PolicyLearner)(nil)

// LearnerConfig holds a [PolicyLearner]'s hyperparameters: the loss (its
// embedded [LossConfig]), the learning-rate schedule, gradient clipping,
// the epoch/minibatch structure, advantage normalisation and the v-trace
// truncation levels.
type LearnerConfig struct {
	LossConfig
	Schedule    LRSchedule // learning rate per update; Schedule.Base is the peak rate
	MaxGradNorm float64    // global gradient-norm clip; 0 disables clipping
	Epochs      int        // passes over the batch per Update (IMPALA: 1)
	Minibatches int        // minibatches per pass; more means more, smaller steps
	// AdvNorm is AdvNormNone, AdvNormMinibatch (CleanRL), AdvNormBatch or
	// AdvNormGlobal. For vtrace it applies to the v-trace advantages.
	AdvNorm string
	AdvEps  float64 // ε in (A − μ)/sqrt(σ² + ε) for batch and global normalisation
	Gamma   float64 // discount γ of the v-trace targets (vtrace only)
	RhoBar  float64 // ρ̄: truncation of the importance weights in δ_t and A_t (vtrace only)
	CBar    float64 // c̄: truncation of the trace coefficients c_t (vtrace only)
}

// DefaultLearnerConfig returns defaults for algo: CleanRL's ppo.py values
// for classic control (LR 2.5e-4 constant, ε 0.2, c_v 0.5, c_e 0.01, grad
// clip 0.5, 4 epochs × 4 minibatches, per-minibatch advantage
// normalisation, value clipping), GIPO σ = 0.5, SAPO τ = 1 / 1.05 (Gao et
// al.), and for vtrace IMPALA's structure: one step per batch (1 epoch, 1
// minibatch), no value clipping, no advantage normalisation, γ = 0.99,
// ρ̄ = c̄ = 1. An unknown algo is kept so that Validate reports it.
func DefaultLearnerConfig(algo string) LearnerConfig {
	c := LearnerConfig{
		LossConfig: LossConfig{
			Algo: algo, ClipCoef: 0.2, ClipValueLoss: true,
			GIPOSigma: DefaultGIPOSigma, SAPOTauPos: DefaultSAPOTauPos, SAPOTauNeg: DefaultSAPOTauNeg,
			ValueCoef: 0.5, EntropyCoef: 0.01,
		},
		Schedule:    LRSchedule{Base: 2.5e-4, Kind: LRConstant},
		MaxGradNorm: 0.5, Epochs: 4, Minibatches: 4,
		AdvNorm: AdvNormMinibatch, AdvEps: 1e-8,
		Gamma: 0.99, RhoBar: 1, CBar: 1,
	}
	if algo == AlgoVTrace {
		c.Epochs, c.Minibatches = 1, 1
		c.ClipValueLoss = false
		c.AdvNorm = AdvNormNone
	}
	return c
}

// Validate reports hyperparameters the learner cannot run with.
func (c LearnerConfig) Validate() error {
	var errs []error
	if err := c.LossConfig.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Schedule.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !(c.MaxGradNorm >= 0) {
		errs = append(errs, fmt.Errorf("max grad norm must not be negative, got %v", c.MaxGradNorm))
	}
	if c.Epochs < 1 || c.Minibatches < 1 {
		errs = append(errs, fmt.Errorf("epochs and minibatches must be at least 1, got %d and %d", c.Epochs, c.Minibatches))
	}
	switch c.AdvNorm {
	case AdvNormNone, AdvNormMinibatch:
	case AdvNormBatch, AdvNormGlobal:
		if !(c.AdvEps > 0) {
			errs = append(errs, fmt.Errorf("advantage normalisation epsilon must be positive, got %v", c.AdvEps))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown advantage normalisation %q (want %q, %q, %q or %q)",
			c.AdvNorm, AdvNormNone, AdvNormMinibatch, AdvNormBatch, AdvNormGlobal))
	}
	if c.Algo == AlgoVTrace {
		if !(c.Gamma >= 0 && c.Gamma <= 1) {
			errs = append(errs, fmt.Errorf("vtrace gamma must be in [0, 1], got %v", c.Gamma))
		}
		if !(c.RhoBar > 0) || !(c.CBar > 0) {
			errs = append(errs, fmt.Errorf("vtrace rho-bar and c-bar must be positive, got %v and %v", c.RhoBar, c.CBar))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("learner config: %w", err)
	}
	return nil
}

// PolicyLearner trains a [Policy] with the loss cfg.Algo selects. Each
// Update:
//
//  1. sets the learning rate to Schedule.At(Updates);
//  2. evaluates the whole batch once under the current parameters and
//     reports the ratios π_θ/π_old as UpdateStats.Lag (the policy lag);
//     for vtrace it also computes the v-trace targets and advantages from
//     these values and ratios ([VTrace]; fixed for the whole Update), for
//     the other losses it takes Batch.Advantages and Batch.Returns;
//  3. normalises the advantages once (AdvNormBatch, AdvNormGlobal);
//  4. runs Epochs passes, each a fresh permutation from rng cut into
//     Minibatches nearly equal minibatches (the first N mod Minibatches
//     get one sample more; with the categorical head, "ppo" and
//     AdvNormMinibatch these are exactly CleanRL's ppo.py steps), each
//     step: per-minibatch normalisation if chosen ((A − mean)/(std + 1e-8)
//     with the unbiased std, as CleanRL), [Loss], backward pass,
//     gradient-norm clipping, Adam;
//  5. counts the update in Updates (only when it succeeds).
//
// A non-finite loss, gradient or parameter stops the update, restores the
// parameters and optimizer state from before the offending step and
// returns an error naming the tensor. Updates and Opt are exported so
// checkpoints can save and restore them. Not safe for concurrent use.
type PolicyLearner struct {
	Model   Network
	Opt     *Adam
	Cfg     LearnerConfig
	Updates int // completed Updates; the LR schedule's index

	perm                     []int
	adv, ret, oldV           []float64 // whole batch, N
	lagLP, lagEnt, lagV      []float64
	logRho, boot             []float64
	bootScratch              BootstrapScratch
	frames                   [][]byte
	temps                    []float64 // minibatch temperatures (Batch.Temperatures)
	obs, cont                []float64 // minibatch
	tokens                   []int
	lp, ent, val, oldLP      []float64
	mOldV, mAdv, mRet        []float64
	dlp, dent, dval          []float64
	saveParams, saveM, saveV []float64
}

// NewPolicyLearner returns a learner for model with a fresh Adam optimizer
// (eps 1e-5, as [NewAdam]) and Updates = 0.
func NewPolicyLearner(model Network, cfg LearnerConfig) *PolicyLearner {
	return &PolicyLearner{Model: model, Opt: NewAdam(model.NumParams(), cfg.Schedule.Base), Cfg: cfg}
}

// Update runs one training update on b (see [PolicyLearner]).
func (l *PolicyLearner) Update(b *Batch, rng *rand.Rand) (UpdateStats, error) {
	if err := l.Cfg.Validate(); err != nil {
		return UpdateStats{}, fmt.Errorf("learner update: %w", err)
	}
	l.checkBatch(b)
	if b.Temperatures != nil {
		// The temperatures are this batch's rows'; later passes (acting, another batch)
		// evaluate at the network's own.
		defer setTemperatures(l.Model, nil)
	}
	if l.Cfg.Minibatches > b.N {
		return UpdateStats{}, fmt.Errorf("learner update: %d samples cannot fill %d minibatches", b.N, l.Cfg.Minibatches)
	}
	lr := l.Cfg.Schedule.At(l.Updates)
	l.Opt.LR = lr
	lag := l.prepare(b)

	var sum UpdateStats
	steps := 0
	l.perm = growInts(l.perm, b.N)
	for epoch := 0; epoch < l.Cfg.Epochs; epoch++ {
		for i := range l.perm {
			l.perm[i] = i
		}
		rng.Shuffle(len(l.perm), func(i, j int) { l.perm[i], l.perm[j] = l.perm[j], l.perm[i] })
		start := 0
		for mb := 0; mb < l.Cfg.Minibatches; mb++ {
			size := b.N / l.Cfg.Minibatches
			if mb < b.N%l.Cfg.Minibatches {
				size++
			}
			idx := l.perm[start : start+size]
			start += size
			s, err := l.step(b, idx)
			if err != nil {
				return UpdateStats{}, fmt.Errorf("learner update (%s, epoch %d, minibatch %d): %w", l.Cfg.Algo, epoch, mb, err)
			}
			sum.PolicyLoss += s.PolicyLoss
			sum.ValueLoss += s.ValueLoss
			sum.Entropy += s.Entropy
			sum.ApproxKL += s.ApproxKL
			sum.ClipFrac += s.ClipFrac
			sum.GradNorm += s.GradNorm
			sum.LowWeightFrac += s.LowWeightFrac
			sum.ESS += s.ESS
			steps++
		}
	}
	l.Updates++
	k := 1 / float64(steps)
	return UpdateStats{
		PolicyLoss: sum.PolicyLoss * k, ValueLoss: sum.ValueLoss * k, Entropy: sum.Entropy * k,
		ApproxKL: sum.ApproxKL * k, ClipFrac: sum.ClipFrac * k, GradNorm: sum.GradNorm * k,
		LowWeightFrac: sum.LowWeightFrac * k, ESS: sum.ESS * k, LR: lr, Lag: lag,
	}, nil
}

// prepare evaluates the whole batch, fills l.adv, l.ret and l.oldV for the
// steps, and returns the lag statistics.
func (l *PolicyLearner) prepare(b *Batch) RatioStats {
	m, n, t := l.Model, b.N, l.Model.TokensPerStep()
	l.lagLP, l.lagEnt = grow(l.lagLP, n*t), grow(l.lagEnt, n*t)
	l.lagV = grow(l.lagV, n)
	// Chunks of a minibatch's size bound the scratch memory of the tokens
	// head (rows × ActionDims × Bins log-probabilities) to the training
	// step's.
	chunk := (n + l.Cfg.Minibatches - 1) / l.Cfg.Minibatches
	mc := m.Config()
	d, ad := mc.ObsDim, mc.ActionDims
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		var a Actions
		if b.Frames != nil {
			setFrames(m, b.Frames[lo:hi])
		}
		if b.Temperatures != nil {
			setTemperatures(m, b.Temperatures[lo:hi])
		}
		if mc.Head == HeadGaussian {
			a.Continuous = b.ContActions[lo*ad : hi*ad]
		} else {
			a.Tokens = b.Actions[lo*t : hi*t]
		}
		m.Evaluate(b.Obs[lo*d:hi*d], hi-lo, a, l.lagLP[lo*t:hi*t], l.lagEnt[lo*t:hi*t], l.lagV[lo:hi])
	}
	if p, ok := m.(*Policy); ok {
		p.n = 0 // nothing to backpropagate from this pass
	}
	lag := ComputeRatioStats(l.lagLP, b.LogProbs, l.Cfg.ClipCoef, l.Cfg.gipoSigma())

	l.adv, l.ret, l.oldV = grow(l.adv, n), grow(l.ret, n), grow(l.oldV, n)
	if l.Cfg.Algo == AlgoVTrace {
		l.logRho = grow(l.logRho, n)
		for i := range l.logRho {
			s := 0.0
			for k := i * t; k < (i+1)*t; k++ {
				s += l.lagLP[k] - b.LogProbs[k]
			}
			l.logRho[i] = s
		}
		l.boot = l.bootScratch.BootstrapValues(l.Model, b)
		for j, p := range b.Pieces {
			r := p.Start
			e := r + p.Len
			VTrace(l.logRho[r:e], b.Rewards[r:e], l.lagV[r:e], l.boot[j], l.Cfg.Gamma, l.Cfg.RhoBar, l.Cfg.CBar,
				l.ret[r:e], l.adv[r:e])
		}
		copy(l.oldV, l.lagV) // unused: v-trace does not clip the value loss
	} else {
		copy(l.adv, b.Advantages)
		copy(l.ret, b.Returns)
		copy(l.oldV, b.Values)
	}

	switch l.Cfg.AdvNorm {
	case AdvNormBatch, AdvNormGlobal:
		var st AdvStats
		if l.Cfg.AdvNorm == AdvNormGlobal && b.AdvStats != nil {
			st = *b.AdvStats
		} else {
			st.Add(l.adv)
		}
		st.Normalize(l.adv, l.Cfg.AdvEps)
	}
	return lag
}

// BootstrapScratch holds the buffers of BootstrapValues between calls.
type BootstrapScratch struct {
	obs, vals, out []float64
	frames         [][]byte
}

// BootstrapValues returns, per piece of b, V(NextObs) under m's current
// parameters (with NextFrame for a network that reads frames), or 0 for a
// terminal piece, with one critic pass over the non-terminal pieces. The
// result is s's storage, valid until the next call.
func (s *BootstrapScratch) BootstrapValues(m Network, b *Batch) []float64 {
	d := m.Config().ObsDim
	s.obs, s.frames = s.obs[:0], s.frames[:0]
	for _, p := range b.Pieces {
		if !p.Terminal {
			s.obs = append(s.obs, p.NextObs...)
			s.frames = append(s.frames, p.NextFrame)
		}
	}
	s.out = grow(s.out, len(b.Pieces))
	k := len(s.obs) / d
	s.vals = grow(s.vals, k)
	if k > 0 {
		if b.Frames != nil {
			setFrames(m, s.frames)
		}
		m.Values(s.obs, k, s.vals)
	}
	v := s.vals
	for j, p := range b.Pieces {
		s.out[j] = 0
		if !p.Terminal {
			s.out[j], v = v[0], v[1:]
		}
	}
	return s.out
}
