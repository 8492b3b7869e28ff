package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/accerl/accerl/kernels"
)

// InferenceConfig configures an InferenceService.
type InferenceConfig struct {
	// ObsDim is the length of every request's observation.
	ObsDim int
	// Action is the shape of one step's action; the zero value means one
	// categorical action index.
	Action ActionShape
	// MaxBatch is the most requests one batch holds; a batch runs as soon as
	// this many are queued. Larger values amortise compute over more
	// requests.
	MaxBatch int
	// MaxWait is how long the oldest queued request may wait before a partial
	// batch runs. Every environment's step cycle pays up to this much extra
	// latency, so it trades batch size against throughput.
	MaxWait time.Duration
	// Lag makes batches act with the weights of version max(0, v-Lag), where
	// v is the newest published version (artificial policy lag for
	// ablations; 0 = act with the newest weights).
	Lag int
	// PerRequestRNG samples every request's action with the request's own
	// RNG, so that results do not depend on how requests were grouped into
	// batches (sync mode determinism): in one call per batch for a
	// RowSampler, else one row at a time. Otherwise a batch is evaluated in
	// one call with the service's RNG.
	PerRequestRNG bool
	// Clock is the time source; nil means RealClock.
	Clock Clock
}

// Request is one environment's call for an action. A requester owns its
// Request; it must not touch it between Submit and the reply. Create one
// with InferenceService.NewRequest and reuse it for successive steps of the
// same environment. After Wait returns a reply, Tokens, Reals, LogProbs and
// EnvAction hold the chosen action until the next Submit.
type Request struct {
	// Obs is the observation (ObsDim values).
	Obs []float64
	// Frame is the observation's frame (FrameEnv), nil without frames. The service reads
	// it only while the requester waits for the reply, so the requester may hand over its
	// own buffer without copying.
	Frame []byte
	// RNG samples this request's action when the service runs with
	// PerRequestRNG; it is used by the service goroutine only while the
	// requester waits.
	RNG *rand.Rand
	// Tokens, Reals and LogProbs are the sampled action as the policy's
	// head represents it (ActionShape.Tokens ints, ActionShape.Reals floats)
	// and its per-token log-probabilities under the acting weights.
	Tokens   []int
	Reals    []float64
	LogProbs []float64
	// EnvAction is the action to pass to the environment.
	EnvAction []float64

	arrived time.Time
	reply   chan Reply
}

// NewRequest returns a request with buffers sized for the service's
// observations and actions.
func (s *InferenceService) NewRequest() *Request { return newRequest(s.cfg.ObsDim, s.cfg.Action) }

func newRequest(obsDim int, a ActionShape) *Request {
	return &Request{
		Obs: make([]float64, obsDim), Tokens: make([]int, a.Tokens), Reals: make([]float64, a.Reals),
		LogProbs: make([]float64, a.LogProbs), EnvAction: make([]float64, a.Env),
		reply: make(chan Reply, 1),
	}
}

// Reply is the service's answer to one request; the action itself is in
// the Request's buffers.
type Reply struct {
	// Value is the critic's V(Obs) under the acting weights.
	Value float64
	// Version is the policy version of the acting weights.
	Version int64
	// Wait is the time the request spent queued before its batch started.
	Wait time.Duration
}

// Wait blocks until the service replies to r or ctx is done.
func (r *Request) Wait(ctx context.Context) (Reply, error) {
	select {
	case rep := <-r.reply:
		return rep, nil
	case <-ctx.Done():
		return Reply{}, fmt.Errorf("wait for action: %w", ctx.Err())
	}
}

// BatchRecord describes one batch the service ran.
type BatchRecord struct {
	// Start is the clock time at which the batch was formed.
	Start time.Time
	// Size is the number of requests in the batch.
	Size int
	// Waiting is the number of requests queued when the batch was formed
	// (Size plus those left for the next batch).
	Waiting int
	// Waits holds each batched request's queue wait, in queue order.
	Waits []time.Duration
	// Compute is the time spent evaluating the policy.
	Compute time.Duration
	// Version is the policy version the batch acted with.
	Version int64
}

