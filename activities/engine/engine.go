package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/vla"
)

// RNG stream numbers under Config.Seed (rand.NewPCG(Seed, stream)).
const (
	streamModelInit = 1
	streamTrainer   = 2
	streamInference = 3
	streamEnvBase   = 1 << 20 // + global environment index
)

// Engine is the data plane of one training run: rollout workers, the
// inference service, the replay buffer and the trainer. Create it with New,
// train with Run (repeatedly, one call per segment) and capture it with
// Snapshot between runs. Its methods must not be called concurrently with
// Run, except that Run's onUpdate callback may read the UpdateReport.
type Engine struct {
	cfg    Config
	obsDim int
	// frameBytes is the length of the environments' frames (FrameEnv), 0 without frames.
	frameBytes int
	space      ActionSpace // of every environment
	shape      ActionShape

	slots  []*envSlot
	svc    *InferenceService
	svcSrc *rand.PCG
	replay *ReplayBuffer
	tr     *trainer
	ro     *rollout
	pix    *pixelImaginer // imagined training over pixels (Config.PixelWM), else nil

	envSteps atomic.Int64
	running  atomic.Bool

	makeEnv EnvFactory // also builds Evaluate's environment
}

// New builds an engine from cfg, stepping the environments makeEnv makes. With snap == nil
// it starts fresh from cfg.Seed; otherwise it continues exactly where the engine that
// produced snap stopped (snap must come from the same configuration and environments).
func New(cfg Config, snap *Snapshot, makeEnv EnvFactory) (_ *Engine, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	if makeEnv == nil {
		return nil, errors.New("new engine: no environment factory")
	}
	cfg.Policy.Hidden = slices.Clone(cfg.Policy.Hidden)
	e := &Engine{cfg: cfg, makeEnv: makeEnv}
	defer func() {
		if err != nil {
			e.Close() // the environments made so far
		}
	}()
	n := cfg.NumEnvs()
	for i := range n {
		env, err := makeEnv(i)
		if err != nil {
			return nil, fmt.Errorf("new engine: make env %d: %w", i, err)
		}
		src := rand.NewPCG(cfg.Seed, streamEnvBase+uint64(i))
		e.slots = append(e.slots, &envSlot{
			index: i, worker: i / cfg.EnvsPerWorker, env: env,
			src: src, rng: rand.New(src),
		})
	}
	e.obsDim = e.slots[0].env.ObsDim()
	e.space = e.slots[0].env.ActionSpace()
	if fe, ok := e.slots[0].env.(FrameEnv); ok {
		e.frameBytes = fe.FrameBytes()
	}
	for _, s := range e.slots {
		fe, ok := s.env.(FrameEnv)
		if (e.frameBytes > 0) != ok || (ok && fe.FrameBytes() != e.frameBytes) {
			return nil, fmt.Errorf("new engine: env %d and env 0 disagree on frames (env 0: %d bytes)", s.index, e.frameBytes)
		}
	}
	for _, s := range e.slots {
		if s.env.ObsDim() != e.obsDim || !sameSpace(s.env.ActionSpace(), e.space) {
			return nil, fmt.Errorf("new engine: env %d has obs dim %d and action space %+v, env 0 has %d and %+v",
				s.index, s.env.ObsDim(), s.env.ActionSpace(), e.obsDim, e.space)
		}
	}
	model, err := e.newNetwork()
	if err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	e.shape = ShapeOf(model)
	e.tr = newTrainer(cfg, model, rand.NewPCG(cfg.Seed, streamTrainer))
	if cfg.WorldModel.Enabled {
		set := cfg.WorldModel.withDefaults(cfg.BatchSteps)
		mc := set.modelConfig(e.obsDim, e.space.N, e.actionDims())
		wm, err := newWMEngine(set, mc, n, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("new engine: %w", err)
		}
		e.tr.wm = wm
	}
	if cfg.PixelWM.Enabled {
		e.pix = newPixelImaginer(cfg.PixelWM, cfg.Seed)
	}
	e.svcSrc = rand.NewPCG(cfg.Seed, streamInference)
	e.svc = NewInferenceService(InferenceConfig{
		ObsDim: e.obsDim, Action: e.shape, MaxBatch: cfg.MaxBatch, MaxWait: cfg.MaxWait.Std(), Lag: cfg.Lag,
		PerRequestRNG: cfg.Mode == ModeSync,
	}, model.CloneNetwork(), rand.New(e.svcSrc))
	e.replay = NewReplayBuffer(cfg.replayCapacity(), cfg.MaxStaleness)
	e.ro = &rollout{svc: e.svc, replay: e.replay, obsDim: e.obsDim, frameBytes: e.frameBytes, shape: e.shape, chunkSteps: cfg.chunkSteps(),
		envSteps: &e.envSteps, budget: cfg.MaxEnvSteps, repeatStarts: cfg.RepeatStarts}

	if snap != nil {
		if err := e.restore(snap); err != nil {
			return nil, fmt.Errorf("new engine: %w", err)
		}
		return e, nil
	}
	for _, s := range e.slots {
		e.ro.reset(s)
	}
	e.svc.Publish(0, model.Params())
	return e, nil
}

