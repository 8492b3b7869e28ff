package engine

import (
	"context"
	"fmt"
	"sync"
)

// Chunk is a contiguous piece of one environment's trajectory inside one
// episode: T steps of (observation, action, behaviour log-probabilities,
// behaviour value, reward, acting policy version). A chunk ends when it holds
// ChunkSteps steps ("cut"), when the episode terminates or is truncated, at
// the end of a sync round, or when the step budget is spent (also cuts).
type Chunk struct {
	// Env is the global environment index (worker*EnvsPerWorker + slot).
	Env int `json:"env"`
	// Seq numbers the chunks of one environment from 0 across the whole run;
	// (Env, Seq) orders a batch deterministically.
	Seq int64 `json:"seq"`
	// Start identifies the start of the chunk's episode: a hash of the episode's first
	// observation (Config.RepeatStarts groups GRPO's episodes by it). 0 for imagined chunks
	// and chunks of checkpoints written before it existed.
	Start uint64 `json:"start,omitempty"`
	// Obs holds T observations row-major (T*ObsDim values).
	Obs []float64 `json:"obs"`
	// Actions holds the action tokens, T×ActionShape.Tokens row-major: the
	// action index per step for a categorical head, ActionDims bin indices
	// per step for a tokens head, nothing for a gaussian head.
	Actions []int `json:"actions"`
	// ContActions holds a gaussian head's actions as sampled (before
	// clipping to the action bounds), T×ActionDims row-major.
	ContActions []float64 `json:"cont_actions,omitempty"`
	// LogProbs are the acting policy's per-token log-probabilities,
	// T×ActionShape.LogProbs row-major; Values its V(o_t); Rewards what
	// the environment returned.
	LogProbs []float64 `json:"log_probs"`
	// Temperature, when > 0, is the temperature the chunk's actions were sampled at and
	// its LogProbs recorded at, which the update evaluates them at too (imagined chunks
	// of PixelWMSettings.Tempered; 0: the policy's own, as every real chunk).
	Temperature float64   `json:"temperature,omitempty"`
	Values      []float64 `json:"values"`
	Rewards     []float64 `json:"rewards"`
	// Versions is the policy version that chose each action.
	Versions []int64 `json:"versions"`
	// Terminated means the episode ended in a terminal state after the last
	// step: the trainer bootstraps with 0.
	Terminated bool `json:"terminated"`
	// Truncated means the episode hit its time limit after the last step.
	Truncated bool `json:"truncated"`
	// Success means the episode ended (Terminated or Truncated) having reached its task's
	// goal (StepResult.Success); the world model's success_delta reward learns from it.
	Success bool `json:"success,omitempty"`
	// NextObs is the observation after the last step when the chunk did not
	// terminate (cut or truncated): the trainer bootstraps with V(NextObs).
	NextObs []float64 `json:"next_obs,omitempty"`
	// TerminalObs is the observation the episode terminated in, kept for
	// the world model (its termination head and B_real) when Terminated;
	// the trainer never bootstraps from it.
	TerminalObs []float64 `json:"terminal_obs,omitempty"`
	// Frames holds each step's frame (FrameEnv), T×FrameBytes bytes row-major, when the
	// environment has frames; NextFrame and TerminalFrame are the frames of NextObs and
	// TerminalObs.
	Frames        []byte `json:"frames,omitempty"`
	NextFrame     []byte `json:"next_frame,omitempty"`
	TerminalFrame []byte `json:"terminal_frame,omitempty"`
	// Staleness is set by ReplayBuffer.Take: the trainer's version at take
	// time minus Versions[t], per step.
	Staleness []int64 `json:"-"`
}

// Len returns the number of steps in the chunk.
func (c *Chunk) Len() int { return len(c.Versions) }

// minVersion returns the oldest acting version in the chunk.
func (c *Chunk) minVersion() int64 {
	m := c.Versions[0]
	for _, v := range c.Versions[1:] {
		m = min(m, v)
	}
	return m
}

// ReplayDrops counts what a ReplayBuffer discarded.
type ReplayDrops struct {
	// CapacityChunks/CapacitySteps were evicted (oldest first) to make room.
	CapacityChunks, CapacitySteps int64
	// StaleChunks/StaleSteps were discarded because one of their steps was
	// more than MaxStaleness versions old.
	StaleChunks, StaleSteps int64
}

// ReplayBuffer is the FIFO of trajectory chunks between rollout workers and
// the trainer. It holds at most Capacity steps, evicting the oldest chunks
// when a push would exceed it, and hands out whole chunks in arrival order.
// It is safe for concurrent use.
type ReplayBuffer struct {
	capacity     int
	maxStaleness int64

	mu      sync.Mutex
	chunks  []*Chunk
	steps   int
	version int64
	notify  chan struct{} // closed and replaced on every push
	drops   ReplayDrops
}

