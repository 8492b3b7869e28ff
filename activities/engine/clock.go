package engine

import "time"

// Clock is the time source of the inference service. Production code uses
// RealClock; tests inject a fake clock so that the batching rule ("fire at
// MaxBatch requests or when the oldest request has waited MaxWait") can be
// checked to the nanosecond without sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now. A timer with
	// d <= 0 fires immediately.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer created by a Clock.
type Timer interface {
	// C returns the channel on which the firing time is delivered.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped an
	// active timer.
	Stop() bool
}

// RealClock is the wall clock (package time).
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
