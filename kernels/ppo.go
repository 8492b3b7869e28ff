package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// PPOConfig holds the learner's hyperparameters (names as in CleanRL's
// ppo.py).
type PPOConfig struct {
	LR          float64 // Adam learning rate; Update copies it into Opt.LR, so anneal by changing it
	ClipCoef    float64 // ε: how far the probability ratio (and the value, if clipped) may move per update
	ValueCoef   float64 // weight of the value loss in the total loss
	EntropyCoef float64 // weight of the entropy bonus; larger keeps the policy more random
	MaxGradNorm float64 // global gradient-norm clip; 0 disables clipping
	Epochs      int     // passes over the batch per Update
	Minibatches int     // minibatches per pass; more means more, smaller steps
	NormAdv     bool    // normalise advantages per minibatch to mean 0, std 1
	// ClipValueLoss takes the larger of the plain and the clipped value
	// error, limiting how far V moves per update.
	ClipValueLoss bool
}

// DefaultPPOConfig returns CleanRL's ppo.py defaults for classic control.
func DefaultPPOConfig() PPOConfig {
	return PPOConfig{
		LR: 2.5e-4, ClipCoef: 0.2, ValueCoef: 0.5, EntropyCoef: 0.01, MaxGradNorm: 0.5,
		Epochs: 4, Minibatches: 4, NormAdv: true, ClipValueLoss: true,
	}
}

// Validate reports hyperparameters the learner cannot run with.
func (c PPOConfig) Validate() error {
	var errs []error
	if !(c.LR > 0) {
		errs = append(errs, fmt.Errorf("learning rate must be positive, got %v", c.LR))
	}
	if !(c.ClipCoef > 0) {
		errs = append(errs, fmt.Errorf("clip coefficient must be positive, got %v", c.ClipCoef))
	}
	if c.ValueCoef < 0 || c.EntropyCoef < 0 || c.MaxGradNorm < 0 {
		errs = append(errs, fmt.Errorf("value coef, entropy coef and max grad norm must not be negative, got %v, %v, %v",
			c.ValueCoef, c.EntropyCoef, c.MaxGradNorm))
	}
	if c.Epochs < 1 || c.Minibatches < 1 {
		errs = append(errs, fmt.Errorf("epochs and minibatches must be at least 1, got %d and %d", c.Epochs, c.Minibatches))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ppo config: %w", err)
	}
	return nil
}

// Batch holds N training samples with advantages and returns already
// computed (see [GAE]). Obs is row-major N×ObsDim; LogProbs and Values are
// the behaviour policy's log π_old(a|s) and V_old(s) recorded at collection.
//
// For [PPO] and the categorical head every slice has N entries. For a
// [PolicyLearner] with T = TokensPerStep() tokens per step, Actions (tokens
// head) and LogProbs hold N×T values, step i's at [i*T:(i+1)*T]; the
// gaussian head stores its actions in ContActions (N×ActionDims) instead
// of Actions. V-trace and [RecomputeGAE] also need Rewards and Pieces,
// global advantage normalisation AdvStats.
type Batch struct {
	N          int
	Obs        []float64
	Actions    []int
	LogProbs   []float64
	Advantages []float64
	Returns    []float64
	Values     []float64

	ContActions []float64 // gaussian head: N×ActionDims actions as sampled (before clipping)
	Rewards     []float64 // r_t of each sample (vtrace, RecomputeGAE)
	// Pieces lists runs of consecutive steps of one episode that together
	// cover the samples 0…N−1 in order (vtrace, RecomputeGAE).
	Pieces []Piece
	// AdvStats are the advantage statistics merged across all trainer
	// shards for AdvNormGlobal; nil means this batch is the only shard.
	AdvStats *AdvStats
}

// Piece marks samples [Start, Start+Len) of a [Batch] as consecutive steps
// of one episode. Terminal says the episode terminated at the last step
// (bootstrap 0); otherwise NextObs is the observation after the last step
// (the next step's, or the final observation of a time-limit truncation)
// and the bootstrap is V(NextObs).
type Piece struct {
	Start, Len int
	Terminal   bool
	NextObs    []float64
}

// UpdateStats are the means over all minibatch steps of one Update.
type UpdateStats struct {
	PolicyLoss float64 // policy loss (PPO: clipped surrogate)
	ValueLoss  float64 // (clipped) value loss, without ValueCoef
	Entropy    float64 // mean policy entropy
	ApproxKL   float64 // k3 estimate of KL(old‖new) before each step
	ClipFrac   float64 // fraction of samples whose ratio left [1−ε, 1+ε]
	GradNorm   float64 // global gradient norm before clipping

	// Filled by PolicyLearner only:
	LowWeightFrac float64    // fraction of tokens whose GIPO weight is below GIPOLowWeight
	ESS           float64    // effective sample size (Σr)²/(N Σr²) of each minibatch's ratios
	LR            float64    // learning rate of this update (from the schedule)
	Lag           RatioStats // ratios of the whole batch under the parameters before the first step: the policy lag
}

