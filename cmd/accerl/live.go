package main

import (
	"context"
	"fmt"
	"strings"

	"go.temporal.io/api/workflow/v1"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/workflows"
)

// withLiveProgress updates p, a run's progress as its workflow last recorded it (at the end
// of a segment), with the running segment's latest heartbeat (contract.SegmentProgress:
// env steps, updates and wall time so far), so that progress bars and status move within a
// segment. Without a running segment, or when the server cannot be asked, p stays as it is.
func withLiveProgress(ctx context.Context, c client.Client, wfID string, p *workflows.RunProgress) {
	desc, err := c.DescribeWorkflowExecution(ctx, wfID, "")
	if err != nil {
		return
	}
	for _, a := range desc.GetPendingActivities() {
		if msg := retryingError(a); msg != "" {
			p.LastError = msg
		}
		if a.GetActivityType().GetName() == contract.ActivityPretrainPolicy && a.GetHeartbeatDetails() != nil {
			// The behaviour-cloning warm start: show its phase in place of "running".
			var pp contract.PretrainPolicyProgress
			if converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &pp) == nil && pp.Phase != "" &&
				p.Status == workflows.StatusRunning {
				p.Status = pp.String()
			}
			continue
		}
		switch a.GetActivityType().GetName() {
		case contract.ActivityCollectOffline:
			if p.Status == workflows.StatusRunning {
				p.Status = contract.PhaseCollectOffline
			}
			continue
		case contract.ActivityPretrainWorldModel:
			var wp contract.PretrainWorldModelProgress
			if a.GetHeartbeatDetails() != nil && converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &wp) == nil &&
				wp.Total > 0 && p.Status == workflows.StatusRunning {
				p.Status = wp.String()
			}
			continue
		}
		if a.GetActivityType().GetName() != contract.ActivityTrainSegment || a.GetHeartbeatDetails() == nil {
			continue
		}
		var sp contract.SegmentProgress
		if converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &sp) != nil {
			continue
		}
		if sp.EnvSteps > p.EnvSteps {
			p.EnvSteps, p.Updates, p.WallS = sp.EnvSteps, sp.Updates, sp.WallS
		}
	}
}

// retryingError describes a pending activity that failed and is being retried (a full or
// read-only disk, a lost worker): the attempt, the last failure's message and, for the write
// errors users can fix, what to do. Temporal keeps retrying it, so the run recovers by
// itself once the cause is gone; "" when a is on its first attempt.
func retryingError(a *workflow.PendingActivityInfo) string {
	f := a.GetLastFailure()
	if a.GetAttempt() < 2 || f == nil {
		return ""
	}
	msg := f.GetMessage()
	hint := ""
	switch low := strings.ToLower(msg); {
	case strings.Contains(low, "no space left on device"), strings.Contains(low, "disk quota exceeded"):
		hint = "the disk is full: free space under --out; the run retries and resumes by itself"
	case strings.Contains(low, "read-only file system"):
		hint = "the output directory is read-only: remount it writable or restart with another --out"
	case strings.Contains(low, "permission denied"):
		hint = "no permission to write the output directory: fix its ownership or mode"
	}
	out := fmt.Sprintf("%s retrying (attempt %d): %s", a.GetActivityType().GetName(), a.GetAttempt(), msg)
	if hint != "" {
		out += " — " + hint
	}
	return out
}
