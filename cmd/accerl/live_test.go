package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"

	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/workflows"
)

// A running segment's heartbeat (env steps and updates so far) moves the run's progress past
// what the workflow recorded at the last segment end; an older heartbeat does not move it back.
func TestLiveProgressFromHeartbeat(t *testing.T) {
	details, err := converter.GetDefaultDataConverter().ToPayloads(contract.SegmentProgress{Segment: 3, Updates: 25, EnvSteps: 12800, WallS: 9.5})
	if err != nil {
		t.Fatal(err)
	}
	c := &mocks.Client{}
	c.On("DescribeWorkflowExecution", mock.Anything, "run-1", "").Return(&workflowservice.DescribeWorkflowExecutionResponse{
		PendingActivities: []*workflowpb.PendingActivityInfo{
			{ActivityType: &commonpb.ActivityType{Name: contract.ActivityTrainSegment}, HeartbeatDetails: details},
		},
	}, nil)
	p := workflows.RunProgress{Status: workflows.StatusRunning, Counters: runstate.Counters{Segment: 2, Updates: 20, EnvSteps: 10240, WallS: 8}}
	withLiveProgress(context.Background(), c, "run-1", &p)
	if p.EnvSteps != 12800 || p.Updates != 25 || p.WallS != 9.5 || p.Segment != 2 {
		t.Errorf("progress = %+v, want the heartbeat's 12800 steps, 25 updates, 9.5 s (segments completed stay 2)", p.Counters)
	}
	ahead := workflows.RunProgress{Counters: runstate.Counters{Updates: 30, EnvSteps: 15360}}
	withLiveProgress(context.Background(), c, "run-1", &ahead)
	if ahead.EnvSteps != 15360 || ahead.Updates != 30 {
		t.Errorf("an older heartbeat moved the progress back: %+v", ahead.Counters)
	}
	c.AssertExpectations(t)
}
