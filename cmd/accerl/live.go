package main

import (
	"context"

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
		if a.GetActivityType().GetName() == contract.ActivityPretrainPolicy && a.GetHeartbeatDetails() != nil {
			// The behaviour-cloning warm start: show its phase in place of "running".
			var pp contract.PretrainPolicyProgress
			if converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &pp) == nil && pp.Phase != "" &&
				p.Status == workflows.StatusRunning {
				p.Status = pp.String()
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
