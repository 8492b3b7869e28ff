package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeat records details as the running activity's heartbeat. Temporal keeps the latest
// details of a running activity (the CLI shows them as live progress) and hands them to a
// retry (activity.GetHeartbeatDetails). Outside an activity — a bench that drives the
// activities in-process (RunLocal) — it does nothing.
func heartbeat(ctx context.Context, details any) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, details)
	}
}

// lastHeartbeat decodes the details of the previous attempt's last heartbeat into v and
// reports whether there were any (a retry after a crash or a heartbeat timeout).
func lastHeartbeat(ctx context.Context, v any) bool {
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return false
	}
	return activity.GetHeartbeatDetails(ctx, v) == nil
}

// withHeartbeat runs fn, which reports progress through report; every `every` the latest
// reported details are sent again, so that heartbeats keep flowing through long steps
// without erasing what the last report said.
func withHeartbeat(ctx context.Context, every time.Duration, fn func(report func(details any)) error) error {
	h := startHeartbeat(ctx, every, nil)
	defer h.stop()
	return fn(h.report)
}

// heartbeater sends the latest reported details now and then every `every`, until stop: a
// long step between reports (a slow evaluation, a large update, a checkpoint on a slow disk)
// never looks like a dead worker, which only a process that has gone stops doing.
type heartbeater struct {
	send func(details any)
	mu   sync.Mutex
	last any
	done chan struct{}
	wg   sync.WaitGroup
}

// startHeartbeat starts a heartbeater whose first details are first (sent at once unless
// nil).
func startHeartbeat(ctx context.Context, every time.Duration, first any) *heartbeater {
	return newHeartbeater(func(d any) { heartbeat(ctx, d) }, every, first)
}

// newHeartbeater is startHeartbeat sending through send. (The SDK coalesces the heartbeats
// it is given to at most one per 80% of the heartbeat timeout, always with the latest
// details.)
func newHeartbeater(send func(any), every time.Duration, first any) *heartbeater {
	h := &heartbeater{send: send, last: first, done: make(chan struct{})}
	if first != nil {
		send(first)
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				h.mu.Lock()
				d := h.last
				h.mu.Unlock()
				h.send(d)
			}
		}
	}()
	return h
}

// report records d as the latest details and sends them now.
func (h *heartbeater) report(d any) {
	h.mu.Lock()
	h.last = d
	h.mu.Unlock()
	h.send(d)
}

// stop ends the periodic heartbeats.
func (h *heartbeater) stop() {
	close(h.done)
	h.wg.Wait()
}