// PPO is the learner: the model it trains, its optimizer and the
// hyperparameters. It keeps scratch buffers, so one PPO is not safe for
// concurrent use.
type PPO struct {
	Model *ActorCritic
	Opt   *Adam
	Cfg   PPOConfig

	perm                     []int
	obs                      []float64
	actions                  []int
	lp, ent, val             []float64
	oldLP, oldVal, adv, ret  []float64
	dlp, dent, dval          []float64
	saveParams, saveM, saveV []float64
}

// NewPPO returns a learner for model with a fresh Adam optimizer at cfg.LR.
func NewPPO(model *ActorCritic, cfg PPOConfig) *PPO {
	return &PPO{Model: model, Opt: NewAdam(model.NumParams(), cfg.LR), Cfg: cfg}
}

// Update runs Cfg.Epochs passes over b; each pass draws a permutation of the
// N samples from rng and cuts it into Cfg.Minibatches nearly equal
// minibatches (the first N mod Minibatches get one sample more). Each
// minibatch takes one step: advantages normalised per minibatch when NormAdv
// ((A − mean)/(std + 1e-8) with the unbiased std, as CleanRL), [PPOLoss],
// backward pass, gradient-norm clipping, Adam.
//
// It returns the mean of the per-step statistics. If a loss, a gradient or
// a parameter becomes non-finite it stops, restores the parameters and the
// optimizer state from before the offending step, and returns an error that
// names the tensor.
func (p *PPO) Update(b *Batch, rng *rand.Rand) (UpdateStats, error) {
	if err := p.Cfg.Validate(); err != nil {
		return UpdateStats{}, fmt.Errorf("ppo update: %w", err)
	}
	p.checkBatch(b)
	if p.Cfg.Minibatches > b.N {
		return UpdateStats{}, fmt.Errorf("ppo update: %d samples cannot fill %d minibatches", b.N, p.Cfg.Minibatches)
	}
	p.Opt.LR = p.Cfg.LR
	p.perm = growInts(p.perm, b.N)

	var sum UpdateStats
	steps := 0
	for epoch := 0; epoch < p.Cfg.Epochs; epoch++ {
		for i := range p.perm {
			p.perm[i] = i
		}
		rng.Shuffle(len(p.perm), func(i, j int) { p.perm[i], p.perm[j] = p.perm[j], p.perm[i] })
		start := 0
		for mb := 0; mb < p.Cfg.Minibatches; mb++ {
			size := b.N / p.Cfg.Minibatches
			if mb < b.N%p.Cfg.Minibatches {
				size++
			}
			idx := p.perm[start : start+size]
			start += size
			s, err := p.step(b, idx)
			if err != nil {
				return UpdateStats{}, fmt.Errorf("ppo update (epoch %d, minibatch %d): %w", epoch, mb, err)
			}
			sum.PolicyLoss += s.PolicyLoss
			sum.ValueLoss += s.ValueLoss
			sum.Entropy += s.Entropy
			sum.ApproxKL += s.ApproxKL
			sum.ClipFrac += s.ClipFrac
			sum.GradNorm += s.GradNorm
			steps++
		}
	}
	k := 1 / float64(steps)
	return UpdateStats{
		PolicyLoss: sum.PolicyLoss * k, ValueLoss: sum.ValueLoss * k, Entropy: sum.Entropy * k,
		ApproxKL: sum.ApproxKL * k, ClipFrac: sum.ClipFrac * k, GradNorm: sum.GradNorm * k,
	}, nil
}