// newNetwork builds the policy network for the environments, freshly
// initialised from the seed: the micro-VLA with Policy.VLA, else the MLP.
func (e *Engine) newNetwork() (kernels.Network, error) {
	rng := rand.New(rand.NewPCG(e.cfg.Seed, streamModelInit))
	if e.cfg.Policy.VLA != nil {
		vc, err := e.cfg.vlaConfig(e.obsDim, e.frameBytes, e.space)
		if err != nil {
			return nil, err
		}
		return vla.NewPolicy(vc, rng), nil
	}
	pc, err := e.cfg.policyConfig(e.obsDim, e.space)
	if err != nil {
		return nil, err
	}
	return kernels.NewPolicy(pc, rng), nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Close closes the engine's environments that hold resources (see [Env]). Call it when done
// with the engine, never during Run.
func (e *Engine) Close() error {
	var errs []error
	for _, s := range e.slots {
		errs = append(errs, CloseEnv(s.env))
	}
	return errors.Join(errs...)
}

// PolicyVersion returns the version of the trainer's current parameters.
func (e *Engine) PolicyVersion() int64 { return e.tr.version }

// ParamsSHA256 returns the hex SHA-256 of the trainer's parameters, each
// float64 as 8 little-endian bytes of its IEEE-754 bits.
func (e *Engine) ParamsSHA256() string {
	h := sha256.New()
	var buf [8]byte
	for _, p := range e.tr.model().Params() {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(p))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Run trains until `updates` more trainer updates are done, or the step
// budget (Config.MaxEnvSteps) is spent and everything collected has been
// trained on, or ctx is cancelled; then it stops every goroutine it started
// and returns the segment's statistics (BudgetReached tells the second case
// apart; the last update before it may use a smaller batch, whatever was
// left). onUpdate is called from the trainer's goroutine
// after each update; it may be nil, in which case finished episodes are not
// kept. A cancelled ctx yields the statistics so far and an error wrapping
// ctx.Err(); a failed update (non-finite numbers) yields the trainer's
// error. In sync mode a Run cancelled in the middle of a round leaves that
// round's data in the engine, so later runs are no longer bit-identical to
// an uninterrupted one; snapshots taken after completed runs are exact.
func (e *Engine) Run(ctx context.Context, updates int, onUpdate func(UpdateReport)) (SegmentStats, error) {
	if updates < 0 {
		return SegmentStats{}, fmt.Errorf("run engine: updates must not be negative, got %d", updates)
	}
	if !e.running.CompareAndSwap(false, true) {
		return SegmentStats{}, errors.New("run engine: already running")
	}
	defer e.running.Store(false)

	seg := e.beginSegment()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// A panic in a goroutine Run started (an environment rejecting an
	// action, a shape bug) would kill the process, out of reach of the
	// caller's recover: turn it into Run's error and stop the run instead.
	var (
		failOnce sync.Once
		failErr  error
	)
	e.ro.fail = func(err error) {
		failOnce.Do(func() { failErr = err })
		stop()
	}
	e.svc.discardQueued()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer recoverInto(e.ro.fail, "inference service")
		_ = e.svc.Run(runCtx)
	})

	var err error
	switch e.cfg.Mode {
	case ModeAsync:
		// collected is closed once the environments have stopped because
		// the budget is spent (and have pushed their partial chunks); it
		// stays nil, never closing, without a budget.
		var collected chan struct{}
		if e.ro.budget > 0 {
			collected = make(chan struct{})
		}
		wg.Go(func() {
			e.ro.runWorkers(runCtx, e.slots, e.cfg.Workers, nil, false)
			if collected != nil && e.ro.budgetSpent() {
				close(collected)
			}
		})
		err = e.trainAsync(runCtx, updates, collected, seg, onUpdate)
	case ModeSync:
		err = e.trainSync(runCtx, updates, seg, onUpdate)
	}
	stop()
	wg.Wait()
	stats := e.segmentStats(seg)
	if failErr != nil {
		return stats, fmt.Errorf("run engine: %w", failErr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return stats, fmt.Errorf("run engine: %w", ctx.Err())
		}
		return stats, fmt.Errorf("run engine: %w", err)
	}
	return stats, nil
}

