package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/accerl/accerl/kernels"
)

// trainer turns sampled chunks into one learner update. It owns the
// learner (the policy's parameters, the optimiser and the update counter
// that indexes the learning-rate schedule) and the minibatch-shuffle RNG.
type trainer struct {
	cfg     Config
	learner *kernels.PolicyLearner
	src     *rand.PCG
	rng     *rand.Rand
	batch   kernels.Batch
	stats   kernels.AdvStats // AdvNormGlobal: the (single) shard's statistics

	version int64 // policy version of the current parameters
	updates int64 // run-wide updates done

	// wm is the world model's side of training (nil without one).
	wm *wmEngine

	boot     kernels.BootstrapScratch // V(NextObs) of bootstrapped chunks
	episodes []kernels.EpisodePiece   // AdvGRPO: the batch's pieces as parts of episodes
	// AdvGRPO: the rewards GRPO sums into each episode's outcome, the batch's rewards
	// except on imagined chunks (see fill).
	outcomes []float64
	// AdvGRPO: whether each of episodes is an imagined rollout (Chunk.Env < 0), and
	// whether M_rew judged it a success (Chunk.Success).
	imagined, imaginedOK []bool
	// AdvGRPO: the batch's ended episodes and those whose advantage moves the policy, and
	// the same counts of its ended imagined rollouts, with those M_rew judged successes.
	grpoEpisodes, grpoMoved                         int
	grpoImagined, grpoImaginedMoved, grpoImaginedOK int
	undo                                            undoState
}

// undoState is what an update changes: the trainer puts it back when the
// update fails, so a failed update leaves no trace (the learner itself only
// undoes its last minibatch step).
type undoState struct {
	params, m, v []float64
	t            int
	lr           float64
}

func newTrainer(cfg Config, model kernels.Network, src *rand.PCG) *trainer {
	return &trainer{cfg: cfg, learner: kernels.NewPolicyLearner(model, cfg.Learner), src: src, rng: rand.New(src)}
}

// model returns the policy being trained.
func (t *trainer) model() kernels.Network { return t.learner.Model }

// batchInfo summarises the data an update consumed.
type batchInfo struct {
	steps     int
	staleness []int // staleness histogram of the batch's steps
	meanStale float64
}

// update sorts chunks by (Env, Seq) so that the batch does not depend on
// the order in which concurrent workers finished them, builds the learner's
// batch (one Piece per chunk), computes advantages and returns by GAE per
// chunk unless the loss is v-trace (which computes its own targets), and
// runs one learner update. It does not publish the new weights; the caller
// does. On failure the parameters, the optimiser and the counters are as
// before the call.
func (t *trainer) update(chunks []*Chunk) (kernels.UpdateStats, batchInfo, error) {
	slices.SortFunc(chunks, byEnvSeq)
	num := t.updates + 1 // run-wide number of this update
	info := t.fill(chunks)
	b := &t.batch
	for i, r := range b.Rewards {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return kernels.UpdateStats{}, info, fmt.Errorf("update %d: reward of sample %d is %v", num, i, r)
		}
	}
	vtrace := t.cfg.Learner.Algo == kernels.AlgoVTrace
	if !vtrace {
		t.advantages()
		for i, a := range b.Advantages {
			if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b.Returns[i]) || math.IsInf(b.Returns[i], 0) {
				return kernels.UpdateStats{}, info, fmt.Errorf("update %d: advantage or return of sample %d is not finite", num, i)
			}
		}
	}
	injected := t.cfg.InjectNaNAtUpdate == num
	if injected {
		// Test hook: poison one input the learner itself turns into
		// advantages, so that its non-finite check is what fails.
		if vtrace {
			b.Rewards[0] = math.NaN()
		} else {
			b.Advantages[0] = math.NaN()
		}
	}
	b.AdvStats = nil
	if t.cfg.Learner.AdvNorm == kernels.AdvNormGlobal && !vtrace {
		// One trainer is one shard: the merged statistics are this batch's
		// own. (V-trace advantages only exist inside the learner, which
		// then normalises with the batch's statistics, the same thing.)
		t.stats = kernels.AdvStats{}
		t.stats.Add(b.Advantages)
		b.AdvStats = &t.stats
	}

	l := t.learner
	l.Cfg = t.cfg.Learner
	if t.grpo() {
		// GRPO's advantages are normalised within their groups already.
		b.AdvStats, l.Cfg.AdvNorm = nil, kernels.AdvNormNone
	}
	valueOnly := t.valueOnly(num)
	l.Cfg.ValueOnly = valueOnly
	// A last batch after the step budget was spent may hold fewer steps
	// than minibatches; every other batch holds at least BatchSteps.
	l.Cfg.Minibatches = min(l.Cfg.Minibatches, b.N)
	t.save()
	stats, err := l.Update(b, t.rng)
	l.Cfg = t.cfg.Learner
	if err != nil {
		t.restore()
		if injected {
			return stats, info, fmt.Errorf("update %d (NaN injected by InjectNaNAtUpdate): %w", num, err)
		}
		return stats, info, fmt.Errorf("update %d: %w", num, err)
	}
	if injected {
		// A NaN that does not fail the update would be a learner bug; do
		// not let it pass silently.
		t.restore()
		return stats, info, fmt.Errorf("update %d: NaN injected by InjectNaNAtUpdate did not fail the update", num)
	}
	stats.ValueOnly = valueOnly
	if t.grpo() {
		stats.GRPOEpisodes, stats.GRPOMoved = t.grpoEpisodes, t.grpoMoved
		stats.GRPOImagined, stats.GRPOImaginedMoved, stats.GRPOImaginedSuccess = t.grpoImagined, t.grpoImaginedMoved, t.grpoImaginedOK
	}
	t.updates++
	t.version++
	return stats, info, nil
}

