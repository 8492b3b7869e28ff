package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels"
)

// fakeClock is a manual Clock: time moves only through Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time, 1), at: c.now.Add(d), clock: c}
	if d <= 0 {
		t.c <- c.now
		t.fired = true
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d and fires every timer that is due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.c <- c.now
			t.fired = true
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

type fakeTimer struct {
	c     chan time.Time
	at    time.Time
	clock *fakeClock
	fired bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	if t.fired {
		return false
	}
	for i, o := range t.clock.timers {
		if o == t {
			t.clock.timers = append(t.clock.timers[:i], t.clock.timers[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}

// echoPolicy is a fake categorical Policy: the action is obs[0] as an int,
// the log-prob is -obs[0], the value is the first parameter (so tests see
// which weights acted), and every call can advance a fake clock to simulate
// compute.
type echoPolicy struct {
	params  []float64
	clock   *fakeClock
	compute time.Duration
	during  func() // called inside ActActions after the compute advance
	calls   int
}

func (p *echoPolicy) ActActions(obs []float64, n int, rng *rand.Rand, a kernels.Actions, logp, values []float64) {
	p.calls++
	if p.clock != nil && p.compute > 0 {
		p.clock.Advance(p.compute)
	}
	if p.during != nil {
		p.during()
	}
	d := len(obs) / n
	for i := range n {
		a.Tokens[i] = int(obs[i*d])
		logp[i] = -obs[i*d]
		values[i] = 0
		if len(p.params) > 0 {
			values[i] = p.params[0]
		}
	}
}

func (p *echoPolicy) EnvActions(a kernels.Actions, n int, out []float64) {
	for i := range n {
		out[i] = float64(a.Tokens[i])
	}
}

func (p *echoPolicy) SetParams(q []float64) { p.params = append(p.params[:0], q...) }

// waitTimers blocks until at least n timers are pending, so a test advances
// the clock only after the service went to sleep on its deadline.
func (c *fakeClock) waitTimers(n int) {
	for {
		c.mu.Lock()
		k := len(c.timers)
		c.mu.Unlock()
		if k >= n {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// reachEnv is a two-dimensional continuous task for action heads with more
// than one action dimension (testenv's continuous tasks have one): the
// observation is a point p in [−1, 1]², the action a ∈ [−1, 1]² moves it to
// clip(p + a/4), the reward is −|p'|², and episodes are truncated after
// reachSteps steps.
type reachEnv struct {
	p     [2]float64
	steps int
}

const reachSteps = 10

func (e *reachEnv) ObsDim() int { return 2 }

func (e *reachEnv) ActionSpace() ActionSpace {
	return ActionSpace{Low: []float64{-1, -1}, High: []float64{1, 1}}
}

func (e *reachEnv) Reset(rng *rand.Rand) []float64 {
	e.p = [2]float64{2*rng.Float64() - 1, 2*rng.Float64() - 1}
	e.steps = 0
	return []float64{e.p[0], e.p[1]}
}

func (e *reachEnv) Step(a []float64) StepResult {
	if len(a) != 2 {
		panic(fmt.Sprintf("reachEnv: action has %d values, want 2", len(a)))
	}
	for d := range e.p {
		e.p[d] = math.Max(-1, math.Min(1, e.p[d]+a[d]/4))
	}
	e.steps++
	return StepResult{Obs: []float64{e.p[0], e.p[1]}, Reward: -(e.p[0]*e.p[0] + e.p[1]*e.p[1]), Truncated: e.steps >= reachSteps}
}

func (e *reachEnv) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, math.Float64bits(e.p[0]))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.p[1]))
	return binary.LittleEndian.AppendUint64(b, uint64(e.steps)), nil
}

func (e *reachEnv) UnmarshalBinary(b []byte) error {
	if len(b) != 24 {
		return fmt.Errorf("reachEnv: state has %d bytes, want 24", len(b))
	}
	e.p[0] = math.Float64frombits(binary.LittleEndian.Uint64(b))
	e.p[1] = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	e.steps = int(binary.LittleEndian.Uint64(b[16:]))
	return nil
}

// newReachEngine builds an engine on reachEnv. cfg.Env must still name a
// continuous testenv kind: Validate checks the head against it.
func newReachEngine(t *testing.T, cfg Config, snap *Snapshot) *Engine {
	t.Helper()
	e, err := New(cfg, snap, func(int) (Env, error) { return &reachEnv{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	return e
}