// step takes one optimizer step on the samples idx of b.
func (p *PPO) step(b *Batch, idx []int) (UpdateStats, error) {
	terms := p.lossAndGrad(b, idx)
	if err := checkLossFinite(terms); err != nil {
		return UpdateStats{}, err
	}
	if err := p.checkGrads(); err != nil {
		return UpdateStats{}, err
	}
	m := p.Model
	var norm float64
	if p.Cfg.MaxGradNorm > 0 {
		norm = ClipGradNorm(m.grads, p.Cfg.MaxGradNorm)
	} else {
		norm = L2Norm(m.grads)
	}
	if math.IsInf(norm, 0) || math.IsNaN(norm) {
		return UpdateStats{}, fmt.Errorf("gradient norm is %v", norm)
	}

	// Keep what the step changes so a non-finite result can be undone.
	p.saveParams = append(p.saveParams[:0], m.params...)
	p.saveM = append(p.saveM[:0], p.Opt.M...)
	p.saveV = append(p.saveV[:0], p.Opt.V...)
	p.Opt.Step(m.params, m.grads)
	if i, ok := allFinite(m.params); !ok {
		bad := m.params[i]
		copy(m.params, p.saveParams)
		copy(p.Opt.M, p.saveM)
		copy(p.Opt.V, p.saveV)
		p.Opt.T--
		return UpdateStats{}, fmt.Errorf("parameter %s became %v", m.paramName(i), bad)
	}
	return UpdateStats{
		PolicyLoss: terms.Policy, ValueLoss: terms.Value, Entropy: terms.Entropy,
		ApproxKL: terms.ApproxKL, ClipFrac: terms.ClipFrac, GradNorm: norm,
	}, nil
}

// checkGrads names the first non-finite gradient entry.
func (p *PPO) checkGrads() error {
	m := p.Model
	if i, ok := allFinite(m.grads); !ok {
		return fmt.Errorf("gradient of %s is %v", m.paramName(i), m.grads[i])
	}
	return nil
}

// lossAndGrad gathers the minibatch idx, evaluates the model and the PPO
// loss, and leaves ∂loss/∂params in the model's gradient slice.
func (p *PPO) lossAndGrad(b *Batch, idx []int) LossTerms {
	n, d := len(idx), p.Model.cfg.ObsDim
	p.obs = grow(p.obs, n*d)
	p.actions = growInts(p.actions, n)
	for _, s := range []*[]float64{&p.lp, &p.ent, &p.val, &p.oldLP, &p.oldVal, &p.adv, &p.ret, &p.dlp, &p.dent, &p.dval} {
		*s = grow(*s, n)
	}
	for k, i := range idx {
		copy(p.obs[k*d:(k+1)*d], b.Obs[i*d:(i+1)*d])
		p.actions[k] = b.Actions[i]
		p.oldLP[k] = b.LogProbs[i]
		p.oldVal[k] = b.Values[i]
		p.adv[k] = b.Advantages[i]
		p.ret[k] = b.Returns[i]
	}
	if p.Cfg.NormAdv {
		normalizeAdvantages(p.adv)
	}

	m := p.Model
	m.ZeroGrads()
	m.Evaluate(p.obs, n, p.actions, p.lp, p.ent, p.val)
	terms := PPOLoss(p.Cfg, LossInput{
		LogProbs: p.lp, OldLogProbs: p.oldLP, Entropy: p.ent, Values: p.val,
		OldValues: p.oldVal, Advantages: p.adv, Returns: p.ret,
	}, LossGrad{LogProbs: p.dlp, Entropy: p.dent, Values: p.dval})
	m.Backward(p.dlp, p.dent, p.dval)
	return terms
}

// normalizeAdvantages sets a ← (a − mean)/(std + 1e-8) with the unbiased
// (n−1) standard deviation, as torch.Tensor.std in CleanRL; a single sample
// has std 0 and becomes 0.
func normalizeAdvantages(a []float64) {
	mean := 0.0
	for _, v := range a {
		mean += v
	}
	mean /= float64(len(a))
	ss := 0.0
	for _, v := range a {
		ss += (v - mean) * (v - mean)
	}
	std := 0.0
	if len(a) > 1 {
		std = math.Sqrt(ss / float64(len(a)-1))
	}
	for i, v := range a {
		a[i] = (v - mean) / (std + 1e-8)
	}
}

func (p *PPO) checkBatch(b *Batch) {
	d := p.Model.cfg.ObsDim
	if b.N <= 0 || len(b.Obs) != b.N*d {
		panic(fmt.Sprintf("kernels: PPO.Update: batch has N=%d and %d obs values, want N > 0 and N*ObsDim = %d",
			b.N, len(b.Obs), b.N*d))
	}
	checkN("PPO.Update batch", b.N, len(b.Actions), len(b.LogProbs), len(b.Advantages), len(b.Returns), len(b.Values))
	for i, a := range b.Actions {
		if a < 0 || a >= p.Model.cfg.NumActions {
			panic(fmt.Sprintf("kernels: PPO.Update: action %d at sample %d out of range [0, %d)", a, i, p.Model.cfg.NumActions))
		}
	}
}

func growInts(buf []int, n int) []int {
	if cap(buf) < n {
		return make([]int, n)
	}
	return buf[:n]
}