// valueOnly says whether update num (run-wide, from 1) of the filled batch
// trains the value alone: during the critic warm-up, and with SkipRewardless
// on a batch without a single non-zero reward.
func (t *trainer) valueOnly(num int64) bool {
	if num <= t.cfg.CriticWarmup {
		return true
	}
	return t.cfg.SkipRewardless && !slices.ContainsFunc(t.batch.Rewards, func(r float64) bool { return r != 0 })
}

// fill builds t.batch from the sorted chunks (everything but advantages and
// returns) and the staleness summary.
func (t *trainer) fill(chunks []*Chunk) batchInfo {
	d := t.model().Config().ObsDim
	b := &t.batch
	b.N = 0
	b.Obs, b.Actions, b.ContActions = b.Obs[:0], b.Actions[:0], b.ContActions[:0]
	b.LogProbs, b.Values, b.Rewards = b.LogProbs[:0], b.Values[:0], b.Rewards[:0]
	b.Pieces = b.Pieces[:0]
	_, frames := t.model().(kernels.FrameNetwork)
	b.Frames = b.Frames[:0]
	if !frames {
		b.Frames = nil
	}
	b.Temperatures = b.Temperatures[:0]
	tempered := slices.ContainsFunc(chunks, func(c *Chunk) bool { return c.Temperature > 0 })
	if !tempered {
		b.Temperatures = nil
	}
	var info batchInfo
	var staleSum, staleN int64
	t.episodes, t.outcomes, t.imagined, t.imaginedOK = t.episodes[:0], t.outcomes[:0], t.imagined[:0], t.imaginedOK[:0]
	for i, c := range chunks {
		if t.grpo() {
			ep := kernels.EpisodePiece{Start: b.N, Len: c.Len(), Ends: c.Terminated || c.Truncated}
			if i > 0 {
				prev := chunks[i-1]
				ep.Continues = prev.Env == c.Env && prev.Seq+1 == c.Seq && !prev.Terminated && !prev.Truncated
			}
			switch {
			case c.Env < 0:
				// An imagined rollout (the pixel world model's groups, PixelWMSettings.Group):
				// judged against the other rollouts of its start by M_rew's success on its
				// last frame, 1 or 0 as a real episode's sparse success reward sums to; the
				// imagined rewards (p_success increments) still train the critic. Graded
				// (PixelWMSettings.Graded): by those increments' sum, M_rew's p_success on
				// the last frame less the start's, with mean-centred advantages.
				ep.Group = "imagined" + string(binary.LittleEndian.AppendUint64(nil, c.Start))
				ep.Centred = t.cfg.PixelWM.Graded
			case t.cfg.RepeatStarts > 1:
				ep.Group = string(binary.LittleEndian.AppendUint64(nil, c.Start)) // its start's plays
			case !ep.Continues:
				ep.Group = t.taskKey(c.Obs[:d]) // an episode's group is its first piece's
			}
			t.episodes, t.imagined = append(t.episodes, ep), append(t.imagined, c.Env < 0)
			t.imaginedOK = append(t.imaginedOK, c.Env < 0 && c.Success)
			n := len(t.outcomes)
			t.outcomes = append(t.outcomes, c.Rewards...)
			if c.Env < 0 && !t.cfg.PixelWM.Graded {
				clear(t.outcomes[n:])
				if c.Success {
					t.outcomes[len(t.outcomes)-1] = 1
				}
			}
		}
		if !c.Terminated && len(c.NextObs) != d {
			panic(fmt.Sprintf("engine: trainer: chunk (%d, %d) is not terminated but has %d next-observation values", c.Env, c.Seq, len(c.NextObs)))
		}
		b.Pieces = append(b.Pieces, kernels.Piece{Start: b.N, Len: c.Len(), Terminal: c.Terminated, NextObs: c.NextObs, NextFrame: c.NextFrame})
		if frames {
			fb := len(c.Frames) / c.Len()
			for i := range c.Len() {
				b.Frames = append(b.Frames, c.Frames[i*fb:(i+1)*fb])
			}
		}
		if tempered {
			for range c.Len() {
				b.Temperatures = append(b.Temperatures, c.Temperature)
			}
		}
		b.N += c.Len()
		b.Obs = append(b.Obs, c.Obs...)
		b.Actions = append(b.Actions, c.Actions...)
		b.ContActions = append(b.ContActions, c.ContActions...)
		b.LogProbs = append(b.LogProbs, c.LogProbs...)
		b.Values = append(b.Values, c.Values...)
		b.Rewards = append(b.Rewards, c.Rewards...)
		for _, s := range c.Staleness {
			for int(s) >= len(info.staleness) {
				info.staleness = append(info.staleness, 0)
			}
			info.staleness[s]++
			staleSum += s
			staleN++
		}
	}
	info.steps = b.N
	if staleN > 0 {
		// Imagined chunks carry no staleness (they come from the current
		// policy); the mean covers the real steps.
		info.meanStale = float64(staleSum) / float64(staleN)
	}
	return info
}

