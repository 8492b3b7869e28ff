package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Episode is one finished episode.
type Episode struct {
	// Env is the global index of the environment that played it.
	Env int `json:"env"`
	// Return is the undiscounted sum of rewards; Length the number of steps.
	Return float64 `json:"return"`
	Length int     `json:"length"`
	// EnvSteps is the run-wide environment step count when it ended. In
	// async mode it is approximate to within the steps other environments
	// took concurrently; in sync mode it counts the round's steps as if all
	// environments stepped in lockstep, so that it does not depend on
	// scheduling (the round's step j of every environment comes before
	// step j+1 of any).
	EnvSteps int64 `json:"env_steps"`
	// PolicyVersion is the version that chose the episode's last action.
	PolicyVersion int64 `json:"policy_version"`
	// Truncated says the episode hit the time limit instead of terminating.
	Truncated bool `json:"truncated"`
	// Success says the episode reached its task's goal; HasSuccess is false for tasks
	// without a notion of success (StepResult.HasSuccess), and Success is then false.
	Success    bool `json:"success,omitempty"`
	HasSuccess bool `json:"has_success,omitempty"`
}

// envSlot is one environment with everything that belongs to it: its RNG
// stream (resets and, in sync mode, action sampling), its current
// observation and episode accumulators, and its partial chunk. Only the
// goroutine stepping the slot touches it while a Run is active.
type envSlot struct {
	index, worker int
	env           Env
	src           *rand.PCG
	rng           *rand.Rand

	obs      []float64
	frame    []byte // the frame of obs (FrameEnv only)
	epReturn float64
	epLen    int
	seq      int64
	chunk    *Chunk

	// The current start (Config.RepeatStarts): startKey hashes the episode's first
	// observation; with repeats, start is the environment's state right after the start's
	// Reset, startObs that Reset's observation, and startLeft the plays still to come.
	startKey  uint64
	start     []byte
	startObs  []float64
	startLeft int

	// Per-segment measurements, read concurrently by reports.
	simNanos atomic.Int64 // time spent inside Step and Reset
	steps    atomic.Int64
}

// rollout is what the environment goroutines share.
type rollout struct {
	svc        *InferenceService
	replay     *ReplayBuffer
	obsDim     int
	frameBytes int // FrameEnv.FrameBytes, 0 without frames
	shape      ActionShape
	chunkSteps int
	envSteps   *atomic.Int64
	// repeatStarts is Config.RepeatStarts: each start is played this many times in a row.
	repeatStarts int
	fail         func(error) // reports a panic and stops the run; set by Run

	// budget is Config.MaxEnvSteps (0 = unlimited). In async mode every
	// environment reserves each step in reserved before asking for its
	// action and gives the reservation back if it stops first, so that the
	// environments together never take more than budget steps. Between
	// runs reserved equals envSteps.
	budget   int64
	reserved atomic.Int64

	mu       sync.Mutex
	finished []Episode // episodes not yet reported
	episodes int64     // run-wide finished episodes
}

