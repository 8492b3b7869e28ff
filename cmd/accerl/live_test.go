package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
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

// A segment that keeps failing on a full disk shows as the run's last error, with the
// attempt and what to do; a first attempt or a failure-free retry shows nothing.
func TestRetryingErrorNamesWriteErrors(t *testing.T) {
	act := func(attempt int32, msg string) *workflowpb.PendingActivityInfo {
		a := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: contract.ActivityTrainSegment}, Attempt: attempt}
		if msg != "" {
			a.LastFailure = &failurepb.Failure{Message: msg}
		}
		return a
	}
	for _, c := range []struct {
		a    *workflowpb.PendingActivityInfo
		want []string
	}{
		{act(3, "save checkpoint seg-000004: write /out/runs/x/engine.json: no space left on device"),
			[]string{"TrainSegment retrying (attempt 3)", "no space left on device", "the disk is full"}},
		{act(2, "open /out/runs/x/metrics/part-0001.arrow: read-only file system"), []string{"attempt 2", "read-only: remount"}},
		{act(2, "mkdir /out/runs/x: permission denied"), []string{"no permission to write"}},
		{act(2, "worker lost"), []string{"TrainSegment retrying (attempt 2): worker lost"}},
		{act(1, "no space left on device"), nil},
		{act(4, ""), nil},
	} {
		got := retryingError(c.a)
		if c.want == nil && got != "" {
			t.Errorf("%v: %q, want nothing", c.a, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
}