// trainAsync is the macro-async trainer loop: take a batch's worth of the
// oldest chunks, update, publish; rollout workers keep going meanwhile.
// Once collected is closed (the budget is spent) it trains on whatever is
// left, however little, and returns when nothing is.
func (e *Engine) trainAsync(ctx context.Context, updates int, collected <-chan struct{}, seg *segment, onUpdate func(UpdateReport)) error {
	for range updates {
		img, quota := e.takeImagined()
		chunks, err := e.replay.TakeOrDrain(ctx, quota, collected)
		if err != nil {
			return err
		}
		if len(chunks) == 0 {
			return nil // budget spent and everything trained on
		}
		if err := e.trainStep(chunks, img, seg, onUpdate); err != nil {
			return err
		}
	}
	return nil
}

// trainSync runs lock-step rounds: every environment collects its quota
// (RoundSteps, less in a last round cut short by the budget) in its own
// goroutine, acting with the same weights and its own RNG, then the trainer
// updates on exactly that data.
func (e *Engine) trainSync(ctx context.Context, updates int, seg *segment, onUpdate func(UpdateReport)) error {
	quota := make([]int, len(e.slots))
	for range updates {
		total := e.roundQuota(quota)
		if total == 0 {
			return nil // budget spent
		}
		e.ro.runWorkers(ctx, e.slots, e.cfg.Workers, quota, true)
		if err := ctx.Err(); err != nil {
			return err
		}
		chunks, err := e.replay.Take(ctx, total)
		if err != nil {
			return err
		}
		img, _ := e.takeImagined()
		if e.pix != nil {
			// M_obs is validated on this round's real steps, then fitted on them when due, and
			// imagines chunks from them with the policy that collected them.
			if err := e.pix.online(e.tr.model(), chunks, e.shape, e.frameBytes, e.tr.updates+1); err != nil {
				return fmt.Errorf("update %d: %w", e.tr.updates+1, err)
			}
			if img, err = e.pix.imagine(ctx, e.tr.model(), chunks, e.shape, e.tr.version, imgQuota(e.pix.set.ImaginationRatio, e.cfg.BatchSteps), e.frameBytes); err != nil {
				return fmt.Errorf("update %d: %w", e.tr.updates+1, err)
			}
		}
		if err := e.trainStep(chunks, img, seg, onUpdate); err != nil {
			return err
		}
	}
	return nil
}

// roundQuota fills quota with the steps each environment collects in the
// next sync round and returns their sum: RoundSteps each, or, when less
// than a full round of budget remains, the remainder shared out in
// environment order (the first remainder-mod-envs environments take one
// step more). It depends only on the configuration and the run-wide step
// count, so resumed runs compute the same rounds.
func (e *Engine) roundQuota(quota []int) int {
	n, k := len(quota), e.cfg.RoundSteps()
	remaining := int64(k * n)
	if b := e.cfg.MaxEnvSteps; b > 0 {
		remaining = min(remaining, max(0, b-e.envSteps.Load()))
	}
	base, extra := int(remaining)/n, int(remaining)%n
	for i := range quota {
		quota[i] = base
		if i < extra {
			quota[i]++
		}
	}
	return int(remaining)
}

// takeImagined returns the imagined chunks of the next update and the
// real steps it needs: BatchSteps and nothing without a world model.
func (e *Engine) takeImagined() ([]*Chunk, int) {
	if e.tr.wm == nil {
		return nil, e.cfg.BatchSteps
	}
	return e.tr.wm.takeImagined(e.cfg.BatchSteps)
}