// reserve claims one step of the budget; it reports false when the budget
// is spent.
func (r *rollout) reserve() bool {
	if r.budget == 0 {
		return true
	}
	for {
		n := r.reserved.Load()
		if n >= r.budget {
			return false
		}
		if r.reserved.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives back a reservation that was not stepped.
func (r *rollout) release() {
	if r.budget > 0 {
		r.reserved.Add(-1)
	}
}

// budgetSpent reports whether every step of a finite budget has been
// reserved.
func (r *rollout) budgetSpent() bool {
	return r.budget > 0 && r.reserved.Load() >= r.budget
}

func (r *rollout) addEpisode(ep Episode) {
	r.mu.Lock()
	r.finished = append(r.finished, ep)
	r.episodes++
	r.mu.Unlock()
}

// takeEpisodes returns and clears the episodes finished since the last call.
func (r *rollout) takeEpisodes() []Episode {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.finished
	r.finished = nil
	return out
}

// runWorkers runs every rollout worker (len(slots)/workers consecutive
// slots each) and returns when all have stopped. All environments are
// registered with the inference service before any starts, so that its
// "everyone is waiting" trigger never fires on a partial population. With
// quota == nil (async) every environment runs until ctx is done or the
// step budget is spent; otherwise slot i collects exactly quota[i] steps and
// then cuts its partial chunk (one sync round).
func (r *rollout) runWorkers(ctx context.Context, slots []*envSlot, workers int, quota []int, sampleWithEnvRNG bool) {
	r.svc.AddRequesters(len(slots))
	per := len(slots) / workers
	var lockstep func(j int) int64
	if quota != nil {
		start := r.envSteps.Load()
		lockstep = func(j int) int64 {
			n := start
			for _, q := range quota {
				n += int64(min(q, j+1))
			}
			return n
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var q []int
			if quota != nil {
				q = quota[w*per : (w+1)*per]
			}
			r.runWorker(ctx, slots[w*per:(w+1)*per], q, lockstep, sampleWithEnvRNG)
		})
	}
	wg.Wait()
}

// runWorker steps the environments of one rollout worker, each in its own
// goroutine, so that no environment ever waits for another one's slow
// simulator step; it returns when all of them have stopped.
func (r *rollout) runWorker(ctx context.Context, slots []*envSlot, quota []int, lockstep func(int) int64, sampleWithEnvRNG bool) {
	var wg sync.WaitGroup
	for i, s := range slots {
		steps := -1
		if quota != nil {
			steps = quota[i]
		}
		wg.Go(func() { r.runEnv(ctx, s, steps, lockstep, sampleWithEnvRNG) })
	}
	wg.Wait()
}

// runEnv is one environment's loop: ask inference for an action, wait only
// for that reply, step, record. With steps >= 0 it takes exactly that many
// steps and then cuts its partial chunk. With steps < 0 it reserves every
// step from the budget first; when the budget is spent it cuts its partial
// chunk and stops. It stops quietly when ctx is done; the slot then holds a
// consistent state (observation awaiting an action, partial chunk) for the
// next Run or a Snapshot. lockstep, if set, gives the run-wide step count
// that finished episodes report after the round's step j (see
// Episode.EnvSteps).
func (r *rollout) runEnv(ctx context.Context, s *envSlot, steps int, lockstep func(int) int64, sampleWithEnvRNG bool) {
	defer r.svc.AddRequesters(-1) // registered by runWorkers
	defer recoverInto(r.fail, fmt.Sprintf("env %d", s.index))
	req := r.svc.NewRequest()
	if sampleWithEnvRNG {
		req.RNG = s.rng
	}
	for i := 0; steps < 0 || i < steps; i++ {
		if steps < 0 && !r.reserve() {
			r.cut(s) // budget spent: everything collected goes to replay
			return
		}
		copy(req.Obs, s.obs)
		req.Frame = s.frame // read by the service only while this goroutine waits
		rep, err := r.svc.Infer(ctx, req)
		if err != nil {
			if steps < 0 {
				r.release()
			}
			return
		}
		t0 := time.Now()
		sr := s.env.Step(req.EnvAction)
		next, reward, terminated, truncated := sr.Obs, sr.Reward, sr.Terminated, sr.Truncated
		nextFrame := r.frameOf(s)
		simTime := time.Since(t0)

		c := s.chunk
		if c == nil {
			c = r.newChunk(s)
			s.chunk = c
		}
		c.Obs = append(c.Obs, s.obs...)
		c.Frames = append(c.Frames, s.frame...)
		c.Actions = append(c.Actions, req.Tokens...)
		c.ContActions = append(c.ContActions, req.Reals...)
		c.LogProbs = append(c.LogProbs, req.LogProbs...)
		c.Values = append(c.Values, rep.Value)
		c.Rewards = append(c.Rewards, reward)
		c.Versions = append(c.Versions, rep.Version)
		s.epReturn += reward
		s.epLen++
		total := r.envSteps.Add(1)

		switch {
		case terminated || truncated:
			c.Terminated = terminated
			c.Truncated = truncated && !terminated
			c.Success = sr.Success && sr.HasSuccess
			if terminated {
				c.TerminalObs, c.TerminalFrame = next, nextFrame
			} else {
				c.NextObs, c.NextFrame = next, nextFrame
			}
			r.push(s)
			if lockstep != nil {
				total = lockstep(i)
			}
			r.addEpisode(Episode{Env: s.index, Return: s.epReturn, Length: s.epLen, EnvSteps: total,
				PolicyVersion: rep.Version, Truncated: c.Truncated, Success: c.Success, HasSuccess: sr.HasSuccess})
			s.epReturn, s.epLen = 0, 0
			t1 := time.Now()
			r.reset(s)
			simTime += time.Since(t1)
		default:
			s.obs, s.frame = next, nextFrame
			if c.Len() >= r.chunkSteps {
				c.NextObs = append([]float64(nil), next...)
				c.NextFrame = slices.Clone(nextFrame)
				r.push(s)
			}
		}
		s.simNanos.Add(int64(simTime))
		s.steps.Add(1)
	}
	if steps >= 0 {
		r.cut(s) // end of a sync round
	}
}

// reset starts the slot's next episode: from a start drawn from the slot's RNG, or, while
// the current start has plays left (Config.RepeatStarts), from the current start again, by
// restoring the environment to its state right after that start's Reset. It panics when
// the environment cannot be captured or restored (runEnv reports it as the run's error).
func (r *rollout) reset(s *envSlot) {
	if r.repeatStarts > 1 && s.startLeft > 0 {
		if err := s.env.UnmarshalBinary(s.start); err != nil {
			panic(fmt.Sprintf("engine: env %d: restore its start to play it again: %v", s.index, err))
		}
		s.startLeft--
		s.obs = slices.Clone(s.startObs)
		s.frame = r.frameOf(s)
		return
	}
	s.obs = s.env.Reset(s.rng)
	s.frame = r.frameOf(s)
	s.startKey = startKey(s.obs)
	if r.repeatStarts > 1 {
		st, err := s.env.MarshalBinary()
		if err != nil {
			panic(fmt.Sprintf("engine: env %d: capture its start to play it again: %v", s.index, err))
		}
		s.start, s.startObs, s.startLeft = st, slices.Clone(s.obs), r.repeatStarts-1
	}
}

// startKey hashes an episode's first observation (FNV-1a over the values' bits): episodes
// from the same start share it.
func startKey(obs []float64) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range obs {
		b := math.Float64bits(v)
		for range 8 {
			h ^= b & 0xff
			h *= 1099511628211
			b >>= 8
		}
	}
	return h
}