// InferenceStats aggregates BatchRecords.
type InferenceStats struct {
	// Batches and Requests count batches run and requests answered.
	Batches, Requests int64
	// WaitingSum is the sum over batches of BatchRecord.Waiting.
	WaitingSum int64
	// SizeHist[k] counts batches of size k (length MaxBatch+1).
	SizeHist []int
	// Compute is the total compute time.
	Compute time.Duration

	waits durationHist
}

func newInferenceStats(maxBatch int) InferenceStats {
	return InferenceStats{SizeHist: make([]int, maxBatch+1)}
}

func (s *InferenceStats) add(b *BatchRecord) {
	s.Batches++
	s.Requests += int64(b.Size)
	s.WaitingSum += int64(b.Waiting)
	s.SizeHist[b.Size]++
	s.Compute += b.Compute
	for _, w := range b.Waits {
		s.waits.add(w)
	}
}

// MeanBatch is the mean batch size (0 before the first batch).
func (s *InferenceStats) MeanBatch() float64 {
	if s.Batches == 0 {
		return 0
	}
	return float64(s.Requests) / float64(s.Batches)
}

// MeanWaiting is the mean number of requests queued when a batch was formed.
func (s *InferenceStats) MeanWaiting() float64 {
	if s.Batches == 0 {
		return 0
	}
	return float64(s.WaitingSum) / float64(s.Batches)
}

// WaitQuantileMs returns the q-quantile of queue waits in milliseconds (2.2%
// bucket resolution, see durationHist).
func (s *InferenceStats) WaitQuantileMs(q float64) float64 { return s.waits.quantileMs(q) }

// ComputePerRequest is the mean compute time per answered request.
func (s *InferenceStats) ComputePerRequest() time.Duration {
	if s.Requests == 0 {
		return 0
	}
	return s.Compute / time.Duration(s.Requests)
}

type versionedParams struct {
	version int64
	params  []float64
}

// InferenceService batches action requests from many environments and runs
// them through one policy replica. A batch runs when MaxBatch requests are
// queued or when the oldest queued request has waited MaxWait, whichever
// comes first (or earlier when every registered requester is waiting, see
// AddRequesters); every request is answered exactly once. New weights arrive
// through Publish and are swapped in between batches, never during one.
type InferenceService struct {
	cfg    InferenceConfig
	clock  Clock
	policy Policy
	rng    *rand.Rand
	in     chan *Request
	live   atomic.Int64  // registered requesters, see AddRequesters
	wake   chan struct{} // nudges Run when live drops

	mu       sync.Mutex
	history  []versionedParams // published weights, oldest first, newest last
	segment  InferenceStats
	window   InferenceStats
	onBatch  func(BatchRecord)
	loaded   int64 // version currently loaded into policy, -1 = none
	obsBuf   []float64
	frames   [][]byte     // the batch's frames, for a FrameReader policy
	rngs     []*rand.Rand // the batch's request generators, for a RowSampler
	tokBuf   []int
	realBuf  []float64
	logpBuf  []float64
	envBuf   []float64
	valueBuf []float64
}