// NewReplayBuffer returns an empty buffer holding up to capacity steps.
// maxStaleness > 0 makes Take discard chunks containing a step whose acting
// version is more than maxStaleness behind the current version; 0 keeps
// everything. It panics on a non-positive capacity or negative maxStaleness.
func NewReplayBuffer(capacity, maxStaleness int) *ReplayBuffer {
	if capacity <= 0 || maxStaleness < 0 {
		panic(fmt.Sprintf("engine: NewReplayBuffer: capacity %d, maxStaleness %d", capacity, maxStaleness))
	}
	return &ReplayBuffer{capacity: capacity, maxStaleness: int64(maxStaleness), notify: make(chan struct{})}
}

// SetVersion records the trainer's current policy version, against which
// staleness is measured.
func (b *ReplayBuffer) SetVersion(v int64) {
	b.mu.Lock()
	b.version = v
	b.mu.Unlock()
}

// Push appends c, evicting the oldest chunks while the buffer would exceed
// its capacity. It panics if c is empty or alone exceeds the capacity.
func (b *ReplayBuffer) Push(c *Chunk) {
	n := c.Len()
	if n == 0 || n > b.capacity {
		panic(fmt.Sprintf("engine: ReplayBuffer.Push: chunk of %d steps, capacity %d", n, b.capacity))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.steps+n > b.capacity {
		old := b.chunks[0]
		b.chunks[0] = nil
		b.chunks = b.chunks[1:]
		b.steps -= old.Len()
		b.drops.CapacityChunks++
		b.drops.CapacitySteps += int64(old.Len())
	}
	b.chunks = append(b.chunks, c)
	b.steps += n
	close(b.notify)
	b.notify = make(chan struct{})
}

// pruneStale drops chunks that exceed maxStaleness. Callers hold mu.
func (b *ReplayBuffer) pruneStale() {
	if b.maxStaleness == 0 {
		return
	}
	kept := b.chunks[:0]
	for _, c := range b.chunks {
		if b.version-c.minVersion() > b.maxStaleness {
			b.steps -= c.Len()
			b.drops.StaleChunks++
			b.drops.StaleSteps += int64(c.Len())
			continue
		}
		kept = append(kept, c)
	}
	clear(b.chunks[len(kept):])
	b.chunks = kept
}

// Take blocks until the buffer holds at least minSteps steps (after dropping
// stale chunks), then removes and returns the oldest whole chunks whose
// lengths add up to at least minSteps, with Staleness filled in. It returns
// an error only when ctx is done first. minSteps must be in [1, capacity].
func (b *ReplayBuffer) Take(ctx context.Context, minSteps int) ([]*Chunk, error) {
	return b.TakeOrDrain(ctx, minSteps, nil)
}

// TakeOrDrain is Take, except that once done is closed (no more chunks will
// be pushed) and fewer than minSteps steps are held, it removes and returns
// everything held, possibly nothing. A nil done never closes.
func (b *ReplayBuffer) TakeOrDrain(ctx context.Context, minSteps int, done <-chan struct{}) ([]*Chunk, error) {
	if minSteps <= 0 || minSteps > b.capacity {
		panic(fmt.Sprintf("engine: ReplayBuffer.Take: minSteps %d outside [1, %d]", minSteps, b.capacity))
	}
	for {
		b.mu.Lock()
		b.pruneStale()
		if b.steps >= minSteps {
			out := b.takeLocked(minSteps)
			b.mu.Unlock()
			return out, nil
		}
		select {
		case <-done:
			out := b.takeLocked(b.steps)
			b.mu.Unlock()
			return out, nil
		default:
		}
		wake := b.notify
		b.mu.Unlock()
		select {
		case <-wake:
		case <-done:
		case <-ctx.Done():
			return nil, fmt.Errorf("take %d steps from replay: %w", minSteps, ctx.Err())
		}
	}
}

// takeLocked removes the oldest whole chunks holding at least n steps (n <=
// b.steps) and fills in their staleness. Callers hold mu.
func (b *ReplayBuffer) takeLocked(n int) []*Chunk {
	var out []*Chunk
	got := 0
	for got < n {
		c := b.chunks[0]
		b.chunks[0] = nil
		b.chunks = b.chunks[1:]
		got += c.Len()
		c.Staleness = make([]int64, c.Len())
		for t, v := range c.Versions {
			c.Staleness[t] = b.version - v
		}
		out = append(out, c)
	}
	b.steps -= got
	return out
}

// Len returns the number of chunks and steps held.
func (b *ReplayBuffer) Len() (chunks, steps int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.chunks), b.steps
}

// Drops returns the running drop counters.
func (b *ReplayBuffer) Drops() ReplayDrops {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.drops
}

// contents returns the held chunks, oldest first (the chunks themselves are
// shared; callers must not modify them).
func (b *ReplayBuffer) contents() []*Chunk {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Chunk(nil), b.chunks...)
}

// restore replaces the contents and drop counters (snapshot resume).
func (b *ReplayBuffer) restore(chunks []*Chunk, drops ReplayDrops) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chunks = append([]*Chunk(nil), chunks...)
	b.steps = 0
	for _, c := range chunks {
		b.steps += c.Len()
	}
	b.drops = drops
}
