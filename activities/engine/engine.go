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

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv"
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
	cfg        Config
	obsDim     int
	numActions int

	slots  []*envSlot
	svc    *InferenceService
	svcSrc *rand.PCG
	replay *ReplayBuffer
	tr     *trainer
	ro     *rollout

	envSteps atomic.Int64
	running  atomic.Bool
}

// envMaker builds the raw (not yet latency-wrapped) environment with the
// given global index.
type envMaker func(index int) (Env, error)

// New builds an engine from cfg. With snap == nil it starts fresh from
// cfg.Seed; otherwise it continues exactly where the engine that produced
// snap stopped (snap must come from the same configuration).
func New(cfg Config, snap *Snapshot) (*Engine, error) {
	return newEngine(cfg, snap, func(int) (Env, error) {
		return testenv.Make(cfg.Env, testenv.Options{MaxEpisodeSteps: cfg.MaxEpisodeSteps})
	})
}

func newEngine(cfg Config, snap *Snapshot, makeEnv envMaker) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	cfg.Hidden = slices.Clone(cfg.Hidden)
	e := &Engine{cfg: cfg}
	n := cfg.NumEnvs()
	for i := range n {
		raw, err := makeEnv(i)
		if err != nil {
			return nil, fmt.Errorf("new engine: make env %d: %w", i, err)
		}
		w := i / cfg.EnvsPerWorker
		// Every environment draws its delays from its own stream, with
		// its worker's slowness: environments of one worker step
		// concurrently and a sampler is not safe for concurrent use.
		sampler := cfg.Latency.ForWorker(w, cfg.Workers, cfg.Seed^(0x9e3779b97f4a7c15*uint64(i+1)))
		src := rand.NewPCG(cfg.Seed, streamEnvBase+uint64(i))
		e.slots = append(e.slots, &envSlot{
			index: i, worker: w,
			env: testenv.WithLatency(raw, sampler, time.Sleep),
			src: src, rng: rand.New(src),
		})
	}
	e.obsDim = e.slots[0].env.ObsDim()
	e.numActions = e.slots[0].env.ActionSpace().N
	for _, s := range e.slots {
		if s.env.ObsDim() != e.obsDim || s.env.ActionSpace().N != e.numActions {
			return nil, fmt.Errorf("new engine: env %d has obs dim %d and %d actions, env 0 has %d and %d",
				s.index, s.env.ObsDim(), s.env.ActionSpace().N, e.obsDim, e.numActions)
		}
	}
	if e.numActions < 2 {
		return nil, fmt.Errorf("new engine: env %q needs a discrete action space with at least 2 actions", cfg.Env)
	}

	acCfg := kernels.ActorCriticConfig{ObsDim: e.obsDim, NumActions: e.numActions, Hidden: cfg.Hidden, Activation: cfg.Activation}
	model := kernels.NewActorCritic(acCfg, rand.New(rand.NewPCG(cfg.Seed, streamModelInit)))
	trSrc := rand.NewPCG(cfg.Seed, streamTrainer)
	e.tr = &trainer{cfg: cfg, ppo: kernels.NewPPO(model, cfg.PPO), src: trSrc, rng: rand.New(trSrc)}
	e.svcSrc = rand.NewPCG(cfg.Seed, streamInference)
	e.svc = NewInferenceService(InferenceConfig{
		ObsDim: e.obsDim, MaxBatch: cfg.MaxBatch, MaxWait: cfg.MaxWait, Lag: cfg.Lag,
		PerRequestRNG: cfg.Mode == ModeSync,
	}, model.Clone(), rand.New(e.svcSrc))
	e.replay = NewReplayBuffer(cfg.replayCapacity(), cfg.MaxStaleness)
	e.ro = &rollout{svc: e.svc, replay: e.replay, obsDim: e.obsDim, chunkSteps: cfg.chunkSteps(), envSteps: &e.envSteps}

	if snap != nil {
		if err := e.restore(snap); err != nil {
			return nil, fmt.Errorf("new engine: %w", err)
		}
		return e, nil
	}
	for _, s := range e.slots {
		s.obs = s.env.Reset(s.rng)
	}
	e.svc.Publish(0, model.Params())
	return e, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// PolicyVersion returns the version of the trainer's current parameters.
