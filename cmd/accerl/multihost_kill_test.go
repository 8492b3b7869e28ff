package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/accerl/accerl/activities/contract"
)

// heldEnv makes the test binary print, as JSON, the worker identities that hold a started,
// unfinished TrainSegment activity on the Temporal server at its value (see heldMain): the
// child runs on the client host, as timeline's does.
const heldEnv = "ACCERL_TEST_HELD"

// killHoldingSegment SIGKILLs worker w while it provably holds a started segment. A segment
// takes about half a second here, so a kill at an arbitrary moment can find w between
// segments, holding only workflow tasks, and then nothing of w's is ever retried (CI stop 25,
// and about 2 in 7 runs of the object-store case later). So w is frozen first (SIGSTOP: it can
// neither finish nor report anything while the server is asked), and killed only if the
// server lists a segment started by w and not finished; otherwise it is thawed and asked
// again a moment later. It returns the kill's time.
func killHoldingSegment(t *testing.T, w *exec.Cmd, ns, addr, logPath string) time.Time {
	t.Helper()
	me := fmt.Sprint(w.Process.Pid) + "@"
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(150 * time.Millisecond) {
		if err := w.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// A completion w wrote just before it froze may still be on its way to the server:
		// let it land before asking (the activities' round trips here take milliseconds).
		time.Sleep(100 * time.Millisecond)
		for _, id := range heldSegments(t, ns, addr) {
			if strings.HasPrefix(id, me) {
				killed := time.Now()
				if err := w.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				return killed
			}
		}
		if err := w.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("worker %d held no started segment whenever it was looked at for a minute; log %s:\n%s", w.Process.Pid, logPath, logTail(logPath))
	return time.Time{}
}

// heldSegments runs heldMain on host ns against the server at addr and decodes its output.
func heldSegments(t *testing.T, ns, addr string) []string {
	t.Helper()
	var ids []string
	nsQuery(t, ns, heldEnv+"="+addr, &ids)
	return ids
}

// heldMain prints, as JSON, the worker identity (pid@host) of every TrainSegment activity that
// a running Run workflow on the server at addr lists as started and not finished.
func heldMain(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	ids := []string{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 100, NextPageToken: token,
			Query: "ExecutionStatus = 'Running'"})
		if err != nil {
			return err
		}
		for _, ex := range resp.GetExecutions() {
			if ex.GetType().GetName() != "Run" {
				continue
			}
			d, err := c.DescribeWorkflowExecution(ctx, ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId())
			if err != nil {
				return err
			}
			for _, p := range d.GetPendingActivities() {
				if p.GetActivityType().GetName() == contract.ActivityTrainSegment && p.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
					ids = append(ids, p.GetLastWorkerIdentity())
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return json.NewEncoder(os.Stdout).Encode(ids)
}
