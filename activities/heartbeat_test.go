package activities

import (
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
)

// A heartbeater keeps sending the latest details while the activity is busy between reports
// (a long evaluation), and stops when told: what a heartbeat timeout sees is the process,
// not the pace of updates.
func TestHeartbeaterRepeatsLatestDetails(t *testing.T) {
	var mu sync.Mutex
	var got []any
	count := func(v any) (n, all int) {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range got {
			if d == v {
				n++
			}
		}
		return n, len(got)
	}
	// waitFor polls until the heartbeats hold at least n copies of v. It waits on the
	// heartbeater's progress, not on a fixed sleep, so a loaded machine whose timers fire
	// late only makes it slower; the minute is a deadlock guard.
	waitFor := func(v any, n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if c, _ := count(v); c >= n {
				return
			}
		}
		c, all := count(v)
		t.Fatalf("%d heartbeats, %d of them %v, after a minute; want %d repeats of it", all, c, v, n)
	}
	h := newHeartbeater(func(d any) { mu.Lock(); got = append(got, d); mu.Unlock() }, 10*time.Millisecond, 1)
	waitFor(1, 4) // one long step, no reports: the first details keep coming
	h.report(2)
	waitFor(2, 2)
	h.stop()
	mu.Lock()
	n := len(got)
	last := got[n-1]
	mu.Unlock()
	if last != 2 {
		t.Errorf("heartbeats %v: want the second details last", got)
	}
	time.Sleep(30 * time.Millisecond)
	mu.Lock()
	if len(got) != n {
		t.Errorf("%d heartbeats after stop", len(got)-n)
	}
	mu.Unlock()
	if s := segmentHeartbeat(specsConfigWithTimeout(0)); s != 2*time.Second {
		t.Errorf("segment heartbeat with the default timeout: %v, want 2s", s)
	}
	if s := segmentHeartbeat(specsConfigWithTimeout(4 * time.Second)); s != time.Second {
		t.Errorf("segment heartbeat with a 4 s timeout: %v, want 1s", s)
	}
}

func specsConfigWithTimeout(d time.Duration) specs.Config {
	var c specs.Config
	c.Checkpoint.HeartbeatTimeout = jsondur.Duration(d)
	return c
}