func (e *Engine) PolicyVersion() int64 { return e.tr.version }

// ParamsSHA256 returns the hex SHA-256 of the trainer's parameters, each
// float64 as 8 little-endian bytes of its IEEE-754 bits.
func (e *Engine) ParamsSHA256() string {
	h := sha256.New()
	var buf [8]byte
	for _, p := range e.tr.ppo.Model.Params() {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(p))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Run trains until `updates` more trainer updates are done or ctx is
// cancelled, then stops every goroutine it started and returns the
// segment's statistics. onUpdate is called from the trainer's goroutine
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
		wg.Go(func() { e.ro.runWorkers(runCtx, e.slots, e.cfg.Workers, -1, false) })
		err = e.trainAsync(runCtx, updates, seg, onUpdate)
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
func (e *Engine) trainAsync(ctx context.Context, updates int, seg *segment, onUpdate func(UpdateReport)) error {
	for range updates {
		chunks, err := e.replay.Take(ctx, e.cfg.BatchSteps)
		if err != nil {
			return err
		}
		if err := e.trainStep(chunks, seg, onUpdate); err != nil {
			return err
		}
	}
	return nil
}

// trainSync runs lock-step rounds: every environment collects RoundSteps
// steps (each in its own goroutine, acting with the same weights and its
// own RNG), then the trainer updates on exactly that data.
func (e *Engine) trainSync(ctx context.Context, updates int, seg *segment, onUpdate func(UpdateReport)) error {
	k := e.cfg.RoundSteps()
	for range updates {
		e.ro.runWorkers(ctx, e.slots, e.cfg.Workers, k, true)
		if err := ctx.Err(); err != nil {
			return err
		}
		chunks, err := e.replay.Take(ctx, k*len(e.slots))
		if err != nil {
			return err
		}
		if err := e.trainStep(chunks, seg, onUpdate); err != nil {
			return err
		}
	}
	return nil
}

// trainStep runs one update on chunks, publishes the new weights and
// reports.
func (e *Engine) trainStep(chunks []*Chunk, seg *segment, onUpdate func(UpdateReport)) error {
	t0 := time.Now()
	stats, info, err := e.tr.update(chunks)
	if err != nil {
		return err
	}
	e.svc.Publish(e.tr.version, e.tr.ppo.Model.Params())
	e.replay.SetVersion(e.tr.version)
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
		LR:            info.lr,
		Episodes:      eps,
		MeanStaleness: info.meanStale,
		StalenessHist: info.staleness,
		Wall:          wall,
		StepsPerS:     ratio(float64(steps-seg.startSteps), wall.Seconds()),
		MeanBatch:     win.MeanBatch(),
		P50WaitMs:     win.WaitQuantileMs(0.5),
		P99WaitMs:     win.WaitQuantileMs(0.99),
		TrainerBusy:   ratio(seg.busy.Seconds(), wall.Seconds()),
		RolloutIdle:   e.rolloutIdle(wall),
	})
	return nil
}

func (e *Engine) beginSegment() *segment {
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
		Wall:                  wall,
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
		DroppedStale: drops.StaleSteps - seg.startDrops.StaleSteps,
	}
	st.CeilingFraction = ratio(st.StepsPerS, ceiling)
	return st
}

// recoverInto reports a recovered panic of the named component to fail.
// It must be called directly by a deferred statement.
func recoverInto(fail func(error), what string) {
	if p := recover(); p != nil {
		fail(fmt.Errorf("%s panicked: %v", what, p))
	}
}