// trainStep runs one update on the real chunks and the imagined ones,
// publishes the new weights and reports. With a world model the real
// chunks first join B_real (after validating the model on them), the
// online fits due run, and after the update imagination refills B_img
// with the new policy.
func (e *Engine) trainStep(chunks, img []*Chunk, seg *segment, onUpdate func(UpdateReport)) error {
	t0 := time.Now()
	wm := e.tr.wm
	realSteps, imgSteps := 0, 0
	for _, c := range chunks {
		realSteps += c.Len()
	}
	for _, c := range img {
		imgSteps += c.Len()
	}
	wmVal := math.NaN()
	if wm != nil {
		// B_real's order (and its history windows) must not depend on the
		// order in which concurrent workers finished their chunks.
		slices.SortFunc(chunks, byEnvSeq)
		m := e.tr.model()
		wm.ingest(chunks, func(c *Chunk, out []float64) {
			m.EnvActions(kernels.Actions{Tokens: c.Actions, Continuous: c.ContActions}, c.Len(), out)
		})
		wmVal = wm.lastVal
		if err := wm.fit(e.tr.updates + 1); err != nil {
			return fmt.Errorf("update %d: %w", e.tr.updates+1, err)
		}
	}
	// Imagined chunks (either world model's) join the batch after B_real took the real ones.
	chunks = append(chunks, img...)
	stats, info, err := e.tr.update(chunks)
	if err != nil {
		return err
	}
	e.svc.Publish(e.tr.version, e.tr.model().Params())
	e.replay.SetVersion(e.tr.version)
	horizon := 0
	if e.pix != nil {
		horizon, wmVal = e.pix.set.Horizon, e.pix.lastVal
		if !math.IsNaN(wmVal) {
			seg.wmValSum += wmVal
			seg.wmValN++
		}
	}
	if wm != nil {
		wm.imagined += int64(imgSteps)
		horizon = wm.set.Horizon
		// Validate refuses a world model with a network other than the
		// state-vector Policy.
		if _, err := wm.imagine(e.tr.model().(*kernels.Policy), e.shape, e.tr.version, e.cfg.BatchSteps); err != nil {
			return fmt.Errorf("update %d: %w", e.tr.updates, err)
		}
		if !math.IsNaN(wmVal) {
			seg.wmValSum += wmVal
			seg.wmValN++
		}
	}
	seg.busy += time.Since(t0)
	addHist(&seg.stale, info.staleness)
	if onUpdate == nil {
		e.ro.takeEpisodes() // nobody reports them; do not let them pile up
		return nil
	}
	eps := e.ro.takeEpisodes()
	slices.SortFunc(eps, func(a, b Episode) int { return cmp.Or(cmp.Compare(a.EnvSteps, b.EnvSteps), cmp.Compare(a.Env, b.Env)) })
	win := e.svc.TakeWindow()
	wall := time.Since(seg.start)
	steps := e.envSteps.Load()
	onUpdate(UpdateReport{
		Update:        e.tr.updates,
		EnvSteps:      steps,
		PolicyVersion: e.tr.version,
		Stats:         stats,
		BatchSteps:    info.steps,
		LR:            stats.LR,
		Episodes:      eps,
		MeanStaleness: info.meanStale,
		StalenessHist: info.staleness,
		Wall:          jsondur.Duration(wall),
		StepsPerS:     ratio(float64(steps-seg.startSteps), wall.Seconds()),
		MeanBatch:     win.MeanBatch(),
		P50WaitMs:     win.WaitQuantileMs(0.5),
		P99WaitMs:     win.WaitQuantileMs(0.99),
		TrainerBusy:   ratio(seg.busy.Seconds(), wall.Seconds()),
		RolloutIdle:   e.rolloutIdle(wall),
		RealSteps:     realSteps,
		ImaginedSteps: imgSteps,
		Horizon:       horizon,
		WMValLoss:     wmVal,
	})
	return nil
}

func (e *Engine) beginSegment() *segment {
	e.ro.reserved.Store(e.envSteps.Load())
	e.svc.ResetStats()
	for _, s := range e.slots {
		s.simNanos.Store(0)
		s.steps.Store(0)
	}
	return &segment{
		start:         time.Now(),
		startSteps:    e.envSteps.Load(),
		startUpdates:  e.tr.updates,
		startEpisodes: e.episodes(),
		startDrops:    e.replay.Drops(),
	}
}

func (e *Engine) episodes() int64 {
	e.ro.mu.Lock()
	defer e.ro.mu.Unlock()
	return e.ro.episodes
}

// rolloutIdle is 1 − (simulator time summed over environments) /
// (environments × wall).
func (e *Engine) rolloutIdle(wall time.Duration) float64 {
	var sim int64
	for _, s := range e.slots {
		sim += s.simNanos.Load()
	}
	return 1 - ratio(float64(sim), float64(len(e.slots))*float64(wall))
}