// cut pushes the slot's partial chunk, if any, bootstrapping from the
// current observation.
func (r *rollout) cut(s *envSlot) {
	if s.chunk == nil {
		return
	}
	s.chunk.NextObs = append([]float64(nil), s.obs...)
	s.chunk.NextFrame = slices.Clone(s.frame)
	r.push(s)
}

// frameOf renders the frame of the observation the slot's environment last returned (nil
// without frames).
func (r *rollout) frameOf(s *envSlot) []byte {
	if r.frameBytes == 0 {
		return nil
	}
	return s.env.(FrameEnv).Frame(make([]byte, 0, r.frameBytes))
}

func (r *rollout) newChunk(s *envSlot) *Chunk {
	n := r.chunkSteps
	a := r.shape
	c := &Chunk{
		Env: s.index, Seq: s.seq, Start: s.startKey,
		Obs: make([]float64, 0, n*r.obsDim), Frames: make([]byte, 0, n*r.frameBytes),
		Actions: make([]int, 0, n*a.Tokens), ContActions: make([]float64, 0, n*a.Reals),
		LogProbs: make([]float64, 0, n*a.LogProbs), Values: make([]float64, 0, n),
		Rewards: make([]float64, 0, n), Versions: make([]int64, 0, n),
	}
	s.seq++
	return c
}

func (r *rollout) push(s *envSlot) {
	r.replay.Push(s.chunk)
	s.chunk = nil
}
