package engine

import (
	"math/rand/v2"
	"sync"
	"time"
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

// echoPolicy is a fake Policy: the action is obs[0] as an int, the log-prob
// is -obs[0], the value is the first parameter (so tests see which weights
// acted), and every call can advance a fake clock to simulate compute.
type echoPolicy struct {
	params  []float64
	clock   *fakeClock
	compute time.Duration
	during  func() // called inside Act after the compute advance
	calls   int
}

func (p *echoPolicy) Act(obs []float64, n int, rng *rand.Rand, actions []int, logp, values []float64) {
	p.calls++
	if p.clock != nil && p.compute > 0 {
		p.clock.Advance(p.compute)
	}
	if p.during != nil {
		p.during()
	}
	d := len(obs) / n
	for i := range n {
		actions[i] = int(obs[i*d])
		logp[i] = -obs[i*d]
		values[i] = 0
		if len(p.params) > 0 {
			values[i] = p.params[0]
		}
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