// NewInferenceService returns a service that evaluates policy (which it then
// owns) and samples actions with rng unless cfg.PerRequestRNG is set. It
// panics on a non-positive ObsDim or MaxBatch, a negative MaxWait or Lag, or
// an action shape without log-probabilities, environment action or action
// values.
func NewInferenceService(cfg InferenceConfig, policy Policy, rng *rand.Rand) *InferenceService {
	if cfg.Action == (ActionShape{}) {
		cfg.Action = categoricalShape
	}
	a := cfg.Action
	if cfg.ObsDim <= 0 || cfg.MaxBatch <= 0 || cfg.MaxWait < 0 || cfg.Lag < 0 ||
		a.Tokens < 0 || a.Reals < 0 || a.Tokens+a.Reals < 1 || a.LogProbs < 1 || a.Env < 1 {
		panic(fmt.Sprintf("engine: NewInferenceService: bad config %+v", cfg))
	}
	clock := cfg.Clock
	if clock == nil {
		clock = RealClock{}
	}
	return &InferenceService{
		cfg:      cfg,
		clock:    clock,
		policy:   policy,
		rng:      rng,
		in:       make(chan *Request, 4*cfg.MaxBatch),
		wake:     make(chan struct{}, 1),
		segment:  newInferenceStats(cfg.MaxBatch),
		window:   newInferenceStats(cfg.MaxBatch),
		loaded:   -1,
		obsBuf:   make([]float64, cfg.MaxBatch*cfg.ObsDim),
		tokBuf:   make([]int, cfg.MaxBatch*a.Tokens),
		realBuf:  make([]float64, cfg.MaxBatch*a.Reals),
		logpBuf:  make([]float64, cfg.MaxBatch*a.LogProbs),
		envBuf:   make([]float64, cfg.MaxBatch*a.Env),
		valueBuf: make([]float64, cfg.MaxBatch),
	}
}

// OnBatch registers f to be called (from the service goroutine, after the
// replies were sent) with every batch's record. Set it before Run.
func (s *InferenceService) OnBatch(f func(BatchRecord)) {
	s.mu.Lock()
	s.onBatch = f
	s.mu.Unlock()
}

// Publish makes params (copied) available as policy version version. Batches
// that start after Publish returns act with version max(0, version-Lag), or
// with the oldest published version above that if that exact version was
// never published. Versions must be published in increasing order.
func (s *InferenceService) Publish(version int64, params []float64) {
	p := append([]float64(nil), params...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.history); n > 0 && s.history[n-1].version >= version {
		panic(fmt.Sprintf("engine: Publish: version %d after %d", version, s.history[n-1].version))
	}
	s.history = append(s.history, versionedParams{version, p})
	// Keep only what a batch may still need: versions >= newest-Lag.
	keepFrom := 0
	for keepFrom < len(s.history)-1 && s.history[keepFrom].version < version-int64(s.cfg.Lag) {
		keepFrom++
	}
	s.history = append(s.history[:0], s.history[keepFrom:]...)
}

// published returns copies of the retained weight history, oldest first.
func (s *InferenceService) published() []versionedParams {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]versionedParams, len(s.history))
	for i, h := range s.history {
		out[i] = versionedParams{h.version, append([]float64(nil), h.params...)}
	}
	return out
}

// actingWeights picks the weights a batch starting now acts with.
func (s *InferenceService) actingWeights() (versionedParams, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.history)
	if n == 0 {
		return versionedParams{}, false
	}
	target := s.history[n-1].version - int64(s.cfg.Lag)
	if target < 0 {
		target = 0
	}
	// The oldest retained version >= target, else the newest.
	for _, h := range s.history {
		if h.version >= target {
			return h, true
		}
	}
	return s.history[n-1], true
}

