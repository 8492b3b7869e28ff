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
	var mu sync.Mutex
	var last any
	report := func(d any) {
		mu.Lock()
		last = d
		mu.Unlock()
		heartbeat(ctx, d)
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				d := last
				mu.Unlock()
				heartbeat(ctx, d)
			}
		}
	}()
	err := fn(report)
	close(done)
	return err
}
