package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/workflows"
)

// experimentStatus is one line of `accerl status` (and one object of --json).
type experimentStatus struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	State  string      `json:"state"`
	OutDir string      `json:"out_dir"`
	Start  time.Time   `json:"start"`
	Runs   []runStatus `json:"runs"`
	// Problem says why no runs are listed although the experiment has an output directory:
	// it holds another experiment's results (the reason such an experiment fails to start).
	Problem string `json:"problem,omitempty"`
}

// runStatus is one run as `accerl status` shows it.
type runStatus struct {
	ID                 string                 `json:"id"`
	State              string                 `json:"state"`
	Progress           *workflows.RunProgress `json:"progress,omitempty"`
	Summary            *runstore.RunSummary   `json:"summary,omitempty"`
	Manifest           *runstore.RunManifest  `json:"manifest,omitempty"`
	LastCheckpointAgeS float64                `json:"last_checkpoint_age_s,omitempty"`
}

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", "status [flags]", stderr)
	tf := addTemporalFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c, err := tf.connect(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.close()
	exps, err := listExperiments(ctx, c.client)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(exps)
	}
	if len(exps) == 0 {
		fmt.Fprintln(stdout, "No experiments yet. Start one with 'accerl run FILE'.")
		return nil
	}
	for _, e := range exps {
		fmt.Fprintf(stdout, "%s  %s  started %s  out %s\n", e.ID, e.State, e.Start.Local().Format(time.DateTime), e.OutDir)
		if e.Problem != "" {
			fmt.Fprintf(stdout, "  %s\n\n", e.Problem)
			continue
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN\tSTATE\tENV STEPS\tUPDATES\tRETURN\tEVAL\tSTEPS/S\tLAST CKPT\tERROR")
		for _, r := range e.Runs {
			var steps, upd int64
			var ret, sps float64
			errMsg := ""
			switch {
			case r.Progress != nil:
				steps, upd, ret, sps, errMsg = r.Progress.EnvSteps, r.Progress.Updates, r.Progress.RecentReturn, r.Progress.StepsPerS(), r.Progress.LastError
			case r.Summary != nil:
				steps, upd, ret, sps, errMsg = r.Summary.EnvSteps, r.Summary.Updates, r.Summary.FinalReturn, r.Summary.StepsPerS, r.Summary.Error
			}
			eval := "—" // the latest evaluation's mean return
			switch {
			case r.Progress != nil && r.Progress.HasEval:
				eval = fmt.Sprintf("%.1f", r.Progress.EvalReturn)
			case r.Progress == nil && r.Summary != nil && r.Summary.HasEval:
				eval = fmt.Sprintf("%.1f", r.Summary.EvalReturn)
			}
			age := "—"
			if r.LastCheckpointAgeS > 0 {
				age = (time.Duration(r.LastCheckpointAgeS) * time.Second).String() + " ago"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%.1f\t%s\t%.0f\t%s\t%s\n", r.ID, r.State, steps, upd, ret, eval, sps, age, errMsg)
		}
		_ = tw.Flush()
		for _, r := range e.Runs {
			if r.Progress != nil {
				for _, w := range r.Progress.Warnings {
					fmt.Fprintf(stdout, "  warning: %s: %s\n", r.ID, w)
				}
			}
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// listExperiments reads every Experiment workflow from Temporal's visibility store, then
// each of its runs: the live progress query when a worker answers, else the run's summary
// file on disk.
func listExperiments(ctx context.Context, c client.Client) ([]experimentStatus, error) {
	var out []experimentStatus
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = 'Experiment'", NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list experiments: %w", err)
		}
		for _, info := range resp.Executions {
			e := experimentStatus{
				ID:    info.Execution.GetWorkflowId(),
				State: strings.ToLower(strings.TrimPrefix(info.Status.String(), "WORKFLOW_EXECUTION_STATUS_")),
				Start: info.GetStartTime().AsTime(),
			}
			e.OutDir, e.Name = memoString(info.GetMemo(), memoOutDir), memoString(info.GetMemo(), memoName)
			e.Runs, e.Problem = listRuns(ctx, c, e)
			out = append(out, e)
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			return out, nil
		}
	}
}

// listRuns returns the runs of e listed in its output directory's experiment.json, or, when
// that file belongs to another experiment, none and why.
func listRuns(ctx context.Context, c client.Client, e experimentStatus) ([]runStatus, string) {
	var man runstore.ExperimentManifest
	if e.OutDir == "" || runstore.ReadStoreJSON(ctx, runstore.JoinDir(e.OutDir, runstore.ExperimentFile), &man) != nil {
		return nil, ""
	}
	if other := workflows.ExperimentID(man.Name, man.SpecHash); other != e.ID {
		return nil, fmt.Sprintf("%s holds the results of experiment %s, not of this one", e.OutDir, other)
	}
	var runs []runStatus
	for _, arm := range man.Arms {
		for _, seed := range man.Seeds {
			id := fmt.Sprintf("%s/seed-%d", arm, seed)
			rs := runStatus{ID: id, State: workflows.StatusPending}
			dir := runstore.JoinDir(e.OutDir, arm, fmt.Sprintf("seed-%d", seed))
			var man runstore.RunManifest
			if err := runstore.ReadStoreJSON(ctx, runstore.JoinDir(dir, runstore.RunFile), &man); err == nil {
				rs.Manifest = &man
			}
			var sum runstore.RunSummary
			if err := runstore.ReadStoreJSON(ctx, runstore.JoinDir(dir, runstore.SummaryFile), &sum); err == nil {
				rs.Summary = &sum
				rs.State = sum.Status
				if !sum.Updated.IsZero() {
					rs.LastCheckpointAgeS = time.Since(sum.Updated).Seconds()
				}
			}
			wfID := workflows.RunID(e.ID, id)
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if v, err := c.QueryWorkflow(qctx, wfID, "", workflows.ProgressQuery); err == nil {
				var p workflows.RunProgress
				if v.Get(&p) == nil {
					if p.Status == workflows.StatusRunning {
						withLiveProgress(qctx, c, wfID, &p)
					}
					rs.Progress = &p
					rs.State = p.Status
				}
			} else if e.State == "running" && rs.State == workflows.StatusRunning {
				rs.State = "running (no worker answering)"
			}
			cancel()
			runs = append(runs, rs)
		}
	}
	return runs, ""
}