// AddRequesters registers delta requesters that will keep submitting (a
// negative delta unregisters them). While at least one is registered, a
// batch also runs as soon as every registered requester has a request
// queued: waiting longer could not grow it. This never delays a batch; with
// no registrations the rule is exactly MaxBatch-or-MaxWait.
func (s *InferenceService) AddRequesters(delta int) {
	if s.live.Add(int64(delta)) < 0 {
		panic("engine: AddRequesters: more requesters left than joined")
	}
	if delta < 0 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Submit stamps r with the current time and queues it. It fails only when
// ctx is done before the request could be queued.
func (s *InferenceService) Submit(ctx context.Context, r *Request) error {
	a := s.cfg.Action
	if len(r.Obs) != s.cfg.ObsDim {
		panic(fmt.Sprintf("engine: Submit: observation has %d values, want %d", len(r.Obs), s.cfg.ObsDim))
	}
	if len(r.Tokens) != a.Tokens || len(r.Reals) != a.Reals || len(r.LogProbs) != a.LogProbs || len(r.EnvAction) != a.Env {
		panic(fmt.Sprintf("engine: Submit: request buffers (%d tokens, %d reals, %d log-probs, %d env values) do not fit action shape %+v; use NewRequest",
			len(r.Tokens), len(r.Reals), len(r.LogProbs), len(r.EnvAction), a))
	}
	if s.cfg.PerRequestRNG && r.RNG == nil {
		panic("engine: Submit: PerRequestRNG service needs Request.RNG")
	}
	// Drop a reply left over from a submission whose requester gave up.
	select {
	case <-r.reply:
	default:
	}
	r.arrived = s.clock.Now()
	select {
	case s.in <- r:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("submit inference request: %w", ctx.Err())
	}
}

// Infer submits r and waits for its reply.
func (s *InferenceService) Infer(ctx context.Context, r *Request) (Reply, error) {
	if err := s.Submit(ctx, r); err != nil {
		return Reply{}, err
	}
	return r.Wait(ctx)
}

// TakeWindow returns the statistics gathered since the previous TakeWindow
// (or ResetStats) and starts a new window.
func (s *InferenceService) TakeWindow() InferenceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.window
	s.window = newInferenceStats(s.cfg.MaxBatch)
	return w
}

// SegmentStats returns a copy of the statistics gathered since ResetStats.
func (s *InferenceService) SegmentStats() InferenceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.segment
	c.SizeHist = append([]int(nil), s.segment.SizeHist...)
	return c
}

// ResetStats clears both the segment and the window statistics.
func (s *InferenceService) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segment = newInferenceStats(s.cfg.MaxBatch)
	s.window = newInferenceStats(s.cfg.MaxBatch)
}

// Run serves requests until ctx is done, then discards whatever is still
// queued (its requesters are expected to give up through their own ctx) and
// returns nil. Requests submitted before Run starts are served. Only one Run
// may be active at a time.
func (s *InferenceService) Run(ctx context.Context) error {
	var (
		queue    []*Request
		timer    Timer
		timerC   <-chan time.Time
		deadline time.Time
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer, timerC = nil, nil
		}
	}
	defer stopTimer()
	for {
		// Run every batch the rule allows right now.
		for len(queue) > 0 {
			queue = s.drain(queue)
			now := s.clock.Now()
			live := int(s.live.Load())
			full := len(queue) >= s.cfg.MaxBatch || (live > 0 && len(queue) >= live)
			if !full && now.Sub(queue[0].arrived) < s.cfg.MaxWait {
				break
			}
			n := min(len(queue), s.cfg.MaxBatch)
			s.runBatch(queue[:n], len(queue), now)
			queue = append(queue[:0], queue[n:]...)
		}
		// Sleep until a new request arrives or the oldest one's deadline.
		if len(queue) == 0 {
			stopTimer()
		} else if d := queue[0].arrived.Add(s.cfg.MaxWait); timer == nil || !d.Equal(deadline) {
			stopTimer()
			deadline = d
			timer = s.clock.NewTimer(d.Sub(s.clock.Now()))
			timerC = timer.C()
		}
		select {
		case <-ctx.Done():
			s.discardQueued()
			return nil
		case r := <-s.in:
			queue = append(queue, r)
		case <-s.wake:
		case <-timerC:
			timer, timerC = nil, nil
		}
	}
}

// drain moves every request already sitting in the channel onto the queue.
func (s *InferenceService) drain(queue []*Request) []*Request {
	for {
		select {
		case r := <-s.in:
			queue = append(queue, r)
		default:
			return queue
		}
	}
}

func (s *InferenceService) discardQueued() {
	for {
		select {
		case <-s.in:
		default:
			return
		}
	}
}

