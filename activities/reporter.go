package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/accerl/accerl/reports"
	"github.com/accerl/accerl/runstore"
	"go.temporal.io/sdk/temporal"
)

// Reporter writes experiment-level files: the experiment manifest and the report.
type Reporter struct{}

// PrepareExperiment creates the experiment directory and writes experiment.json, unless a
// manifest for the same spec hash is already there (a resumed experiment keeps its original
// creation time). A manifest of a different spec in the same directory is an error: two
// experiments would mix their results.
func (r *Reporter) PrepareExperiment(ctx context.Context, in PrepareExperimentInput) (PrepareExperimentResult, error) {
	wc, err := runstore.OpenWorkingCopy(ctx, in.ExpDir, runstore.Only(func(rel string) bool { return rel == runstore.ExperimentFile }))
	if err != nil {
		return PrepareExperimentResult{}, err
	}
	defer wc.Close()
	shown := in.ExpDir
	in.ExpDir = wc.Dir
	if err := os.MkdirAll(in.ExpDir, 0o755); err != nil {
		return PrepareExperimentResult{}, fmt.Errorf("create experiment dir: %w", err)
	}
	m, err := experimentManifest(in)
	if err != nil {
		return PrepareExperimentResult{}, err
	}
	path := filepath.Join(in.ExpDir, runstore.ExperimentFile)
	var old runstore.ExperimentManifest
	if err := runstore.ReadJSON(path, &old); err == nil {
		if old.SpecHash == m.SpecHash {
			return PrepareExperimentResult{}, nil
		}
		// Retrying cannot help: fail the experiment now, not after the retries.
		return PrepareExperimentResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("experiment dir %s already holds results of spec %.12s (this spec is %.12s); choose another --out or remove it", shown, old.SpecHash, m.SpecHash), ErrTypeBadInput, nil)
	}
	if err := runstore.WriteJSON(path, m); err != nil {
		return PrepareExperimentResult{}, err
	}
	return PrepareExperimentResult{}, wc.Publish(ctx)
}

// envTargets are the mean returns that count as "solved" per environment kind, used for the
// report's steps-to-target figure and optimality gap, with the score of a random policy.
// CartPole-v1's 475 and Acrobot-v1's -100 are Gymnasium's reward thresholds; Pendulum-v1 has
// none, and -400 is the level issue #4 asks the tokens head to reach.
var envTargets = map[string]struct{ target, random float64 }{
	"cartpole":               {475, 22},
	"acrobot":                {-100, -500},
	"pendulum":               {-400, -1200},
	"mountaincar_continuous": {90, -33},
}

// TargetFor returns the target return and random-policy score of an environment kind, if
// accerl knows them.
func TargetFor(kind string) (target, random float64, ok bool) {
	t, ok := envTargets[kind]
	return t.target, t.random, ok
}

// experimentManifest describes the experiment for experiment.json: its arms, seeds, the
// resolved spec, and the target return of the base arm's environment when accerl knows one.
func experimentManifest(in PrepareExperimentInput) (runstore.ExperimentManifest, error) {
	exp := in.Experiment
	spec, err := json.Marshal(exp)
	if err != nil {
		return runstore.ExperimentManifest{}, fmt.Errorf("encode spec: %w", err)
	}
	arms := make([]string, len(exp.Arms))
	for i, a := range exp.Arms {
		arms[i] = a.Name
	}
	m := runstore.ExperimentManifest{
		Name: exp.Name, SpecHash: exp.Hash, Baseline: exp.Baseline, Arms: arms, Seeds: exp.Seeds,
		Spec: spec, Created: in.Created,
	}
	if len(exp.Arms) > 0 {
		if t, r, ok := TargetFor(exp.Arms[0].Config.Env.Kind); ok {
			m.Target, m.RandomScore = &t, &r
		}
	}
	return m, nil
}

// Report regenerates the report from the stored metrics of every run.
// An experiment in an object store is reported from a working copy of what the report reads
// (ReportInputs), and the report is published beside the runs.
func (r *Reporter) Report(ctx context.Context, in ReportInput) (ReportResult, error) {
	wc, err := runstore.OpenWorkingCopy(ctx, in.ExpDir, runstore.Only(ReportInputs))
	if err != nil {
		return ReportResult{}, err
	}
	defer wc.Close()
	rep, err := reports.Generate(wc.Dir, reports.Options{})
	if err != nil {
		return ReportResult{}, fmt.Errorf("generate report: %w", err)
	}
	if err := wc.Publish(ctx); err != nil {
		return ReportResult{}, err
	}
	figs := make([]string, len(rep.Figures))
	for i, f := range rep.Figures {
		figs[i] = wc.Ref(f)
	}
	return ReportResult{Markdown: wc.Ref(rep.Markdown), ResultsJSON: wc.Ref(rep.ResultsJSON), Figures: figs, Partial: rep.Partial}, nil
}

// ReportInputs reports whether the file rel of an experiment directory (slash-separated) is
// one the report reads or writes: everything but the runs' checkpoints, world-model files
// and behaviour-cloning checkpoints, which an object store's working copy need not download.
func ReportInputs(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) < 3 || (parts[2] != checkpointsDir && parts[2] != worldModelDir && parts[2] != bcDir)
}
