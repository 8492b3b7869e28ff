package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/accerl/accerl/workflows"
)

// cmdControl sends pause, resume or stop to every running run of an experiment.
func cmdControl(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	what := map[string]string{
		"pause":  "pause every running run of an experiment before its next segment",
		"resume": "resume paused runs",
		"stop":   "stop runs cleanly after their current segment (which writes a checkpoint)",
	}[cmd]
	fs := newFlagSet(cmd, cmd+" [flags] EXPERIMENT-ID|NAME|FILE   — "+what, stderr)
	tf := addTemporalFlags(fs)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "experiment ID, name or spec file", stderr); err != nil {
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
	runs, err := runningRuns(ctx, c.client)
	if err != nil {
		return err
	}
	targets, err := matchExperiment(expID, runs)
	if err != nil {
		return err
	}
	for _, id := range targets {
		if err := c.client.SignalWorkflow(ctx, id, "", signal, nil); err != nil {
			return fmt.Errorf("signal %s: %w", id, err)
		}
		fmt.Fprintf(stdout, "%s: %s\n", id, cmd)
	}
	return nil
}

// runningRuns lists the workflow IDs of every running Run workflow.
func runningRuns(ctx context.Context, c client.Client) ([]string, error) {
	var ids []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = 'Run' AND ExecutionStatus = 'Running'", NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		for _, info := range resp.Executions {
			ids = append(ids, info.Execution.GetWorkflowId())
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return ids, nil
		}
	}
}

// matchExperiment picks the runs of the experiment that arg names: its ID as status prints
// it (accerl/NAME/HASH), or its name alone (NAME or accerl/NAME) when one running experiment
// has it. runs are workflow IDs of running runs, each its experiment's ID plus ARM/seed-N.
func matchExperiment(arg string, runs []string) ([]string, error) {
	arg = strings.TrimSuffix(arg, "/")
	byExp := map[string][]string{}
	for _, id := range runs {
		parts := strings.Split(id, "/")
		if len(parts) < 5 {
			continue // not an accerl run
		}
		exp := strings.Join(parts[:len(parts)-2], "/")
		name := strings.Join(parts[1:len(parts)-3], "/")
		if arg == exp || arg == name || arg == "accerl/"+name {
			byExp[exp] = append(byExp[exp], id)
		}
	}
	exps := slices.Sorted(maps.Keys(byExp))
	switch len(exps) {
	case 0:
		return nil, fmt.Errorf("no running runs of experiment %s (see 'accerl status' for experiment IDs)", arg)
	case 1:
		return byExp[exps[0]], nil
	}
	return nil, fmt.Errorf("%s names %d running experiments (%s): give one's ID, or its spec file", arg, len(exps), strings.Join(exps, ", "))
}
