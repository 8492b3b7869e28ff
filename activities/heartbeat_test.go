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
	h := newHeartbeater(func(d any) { mu.Lock(); got = append(got, d); mu.Unlock() }, 10*time.Millisecond, 1)
	time.Sleep(100 * time.Millisecond) // one long step, no reports
	h.report(2)
	time.Sleep(50 * time.Millisecond)
	h.stop()
	mu.Lock()
	n := len(got)
	ones, twos := 0, 0
	for _, d := range got {
		switch d {
		case 1:
			ones++
		case 2:
			twos++
		}
	}
	mu.Unlock()
	// 100 ms at a 10 ms tick is ~10 repeats; 4 leaves room for a loaded machine's timers.
	if ones < 4 || twos < 2 || got[n-1] != 2 {
		t.Errorf("heartbeats %v: want the first details repeated through the long step, then the second", got)
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
