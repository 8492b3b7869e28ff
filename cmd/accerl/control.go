package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/accerl/accerl/workflows"
)

// cmdControl sends pause, resume or stop to every running run of an experiment.
func cmdControl(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	what := map[string]string{
		"pause":  "pause every running run of an experiment before its next segment",
		"resume": "resume paused runs",
		"stop":   "stop runs cleanly after their current segment (which writes a checkpoint)",
	}[cmd]
	fs := newFlagSet(cmd, cmd+" [flags] EXPERIMENT-ID|FILE   — "+what, stderr)
	tf := addTemporalFlags(fs)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "experiment ID or spec file", stderr); err != nil {
		return err
	}
	expID := fs.Arg(0)
	if _, err := os.Stat(expID); err == nil {
		exp, err := loadSpec(expID, vars, stderr)
		if err != nil {
			return err
		}
		expID = workflows.ExperimentID(exp.Name, exp.Hash)
	}
	signal := map[string]string{"pause": workflows.PauseSignal, "resume": workflows.ResumeSignal, "stop": workflows.StopSignal}[cmd]

	c, err := tf.connect(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.close()
	resp, err := c.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = 'Run' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	n := 0
	for _, info := range resp.Executions {
		id := info.Execution.GetWorkflowId()
		if !strings.HasPrefix(id, expID+"/") {
			continue
		}
		if err := c.client.SignalWorkflow(ctx, id, "", signal, nil); err != nil {
			return fmt.Errorf("signal %s: %w", id, err)
		}
		fmt.Fprintf(stdout, "%s: %s\n", id, cmd)
		n++
	}
	if n == 0 {
		return fmt.Errorf("no running runs of experiment %s (see 'accerl status')", expID)
	}
	return nil
}