func (e *Engine) segmentStats(seg *segment) SegmentStats {
	wall := time.Since(seg.start)
	inf := e.svc.SegmentStats()
	share := inf.ComputePerRequest().Seconds()
	var ceiling float64
	for _, s := range e.slots {
		if n := s.steps.Load(); n > 0 {
			ceiling += 1 / (float64(s.simNanos.Load())/1e9/float64(n) + share)
		}
	}
	drops := e.replay.Drops()
	steps := e.envSteps.Load()
	st := SegmentStats{
		Updates:               e.tr.updates,
		EnvSteps:              steps,
		Episodes:              e.episodes(),
		SegmentUpdates:        e.tr.updates - seg.startUpdates,
		SegmentEnvSteps:       steps - seg.startSteps,
		Wall:                  jsondur.Duration(wall),
		StepsPerS:             ratio(float64(steps-seg.startSteps), wall.Seconds()),
		CeilingStepsPerS:      ceiling,
		BatchSizeHist:         inf.SizeHist,
		MeanBatch:             inf.MeanBatch(),
		MeanWaitingAtBatch:    inf.MeanWaiting(),
		P50WaitMs:             inf.WaitQuantileMs(0.5),
		P99WaitMs:             inf.WaitQuantileMs(0.99),
		InferencePerRequestMs: share * 1e3,
		TrainerBusy:           ratio(seg.busy.Seconds(), wall.Seconds()),
		RolloutIdle:           e.rolloutIdle(wall),
		StalenessHist:         seg.stale,
		Dropped: drops.CapacitySteps + drops.StaleSteps -
			seg.startDrops.CapacitySteps - seg.startDrops.StaleSteps,
		DroppedStale:  drops.StaleSteps - seg.startDrops.StaleSteps,
		BudgetReached: e.budgetReached(),
	}
	if wm := e.tr.wm; wm != nil {
		st.Horizon = wm.set.Horizon
		st.ImaginedSteps = wm.imagined
		st.WMValUpdates = seg.wmValN
		if seg.wmValN > 0 {
			st.WMValLoss = seg.wmValSum / float64(seg.wmValN)
		}
	}
	if e.pix != nil {
		st.Horizon, st.ImaginedSteps = e.pix.set.Horizon, e.pix.imagined
		st.WMValUpdates = seg.wmValN
		if seg.wmValN > 0 {
			st.WMValLoss = seg.wmValSum / float64(seg.wmValN)
		}
	}
	st.CeilingFraction = ratio(st.StepsPerS, ceiling)
	return st
}

// budgetReached reports whether a finite step budget is spent and every
// collected step has been trained on (or dropped): nothing is left in
// replay or in a partial chunk.
func (e *Engine) budgetReached() bool {
	if e.cfg.MaxEnvSteps == 0 || e.envSteps.Load() < e.cfg.MaxEnvSteps {
		return false
	}
	if _, held := e.replay.Len(); held > 0 {
		return false
	}
	for _, s := range e.slots {
		if s.chunk != nil {
			return false
		}
	}
	return true
}

// sameSpace reports whether two action spaces are equal.
func sameSpace(a, b ActionSpace) bool {
	return a.N == b.N && slices.Equal(a.Low, b.Low) && slices.Equal(a.High, b.High)
}

// recoverInto reports a recovered panic of the named component to fail.
// It must be called directly by a deferred statement.
func recoverInto(fail func(error), what string) {
	if p := recover(); p != nil {
		fail(fmt.Errorf("%s panicked: %v", what, p))
	}
}

// LoadPolicy starts a fresh engine from the policy parameters params instead of its random
// initialisation: the warm start of a run whose policy was pretrained (behaviour cloning,
// activities' PretrainPolicy). The optimiser state stays fresh. It is refused once the engine
// has collected or trained anything, or was restored from a snapshot (which carries its own
// parameters), and when params does not fit the policy.
func (e *Engine) LoadPolicy(params []float64) error {
	if e.running.Load() {
		return errors.New("load policy: a run is active")
	}
	m := e.tr.model()
	if len(params) != m.NumParams() {
		return fmt.Errorf("load policy: %d parameters, the engine's policy has %d (a different network or environment?)", len(params), m.NumParams())
	}
	for i, v := range params {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("load policy: parameter %d is %v", i, v)
		}
	}
	if e.tr.version != 0 || e.envSteps.Load() != 0 {
		return errors.New("load policy: the engine has already collected or trained")
	}
	if err := e.svc.replaceInitial(params); err != nil {
		return fmt.Errorf("load policy: %w", err)
	}
	m.SetParams(params)
	return nil
}