// actBatch runs one policy call over the whole batch (actRows fills the actions and
// log-probabilities it is given, and s.valueBuf), after passing the batch's frames to a
// FrameReader, and copies each row's results into its request.
func (s *InferenceService) actBatch(batch []*Request, actRows func(act kernels.Actions, logp []float64), fr FrameReader, reads bool) {
	n, a := len(batch), s.cfg.Action
	if reads {
		s.frames = s.frames[:0]
		for _, r := range batch {
			s.frames = append(s.frames, r.Frame)
		}
		fr.SetFrames(s.frames)
	}
	act := kernels.Actions{Tokens: s.tokBuf[:n*a.Tokens], Continuous: s.realBuf[:n*a.Reals]}
	actRows(act, s.logpBuf[:n*a.LogProbs])
	s.policy.EnvActions(act, n, s.envBuf[:n*a.Env])
	for i, r := range batch {
		copy(r.Tokens, s.tokBuf[i*a.Tokens:(i+1)*a.Tokens])
		copy(r.Reals, s.realBuf[i*a.Reals:(i+1)*a.Reals])
		copy(r.LogProbs, s.logpBuf[i*a.LogProbs:(i+1)*a.LogProbs])
		copy(r.EnvAction, s.envBuf[i*a.Env:(i+1)*a.Env])
	}
}

// runBatch evaluates batch with the acting weights and replies to each
// request exactly once.
func (s *InferenceService) runBatch(batch []*Request, waiting int, start time.Time) {
	w, ok := s.actingWeights()
	if ok && w.version != s.loaded {
		s.policy.SetParams(w.params)
		s.loaded = w.version
	}
	n, d := len(batch), s.cfg.ObsDim
	rec := BatchRecord{Start: start, Size: n, Waiting: waiting, Waits: make([]time.Duration, n), Version: w.version}
	for i, r := range batch {
		rec.Waits[i] = start.Sub(r.arrived)
		copy(s.obsBuf[i*d:(i+1)*d], r.Obs)
	}
	t0 := s.clock.Now()
	fr, reads := s.policy.(FrameReader)
	rows, byRow := s.policy.(RowSampler)
	if s.cfg.PerRequestRNG && byRow {
		s.rngs = s.rngs[:0]
		for _, r := range batch {
			s.rngs = append(s.rngs, r.RNG)
		}
		s.actBatch(batch, func(act kernels.Actions, logp []float64) {
			rows.ActActionsRows(s.obsBuf[:n*d], n, s.rngs, act, logp, s.valueBuf[:n])
		}, fr, reads)
	} else if s.cfg.PerRequestRNG {
		for i, r := range batch {
			if reads {
				s.frames = append(s.frames[:0], r.Frame)
				fr.SetFrames(s.frames)
			}
			act := kernels.Actions{Tokens: r.Tokens, Continuous: r.Reals}
			s.policy.ActActions(s.obsBuf[i*d:(i+1)*d], 1, r.RNG, act, r.LogProbs, s.valueBuf[i:i+1])
			s.policy.EnvActions(act, 1, r.EnvAction)
		}
	} else {
		s.actBatch(batch, func(act kernels.Actions, logp []float64) {
			s.policy.ActActions(s.obsBuf[:n*d], n, s.rng, act, logp, s.valueBuf[:n])
		}, fr, reads)
	}
	rec.Compute = s.clock.Now().Sub(t0)
	for i, r := range batch {
		select {
		case r.reply <- Reply{Value: s.valueBuf[i], Version: w.version, Wait: rec.Waits[i]}:
		default:
			panic("engine: inference request submitted again before its reply was read")
		}
	}
	s.mu.Lock()
	s.segment.add(&rec)
	s.window.add(&rec)
	f := s.onBatch
	s.mu.Unlock()
	if f != nil {
		f(rec)
	}
}

// replaceInitial swaps the weights of version 0 for params (copied) while version 0 is the
// only one published (Engine.LoadPolicy's warm start).
func (s *InferenceService) replaceInitial(params []float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) != 1 || s.history[0].version != 0 {
		return errors.New("the inference service has published past version 0")
	}
	s.history[0].params = append([]float64(nil), params...)
	return nil
}