// advantages fills the batch's advantages and returns by GAE per piece,
// bootstrapping cut and truncated pieces with V(NextObs) under the current
// critic and terminated ones with 0. With RecomputeValues the values V(o_t)
// are recomputed with the current critic too (kernels.RecomputeGAE);
// otherwise the acting policy's values are used. With AdvGRPO the advantages
// are then replaced by the episodes' group-relative outcomes.
func (t *trainer) advantages() {
	b, m := &t.batch, t.model()
	gamma, lambda := t.cfg.Learner.Gamma, t.cfg.GAELambda
	b.Advantages = grow(b.Advantages, b.N)
	b.Returns = grow(b.Returns, b.N)
	if t.cfg.RecomputeValues {
		kernels.RecomputeGAE(m, b, gamma, lambda)
	} else {
		boot := t.boot.BootstrapValues(m, b)
		for j, p := range b.Pieces {
			r, e := p.Start, p.Start+p.Len
			kernels.GAE(b.Rewards[r:e], b.Values[r:e], boot[j], gamma, lambda, b.Advantages[r:e], b.Returns[r:e])
		}
	}
	if t.grpo() {
		// The critic keeps GAE's returns as its targets; the policy gets the outcomes.
		t.grpoEpisodes, _ = kernels.GroupAdvantages(t.outcomes, t.episodes, b.Advantages)
		t.grpoMoved, t.grpoImagined, t.grpoImaginedMoved, t.grpoImaginedOK = 0, 0, 0, 0
		for i, ep := range t.episodes {
			// An episode's advantage is one value on all its steps; count it at its first piece.
			a := b.Advantages[ep.Start]
			moved := !ep.Continues && (a > 0 || a < 0 && !t.cfg.Learner.PositiveAdvantages)
			if moved {
				t.grpoMoved++
			}
			if t.imagined[i] && ep.Ends {
				// An imagined rollout is one piece; its outcome is on its last step.
				t.grpoImagined++
				if moved {
					t.grpoImaginedMoved++
				}
				if t.imaginedOK[i] {
					t.grpoImaginedOK++
				}
			}
		}
	}
}

// grpo says whether the policy's advantages are GRPO's (Config.AdvEstimator).
func (t *trainer) grpo() bool { return t.cfg.AdvEstimator == AdvGRPO }

// taskKey is the group of an episode whose first observation in the batch is obs: the
// values of Config.TaskObs, as their bits.
func (t *trainer) taskKey(obs []float64) string {
	from, to := t.cfg.TaskObs[0], t.cfg.TaskObs[1]
	key := make([]byte, 0, 8*(to-from))
	for _, v := range obs[from:to] {
		key = binary.LittleEndian.AppendUint64(key, math.Float64bits(v))
	}
	return string(key)
}

// save records the state an update changes.
func (t *trainer) save() {
	l := t.learner
	u := &t.undo
	u.params = append(u.params[:0], l.Model.Params()...)
	u.m = append(u.m[:0], l.Opt.M...)
	u.v = append(u.v[:0], l.Opt.V...)
	u.t, u.lr = l.Opt.T, l.Opt.LR
}

// restore puts back what save recorded.
func (t *trainer) restore() {
	l := t.learner
	u := &t.undo
	l.Model.SetParams(u.params)
	copy(l.Opt.M, u.m)
	copy(l.Opt.V, u.v)
	l.Opt.T, l.Opt.LR = u.t, u.lr
	l.Updates = int(t.updates)
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
